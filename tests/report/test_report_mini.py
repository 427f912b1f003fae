"""The report on the shared labelled SWE-bench runs (``../shared/traces/mini-swe-agent``), as an analyst reads it:
its headline answers which grant keeps 95% of resolved runs, with the interval, and what it saves; in headless
Chromium no table is wider than the page and every grant chart names the recommended grant in its legend.

Screenshots go to ``out/browser/report_mini*.png``. The figures are recounted here from the frontier's own rows
only where the independent recount (``tests/analysis/test_frontier_real.py``, plain json) already holds them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from workbench.analysis.frontier import share_interval
from workbench.report import ReportConfig, build_report, write_report

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "out" / "browser"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
GRANTS = tuple(range(100_000, 600_001, 2_000))  # the report's default grid


@pytest.fixture(scope="module")
def written(shared: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = shared / "mini-swe-agent"
    if not root.is_dir():
        pytest.skip("../shared/traces/mini-swe-agent is absent")
    config = ReportConfig(grants=GRANTS, context_lengths=(None, 65_536), context_grant_points=4)
    report = build_report([root], config=config, command="workbench report ../shared/traces/mini-swe-agent")
    out = tmp_path_factory.mktemp("mini") / "report"
    return report, write_report(report, out)


@pytest.mark.real
def test_the_headline_answers_the_question(written) -> None:  # type: ignore[no-untyped-def]
    report, files = written
    assert report.mode == "analyst" and report.recommended == 328_000
    (pick,) = report.picks
    row = pick.row
    assert (row["resolved_kept"], row["resolved"], row["resolved_at_risk"], row["resolved_lost"]) == (
        57,
        60,
        0,
        3,
    )
    _, low, high = share_interval(57, 60)
    assert (round(low, 3), round(high, 3)) == (0.863, 0.983)
    # what it saves: the recorded meter and dollars of the calls the grant cuts, against the whole recording
    assert row["spend_tokens"] + row["spend_saved_tokens"] == row["recorded_tokens"]
    assert row["spend_usd"] + row["spend_saved_usd"] == pytest.approx(row["recorded_usd"])
    saved_m = f"{row['spend_saved_tokens'] / 1e6:,.2f}M"
    saved_usd = f"${row['spend_saved_usd']:,.2f}"
    # the Markdown escapes its punctuation (\( \) ...): read it as rendered
    markdown = re.sub(r"\\(.)", r"\1", files.markdown.read_text())
    for text in (files.html.read_text(), markdown):
        answer = text[: text.index("How to read this report")]
        assert "recommended grant 328,000" in answer
        assert "keeps 57 of 60 resolved runs (95.0%; 95% Wilson interval 86.3%–98.3%)" in answer
        assert f"saves {saved_m} of" in answer and saved_usd in answer
        assert "At the seed" in answer and "53 kept, 2 at risk, 5 lost of 60 resolved runs" in answer
        assert "seed band" not in answer  # the seed probe is its own section, never the headline
    html = files.html.read_text()
    assert html.index("Seed probe") > html.index("How to read this report")


@pytest.mark.real
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
@pytest.mark.timeout(300)
def test_in_chromium_tables_fit_and_every_grant_chart_names_the_grant(written) -> None:  # type: ignore[no-untyped-def]
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    report, files = written
    label = f"recommended grant {report.recommended:,}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(files.html.resolve().as_uri())
        page.wait_for_selector("figure.grant-chart svg")
        tables = page.evaluate(
            """() => [...document.querySelectorAll('table')].map(t => ({
                cls: t.className, right: t.getBoundingClientRect().right, scroll: t.scrollWidth,
                box: t.parentElement.clientWidth, page: document.documentElement.clientWidth}))"""
        )
        charts = page.evaluate(
            """() => [...document.querySelectorAll('figure.grant-chart')].map(f => ({
                chart: f.dataset.chart,
                legends: [...f.querySelectorAll('svg g[id^="legend"]')].map(g => g.textContent)}))"""
        )
        wide = page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
        page.screenshot(path=str(SHOTS / "report_mini_top.png"))
        page.locator("#grants").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "report_mini_grants.png"))
        page.screenshot(path=str(SHOTS / "report_mini.png"), full_page=True)
        browser.close()
    assert len(tables) >= 12
    over = [t for t in tables if t["right"] > t["page"] + 0.5 or t["scroll"] > t["box"] + 0.5]
    assert not over, f"tables wider than the page: {over}"
    assert not wide, "the page scrolls sideways"
    assert {c["chart"] for c in charts} == {"sweep", "frontier", "survival", "heatmap"}
    for c in charts:
        text = " ".join(c["legends"])
        assert re.search(re.escape(label), text), f"{c['chart']}: {label!r} not in its legend: {text[:300]}"
