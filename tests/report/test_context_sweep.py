"""The report's context sweep takes one governor replay per leaf and non-context policy where the context replay
never truncates: its rows must equal one full replay per (leaf, policy), on real and synthetic leaves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from workbench.govern import Policy
from workbench.replay import replay
from workbench.report.sweeps import CONTEXT_FIELDS, _events, policy_sweep
from workbench.scale import load
from workbench.scenarios.seed import mixed_corpus, warm_runaway
from workbench.trace import Run

POLICIES = [
    Policy.named("current", grant=g, context_length=c)
    for g in (150_000, 300_000)
    for c in (None, 16_384, 32_768, 131_072)
]


def reference(leaves: list[Run], policies: list[Policy]) -> pd.DataFrame:
    """One full replay (context replay included) per (leaf, policy)."""
    rows: list[dict[str, Any]] = []
    for run in leaves:
        for policy in policies:
            res = replay(run, policy)
            row = res.row()
            for key in CONTEXT_FIELDS:
                row[key] = getattr(policy, key)
            row["events"] = _events(res)
            rows.append(row)
    return pd.DataFrame(rows)


def _same(leaves: list[Run]) -> None:
    got = policy_sweep(leaves, POLICIES)
    pd.testing.assert_frame_equal(got, reference(leaves, POLICIES))


def test_synthetic_leaves_give_the_rows_of_full_replays() -> None:
    leaves = [*mixed_corpus(12, max_turns=60), warm_runaway()]
    _same(leaves)


@pytest.mark.real
def test_real_leaves_give_the_rows_of_full_replays(shared: Path) -> None:
    corpus = load(shared)
    leaves = [leaf for r in corpus.runs for leaf in r.leaves()]
    # every source, a bounded number of leaves each (the comparison replays each leaf 16 times twice)
    picked: dict[str, list[Run]] = {}
    for leaf in leaves:
        picked.setdefault(leaf.source, [])
        if len(picked[leaf.source]) < 6:
            picked[leaf.source].append(leaf)
    chosen = [leaf for group in picked.values() for leaf in group]
    assert len({leaf.source for leaf in chosen}) >= 3
    _same(chosen)


def test_the_sweep_s_shortcut_is_the_full_replay_where_nothing_truncates() -> None:
    """Where a leaf's context replay never truncates, ``policy_sweep`` reads its replay without the manager, the
    first prune as the divergence: its rows are the full replays', on runs the manager pruned too."""
    from workbench.context.replay import replay_context

    shortcuts = pruned = 0
    windows = [Policy.named("current", grant=g, context_length=c) for g in (150_000, 300_000) for c in (
        8_192, 12_288, 16_384, 24_576, 32_768)]  # fmt: skip
    runs = [*mixed_corpus(12, max_turns=60), warm_runaway()]
    for run in runs:
        for policy in windows:
            ctx = replay_context(run, policy)
            if ctx.truncated_at is None:
                shortcuts += 1
                pruned += ctx.first_prune_at is not None
    assert shortcuts >= 15 and pruned >= 4, (shortcuts, pruned)  # taken, on runs the manager pruned too
    pd.testing.assert_frame_equal(policy_sweep(runs, windows), reference(runs, windows))
