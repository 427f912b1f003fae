"""The shared-pass bill held to its readable definition: ``RunBills.bill`` takes the recorded rows before the first
change, steps the cache model from the recorded state there and remembers what cells share; ``oracle=True`` steps
every call from the first, with nothing remembered. The two are equal, row for row, on random runs under random
cells and on every shared run; the cache model's reused key chains equal chains named afresh."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bill._runs import tool_loop
from workbench.context.cache_model import CacheRules, CacheState
from workbench.govern.policy import Policy
from workbench.replay.bill import RunBills

RULES = {
    "anthropic": CacheRules.anthropic("claude-sonnet-4-5"),
    "openai": CacheRules.openai(),
    "gemini": CacheRules("gemini", min_tokens=2048, step=2048, reply_cached=False, coarse=((None, 2, 3),)),
    "none": CacheRules.none(),
}
cells = st.tuples(
    st.sampled_from([None, 9_000, 14_000]),  # context length
    st.sampled_from([None, 0, 1, 2, 4]),  # mask
    st.sampled_from([None, 2, 3]),  # mask block
    st.booleans(),  # decay
)


def _bill(shared: RunBills, cell: tuple, oracle: bool = False):
    length, keep, block, decay = cell
    policy = None if length is None else Policy.named("current", context_length=length, reserve=0, safety=0)
    block = block if keep is not None else None
    return shared.bill(policy, mask_observations=keep, mask_block=block, decay=decay, oracle=oracle)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(50, 9_000), min_size=1, max_size=14),
    family=st.sampled_from(sorted(RULES)),
    gap=st.sampled_from([5.0, 200.0, 400.0]),  # 400 s between calls: five-minute entries expire
    grid=st.lists(cells, min_size=1, max_size=6),
)
def test_the_shared_pass_bills_as_the_definition(
    sizes: list[int], family: str, gap: float, grid: list
) -> None:
    run = tool_loop(sizes, gap_s=gap)
    shared = RunBills(run, RULES[family])
    for cell in grid:  # one pass for every cell, in the grid's order: what the cells share is remembered
        assert _bill(shared, cell) == _bill(RunBills(run, RULES[family]), cell, oracle=True), cell


def test_the_shared_pass_bills_every_shared_run_as_the_definition(shared: Path) -> None:
    from workbench.report.context import load_leaves

    _, leaves, _ = load_leaves([shared])
    for run in leaves:
        if not any(t.usage.prompt is not None for t in run.turns):
            continue
        fast = RunBills(run)
        _bill(fast, (None, 10, None, False))  # remembered: the next cells start from what it shares
        for cell in ((32_768, None, None, False), (32_768, 10, None, False)):
            assert _bill(fast, cell) == _bill(RunBills(run), cell, oracle=True), (run.run_id, cell)


@given(
    chains=st.lists(
        st.tuples(st.sampled_from([None, "a", "b"]), st.lists(st.integers(0, 6), max_size=12)), max_size=12
    )
)
def test_a_prefix_has_one_key_whatever_was_named_before(chains: list[tuple[str | None, list[int]]]) -> None:
    """Keys are numbered in the order first named, so a key is one (endpoint, blocks) prefix's: two states that
    share the memo (the bill's saved states) give a prefix the same key however they reached it, and two
    prefixes never share one."""
    state, named = CacheState(), {}
    for endpoint, idents in chains:
        blocks = [("m", i) for i in idents]
        keys = state.chain("model", blocks, endpoint)
        assert keys == CacheState(keys=state.keys).chain("model", blocks, endpoint)  # not from ``last``
        for n, key in enumerate(keys):
            assert named.setdefault(key, (endpoint, blocks[: n + 1])) == (endpoint, blocks[: n + 1])
