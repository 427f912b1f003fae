"""The report's context sweep takes one governor replay per leaf and non-context policy where the context replay
never truncates: its rows must equal one full replay per (leaf, policy), on real and synthetic leaves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.govern import Policy
from workbench.replay import replay
from workbench.report.sweeps import CONTEXT_FIELDS, _Columns, _events, policy_sweep
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


def test_with_context_is_the_full_replay_where_nothing_truncates() -> None:
    from workbench.context.replay import replay_context
    from workbench.report.sweeps import with_context

    shortcuts = pruned = 0
    windows = [Policy.named("current", grant=g, context_length=c) for g in (150_000, 300_000) for c in (
        8_192, 12_288, 16_384, 24_576, 32_768)]  # fmt: skip
    for run in [*mixed_corpus(12, max_turns=60), warm_runaway()]:
        for policy in windows:
            ctx = replay_context(run, policy)
            if ctx.truncated_at is not None:
                continue
            shortcuts += 1
            pruned += ctx.first_prune_at is not None
            plain = replay(run, policy.replace(context_length=None))
            assert with_context(plain, policy.for_run(run), ctx) == replay(run, policy)
    assert shortcuts >= 15 and pruned >= 4, (shortcuts, pruned)  # taken, on runs the manager pruned too


_values = st.one_of(st.none(), st.integers(-5, 5), st.floats(allow_nan=False, width=32), st.booleans(),
                    st.text(max_size=3), st.lists(st.integers(0, 3), max_size=2))  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("abcd"), _values, max_size=4), max_size=8))
def test_rows_gathered_by_column_are_the_frame_pandas_makes_of_the_dicts(rows: list[dict[str, Any]]) -> None:
    gathered = _Columns()
    for row in rows:
        gathered.add(row)
    pd.testing.assert_frame_equal(gathered.frame(), pd.DataFrame(rows), check_exact=True)
