"""``ProgressGuard.silent_over``: when it says a guard stays silent, observing those turns answers CONTINUE every
time (the fast path skips reading the turns in full on its word)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.govern import Policy
from workbench.govern.noprogress import MUTATION_TOOLS, CallFact, ProgressGuard, ResultFact, Signal

turn = st.tuples(
    st.booleans(),  # recorded mutation
    st.lists(
        st.tuples(st.sampled_from(["read", "grep", "write"]), st.sampled_from(["a", "b"])),
        min_size=1,
        max_size=3,
    ),
    st.sampled_from([None, "h1", "h2", "h3"]),  # every result's digest
    st.booleans(),  # error
)


def facts(turns):
    out = []
    for mutated, calls, digest, error in turns:
        cs = tuple(CallFact(n, a) for n, a in calls)
        rs = tuple(ResultFact(digest, error) for _ in cs)
        out.append((cs, rs, mutated))
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(turn, max_size=30),
    st.integers(2, 5),
    st.integers(1, 7),
    st.integers(1, 11),
    st.integers(1, 40),
)
def test_a_silent_verdict_is_never_contradicted(turns, repeat, stagnant, recon, floor) -> None:
    policy = Policy(repeat_cap=repeat, stagnant_cap=stagnant, recon_turns=recon, turn_floor=floor)
    observed = facts(turns)
    mutated = [m or any(c.name in MUTATION_TOOLS for c in cs) for cs, _, m in observed]
    last = [cs[-1].signature for cs, _, _ in observed]
    if ProgressGuard.from_policy(policy).silent_over(mutated, last):
        guard = ProgressGuard.from_policy(policy)
        assert all(guard.observe(cs, rs, m).signal is Signal.CONTINUE for cs, rs, m in observed)


def test_silence_is_granted_and_refused_as_the_thresholds_say() -> None:
    guard = ProgressGuard.from_policy(Policy())
    reads = [CallFact("read", f"f{i}").signature for i in range(5)]
    assert guard.silent_over([False] * 5, reads)  # 5 unmutated turns: below stagnant 6 and recon 10
    assert not guard.silent_over([False] * 6, [*reads, "x"])  # 6 unmutated turns could be stagnant
    assert not guard.silent_over([True] * 4, [reads[0]] * 4)  # the same last call 4 times could repeat
    assert guard.silent_over([True] * 59, [CallFact("write", str(i)).signature for i in range(59)])
    assert not guard.silent_over(
        [True] * 60, [CallFact("write", str(i)).signature for i in range(60)]
    )  # floor
