"""The calibration table's rules on hand-made evidence, the bundled synthetic corpus, the CLI and the charts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.figure import Figure

from workbench.analysis.calibration import NOT_ENOUGH, RECOMMENDED, ConstantRow, calibrate, provenance_of
from workbench.analysis.calibration.evidence import Evidence, group_of
from workbench.analysis.calibration.guards import band_of
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.calibration.seed import needed_seed
from workbench.charts.calibration import constant_chart
from workbench.cli import main
from workbench.govern import landing, replies
from workbench.paths import bundled_traces
from workbench.trace.schema import Outcome, Run, ToolCall, Turn, Usage

SYNTHETIC = bundled_traces() / "synthetic"


# -- provenance ----------------------------------------------------------------------------------------------


def test_provenance_is_the_comment_at_the_constants_home() -> None:
    assert provenance_of("workbench.govern.landing", "LANDING_TURNS") == "seed 001 linear.go landingTurns"
    # a comment block directly above the assignment (estimate/constants.py's style)
    assert provenance_of("workbench.estimate.constants", "CALIBRATION_SEED").startswith("Workbench choice")
    ref = ConstantRef("workbench.govern.replies", "EMPTY_REPLY_DIVISOR")
    assert ref.value == replies.EMPTY_REPLY_DIVISOR == 2
    assert "remaining/2" in ref.provenance
    with pytest.raises(LookupError, match="no provenance"):
        provenance_of("workbench.govern.landing", "landing_allowance")


def test_empty_reply_divisor_is_the_rule_the_governor_applies() -> None:
    assert replies.abandon_empty("", 1000, 501) and not replies.abandon_empty("", 1000, 500)
    assert replies.abandon_empty("", 1000, 251, divisor=4) and not replies.abandon_empty(
        "", 1000, 250, divisor=4
    )
    assert not replies.abandon_empty("text", 1000, 900)


# -- the row model --------------------------------------------------------------------------------------------


def _row(**kw) -> ConstantRow:
    base = dict(
        name="landing turns",
        ref=ConstantRef("workbench.govern.landing", "LANDING_TURNS"),
        seed=4,
        in_use=4,
        unit="calls",
        effect="e",
        touched=(),
        status=RECOMMENDED,
        recommended=3,
        band=(2, None),
        rule="r",
        runs=12,
        calls=100,
    )
    return ConstantRow(**{**base, **kw})


def test_row_status_and_recommendation_agree() -> None:
    with pytest.raises(ValueError, match="carries no recommendation"):
        _row(status=NOT_ENOUGH)
    with pytest.raises(ValueError, match="needs a value"):
        _row(recommended=None)
    with pytest.raises(ValueError, match="status must be"):
        _row(status="maybe")
    assert _row().recommendation_words == "3 (band 2 to unbounded)"
    assert _row(extrapolated=True).recommendation_words.endswith("— extrapolated")
    row = _row(status=NOT_ENOUGH, recommended=None, band=None, why="7 runs")
    assert row.recommendation_words == "not enough data: 7 runs"
    assert row.frame_row()["rule"] == "7 runs"


def test_row_repr_escapes_html() -> None:
    row = _row(effect="<script>alert(1)</script>", evidence=pd.DataFrame({"run_id": ["<b>x</b>"]}))
    out = row._repr_html_()
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "<b>x</b>" not in out


def test_row_dict_is_json_with_numpy_values() -> None:
    row = _row(
        recommended=np.int64(3), band=(np.float64(2.0), float("nan")), evidence=pd.DataFrame({"a": [np.nan]})
    )
    d = row.to_dict()
    assert d["recommended"] == 3 and d["band"] == [2.0, None] and d["evidence"] == [{"a": None}]
    json.dumps(d)


# -- the guard rule -------------------------------------------------------------------------------------------


def _guard_table(values, fp, stopped) -> pd.DataFrame:
    return pd.DataFrame({"value": values, "false_positives": fp, "negatives_stopped": stopped})


def test_guard_band_for_a_cap() -> None:
    # a cap stops sooner when lower: the pick is the lowest value from which every larger one is clean
    t = _guard_table([2, 3, 4, 5, 6, 7], [3, 1, 0, 0, 0, 0], [9, 5, 3, 2, 0, 0])
    assert band_of(t, "lower") == (4, 5)
    # a false positive above a clean value moves the pick above it
    t = _guard_table([2, 3, 4, 5], [0, 0, 1, 0], [4, 3, 2, 0])
    assert band_of(t, "lower") == (5, 4)
    assert band_of(_guard_table([2, 3], [1, 1], [1, 0]), "lower") == (None, 2)


def test_guard_band_for_a_minimum() -> None:
    # a minimum stops sooner when higher: the loosest is the smallest
    t = _guard_table([1, 2, 3, 4, 5], [0, 0, 0, 1, 2], [0, 0, 1, 2, 3])
    assert band_of(t, "higher") == (3, 3)


# -- the seed rule --------------------------------------------------------------------------------------------


@given(st.lists(st.floats(0.5, 3.0, allow_nan=False), min_size=1, max_size=400))
def test_needed_seed_is_the_smallest_keeping_under_counts_within_one_percent(ratios: list[float]) -> None:
    s = needed_seed(np.array(ratios))
    allowed = math.floor(0.01 * len(ratios))
    assert sum(r > s for r in ratios) <= allowed
    smaller = [r for r in ratios if r < s]
    if smaller:  # any smaller seed under-counts more than allowed
        assert sum(r > max(smaller) for r in ratios) > allowed


# -- groups ---------------------------------------------------------------------------------------------------


def _run(run_id: str, outcome: Outcome, calls: int = 3, last_tool: bool = False) -> Run:
    turns = [
        Turn(
            index=i,
            usage=Usage(prompt=1000 * (i + 1), cached=0, completion=10),
            tool_calls=[ToolCall(id=f"c{i}", name="bash", arguments="{}")]
            if (i < calls - 1 or last_tool)
            else [],
            text="ok",
        )
        for i in range(calls)
    ]
    return Run(run_id=run_id, source="test", turns=turns, outcome=outcome)


def test_outcome_groups() -> None:
    assert group_of(_run("a", Outcome(stop_reason="done", label="resolved"))) == "resolved"
    assert group_of(_run("b", Outcome(stop_reason="done", label="unresolved"))) == "unresolved"
    assert group_of(_run("c", Outcome(stop_reason="done"))) == "finished"
    assert group_of(_run("d", Outcome(stop_reason="turn-cap"))) == "cut"
    assert group_of(_run("e", Outcome(stop_reason="error"))) == "failed"
    assert group_of(_run("f", Outcome(stop_reason=None), last_tool=True)) == "open"
    ev = Evidence.of([_run("c", Outcome(stop_reason="done"))])
    assert ev.leaves[0].spent == (1010, 3020, 6030)  # the cost meter on running totals, no cache reads
    assert ev.leaves[0].crossing(3020) == 1 and ev.leaves[0].crossing(10**6) is None
    assert ev.uses_finished and "in place of 'resolved'" in ev.describe()


def test_a_small_corpus_says_not_enough_data() -> None:
    runs = [_run(f"r{i}", Outcome(stop_reason="done", label="resolved")) for i in range(3)]
    cal = calibrate(runs, families=("turns", "guards", "landing"))
    assert {r.status for r in cal.rows} == {NOT_ENOUGH}
    assert cal.row("turn backstop").why == "3 positive runs; 10 needed"


def test_a_source_with_nothing_to_measure_draws_no_bar() -> None:
    """One call per run: no prompt growth between sends. The safety chart draws that source without a bar (the
    growth is unknown, not 0) instead of failing the report."""
    cal = calibrate([_run("a", Outcome(stop_reason="done"), calls=1)], families=("reserve",))
    safety = cal.row("safety")
    assert safety.evidence["growth_p99"].tolist() == [None]
    fig = constant_chart(safety)
    assert isinstance(fig, Figure)
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert len(heights) == 2 and all(math.isnan(h) for h in heights)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["test\n(1 runs; nothing to measure)"]
    reserve = constant_chart(cal.row("reserve"))
    assert [p.get_height() for p in reserve.axes[0].patches] == [10.0, 10.0]


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="unknown constant families"):
        calibrate([], families=("grnat",))
    with pytest.raises(ValueError, match="no replayable runs"):
        calibrate([])
    with pytest.raises(ValueError, match="unknown rule set"):
        calibrate([], "currnet")
    with pytest.raises(ValueError, match="at least two grants"):
        calibrate([_run("a", Outcome(stop_reason="done"))], grants=[200_000])


# -- the synthetic corpus, end to end ------------------------------------------------------------------------


def test_synthetic_corpus_has_every_row_and_a_chart_each(synthetic_cal) -> None:
    assert len(synthetic_cal.rows) == 16
    assert synthetic_cal.row("landing turns").ref.value == landing.LANDING_TURNS
    assert synthetic_cal.counts["finished"] == 26 and synthetic_cal.counts["cut"] == 4
    # the seeded tool-timeout scenario is a negative run the cap stops early
    tt = synthetic_cal.row("tool-timeout cap").evidence.set_index("value")
    assert "seed-tool-timeouts" in tt.loc[3, "stopped_negative_runs"]
    for row in synthetic_cal.rows:
        fig = constant_chart(row)
        assert isinstance(fig, Figure) and fig.axes
    # the leaf grant's two lines are both named, the right axis's too
    named = [t.get_text() for t in constant_chart(synthetic_cal.row("leaf grant")).legends[0].get_texts()]
    assert {"share of finished runs finishing inside", "runs landed mid-work (right axis)"} <= set(named)
    html = synthetic_cal._repr_html_()
    assert html.count("<tr>") == 16 and "<th>constant</th>" in html


def test_cli_table_json_and_out(synthetic_calls, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(SYNTHETIC), "--json", "--out", str(tmp_path / "cal")]) == 0
    assert len(synthetic_calls) == 1
    out = capsys.readouterr().out.strip().splitlines()
    rows = [json.loads(line) for line in out]
    assert len(rows) == 16 and rows[0]["constant"] == "leaf grant"
    assert {"seed", "provenance", "effect", "status", "recommended", "band", "rule", "runs", "calls"} <= set(
        rows[0]
    )
    written = sorted(p.name for p in (tmp_path / "cal").iterdir())
    assert "calibration.json" in written and "calibration.md" in written and "turn-backstop.png" in written
    assert "manifest.json" in written and not [n for n in tmp_path.iterdir() if n.name.startswith(".")]
    assert json.loads((tmp_path / "cal" / "calibration.json").read_text())[3]["constant"] == "turn backstop"


def test_cli_refuses_an_out_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    assert main(["calibrate", str(SYNTHETIC), "--out", str(f)]) == 2
    err = capsys.readouterr().err
    assert "exists and is not a folder" in err and "Traceback" not in err
    assert main(["calibrate", str(SYNTHETIC), "--out", str(SYNTHETIC)]) == 2  # never over an input
    assert "would replace the input" in capsys.readouterr().err


def test_compare_with_held_out_runs() -> None:
    from workbench.analysis.calibration import Calibration

    def cal(rec, band):
        return Calibration((_row(recommended=rec, band=band),), "p", "c", {})

    t = cal(3, (2, 5)).compare(cal(4, (3, 6)))
    assert t.loc[0, "held_out_inside_band"] and t.loc[0, "held_out_recommended"] == 4
    assert not cal(3, (2, 3)).compare(cal(4, None)).loc[0, "held_out_inside_band"]
    none = cal(3, (2, 3)).compare(Calibration((), "p", "c", {}))
    assert none.loc[0, "held_out_inside_band"] is None and none.loc[0, "held_out_runs"] == 0


def test_runs_without_usage_are_read_not_crashed_on() -> None:
    runs = []
    for i in range(12):
        r = _run(f"u{i}", Outcome(stop_reason="done", label="resolved" if i % 2 else "unresolved"))
        for t in r.turns:
            t.usage = Usage()
        runs.append(r)
    cal = calibrate(runs, families=("landing", "turns", "emptyreply", "reserve"))
    assert cal.row("landing turns").status == NOT_ENOUGH  # nothing is billed: no run crosses the grant
    assert cal.row("reserve").status == NOT_ENOUGH  # no completion reported
