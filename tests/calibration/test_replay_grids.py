"""Several calibration grids replayed in one sweep (``replay_grids``: what the guards' first grids and the wrap-up's
two readings do) give each grid the very rows its own sweep gives."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import workbench as wb
from workbench.analysis.calibration import guards
from workbench.analysis.calibration.evidence import Evidence
from workbench.analysis.calibration.replays import replay_grids, replay_values
from workbench.govern.policy import Policy


def test_grids_swept_together_equal_each_swept_alone(shared: Path) -> None:
    evidence = Evidence.of(wb.load(shared / "mini-swe-agent", shared / "claude-code"))
    policy = Policy.named("current")
    grids = [(guards._base(policy, s), s.field, guards._grid(policy, s)) for s in guards.GUARDS]
    grids.append((policy.replace(wrapup_readings=("cost",)), "wrapup_at", [0.5, 0.8, 0.9]))
    together = replay_grids(evidence, grids)
    assert len(together) == len(grids)
    for (base, field, values), frame in zip(grids, together, strict=True):
        alone = replay_values(evidence, base, field, values)
        assert list(frame["value"].unique()) == list(values)
        assert len(frame) == len(evidence.leaves) * len(values)
        pd.testing.assert_frame_equal(frame, alone)


def test_the_guard_rows_are_those_of_one_guard_at_a_time(shared: Path) -> None:
    evidence = Evidence.of(wb.load(shared / "mini-swe-agent"))
    policy = Policy.named("current")
    assert guards.guard_rows(evidence, policy) == [
        guards.guard_row(evidence, policy, s) for s in guards.GUARDS
    ]
