"""Replaying the evidence under candidate values of one Policy field, through the real governors.

Each candidate is a Policy (``base.replace(field=value)``) and every leaf is replayed under it by
``workbench.replay.sweep`` (the same Governor the live loop drives). ``isolated`` builds the base in which only
the mechanism under study can stop a run, so each count is that mechanism's alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from workbench.analysis.calibration.evidence import Evidence
from workbench.govern.policy import Policy
from workbench.scale.sweep import sweep

NEVER = 10**9
"""A threshold no recorded run can reach: how a signal is switched off while another is studied."""


def isolated(policy: Policy, **keep: Any) -> Policy:
    """``policy`` with every stop, landing and warning off — cost landing, wrap-up, the turn cap, the deadline,
    empty-reply abandonment, every no-progress signal, the tool-timeout guard and stuck detection — then
    ``keep`` applied (the mechanism under study, at its candidate value)."""
    off = dict(
        cost_lands=False,
        raw_lands=False,
        reuse_lands=False,
        wrapup_at=None,
        wall_pace_at=None,
        deadline_s=None,
        turn_backstop=None,
        max_turns=NEVER,
        empty_abandon=False,
        no_progress=False,
        repeat_cap=NEVER,
        stagnant_cap=NEVER,
        turn_floor=NEVER,
        recon_turns=NEVER,
        tool_timeouts=False,
        stuck_detection=False,
        context_length=None,
    )
    return policy.replace(**{**off, **keep})


def replay_values(evidence: Evidence, base: Policy, field: str, values: Sequence[Any]) -> pd.DataFrame:
    """One sweep row per (leaf, value) with ``value``, the leaf's ``group`` and its ``recorded_spent``."""
    return replay_grids(evidence, [(base, field, values)])[0]


def replay_grids(
    evidence: Evidence, grids: Sequence[tuple[Policy, str, Sequence[Any]]]
) -> list[pd.DataFrame]:
    """``replay_values`` of each (base, field, values), from one sweep: what a leaf's replays share whatever the
    value (its eligibility for the fast path, its first pass over the turns) is read once for every grid."""
    policies = [base.replace(**{field: v}) for base, field, values in grids for v in values]
    swept = sweep([leaf.run for leaf in evidence.leaves], policies, segments=False, workers=1, progress=False)
    by_id = evidence.by_id()
    group = swept["run_id"].map(lambda r: by_id[r].group)
    spent = swept["run_id"].map(lambda r: by_id[r].spent[-1])
    out, first = [], 0
    for _, _, values in grids:  # a grid's rows, run by run, numbered as its own sweep numbers them
        at = swept["policy_index"].between(first, first + len(values) - 1)
        k = swept["policy_index"][at] - first
        part = swept[at].assign(
            policy_index=k, value=[values[int(i)] for i in k], group=group[at], recorded_spent=spent[at]
        )
        out.append(part.reset_index(drop=True))
        first += len(values)
    return out
