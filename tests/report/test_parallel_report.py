"""The report's per-run work on forked local processes gives what this process gives: the sweep of Runs in memory
(``workbench.scale.sweep``, from ``PARALLEL_FROM`` leaves), and the bill section and the heat map's context replays
(``workbench.report.shares``, from ``SHARES_FROM`` runs), frame for frame."""

from __future__ import annotations

import dataclasses
import operator
import sys
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from workbench.report.bill_section import REPORT_MASKS, bill_section
from workbench.report.shares import SHARE_RUNS, SHARES_FROM, Share, shares
from workbench.report.sweeps import context_sweep, policy_for
from workbench.scale.executor import cores, local
from workbench.scale.sweep import PARALLEL_FROM, sweep
from workbench.scenarios.seed import constant_turns
from workbench.trace.schema import Run

NOW = datetime(2026, 1, 1, tzinfo=UTC)
pytestmark = pytest.mark.skipif(sys.platform != "linux" or cores() < 2, reason="forked pools: Linux, 2 cores")


def _runs(n: int) -> list[Run]:
    return [
        constant_turns(3 + i % 5, 1_000 + 37 * i).model_copy(update={"run_id": f"r{i}"}) for i in range(n)
    ]


def test_runs_in_memory_swept_on_workers_are_the_rows_swept_here() -> None:
    runs = _runs(PARALLEL_FROM + 3)
    grid = {"grant": [2_000, 5_000, 9_000]}
    here = sweep(runs, grid, segments=False, workers=1, progress=False)
    there = sweep(runs, grid, segments=False, workers=2, progress=False)
    assert len(here) == 3 * len(runs)
    pd.testing.assert_frame_equal(here, there)


def test_a_report_whose_bills_read_their_own_leaves_on_workers_is_the_report_made_here(
    tmp_path: Path,
) -> None:
    """A corpus whose runs are built on access (``retain`` below its size): each bill share builds its runs on its
    worker, and the report — bills, calibration (here, in this process) and every other table — is the one made
    in this process alone."""
    from workbench.report import ReportConfig, build_report
    from workbench.scale import load
    from workbench.scenarios.seed import mixed_run
    from workbench.trace.native import write_run

    (tmp_path / "runs").mkdir()
    for i in range(SHARES_FROM + 4):
        write_run(mixed_run(i, max_turns=12), tmp_path / "runs" / f"{i:02d}.jsonl")
    corpus = load(tmp_path / "runs", cache_dir=tmp_path / "cache", retain=5)
    config = ReportConfig(grants=(2_000, 8_000, 32_000), context_lengths=(None, 4_096), estimate_study=False)
    here = build_report(corpus=corpus, config=config, now=NOW)
    there = build_report(corpus=corpus, config=dataclasses.replace(config, workers=2), now=NOW)
    assert here.bills is not None and there.bills is not None and here.calibration is not None
    assert here.bills.runs == there.bills.runs == SHARES_FROM + 4
    pd.testing.assert_frame_equal(here.bills.totals, there.bills.totals)
    assert here.bills.words == there.bills.words
    assert here.calibration == there.calibration
    pd.testing.assert_frame_equal(here.sweep, there.sweep)
    pd.testing.assert_frame_equal(here.context, there.context)


