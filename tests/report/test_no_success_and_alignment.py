"""Two report leftovers of issue 26 (h24rep's note): a group with no successful run is told plainly that there is
no grant to recommend (no "best swept grant" keeping 0 of 0), in `frontier` and in the report's answer box from the
one engine; and the Markdown tables align numbers right, numbers already written as text (money) included."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from workbench.analysis.recommendation import recommend
from workbench.analysis.targets import AnalystInvariants
from workbench.cli import main
from workbench.report.tables import html_table, md_table

NO_SUCCESS_WHY = (
    "no grant to recommend: codex-cli has no successful run (0 of 1 run finished), so there is nothing a grant "
    "can keep"
)


def _curve(resolved: int) -> pd.DataFrame:
    rows = []
    for g in (100_000, 200_000, 300_000):
        rows.append(
            {
                "group": "codex-cli", "rules": "current", "context_length": None, "grant": g, "basis": "finished",
                "runs": 1, "resolved": resolved, "resolved_kept": 0, "resolved_lost": resolved,
                "resolved_kept_share": float("nan") if resolved == 0 else 0.0, "resolved_kept_low": float("nan"),
                "resolved_kept_high": float("nan"), "spend_saved_usd": 0.0, "lost_by": {}, "max_raw": 0,
                "spend_saved_tokens": 0,
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def test_no_successful_run_names_no_grant() -> None:
    rec = recommend(_curve(0), AnalystInvariants(keep_resolved=0.95))
    assert not rec.found and rec.no_success
    assert rec.best_grant is None and rec.best_keeps == ""
    assert rec.why == NO_SUCCESS_WHY
    assert rec.headline == "no grant to recommend: codex-cli has no successful run"
    assert rec.to_dict()["no_success"] is True
    # a group with successful runs still gets its best swept grant
    other = recommend(_curve(2), AnalystInvariants(keep_resolved=0.95))
    assert not other.no_success and other.best_grant == 100_000
    assert other.headline.startswith(
        "no swept grant satisfies every invariant; best swept grant 100,000: keeps 0 of 2"
    )


def test_frontier_text_on_codex_cli(shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["frontier", str(shared / "codex-cli")])
    out = capsys.readouterr().out.splitlines()
    i = out.index("== codex-cli — rules current, no context manager; success = finished (finished)")
    assert out[i + 1] == "no grant to recommend: codex-cli has no successful run"
    assert out[i + 2] == f"  why: {NO_SUCCESS_WHY}"
    assert not any("best swept grant" in line for line in out)


def test_report_answer_box_on_codex_cli(shared: Path) -> None:
    import workbench as wb
    from workbench.report import ReportConfig, build_report
    from workbench.report.views import headlines

    config = ReportConfig(context_lengths=(None,), estimate_study=False, calibrate_constants=False)
    report = build_report(corpus=wb.load(shared / "codex-cli"), config=config)
    (item,) = [h for h in headlines(report) if h["group"] == "codex-cli"]
    assert item["text"] == NO_SUCCESS_WHY + "."
    assert item["flag"] == "" and item["detail"] == "" and item["seed"] == ""
    # no group has a curve to draw: the frontier chart says why under its axis, and has no empty legend
    (frontier,) = [f for name, f in report.figures.items() if name == "frontier"]
    assert all(ax.get_legend() is None for ax in frontier.axes)
    assert "not drawn: " in frontier.axes[0].get_xlabel()


def test_markdown_and_html_align_numbers_and_money_right() -> None:
    frame = pd.DataFrame(
        {
            "run": ["a|b", "c"],
            "recorded USD": ["$1,234.56", "-$0.50"],
            "saved": ["+1.5%", "—"],
            "calls": [3, 12],
            "context": ["none", "8,000"],
            "model": ["haiku", "opus"],
            "kept": ["13 (68.4%)", "0 (—)"],
            "interval": ["27.0%–47.4%", "—"],
            "tokens saved": ["17.11M", "0"],
        }
    )
    assert md_table(frame) == (
        "| run | recorded USD | saved | calls | context | model | kept | interval | tokens saved |\n"
        "| --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |\n"
        "| a\\|b | $1,234.56 | \\+1.5% | 3 | none | haiku | 13 \\(68.4%\\) | 27.0%–47.4% | 17.11M |\n"
        "| c | -$0.50 | — | 12 | 8,000 | opus | 0 \\(—\\) | — | 0 |"
    )
    head = html_table(frame).split("<tbody>")[0]
    assert head == (
        "<table><thead><tr><th class='l'>run</th><th class=''>recorded USD</th><th class=''>saved</th>"
        "<th class=''>calls</th><th class='l'>context</th><th class='l'>model</th><th class=''>kept</th>"
        "<th class=''>interval</th><th class=''>tokens saved</th></tr></thead>"
    )
