"""The vectorised fast path gives exactly the governor path's answers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.govern import Policy
from workbench.scale import load
from workbench.scale.sweep import sweep
from workbench.scenarios.seed import TurnSpec, build_run, mixed_corpus, mixed_run, warm_runaway

GRID = {
    "grant": [3_000, 20_000, 60_000, 150_000, 220_000, 400_000],
    "max_turns": [3, 20, 400],
    "landing_token_share": [None, 0.0, 0.2],
    "cache_weight_percent": [10, 50],
}


def same(grid, runs, **kw) -> pd.DataFrame:
    fast = sweep(runs, grid, workers=1, progress=False, **kw)
    slow = sweep(runs, grid, workers=1, progress=False, fast=False, **kw)
    cols = [c for c in fast.columns if c != "path"]
    pd.testing.assert_frame_equal(fast[cols], slow[cols])
    return fast


def test_fast_equals_governor_on_the_synthetic_corpus() -> None:
    out = same(GRID, mixed_corpus(60))
    assert (out.path == "fast").all()
    assert out["rules"].map(id).nunique() == 1  # one rule-set name for every row, not a str each
    assert {"budget", "turn-cap", "done", "empty", "no-progress", "tool-timeouts"} <= set(out.stop_reason)


@pytest.mark.real
def test_fast_equals_governor_on_every_run_of_the_real_corpus(shared: Path) -> None:
    corpus = load(shared)
    out = same(GRID, corpus)
    assert (out.path == "fast").mean() > 0.9
    assert out.run_id.nunique() == len(corpus.leaves())


def test_ineligible_policies_take_the_governor_path() -> None:
    policies = [Policy.named("ink-s9"), Policy(deadline_s=60), Policy()]
    out = sweep([warm_runaway()], policies, workers=1, progress=False)
    assert out.path.tolist() == ["governor", "fast", "fast"]  # an untimed run: the deadline cannot apply
    timed = build_run("t", [TurnSpec(prompt=10, text="done", seconds=5)], generator="test", params={})
    out = sweep([timed], policies, workers=1, progress=False)
    assert out.path.tolist() == ["governor", "governor", "fast"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([1_000, 30_000, 220_000]), st.sampled_from([None, 0.1, 0.2]))
def test_fast_equals_governor_on_random_runs(seed: int, grant: int, share: float | None) -> None:
    same({"grant": [grant], "landing_token_share": [share], "max_turns": [7, 400]}, [mixed_run(seed)])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 10**6), min_size=0, max_size=40),
    st.lists(st.integers(1, 10**6), min_size=1, max_size=8),
    st.sampled_from([0.7, 0.5, 0.1, 0.9999]),
)
def test_first_over_matches_the_division_it_stands_for(values, denominators, threshold) -> None:
    import numpy as np

    from workbench.replay.fast import _Segments

    v = _Segments(np.array(sorted(values), dtype=np.int64), np.array([len(values)], dtype=np.int64))
    d = np.array(denominators, dtype=np.int64)
    got = v.first_over(np.zeros(len(d), dtype=np.int64), d, threshold)
    for k, den in enumerate(denominators):
        want = next((i for i, x in enumerate(sorted(values)) if x / den > threshold), len(values))
        assert got[k] == want


def test_fast_equals_governor_when_the_reply_rules_are_switched() -> None:
    policies = [
        Policy(
            grant=g, nudges=nudges, length_batch=batch, empty_abandon=abandon, landing_turns=lt, wrapup_at=w
        )
        for g in (3_000, 60_000)
        for nudges in (True, False)
        for batch in (True, False)
        for abandon in (True, False)
        for lt in (1, 4)
        for w in (None, 0.5)
    ]
    out = same(policies, mixed_corpus(25, seed=9_100))
    assert (out.path == "fast").all() and "empty" in set(out.stop_reason)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(-50, 10**6), max_size=12), min_size=1, max_size=6),
    st.lists(st.tuples(st.integers(0, 5), st.integers(-10, 2 * 10**6), st.integers(1, 10**6)), max_size=30),
    st.sampled_from([0.7, 0.5, 0.9999]),
)
def test_segmented_searches_answer_as_each_runs_own_array_would(segments, queries, threshold) -> None:
    """The batch searches every run's sorted array at once; each answer must be the one-run answer."""
    import numpy as np

    from workbench.replay.fast import _Segments
    from workbench.replay.sheet import Ragged

    parts = [sorted(s) for s in segments]
    queries = [(k % len(parts), q, d) for k, q, d in queries]
    flat = Ragged.of(parts)
    seg = _Segments(flat.values, flat.lengths)
    runs = np.array([k for k, _, _ in queries], dtype=np.int64)
    q = np.array([x for _, x, _ in queries], dtype=np.int64)
    d = np.array([x for _, _, x in queries], dtype=np.int64)
    for side in ("left", "right"):
        got = seg.search(runs, q, side)
        want = [np.searchsorted(np.array(parts[k], dtype=np.int64), x, side=side) for k, x, _ in queries]
        assert got.tolist() == want
    at = np.array([x % 14 - 1 for x in q], dtype=np.int64)
    got = seg.take(runs, at, -7)
    assert got.tolist() == [
        parts[k][i] if 0 <= i < len(parts[k]) else -7 for k, i in zip(runs, at, strict=True)
    ]
    got = seg.first_over(runs, d, threshold)
    want = [
        next((i for i, x in enumerate(parts[k]) if x / den > threshold), len(parts[k]))
        for k, _, den in queries
    ]
    assert got.tolist() == want


def test_a_corpus_run_is_read_once_per_reply_setting_across_sweeps() -> None:
    """``turns_of`` keeps the fast path's first pass (and the guards' facts read on it) for a read-only run, one
    per reply-rule setting, until the run is freed; an editable run is read again on every call."""
    import gc

    from workbench.replay import fast
    from workbench.trace.schema import seal

    run = seal(mixed_run(7))
    policy, other = Policy(), Policy(nudges=not Policy().nudges)
    first = fast.turns_of(run, policy)
    assert first is not None
    assert fast.turns_of(run, policy) is first
    assert first == fast.read_turns(run, policy)  # the same reading as a fresh one
    assert fast.turns_of(run, other) is not first
    assert fast.turns_of(run, other) == fast.read_turns(run, other)
    key = id(run)
    assert set(fast._READ[key]) == {(policy.nudges, policy.length_batch), (other.nudges, other.length_batch)}
    # sweeps over the sealed run answer as over an editable copy of it
    copy = run.model_copy(deep=True)
    a = sweep([run], GRID, workers=1, progress=False)
    b = sweep([copy], GRID, workers=1, progress=False)
    pd.testing.assert_frame_equal(a.drop(columns=["run_id"]), b.drop(columns=["run_id"]))
    editable = mixed_run(7)
    assert fast.turns_of(editable, policy) is not fast.turns_of(editable, policy)
    assert id(editable) not in fast._READ
    del run, first
    gc.collect()
    assert key not in fast._READ  # dropped with its run