def _replays_counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every context replay made in this process from now on, by run id."""
    import workbench.context.replay as context_replay

    made: list[str] = []
    real = context_replay.replay_context

    def counted(run: Run, policy: object, **kw: object) -> object:
        made.append(run.run_id)
        return real(run, policy, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(context_replay, "replay_context", counted)
    return made


def test_the_bill_section_and_the_heat_map_from_workers_are_the_ones_made_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = _runs(SHARES_FROM + 8)  # 40 runs: eight shares of five
    read: list[range] = []

    def leaves_of(rows: range) -> list[Run]:
        read.append(rows)
        return runs[rows.start : rows.stop]

    heat = [policy_for("current", 2_000, 2_048)]
    work = shares(len(runs), leaves_of, (None, 2_048), REPORT_MASKS, heat, {}, 2)
    assert len(work) == 8
    done = [r for _, r in sorted(local(2).map(operator.call, work))]
    assert read == []  # each share read its leaves on its worker, not here
    here = bill_section(runs, (None, 2_048))
    there = bill_section(runs, (None, 2_048), parts=[s.bills for s in done])
    assert here is not None and there is not None
    assert here.runs == there.runs == len(runs)
    pd.testing.assert_frame_equal(here.totals, there.totals)
    assert here.words == there.words

    joined = Share.joined(done, runs)
    assert joined is not None and len(joined[0]) == len(runs) and joined[1] == {}
    replayed = joined[0]
    assert [[k[0] for k in r] for r in replayed] == [[2_048]] * len(runs)
    assert all(not c.rows for r in replayed for c in r.values())  # outlines: no per-turn rows sent back
    grants = (2_000, 6_000)
    plain = context_sweep(runs, "current", grants, (None, 2_048))
    made = _replays_counted(monkeypatch)
    given = context_sweep(runs, "current", grants, (None, 2_048), replayed=replayed)
    assert made == []  # every context replay came from the workers
    assert (plain["stop_reason"] == "context-truncated").any() and plain["events"].map(len).sum() > 0
    pd.testing.assert_frame_equal(plain, given)
    assert Share.joined(done, runs[::-1]) is None  # other leaves: replayed here


@pytest.mark.parametrize(
    ("runs", "workers", "sizes"),
    [
        (SHARES_FROM - 1, 2, [SHARES_FROM - 1]),  # too few to share: one, here
        (40, 2, [5] * 8),  # four shares per worker
        (1_000, 2, [125] * 8),
        (8 * SHARE_RUNS + 1, 2, [SHARE_RUNS] * 8 + [1]),  # past SHARE_RUNS a share: more shares, none larger
        (12_500, 2, [SHARE_RUNS] * 48 + [12_500 - 48 * SHARE_RUNS]),  # 100 copies of the shared traces
        (12_500, 1, [12_500]),  # one worker: no shares
    ],
)
def test_the_shares_cover_every_run_once_in_order_and_none_holds_more_than_share_runs(
    runs: int, workers: int, sizes: list[int]
) -> None:
    read: list[range] = []

    def leaves_of(rows: range) -> list[Run]:
        read.append(rows)
        return []

    for work in shares(runs, leaves_of, (None,), REPORT_MASKS, (), {}, workers):
        work()
    assert [len(r) for r in read] == sizes
    assert [i for r in read for i in r] == list(range(runs))


def test_a_share_replays_each_billed_run_once_for_its_bills_and_the_heat_map(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = _runs(4)
    unbillable = runs[3].model_copy(update={"turns": []})
    copy = runs[0].model_copy(update={"run_id": "r0~2"})  # the same content: the same replays
    leaves = [*runs[:3], copy, unbillable]
    heat = [policy_for("current", 2_000, 4_096), policy_for("current", 2_000, 8_192)]
    (share,) = shares(5, lambda rows: leaves, (None, 4_096, 8_192), REPORT_MASKS, heat, {}, 1)
    made = _replays_counted(monkeypatch)
    got = share()
    # one replay a run and length: the bills' own, kept for the heat map (and the unbilled run's, for it alone)
    assert sorted(made) == sorted(r.run_id for r in [*runs[:3], copy, unbillable] for _ in heat)
    assert got.run_ids == tuple(r.run_id for r in leaves)
    assert got.bills is not None and set(got.bills["run_id"]) == {r.run_id for r in [*runs[:3], copy]}
    assert [sorted(k[0] for k in r) for r in got.replayed] == [[4_096, 8_192]] * 5
    assert {k: dataclasses.replace(c, run_id="r0") for k, c in got.replayed[3].items()} == got.replayed[0]


def test_a_share_with_nothing_billable_gives_no_frame() -> None:
    runs = _runs(3)
    unbillable = [r.model_copy(update={"turns": []}) for r in runs]
    (share,) = shares(3, lambda rows: unbillable, (None,), REPORT_MASKS, (), {}, 1)
    got = share()
    assert got.bills is None and got.replayed == ({}, {}, {}) and got.limits == {}
    (share,) = shares(3, lambda rows: runs, (None,), REPORT_MASKS, (), {}, 1)
    frame = share().bills
    assert frame is not None and len(frame) == 3 * len(REPORT_MASKS)


def _warns(x: int) -> int:
    import warnings

    warnings.warn(f"item {x} is odd", UserWarning, stacklevel=1)
    return x * 2


def test_a_warning_given_on_a_worker_is_given_again_here() -> None:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = sorted(local(2).map(_warns, [1, 2, 3]))
    assert got == [(0, 2), (1, 4), (2, 6)]
    assert sorted(str(w.message) for w in caught) == ["item 1 is odd", "item 2 is odd", "item 3 is odd"]
    assert {w.category for w in caught} == {UserWarning}
    assert {w.filename for w in caught} == {__file__}


def test_the_workers_end_once_every_item_is_done_before_their_results_are_read() -> None:
    """A pool's workers free their memory when the work is done, not when the caller gets round to reading it (the
    report reads the bills' rows after every other section)."""
    import multiprocessing
    from multiprocessing.connection import wait

    got = local(2).map(operator.neg, [1, 2, 3, 4, 5])
    first = next(got)
    running = {w.sentinel for w in multiprocessing.active_children()}
    assert running  # forked for this map
    while running:  # a readiness wait: a worker's sentinel is ready when it has ended
        ended = wait(list(running), timeout=300)
        assert ended, "a worker still runs with every item done"
        running -= set(ended)
    assert sorted([first, *got]) == [(0, -1), (1, -2), (2, -3), (3, -4), (4, -5)]


