"""Every status a calibration row can take, on runs written here for each (and on the shared mini-swe-agent runs
split by repository for the cross-corpus flags): recommended only when the evidence argues for changing the
constant, keep, evidence points elsewhere: <row>, a grid widened at its edge, a reserve and safety pair that cannot
fit its window, and a row outside another corpus's band."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

import workbench as wb
from workbench.analysis.calibration import Calibration, ConstantRow, calibrate
from workbench.analysis.calibration.model import ELSEWHERE, KEEP, NONE_SATISFIES, NOT_ENOUGH, RECOMMENDED
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.cli import main
from workbench.govern.policy import Policy
from workbench.paths import bundled_traces
from workbench.trace.schema import Outcome, Run, ToolCall, ToolResult, Turn, Usage

GRANT = (
    10_100  # ten calls of 1,000 prompt + 10 completion tokens: every run below crosses it at its 10th call
)
POLICY = Policy.named("current").replace(grant=GRANT)


def _turn(
    i: int, last: bool, *, same: bool = False, prompt: int = 1000, completion: int = 10, finish=None
) -> Turn:
    args = '{"command": "ls"}' if same else f'{{"command": "cat f{i}"}}'
    return Turn(
        index=i,
        usage=Usage(prompt=prompt, cached=0, completion=completion),
        finish_reason=finish,
        tool_calls=[] if last else [ToolCall(id=f"c{i}", name="bash", arguments=args)],
        tool_results=[] if last else [ToolResult(call_id=f"c{i}", content="same" if same else f"out {i}")],
        text="done" if last else "ok",
    )


def _run(run_id: str, calls: int, label: str, *, repeat: range = range(0), context_length=None) -> Run:
    """A run of ``calls`` calls (1,010 billed each); the calls in ``repeat`` send one identical command."""
    turns = [_turn(i, i == calls - 1, same=i in repeat) for i in range(calls)]
    outcome = Outcome(stop_reason="done", label=label)
    return Run(run_id=run_id, source="test", turns=turns, outcome=outcome, context_length=context_length)


# -- landing: evidence points elsewhere, keep, recommended ----------------------------------------------------


def test_a_landing_that_is_a_second_grant_points_to_the_leaf_grant() -> None:
    # twelve resolved runs cross the grant at call 9 and make 20 more calls: 20 calls, 2.0 grants after it
    runs = [_run(f"p{i}", 30, "resolved") for i in range(12)]
    cal = calibrate(runs, POLICY, families=("landing",))
    turns, share = cal.row("landing turns"), cal.row("landing token share")
    for row, value in ((turns, 20), (share, 2.0)):
        assert row.status == ELSEWHERE and row.points_to == "leaf grant" and row.recommended is None
        assert row.value == value and row.band == (value, value) and row.answer is None
        assert row.status_words == "evidence points elsewhere: leaf grant"
        assert "argue for a larger grant, not a longer landing" in row.why
        d = row.to_dict()
        assert (d["status"], d["points_to"], d["value"], d["recommended"]) == (
            ELSEWHERE,
            "leaf grant",
            value,
            None,
        )
    assert turns.recommendation_words.startswith(
        "evidence points elsewhere: leaf grant (this rule gives 20 (band 20 to 20)): half the positive runs the "
        "grant of 10,100 catches still had 20 calls to go, more than 2 times the 4 in use"
    )
    assert cal.to_frame().set_index("constant").loc["landing turns", "status"] == (
        "evidence points elsewhere: leaf grant"
    )


def test_a_landing_the_runs_confirm_is_kept_and_a_longer_one_recommended() -> None:
    # calls after the crossing: median 4, the value in use -> keep
    after = [2, 3, 3, 4, 4, 4, 4, 5, 5, 6, 6, 7]
    kept = calibrate(
        [_run(f"k{i}", 10 + a, "resolved") for i, a in enumerate(after)], POLICY, families=("landing",)
    )
    row = kept.row("landing turns")
    assert row.status == KEEP and row.value == row.answer == 4 and row.recommended is None
    assert row.recommendation_words.startswith("keep 4 (band ")
    # every run needed 7: more than the 4 in use, less than twice it -> a longer landing is recommended
    longer = calibrate([_run(f"l{i}", 17, "resolved") for i in range(12)], POLICY, families=("landing",))
    row = longer.row("landing turns")
    assert row.status == RECOMMENDED and row.recommended == 7 and row.band == (7, 7)


# -- reserve and safety: robust quantities, length-limit outliers, the pair against the window ---------------


def _growing(
    run_id: str, completions: list[int], *, finish_at: int | None = None, context_length=None
) -> Run:
    """Each call's prompt is the previous prompt plus its reply plus 50 tokens of tool output."""
    prompt, turns = 1000, []
    for i, c in enumerate(completions):
        last = i == len(completions) - 1
        t = _turn(i, last, prompt=prompt, completion=c, finish="length" if i == finish_at else "stop")
        turns.append(t)
        prompt += c + 50
    outcome = Outcome(stop_reason="done", label="resolved")
    return Run(run_id=run_id, source="test", turns=turns, outcome=outcome, context_length=context_length)


