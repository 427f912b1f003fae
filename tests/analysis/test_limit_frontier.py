"""The frontier in an agent's own limits (workbench.analysis.limit_frontier, ``frontier --cost-limits/--step-limits``):
mini-swe-agent trajectories the tests write, swept over cost_limit and step_limit, the recommendation in dollars."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pandas as pd
import pytest

from tests.importers.minisweagent_fixtures import v1
from workbench.analysis.limit_frontier import (
    COLUMNS,
    TABLE,
    LimitFrontier,
    limit_frontier,
    peak_dollars,
    recommend_limits,
)
from workbench.analysis.targets import AnalystInvariants
from workbench.cli import main
from workbench.govern import Policy
from workbench.replay.engine import replay
from workbench.scale import load
from workbench.trace.schema import Run

# calls per run: call i costs $0.01*(i+1), so a run of n calls has spent 0.005*(n-1)*n before its last call
CALLS = {"a": 2, "b": 3, "c": 5, "d": 8}


@pytest.fixture(scope="module")
def trajs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mini")
    for name, n in CALLS.items():
        doc = v1(n)
        doc["instance_id"] = f"demo__{name}"
        (out / f"demo__{name}.traj.json").write_text(json.dumps(doc))
    return out


def test_cost_limits_keep_the_runs_whose_spend_before_their_last_call_is_under_the_limit(trajs: Path) -> None:
    fr = limit_frontier(load(trajs), rules="mini-swe-agent", cost_limits=[0.05, 0.15, 0.30])
    t = fr.table
    assert list(t.columns) == list(COLUMNS)
    assert {c.name: str(t[c.name].dtype) for c in TABLE if c.dtype} == {
        c.name: c.dtype for c in TABLE if c.dtype
    }
    assert list(t["cost_limit"]) == [0.05, 0.15, 0.30] and set(t["step_limit"]) == {None}
    # before their last call: a $0.01, b $0.03, c $0.10, d $0.28
    assert list(t["resolved_kept"]) == [2, 3, 4] and list(t["resolved_lost"]) == [2, 1, 0]
    assert list(t["lost_by_cost_limit"]) == [2, 1, 0] and list(t["lost_by_step_limit"]) == [0, 0, 0]
    assert fr.lost("mini-swe-agent", 0.05) == ["demo__c", "demo__d"] and fr.lost("mini-swe-agent", 0.15) == [
        "demo__d"
    ]
    # dollars saved: the recorded cost of the calls never made (d at $0.15 makes 5 of 8 calls: 0.06+0.07+0.08)
    assert t["spend_saved_usd"].iloc[1] == pytest.approx(0.21)
    assert fr.price_source == "recorded" and t["basis"].iloc[0] == "finished"
    (pick,) = recommend_limits(fr)
    assert (pick.found, pick.cost_limit, pick.step_limit) == (True, 0.30, None)
    assert pick.words == "set cost_limit = $0.30"
    (pick,) = recommend_limits(fr, AnalystInvariants(keep_resolved=0.7))
    assert pick.cost_limit == 0.15 and pick.why.startswith("set cost_limit = $0.15: the smallest swept limit")


def test_step_limits_keep_the_recorded_cost_limit(trajs: Path) -> None:
    fr = limit_frontier(load(trajs), rules="mini-swe-agent", step_limits=[3, 5, 8])
    assert list(fr.table["step_limit"]) == [3, 5, 8] and set(fr.table["cost_limit"]) == {None}
    assert list(fr.table["resolved_kept"]) == [2, 3, 4]  # a step limit of n allows n calls
    assert list(fr.table["lost_by_step_limit"]) == [2, 1, 0]


def test_no_limit_keeps_enough(trajs: Path) -> None:
    fr = limit_frontier(load(trajs), rules="mini-swe-agent", cost_limits=[0.02])
    (pick,) = recommend_limits(fr)
    assert not pick.found and "no swept limit satisfies every invariant" in pick.why


def test_cli_json_rows_carry_cost_limit_in_place_of_grant(
    trajs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["frontier", str(trajs), "--rules", "mini-swe-agent", "--cost-limits", "0.05:0.30:0.05", "--json"]
    assert main(args) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    rows = [x for x in lines if "recommendation" not in x]
    (rec,) = [x["recommendation"] for x in lines if "recommendation" in x]
    assert [r["cost_limit"] for r in rows] == [0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
    assert all("grant" not in r and r["step_limit"] is None for r in rows)
    assert (rec["cost_limit"], rec["step_limit"], rec["rules"]) == (0.3, None, "mini-swe-agent")


def test_cli_text_says_the_agents_unit(trajs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frontier", str(trajs), "--rules", "mini-swe-agent", "--step-limits", "3,5,8"]) == 0
    out = capsys.readouterr().out
    assert "set step_limit = 8: the smallest swept limit" in out and "lost_by_step_limit" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rules", "current", "--cost-limits", "1"], "current has none"),
        (["--rules", "mini-swe-agent"], "has no token grant"),
        (["--rules", "mini-swe-agent", "--cost-limits", "3:1:1"], "STOP must be >= START"),
        (["--rules", "mini-swe-agent", "--cost-limits", "-1"], "limits > 0"),
    ],
)
def test_bad_limits_are_usage_errors(
    trajs: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["frontier", str(trajs), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.startswith("workbench frontier: ")


def test_real_mini_runs_recommend_a_cost_limit(shared: Path) -> None:
    fr = limit_frontier(
        load(shared / "mini-swe-agent"), rules="mini-swe-agent", cost_limits=[0.25 * k for k in range(1, 13)]
    )
    (pick,) = recommend_limits(fr)
    assert pick.found and pick.cost_limit == 1.0  # 57 of 60 resolved runs kept (95%)
    row = fr.table[fr.table["cost_limit"] == 1.0].iloc[0]
    assert (row["resolved"], row["resolved_kept"], row["lost_by_cost_limit"]) == (60, 57, 3)
    # at the recorded $3 every run finishes as recorded
    top = fr.table[fr.table["cost_limit"] == 3.0].iloc[0]
    assert (top["resolved_lost"], top["unresolved_cut"], top["spend_saved_usd"]) == (0, 0, 0.0)


def test_translation_names_the_runs_each_meter_loses(trajs: Path) -> None:
    from workbench.analysis.frontier import frontier
    from workbench.analysis.meter_translation import translate

    runs = load(trajs)
    grants = list(range(2_000, 40_001, 2_000))
    gf = frontier(runs, grants=grants)
    lf = limit_frontier(runs, rules="mini-swe-agent", cost_limits=[0.05, 0.15, 0.30])
    t = translate(gf, lf, "mini-swe-agent")
    assert list(t["cost_limit"]) == [0.05, 0.15, 0.30] and list(t["cap_kept"]) == [2, 3, 4]
    curve = gf.curve("mini-swe-agent")
    for rec in t.to_dict("records"):
        # the smallest swept grant keeping at least as many resolved runs as the cap
        want = curve[curve["resolved_kept"] >= rec["cap_kept"]].iloc[0]
        assert rec["grant"] == want["grant"] and rec["grant_kept"] == want["resolved_kept"]
        rows = gf.rows[(gf.rows["grant"] == rec["grant"]) & (gf.rows["fate"] == "cut") & gf.rows["success"]]
        grant_lost = set(rows["run_id"])
        cap_lost = set(lf.lost("mini-swe-agent", rec["cost_limit"]))
        split = lambda s: set(filter(None, s.split(", ")))  # noqa: E731
        assert split(rec["lost_by_cap_only"]) == cap_lost - grant_lost
        assert split(rec["lost_by_grant_only"]) == grant_lost - cap_lost
        assert split(rec["lost_by_both"]) == cap_lost & grant_lost


def test_the_report_answers_in_the_agents_unit(trajs: Path) -> None:
    from workbench.analysis.frontier import frontier
    from workbench.report.limits_section import own_limit_answers

    runs = load(trajs)
    leaves = list(runs)
    gf = frontier(leaves, grants=[10_000, 20_000, 40_000])
    ans = own_limit_answers(leaves, AnalystInvariants(), gf)
    assert set(ans) == {"mini-swe-agent"}
    own = ans["mini-swe-agent"]
    # default grid $0.25..$3.00: d has spent $0.28 before its last call, so $0.25 loses it and $0.50 keeps all four
    assert (own.pick.cost_limit, own.pick.row["resolved_kept"]) == (0.5, 4)
    assert own.text.startswith(
        "In mini-swe-agent's own limits (dollars as each call recorded them): set cost_limit = $0.50"
    )
    assert own.translation is not None and list(own.translation["cap_kept"])[:2] == [3, 4]


def test_cli_replay_under_a_cost_limit(trajs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(trajs), "--rules", "mini-swe-agent", "--cost-limit", "0.05", "--json"]) == 0
    rows = {r["run_id"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    # spent before each call: a $0.01 (2 calls, both made), c $0.06 >= $0.05 before its 4th call
    assert rows["demo__a"]["stop_reason"] == "done"
    assert (rows["demo__c"]["stop_reason"], rows["demo__c"]["turns_replayed"]) == ("max-budget", 3)
    assert main(["replay", str(trajs), "--cost-limit", "0.05"]) == 2
    assert "an agent's own limits" in capsys.readouterr().err


def _replayed_each(runs: list[Run], rules: str, grid: list[tuple[float | None, int | None]]) -> list[tuple]:
    """The readable definition: every run replayed under every grid point, no replay shared."""
    from workbench.analysis.limit_frontier import _base_policy

    out = []
    for run in runs:
        for c, s in grid:
            over = {k: v for k, v in (("cost_limit_usd", c), ("step_limit", s)) if v is not None}
            res = replay(run, _base_policy(run, rules).replace(**over))
            out.append((run.run_id, res.stop_reason, res.stop_turn, res.spent, res.raw, res.censored,
                        res.cut_turns, res.turns, res.turns_replayed))  # fmt: skip
    return out


def _rows_of(fr: LimitFrontier) -> list[tuple]:
    cols = [
        "run_id",
        "stop_reason",
        "stop_turn",
        "spent",
        "raw",
        "censored",
        "cut_turns",
        "turns",
        "turns_replayed",
    ]
    return [tuple(r) for r in fr.rows[cols].itertuples(index=False)]


def test_a_cost_limit_the_meter_never_reaches_replays_as_one_the_run_does(
    trajs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One replay serves every cost limit above a run's peak dollars: the rows equal a replay per grid point, with
    limits just under, at and just over each run's peak (call i costs $0.01*(i+1): d's 8 calls peak at $0.36)."""
    import workbench.analysis.limit_frontier as lf

    runs = list(load(trajs))
    peaks = {r.run_id: peak_dollars(r, "recorded") for r in runs}
    assert peaks["demo__d"] == pytest.approx(0.36) and peaks["demo__a"] == pytest.approx(0.03)
    limits = sorted({round(x, 12) for p in peaks.values() for x in (p - 1e-9, p, p + 1e-9)} | {0.02, 5.0})
    made: list[str] = []

    def counted(run: Run, *args: object, **kw: object) -> object:
        made.append(run.run_id)
        return replay(run, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(lf, "replay", counted)
    for steps in (None, [2, 5, 250]):
        made.clear()
        fr = limit_frontier(runs, rules="mini-swe-agent", cost_limits=limits, step_limits=steps)
        grid = list(itertools.product(limits, steps or [None]))
        assert _rows_of(fr) == _replayed_each(runs, "mini-swe-agent", grid)
        # per run and step limit: a replay per limit up to its peak, and one for all the limits above it
        width = len(steps or [None])
        assert len(made) == sum((sum(c <= p for c in limits) + 1) * width for p in peaks.values())


def test_shared_runs_limit_frontier_equals_a_replay_per_limit(shared: Path) -> None:
    runs = [r for r in load(shared / "mini-swe-agent")][:30]
    limits = [0.25 * k for k in range(1, 13)]
    fr = limit_frontier(runs, rules="mini-swe-agent", cost_limits=limits)
    assert _rows_of(fr) == _replayed_each(runs, "mini-swe-agent", [(c, None) for c in limits])
    # most grid points lie above a run's peak: those are the replays not made again
    above = sum(c > peak_dollars(r, "recorded") for r in runs for c in limits)
    assert above > len(runs) * len(limits) // 2


def test_the_frontier_from_each_runs_own_cost_replays_is_the_one_replayed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cost_replays`` replays a run up to a step past its own peak, whatever the corpus's costliest run: the
    frontier over the default grid read from them is the frontier replayed here, row for row."""
    import workbench.analysis.limit_frontier as lf_mod
    from workbench.analysis.limit_frontier import cost_replays, default_cost_limits

    for name, n in {"a": 2, "c": 5, "z": 30}.items():  # z costs $4.65: the grid runs on to $4.75
        doc = v1(n)
        doc["instance_id"] = f"demo__{name}"
        (tmp_path / f"demo__{name}.traj.json").write_text(json.dumps(doc))
    leaves = list(load(tmp_path))
    grid = default_cost_limits(4.65)
    assert grid[-1] == 4.75
    here = limit_frontier(leaves, rules="mini-swe-agent", cost_limits=grid)
    known = {r.run_id: cost_replays(r, "mini-swe-agent") for r in leaves}
    assert all(v is not None for v in known.values())
    cheap = known["demo__a"]
    assert cheap is not None and max(cheap)[0] == 3.0  # a $0.03 run: the default $3 grid, not the $4.75 one

    def no_replay(*a: object, **kw: object) -> None:
        raise AssertionError("replayed again")

    monkeypatch.setattr(lf_mod, "replay", no_replay)
    given = limit_frontier(leaves, rules="mini-swe-agent", cost_limits=grid, known=known)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(here.table, given.table)
    pd.testing.assert_frame_equal(here.rows, given.rows)
    with pytest.raises(ValueError, match="demo__a: no replay given under"):  # not a step of the default grid
        limit_frontier(leaves, rules="mini-swe-agent", cost_limits=[0.1, 0.3], known=known)  # type: ignore[arg-type]


def test_a_runs_equal_limit_rows_are_one_object_with_the_replays_fields(trajs: Path) -> None:
    """``cost_replays`` keeps a row per grid point, its fields in ``LIMIT_ROW``'s order; rows with equal fields (the
    limits under which a run ends alike) are one object, so a report's share sends each once."""
    from workbench.analysis.limit_frontier import LIMIT_ROW, cost_replays

    (run,) = [r for r in load(trajs) if r.run_id == "demo__d"]
    rows = cost_replays(run, "mini-swe-agent")
    assert rows is not None and all(tuple(v) == LIMIT_ROW for v in rows.values())
    for (c, _), row in rows.items():
        res = replay(run, replay_policy(run, c))
        assert row == {k: None if k == "landing_started_at" else getattr(res, k) for k in LIMIT_ROW}
    distinct = {id(v) for v in rows.values()}
    assert len(distinct) == len({tuple(v.values()) for v in rows.values()}) < len(rows)


def replay_policy(run: Run, cost: float | None) -> Policy:
    from workbench.analysis.limit_frontier import _base_policy

    base = _base_policy(run, "mini-swe-agent")
    return base if cost is None else base.replace(cost_limit_usd=cost)
