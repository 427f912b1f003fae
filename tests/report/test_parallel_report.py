"""The report's per-run work on forked local processes gives what this process gives: the sweep of Runs in memory
(``workbench.scale.sweep``, from ``PARALLEL_FROM`` leaves) and the bill section (from ``BILL_PARALLEL_FROM``
runs), frame for frame."""

from __future__ import annotations

import operator
import sys

import pandas as pd
import pytest

from workbench.report.bill_section import BILL_PARALLEL_FROM, REPORT_MASKS, bill_section, bill_shares
from workbench.scale.executor import cores, local
from workbench.scale.sweep import PARALLEL_FROM, sweep
from workbench.scenarios.seed import constant_turns
from workbench.trace.schema import Run

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


def test_the_bill_section_billed_on_workers_is_the_section_billed_here() -> None:
    runs = _runs(BILL_PARALLEL_FROM + 1)
    shares = bill_shares(runs, (None, 4_096), REPORT_MASKS, 2)
    assert len(shares) == 4
    here = bill_section(runs, (None, 4_096))
    there = bill_section(
        runs, (None, 4_096), parts=[p for _, p in sorted(local(2).map(operator.call, shares))]
    )
    assert here is not None and there is not None
    assert here.runs == there.runs == len(runs)
    pd.testing.assert_frame_equal(here.totals, there.totals)
    assert here.words == there.words


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
