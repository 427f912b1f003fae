"""The no-progress guard on inferred and unknown workspace facts (unknown is never "no change"), and stop reasons
worded from the signal that fired."""

from __future__ import annotations

from workbench.govern.noprogress import CallFact, ProgressGuard, ResultFact, Signal


def _turn(i: int, same: bool = False) -> tuple[tuple[CallFact, ...], tuple[ResultFact, ...]]:
    arg = "x" if same else f"cmd{i}"
    return (CallFact("bash", arg),), (ResultFact("same-output"),)


def _drive(guard: ProgressGuard, facts: list[bool | None], inferred: bool = False, same: bool = False):
    out = []
    for i, m in enumerate(facts):
        calls, res = _turn(i, same)
        r = guard.observe(calls, res, m, inferred)
        if r.signal is Signal.CONCLUDE:
            guard.mark_concluded()
        out.append(r)
    return out


def test_unknown_never_fires_stagnant_but_says_unjudged() -> None:
    readings = _drive(ProgressGuard(), [None] * 12)
    assert all(r.signal is Signal.CONTINUE for r in readings)
    assert [r.unjudged for r in readings][:7] == [False] * 6 + [True]  # the 7th: 6 reads with nothing new
    assert all(r.stagnant == 0 and r.recon == 0 for r in readings)


def test_recorded_no_change_fires_as_the_seed_does() -> None:
    readings = _drive(ProgressGuard(), [False] * 8)
    assert readings[6].signal is Signal.CONCLUDE and readings[6].fired == "stagnant"
    assert readings[6].basis == "recorded" and not readings[6].unjudged
    assert readings[6].reason == (
        "no-progress guard: 6 consecutive turns with no filesystem mutations and no new information"
    )
    assert readings[7].signal is Signal.TERMINATE and readings[7].fired == "stagnant"


def test_an_inferred_no_change_says_so() -> None:
    readings = _drive(ProgressGuard(), [False] * 7, inferred=True)
    assert readings[6].signal is Signal.CONCLUDE and readings[6].basis == "inferred"


def test_an_unknown_turn_breaks_the_streak() -> None:
    readings = _drive(ProgressGuard(), [False] * 4 + [None] + [False] * 5)
    assert all(r.signal is not Signal.CONCLUDE for r in readings)
    assert readings[-1].stagnant == 5


def test_repeat_fires_whatever_the_workspace_fact() -> None:
    """An identical call with an identical result: the repeat signal needs no workspace fact (sympy-15976's
    identical no-op sed, each inferred a write)."""
    readings = _drive(ProgressGuard(), [True] * 5, inferred=True, same=True)
    assert readings[3].signal is Signal.CONCLUDE and readings[3].fired == "repeat"
    assert readings[3].basis == "recorded"
    assert readings[4].signal is Signal.TERMINATE


def test_grace_end_is_worded_from_the_signal_that_concluded() -> None:
    """Concluded by stagnant at observed turn 7, then four productive turns: the stop names stagnant and the grace,
    never the turn floor (60) that did not trigger."""
    g = ProgressGuard()
    readings = _drive(g, [False] * 7)
    assert readings[6].signal is Signal.CONCLUDE
    for i in range(4):
        r = g.observe((CallFact("bash", f"w{i}"),), (ResultFact(f"new{i}"),), True)
    assert r.signal is Signal.TERMINATE and r.fired == "grace" and r.basis == "recorded"
    assert "60" not in r.reason and "ran past" not in r.reason
    assert r.reason.startswith("no-progress guard: 6 consecutive turns with no filesystem mutations")
    assert r.reason.endswith("the 4 turns after the conclude directive passed without a final answer")


def test_floor_counts_unknown_as_productive() -> None:
    g = ProgressGuard(stagnant_cap=10**6, recon_turns=10**6, repeat_cap=10**6)
    readings = _drive(g, [None] * 61)
    assert all(r.signal is Signal.CONTINUE for r in readings)
    assert readings[59].unjudged  # 60 observed turns, none of the last 20 productive but all of them unknown
    g2 = ProgressGuard(stagnant_cap=10**6, recon_turns=10**6, repeat_cap=10**6)
    readings = _drive(g2, [False] * 60)
    assert readings[59].signal is Signal.CONCLUDE and readings[59].fired == "floor"
    assert readings[59].reason == (
        "no-progress guard: ran past 60 turns with no forward progress (0 productive of the last 20, fewer than 5)"
    )
