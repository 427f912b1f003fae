"""The sweep's columns are one spec: the frame's names and dtypes and a replay's row follow it."""

from __future__ import annotations

from tests.samples.lines import small_run
from workbench.govern.policy import Policy
from workbench.replay import replay, sweep
from workbench.replay.columns import COLUMNS, RESULT_COLUMNS, SWEEP_COLUMNS
from workbench.trace.columns import dtypes, names


def test_a_replays_row_is_the_result_columns() -> None:
    row = replay(small_run(), Policy.named("current")).row()
    assert tuple(row) == names(RESULT_COLUMNS)
    assert (row["meter"], row["meter_reached"], row["meter_allowed"]) == ("", 0, 0)


def test_sweep_frames_have_the_specs_names_and_dtypes() -> None:
    for fast in (True, False):
        frame = sweep([small_run()], {"grant": [1, 100_000]}, fast=fast, progress=False)
        assert tuple(frame.columns) == COLUMNS
        assert {c: str(frame[c].dtype) for c in frame.columns} == dtypes(SWEEP_COLUMNS)
        assert set(frame["path"]) == ({"fast"} if fast else {"governor"})
