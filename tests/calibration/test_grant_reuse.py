"""The leaf-grant row and the widened answer read the grant sweep and the ledger a report has already made: the
same row and the same answer as when each sweeps and prices afresh, and a row a report did not sweep (another
policy, a grant off its grid) is swept, never borrowed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import workbench as wb
from workbench.analysis import calibration
from workbench.analysis.calibration import calibrate
from workbench.analysis.calibration import grant as grant_module
from workbench.analysis.calibration.evidence import Evidence
from workbench.analysis.calibration.grant import swept_at
from workbench.analysis.frames import annotate, run_facts
from workbench.analysis.frontier import frontier, ledger, replayable_leaves
from workbench.govern.policy import Policy
from workbench.report.sweeps import grant_sweep
from workbench.trace.schema import Run

GRID = tuple(range(100_000, 400_001, 20_000))  # the grant in use, 220,000, among them


@pytest.fixture(scope="module")
def leaves(shared: Path) -> list[Run]:
    return replayable_leaves(wb.load(shared / "mini-swe-agent", shared / "claude-code").runs)


@pytest.fixture(scope="module")
def report_sweep(leaves: list[Run]) -> pd.DataFrame:
    """What a report holds: its grant sweep, annotated, of two rule sets."""
    return annotate(grant_sweep(leaves, ["current", "older"], GRID), run_facts(leaves))


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The run counts each sweep of the leaf-grant row is asked to make."""
    swept: list[int] = []
    real = grant_module.sweep

    def counted(runs, *args, **kwargs):  # type: ignore[no-untyped-def]
        swept.append(len(runs))
        return real(runs, *args, **kwargs)

    monkeypatch.setattr(grant_module, "sweep", counted)
    return swept


def test_rows_read_from_a_report_equal_rows_swept(
    leaves: list[Run], report_sweep: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = Policy.named("current")
    fresh = swept_at(leaves, policy, GRID)
    swept = _spy(monkeypatch)
    read = swept_at(leaves, policy, GRID, report_sweep)
    assert swept == []  # every row read from the report's
    cols = [c for c in fresh.columns if c not in ("events", "policy_index")]  # (each sweep's own index)
    assert list(read["grant"].unique()) == list(GRID)
    pd.testing.assert_frame_equal(read[cols], fresh[cols], check_dtype=False)
    # rows in another order (a frame the analyst sorted) come back run by run, in grant order
    shuffled = swept_at(leaves, policy, GRID, report_sweep.sample(frac=1.0, random_state=7))
    pd.testing.assert_frame_equal(shuffled[cols], fresh[cols], check_dtype=False)
    assert swept == []
    # grants asked for in another order come back in that order, as a sweep of them gives them
    backwards = tuple(reversed(GRID))
    pd.testing.assert_frame_equal(
        swept_at(leaves, policy, backwards, report_sweep)[cols],
        swept_at(leaves, policy, backwards)[cols],
        check_dtype=False,
    )
    assert swept == [len(leaves)]  # (that last one swept)
    swept.clear()
    # a grant the report did not sweep: every grant is swept here, as with no report at all
    off = tuple(sorted({*GRID, 230_000}))
    pd.testing.assert_frame_equal(swept_at(leaves, policy, off, report_sweep), swept_at(leaves, policy, off))
    assert swept == [len(leaves), len(leaves)]


def test_rows_of_another_policy_are_never_borrowed(
    leaves: list[Run], report_sweep: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the report swept with the no-progress guard on, one row per run and grant under "current"; this policy has
    # it off: every grant is swept again
    policy = Policy.named("current", no_progress=False)
    swept = _spy(monkeypatch)
    read = swept_at(leaves, policy, GRID, report_sweep[report_sweep["rules"] == "current"])
    assert swept == [len(leaves)]
    assert set(read["policy_label"]) == {policy.replace(grant=g).label for g in GRID}
    # a report's rows of fewer runs than asked for (a filtered corpus) are not read either
    swept.clear()
    swept_at(leaves, Policy.named("current"), GRID, report_sweep[report_sweep["run_id"] != leaves[0].run_id])
    assert swept == [len(leaves)]


def test_the_leaf_grant_row_is_the_same_read_or_swept(
    leaves: list[Run], report_sweep: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = calibrate(leaves, "current", families=["grant"], grants=GRID)
    book = ledger(leaves)
    priced: list[int] = []
    real = calibration.grant.frontier

    def no_ledger(*args, **kwargs):  # type: ignore[no-untyped-def]
        priced.append(kwargs["book"] is not None)
        return real(*args, **kwargs)

    monkeypatch.setattr(grant_module, "frontier", no_ledger)
    swept = _spy(monkeypatch)
    read = calibrate(leaves, "current", families=["grant"], grants=GRID, sweep=report_sweep, book=book)
    assert priced == [True]  # the frontier was given the report's ledger
    assert swept == [1]  # the seed's synthetic probe alone: the corpus's rows are the report's
    assert read.rows == fresh.rows
    pd.testing.assert_frame_equal(read.rows[0].evidence, fresh.rows[0].evidence)


def test_a_ledger_of_some_runs_is_the_ledger_read_from_them(leaves: list[Run]) -> None:
    book = ledger(leaves)
    some = [leaves[k] for k in (5, 0, 3)]
    part = book.only([r.run_id for r in some])
    own = ledger(some)
    assert part is not None
    pd.testing.assert_frame_equal(part.table, own.table)
    assert part.cum_usd.keys() == own.cum_usd.keys()
    for run_id, usd in own.cum_usd.items():
        assert part.cum_usd[run_id].tolist() == pytest.approx(usd.tolist(), nan_ok=True)
    assert book.only([r.run_id for r in leaves]) is book
    assert book.only(["not-a-run"]) is None
    assert book.only([leaves[0].run_id, leaves[0].run_id]) is None


def test_the_widened_answer_is_the_same_with_the_report_ledger(
    shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.analysis import widen as widen_module
    from workbench.analysis.recommendation import recommendations
    from workbench.analysis.targets import AnalystInvariants
    from workbench.analysis.widen import widen

    runs = replayable_leaves(wb.load(shared / "mini-swe-agent", shared / "claude-code").runs)
    fr = frontier(runs, grants=tuple(range(100_000, 300_001, 50_000)))
    inv = AnalystInvariants()
    head = next(p for p in recommendations(fr, inv) if p.group == "all runs")
    fresh = widen(fr, head, runs, inv)
    book = ledger(runs)

    def unpriced(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the widened frontier priced its runs again")

    monkeypatch.setattr("workbench.analysis.frontier.ledger", unpriced)
    assert widen_module.frontier.__module__ == "workbench.analysis.frontier"
    read = widen(fr, head, runs, inv, book=book)
    assert fresh is not None and read is not None
    assert (read.pick.grant, read.probed, read.grants_flag, read.words) == (
        fresh.pick.grant,
        fresh.probed,
        fresh.grants_flag,
        fresh.words,
    )


def test_evidence_of_the_leaves_is_what_the_row_reads(leaves: list[Run]) -> None:
    # the report hands calibrate its leaves; the row's evidence is those very runs, so the rows line up
    ev = Evidence.of(leaves)
    assert [leaf.run_id for leaf in ev.leaves] == [r.run_id for r in leaves]
