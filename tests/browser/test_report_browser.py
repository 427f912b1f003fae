"""The report as a newcomer opens it, in headless Chromium (Debian's ``chromium`` driven by playwright): every
image has loaded (``naturalWidth > 0``; every inline chart has a size), no text overflows its box, and the
glossary defines every term of the workbench's vocabulary that the text uses. Screenshots go to
``out/browser/report_newcomer*.png``."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from workbench.paths import bundled_traces
from workbench.report import ReportConfig, build_report, write_report

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "out" / "browser"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Words a newcomer cannot decode without a definition: the workbench's vocabulary and the seed's names. Each
# one the report's text uses must be defined in its glossary (matched case-insensitively, as a word).
VOCABULARY = (
    "grant", "landing", "allowance", "cost meter", "raw tokens", "kept", "at risk", "lost", "censored",
    "diverges", "Wilson", "invariant", "coverage", "seed", "rule set", "cache read", "cache write",
    "observation mask", "context length", "segment", "leaf", "leaves", "ADR-107", "linear.go",
    "seed-warm-runaway", "melt-down", "steered", "CONTEXT_TRUNCATED", "DefaultLeafTokens", "ink-s9", "runaway",
    "unverified success", "finished", "resolved", "band", "probe", "SWE-Effi", "EuTB", "EuCB",
    "expensive failures", "best swept grant",
)  # fmt: skip


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    config = ReportConfig(grants=tuple(range(150_000, 300_001, 5_000)), context_grant_points=3)
    report = build_report([bundled_traces()], config=config, command="workbench report")
    return report, write_report(report, tmp_path_factory.mktemp("newcomer") / "report")


def _used(text: str, term: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", text, re.IGNORECASE) is not None


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
@pytest.mark.timeout(300)
def test_a_newcomer_can_read_the_report(written) -> None:  # type: ignore[no-untyped-def]
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    _, files = written
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(files.html.resolve().as_uri())
        page.wait_for_load_state("load")
        images = page.evaluate(
            """() => [...document.querySelectorAll('img')].map(i => ({
                src: i.src.slice(0, 60), alt: i.alt, complete: i.complete, width: i.naturalWidth}))"""
        )
        svgs = page.evaluate(
            """() => [...document.querySelectorAll('figure svg')].map(s => {
                const r = s.getBoundingClientRect(); return {w: r.width, h: r.height}})"""
        )
        overflow = page.evaluate(
            """() => [...document.querySelectorAll('p, li, dt, dd, td, th, h1, h2, h3, figcaption, div')]
                .filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).display !== 'inline')
                .map(e => ({tag: e.tagName, text: e.textContent.slice(0, 80), scroll: e.scrollWidth,
                            box: e.clientWidth}))"""
        )
        wide = page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
        glossary = page.evaluate(
            "() => [...document.querySelectorAll('table.glossary tr td:first-child')].map(t => t.textContent)"
        )
        text = page.evaluate(
            """() => { const c = document.body.cloneNode(true);
                       c.querySelectorAll('table.glossary, svg, style').forEach(e => e.remove());
                       return c.innerText; }"""
        )
        page.screenshot(path=str(SHOTS / "report_newcomer_top.png"))
        page.screenshot(path=str(SHOTS / "report_newcomer.png"), full_page=True)
        browser.close()
    assert images or svgs, "the report draws no chart"
    assert [i for i in images if not (i["complete"] and i["width"] > 0)] == []
    assert [s for s in svgs if s["w"] <= 0 or s["h"] <= 0] == []
    assert overflow == [], f"text overflows its box: {overflow[:5]}"
    assert not wide, "the page scrolls sideways"
    defined = " | ".join(glossary)
    missing = [t for t in VOCABULARY if _used(text, t) and not _used(defined, t)]
    assert missing == [], f"used but not in the glossary: {missing}"