def test_one_runaway_reply_at_the_length_limit_is_an_outlier_not_the_reserve() -> None:
    runs = [_growing(f"r{k}", [200 + 10 * k + i for i in range(10)]) for k in range(12)]
    runaway = [200 + i for i in range(10)]
    runaway[4] = 65_536
    runs[0] = _growing("r0", runaway, finish_at=4)
    cal = calibrate(runs, POLICY, families=("reserve",))
    done = np.array([c for r in runs for c in (t.usage.completion for t in r.turns)], dtype=float)
    grow = np.array(
        [b.usage.prompt - a.usage.prompt for r in runs for a, b in itertools.pairwise(r.turns)],
        dtype=float,
    )
    reserve, safety = cal.row("reserve"), cal.row("safety")
    assert reserve.recommended == int(np.ceil(np.quantile(done, 0.99))) < 1_000
    assert safety.recommended == int(np.ceil(np.quantile(grow, 0.99))) < 1_000
    assert any("r0 call 4: 65,536 (the reply hit its length limit)" in n for n in reserve.notes)
    assert any("r0 call 5: 65,586 (after a reply that hit its length limit)" in n for n in safety.notes)
    pair = reserve.recommended + safety.recommended
    room = f"reserve + safety = {pair:,} tokens leave {8_192 - pair:,} of the 8,192-token window in use (ADR-107's"
    assert all(any(n.startswith(room) for n in row.notes) for row in (reserve, safety))
    assert reserve.flags == safety.flags == ()


def test_a_pair_that_cannot_fit_the_window_in_use_is_flagged_on_both_rows() -> None:
    runs = [_growing(f"w{k}", [70_000, 10], context_length=131_072) for k in range(12)]
    cal = calibrate(runs, POLICY, families=("reserve",))
    reserve, safety = cal.row("reserve"), cal.row("safety")
    assert (reserve.recommended, safety.recommended) == (70_000, 70_050)
    flag = (
        "reserve + safety = 140,050 tokens cannot fit the 131,072-token window in use (recorded by test): no room "
        "is left for the prompt"
    )
    assert reserve.flags == safety.flags == (flag,)
    assert reserve.to_dict()["flags"] == [flag]
    # the policy's own window is the one in use when it sets one
    own = calibrate(runs, POLICY.replace(context_length=200_000), families=("reserve",)).row("reserve")
    assert own.flags == () and any(
        "leave 59,950 of the 200,000-token window in use (the policy's" in n for n in own.notes
    )


# -- guards: widened grids, at grid edge, keep ----------------------------------------------------------------


def test_a_guard_at_its_grid_edges_widens_then_says_at_grid_edge() -> None:
    # negative runs repeat one command for 29 calls: every cap up to 16 still stops them; positives never repeat
    runs = [_run(f"p{i}", 20, "resolved") for i in range(12)]
    runs += [_run(f"n{i}", 30, "unresolved", repeat=range(30)) for i in range(12)]
    row = calibrate(runs, POLICY, families=("guards",)).row("no-progress repeat cap")
    assert sorted(row.evidence["value"]) == [2, 3, 4, 5, 6, 7, 8, 10, 12, 16]  # widened at the loose edge
    assert row.status == RECOMMENDED and row.recommended == 2 and row.band == (2, None)
    assert row.at_grid_edge and row.extrapolated
    assert row.recommendation_words == "2 (band 2 to unbounded) — at grid edge, extrapolated"
    assert any("widened at its edge to 10, 12, 16" in n for n in row.notes)
    assert any(
        "still stops a negative run at 16, the loosest value tried: the band is open there" in n
        for n in row.notes
    )
    assert any("at grid edge, widened as far as the guard means anything" in n for n in row.notes)


