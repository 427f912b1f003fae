"""The synthetic corpus reproduces the seed's measured shapes, records how it was made, and is deterministic."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from workbench.analysis.frames import run_facts
from workbench.scenarios.corpus import honest_leaves, outgrowing_window, split_worthy_leaf, work_leaf
from workbench.scenarios.shapes import LEAF_TURNS_MAX, LEAF_TURNS_MIN, MEDIAN_LEAF_PROMPT


@pytest.fixture(scope="module")
def leaves():  # type: ignore[no-untyped-def]
    return honest_leaves(np.random.default_rng(7), 24, corpus_seed=7)


def test_honest_leaves_have_the_measured_shape(leaves) -> None:  # type: ignore[no-untyped-def]
    assert all(LEAF_TURNS_MIN <= len(r.turns) <= LEAF_TURNS_MAX for r in leaves)
    prompts = [t.usage.prompt for r in leaves for t in r.turns]
    assert abs(statistics.median(prompts) - MEDIAN_LEAF_PROMPT) / MEDIAN_LEAF_PROMPT < 0.05
    assert all(r.outcome.stop_reason == "done" and r.source == "synthetic" for r in leaves)
    gen = leaves[0].metadata["generator"]
    assert gen["name"] == "honest_leaf" and gen["corpus_seed"] == 7
    assert set(gen["params"]) >= {"turns", "median_prompt", "target_spent", "cache_hit_share"}


def test_bill_matches_the_drawn_target_unless_caching_could_not_reach_it(leaves) -> None:  # type: ignore[no-untyped-def]
    facts = run_facts(leaves).set_index("run_id")
    for r in leaves:
        p = r.metadata["generator"]["params"]
        if 0 < p["cache_hit_share"] < 0.97:
            assert abs(facts.loc[r.run_id, "recorded_spent"] - p["target_spent"]) < 50


def test_requests_rebuild_and_agree_with_usage(leaves) -> None:  # type: ignore[no-untyped-def]
    r = leaves[0]
    for i in range(1, len(r.turns)):
        prev, cur = r.turns[i - 1], r.turns[i]
        assert len(r.request(i)) == len(r.request(i - 1)) + 1 + len(prev.tool_calls)
        assert cur.usage.prompt > prev.usage.prompt
        assert cur.usage.cached <= prev.usage.prompt
    assert r.turns[-1].tool_calls == [] and r.turns[-1].finish_reason == "stop"


def test_no_progress_shape_is_absent_from_honest_work(leaves) -> None:  # type: ignore[no-untyped-def]
    for r in leaves:
        tool_turns = [t for t in r.turns if t.tool_calls]
        digests = [t.tool_results[0].digest() for t in tool_turns]
        assert len(set(digests)) == len(digests)  # every result is new information
        streak = 0
        for t in tool_turns:
            streak = 0 if t.mutated else streak + 1
            assert streak < 10  # never a recon span


def test_same_seed_same_runs_other_seed_other_runs() -> None:
    a = honest_leaves(np.random.default_rng(3), 3)
    b = honest_leaves(np.random.default_rng(3), 3)
    c = honest_leaves(np.random.default_rng(4), 3)
    assert [r.model_dump() for r in a] == [r.model_dump() for r in b]
    assert [r.model_dump() for r in a] != [r.model_dump() for r in c]


def test_split_worthy_leaf_is_the_seeds_third_leaf() -> None:
    r = split_worthy_leaf(np.random.default_rng(1))
    facts = run_facts([r]).iloc[0]
    assert len(r.turns) == 14 and abs(facts["recorded_spent"] - 268_971) < 50


def test_outgrowing_transcript_ends_where_the_next_call_cannot_fit() -> None:
    r = outgrowing_window(np.random.default_rng(1), context_length=131_072, growth=3_600)
    assert r.outcome.stop_reason == "error" and "context_length_exceeded" in (r.outcome.detail or "")
    last = r.turns[-1].usage
    assert last.prompt <= 131_072 < last.prompt + last.completion + 3_600 + 3_600


def test_a_leaf_needs_two_turns() -> None:
    with pytest.raises(ValueError, match="at least 2 turns"):
        work_leaf(np.random.default_rng(0), run_id="x", turns=1, median_prompt=1000, target_spent=1000)


def test_bundled_traces_are_what_the_documented_command_writes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from workbench.paths import bundled_traces
    from workbench.scenarios.__main__ import main

    assert main(["--out", str(tmp_path)]) == 0
    bundled = sorted(p.name for p in (bundled_traces() / "synthetic").glob("*.jsonl"))
    assert bundled == sorted(p.name for p in tmp_path.glob("*.jsonl"))
    for name in bundled:
        assert (tmp_path / name).read_bytes() == (bundled_traces() / "synthetic" / name).read_bytes(), name