def test_the_agents_own_limits_from_workers_are_the_ones_replayed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer in an agent's own unit, from the cost-limit replays each share made of its runs on a worker
    (``cost_replays``), is the one replayed in this process: the frontier's table and rows, the pick, the
    translation."""
    import json

    from tests.importers.minisweagent_fixtures import v1
    from workbench.report import ReportConfig, build_report
    from workbench.scale import load

    (tmp_path / "runs").mkdir()
    for i in range(SHARES_FROM + 4):
        doc = v1(2 + i % 9)
        doc["instance_id"] = f"demo__{i:02d}"
        (tmp_path / "runs" / f"demo__{i:02d}.traj.json").write_text(json.dumps(doc))
    corpus = load(tmp_path / "runs", cache_dir=tmp_path / "cache", retain=5)
    config = ReportConfig(
        grants=(2_000, 8_000, 32_000),
        context_lengths=(None,),
        estimate_study=False,
        calibrate_constants=False,
    )
    here = build_report(corpus=corpus, config=config, now=NOW)
    import os

    import workbench.analysis.limit_frontier as limits

    real, parent, replayed = limits.replay, os.getpid(), []

    def counted(run: Run, *a: object, **kw: object) -> object:
        if os.getpid() == parent:
            replayed.append(run.run_id)
        return real(run, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(limits, "replay", counted)
    there = build_report(corpus=corpus, config=dataclasses.replace(config, workers=2), now=NOW)
    assert replayed == []  # every run's own-limit replays were made on the workers
    assert set(here.own_limits) == set(there.own_limits) == {"mini-swe-agent"}
    h, t = here.own_limits["mini-swe-agent"], there.own_limits["mini-swe-agent"]
    pd.testing.assert_frame_equal(h.frontier.table, t.frontier.table)
    pd.testing.assert_frame_equal(h.frontier.rows, t.frontier.rows)
    assert h.text == t.text and (h.pick.cost_limit, h.frontier.grid[-1][0]) == (0.5, 3.0)
    assert h.pick.row is not None and t.pick.row is not None  # NaN in both: compared as Series
    pd.testing.assert_series_equal(pd.Series(h.pick.row), pd.Series(t.pick.row))
    assert dataclasses.replace(h.pick, row=None) == dataclasses.replace(t.pick, row=None)
    assert h.translation is not None and t.translation is not None
    pd.testing.assert_frame_equal(h.translation, t.translation)