def test_a_guard_whose_value_in_use_holds_says_keep() -> None:
    # both kinds repeat one command three times: caps 2 and 3 stop positive runs, 4 (in use) is the strictest clean
    runs = [_run(f"p{i}", 20, "resolved", repeat=range(5, 8)) for i in range(12)]
    runs += [_run(f"n{i}", 20, "unresolved", repeat=range(5, 8)) for i in range(12)]
    row = calibrate(runs, POLICY, families=("guards",)).row("no-progress repeat cap")
    table = row.evidence.set_index("value")
    assert table.loc[3, "false_positives"] == 12 and table.loc[4, "false_positives"] == 0
    assert row.status == KEEP and row.value == row.answer == 4 and row.recommended is None
    assert row.why == "the rule gives the value in use, 4"


# -- the row model ---------------------------------------------------------------------------------------------


def _row(**kw) -> ConstantRow:
    base = dict(
        name="no-progress repeat cap",
        ref=ConstantRef("workbench.govern.noprogress", "NO_PROGRESS_REPEAT_CAP"),
        seed=4,
        in_use=4,
        unit="identical turns",
        effect="e",
        touched=(),
        status=RECOMMENDED,
        recommended=5,
        band=(5, 8),
        rule="r",
        runs=40,
        calls=400,
    )
    return ConstantRow(**{**base, **kw})


def test_the_row_model_holds_each_status_to_its_fields() -> None:
    with pytest.raises(ValueError, match="names the row it points to"):
        _row(status=ELSEWHERE, recommended=None)
    with pytest.raises(ValueError, match="names the row it points to"):
        _row(points_to="leaf grant")
    with pytest.raises(ValueError, match="names the value it keeps"):
        _row(status=KEEP, recommended=None)
    with pytest.raises(ValueError, match="at its grid's edge is extrapolated"):
        _row(at_grid_edge=True)
    assert _row(status=KEEP, recommended=None, value=4).recommendation_words == "keep 4 (band 5 to 8)"


def _cal(label: str, *rows: ConstantRow) -> Calibration:
    return Calibration(rows=rows, policy_label="current", corpus=label, counts={})


def test_a_row_outside_another_corpus_band_is_flagged_naming_it() -> None:
    here = _cal("A", _row(), _row(name="safety", recommended=3_072, band=(1_290, 3_072)))
    other = _cal(
        "B",
        _row(recommended=6, band=(6, None), runs=56),
        _row(name="safety", status=NOT_ENOUGH, recommended=None, band=None, why="few"),
    )
    checked = here.checked_against([("B", other)])
    repeat, safety = checked.row("no-progress repeat cap"), checked.row("safety")
    assert repeat.flags == ("outside B's band [6, unbounded] (56 runs)",)
    assert [c.to_dict() for c in repeat.checks] == [
        {"corpus": "B", "status": RECOMMENDED, "value": 6, "band": [6, None], "runs": 56, "inside": False}
    ]
    assert safety.flags == () and safety.checks[0].inside is None  # unknown is never False
    assert checked.notes[-1] == "checked against B: B"
    # no grant satisfying the invariants there: a grant recommended here is flagged
    grant = _row(name="leaf grant", recommended=230_000, band=(230_000, 600_000))
    none = _row(name="leaf grant", status=NONE_SATISFIES, recommended=None, band=None, why="w", runs=32)
    flagged = _cal("A", grant).checked_against([("rest", _cal("rest", none))]).row("leaf grant")
    assert flagged.flags == ("rest has no value satisfying the invariants (32 runs)",)
    # held-out comparison reads a kept row's value
    kept = _cal("H", _row(status=KEEP, recommended=None, value=6, band=(5, None)))
    assert (
        here.compare(kept).loc[0, "held_out_recommended"] == 6
        and here.compare(kept).loc[0, "held_out_inside_band"]
    )


def test_cli_compare_checks_every_row_against_the_other_corpus(
    synthetic_calls, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = bundled_traces() / "synthetic"
    assert main(["calibrate", str(synthetic), "--compare", str(synthetic), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 16
    for d in rows:
        assert [c["corpus"] for c in d["checks"]] == [str(synthetic)]
        (check,) = d["checks"]
        # a corpus against itself: every answer sits inside its own band, or the check is unknown
        assert check["inside"] in (True, None) and d["flags"] == [], d["constant"]
        assert d["status_words"] == (
            f"{ELSEWHERE}: {d['points_to']}" if d["status"] == ELSEWHERE else d["status"]
        )
    assert main(["calibrate", str(synthetic), "--compare", str(synthetic)]) == 0
    out = capsys.readouterr().out
    assert "Flags:\n- none" in out and "Against the other corpora" in out
    assert len(synthetic_calls) == 4  # the corpus and its --compare, twice


# -- real runs: the shared mini-swe-agent corpus split by repository ------------------------------------------


@pytest.fixture(scope="module")
def split(shared: Path) -> tuple[Calibration, Calibration]:
    trajs = sorted(p for p in (shared / "mini-swe-agent" / "trajs").glob("*__*") if p.is_dir())
    django = [p for p in trajs if p.name.startswith("django__")]
    rest = [p for p in trajs if not p.name.startswith("django__")]
    families = ("grant", "reserve")
    return calibrate(wb.load(*django), "current", families=families), calibrate(
        wb.load(*rest), "current", families=families
    )


def _p(values: list[int], q: float) -> int:
    return int(np.ceil(np.quantile(np.array(values, dtype=float), q)))


def test_cross_corpus_flags_on_the_shared_runs_split_by_repository(shared: Path, split) -> None:
    django, rest = split
    done: dict[bool, list[int]] = {True: [], False: []}
    grow: dict[bool, list[int]] = {True: [], False: []}
    for f in sorted((shared / "mini-swe-agent" / "trajs").glob("*/*.traj.json")):
        doc = json.loads(f.read_text())
        calls = [m["extra"]["response"]["usage"] for m in doc["messages"] if m["role"] == "assistant"]
        side = doc["instance_id"].startswith("django__")
        done[side] += [u["completion_tokens"] for u in calls]
        grow[side] += [b["prompt_tokens"] - a["prompt_tokens"] for a, b in itertools.pairwise(calls)]
    for cal, side in ((django, True), (rest, False)):
        assert cal.row("reserve").band == (_p(done[side], 0.95), _p(done[side], 0.99))
        assert cal.row("safety").band == (_p(grow[side], 0.95), _p(grow[side], 0.99))
    assert django.row("reserve").band == (1_290, 3_072) and rest.row("reserve").band == (1_055, 2_811)
    assert django.row("safety").band == (2_635, 4_132) and rest.row("safety").band == (2_431, 4_011)
    a = django.checked_against([("rest", rest)])
    b = rest.checked_against([("django", django)])
    assert a.row("reserve").flags == ("outside rest's band [1,055, 2,811] (56 runs)",)
    assert a.row("safety").flags == ("outside rest's band [2,431, 4,011] (56 runs)",)
    assert a.row("leaf grant").recommended == 230_000 and rest.row("leaf grant").status == NONE_SATISFIES
    assert a.row("leaf grant").flags == ("rest has no value satisfying the invariants (32 runs)",)
    assert b.row("reserve").flags == b.row("safety").flags == () and b.row("reserve").checks[0].inside
    assert b.row("leaf grant").flags == () and b.row("leaf grant").checks[0].inside is None


def test_the_report_section_renders_every_status_and_flag() -> None:
    from workbench.report.calibration import calibration_context

    rows = (
        _row(
            name="landing turns",
            status=ELSEWHERE,
            recommended=None,
            value=19,
            points_to="leaf grant",
            why="w",
        ),
        _row(name="turn backstop", status=KEEP, recommended=None, value=400, band=(129, None), why="k"),
        _row(
            name="reserve", recommended=65_536, band=(2_000, 65_536), flags=("reserve + safety cannot fit",)
        ),
    )
    ctx = calibration_context(_cal("A", *rows))
    assert "evidence points elsewhere: leaf grant" in str(ctx["table"]) and "keep" in str(ctx["table_md"])
    by_name = {r["name"]: r for r in ctx["rows"]}
    assert by_name["landing turns"]["recommendation"].startswith(
        "evidence points elsewhere: leaf grant (this rule"
    )
    assert by_name["turn backstop"]["recommendation"] == "keep 400 (band 129 to unbounded): k"
    assert by_name["reserve"]["notes"][0] == "flag: reserve + safety cannot fit"
