"""Boundaries of every rule as the Governor composes them (docs/governors.md §4-§5)."""

from __future__ import annotations

import pytest

from workbench.govern import Governor, GovernorError, Policy, Reply, ResultFact
from workbench.govern.messages import (
    BUDGET_LANDING,
    CONCLUDE,
    DEADLINE_LANDING,
    NUDGE_EMPTY,
    NUDGE_LENGTH,
    RECON,
    WALL_PACE,
    WRAPUP,
)

from .drive import T, drive, tool

FREE = dict(no_progress=False, tool_timeouts=False)


def writes(n: int, tokens: int) -> list[T]:
    return [
        tool(prompt=tokens, args=f'{{"path": "f{i}"}}', result=f"wrote f{i}", mutated=True) for i in range(n)
    ]


# -- the budget landing (§5.5) --------------------------------------------------------------------------------


def test_grant_40000_with_10000_token_turns_lands_in_one_call_at_50000() -> None:
    out = drive(Policy(grant=40_000), writes(10, 10_000))
    assert out.calls == 5  # crossing after 4 calls, exactly 1 landing call
    assert out.stop.kind == "budget" and out.stop.exhausted == "budget"
    assert out.stop.meter.reached == 50_000  # re-read at land: 1.25x the grant
    assert out.gov.spent == 50_000
    # the token half (ceiling 48,000) ended it on its first landing turn, before its last: noted
    assert [k for _, a, k in out.kinds if a == "note"] == ["landing-tokens"]


def test_grant_20000_with_1000_token_turns_gets_all_four_landing_calls() -> None:
    out = drive(Policy(grant=20_000), writes(40, 1_000))
    assert out.calls == 24  # crossing after 20 calls, then 4 landing calls
    assert (out.stop.kind, out.stop.exhausted, out.stop.verdict) == ("budget", "budget", "budget_stop")


def test_landing_starts_at_exactly_the_grant_and_not_one_token_before() -> None:
    at = drive(Policy(grant=3_000, **FREE), writes(3, 1_000))
    assert [t for t, a, k in at.kinds if a == "start-landing"] == [2]
    below = drive(Policy(grant=3_001, **FREE), writes(3, 1_000))
    assert [t for t, a, k in below.kinds if a == "start-landing"] == []


def test_landing_token_half_ends_it_before_its_last_turn() -> None:
    # grant 10,000, share 0.2 => ceiling = 10,000 + 2,000; two 1,500-token landing turns reach 13,000 >= 12,000
    out = drive(Policy(grant=10_000, **FREE), writes(20, 1_000)[:10] + writes(5, 1_500))
    assert out.calls == 12
    assert [k for _, a, k in out.kinds if a == "note"] == ["landing-tokens"]
    no_share = drive(
        Policy(grant=10_000, landing_token_share=None, **FREE), writes(10, 1_000) + writes(5, 1_500)
    )
    assert no_share.calls == 14  # all 4 landing turns without a token half


def test_nudges_do_not_consume_landing_turns() -> None:
    script = [
        *writes(2, 10_000),
        T(prompt=100, text=""),  # empty reply: nudged (cannot abandon: nothing remains)
        T(prompt=100, text="cut", finish="length"),  # truncated final: nudged
        *writes(4, 100),
    ]
    out = drive(Policy(grant=20_000, **FREE), script)
    assert out.injected(NUDGE_EMPTY) == [2] and out.injected(NUDGE_LENGTH) == [3]
    assert out.calls == 8  # crossing at call 2, 2 nudges, then all 4 landing tool turns
    assert out.stop.kind == "budget"


def test_final_answer_during_landing_is_done_but_graded_as_a_budget_stop() -> None:
    out = drive(Policy(grant=2_000, **FREE), [*writes(2, 1_000), T(prompt=10, text="Here it is.")])
    assert (out.stop.kind, out.stop.exhausted, out.stop.verdict) == ("done", "budget", "budget_stop")


# -- the length-stopped batch (§5.12) -----------------------------------------------------------------------------


def test_length_stopped_batch_runs_nothing_and_skips_every_later_check() -> None:
    gov = Governor(Policy(grant=1_000))
    gov.begin_turn()
    step = gov.after_response(
        Reply(prompt=5_000, completion=0, finish_reason="length", calls=(_c("write"), _c("sh"))), None
    )
    assert step.next == "skip-tools" and step.skip is not None
    assert step.skip.text.startswith("This tool call was NOT executed.")
    assert (
        gov.tool_calls == 2 and gov.landing == 0 and not gov.warned
    )  # over the grant, yet no landing, no wrap-up
    assert gov.progress.turns == 0  # the no-progress guard never saw it
    with pytest.raises(GovernorError):
        gov.after_tools([ResultFact("x")], True)
    gov.begin_turn()
    gov.after_response(Reply(prompt=10, calls=(_c("write"),)), None)
    step = gov.after_tools([ResultFact("x")], True)
    assert [d.kind for d in step.decisions] == ["budget", BUDGET_LANDING]  # the next ordinary turn lands


def _c(name: str, args: str = "{}"):
    from workbench.govern import CallFact

    return CallFact(name, args)


# -- replies without tools (§5.11) ---------------------------------------------------------------------------------


def test_empty_reply_eating_most_of_the_budget_is_abandoned_after_one_call() -> None:
    out = drive(Policy(grant=100_000), [T(completion=80_000)] * 4)
    assert out.calls == 1 and out.stop.kind == "empty" and out.stop.verdict == "empty_response"


def test_small_empty_replies_are_nudged_until_the_turn_cap() -> None:
    out = drive(Policy(grant=100_000, max_turns=4), [T(completion=50)] * 6)
    assert out.calls == 4 and out.stop.kind == "turn-cap" and out.stop.verdict == "turn_cap"
    assert out.injected(NUDGE_EMPTY) == [0, 1, 2, 3]
    assert out.stop.meter.words() == "turns: 4 of 4 turns"


def test_empty_abandonment_boundary_is_strictly_more_than_half_of_what_remains() -> None:
    assert drive(Policy(grant=1_001), [T(completion=500)]).stop is None  # 500 > 1001 // 2 = 500 is false
    assert drive(Policy(grant=1_001), [T(completion=501)]).stop.kind == "empty"


def test_final_answer_is_an_unverified_success() -> None:
    out = drive(Policy(), [T(prompt=10, text="  The answer is 42.  ")])
    assert (out.stop.kind, out.stop.verdict, out.stop.text) == (
        "done",
        "unverified_success",
        "The answer is 42.",
    )


# -- wrap-up (§5.4) ----------------------------------------------------------------------------------------------


def test_wrapup_fires_once_strictly_above_seven_tenths() -> None:
    at = drive(Policy(grant=1_000, **FREE), writes(7, 100))
    assert at.injected(WRAPUP) == []  # 700 / 1,000 is not above 0.7
    above = drive(Policy(grant=1_000, **FREE), [*writes(7, 100), tool(prompt=1, mutated=True), *writes(1, 1)])
    assert above.injected(WRAPUP) == [7]  # 701: once


def test_wrapup_is_not_given_on_the_turn_that_starts_the_landing() -> None:
    out = drive(Policy(grant=1_000, **FREE), writes(3, 600))
    assert out.injected(WRAPUP) == [] and out.injected(BUDGET_LANDING) == [1]


# -- no-progress guard (§5.8 timing facts) -------------------------------------------------------------------------


def same_read() -> T:
    return tool(name="read", args='{"path": "a"}', result="same", mutated=False)


def test_same_call_same_result_concludes_after_the_fourth_and_terminates_on_the_fifth() -> None:
    out = drive(Policy(), [same_read()] * 9)
    assert out.injected(CONCLUDE) == [3]
    assert out.calls == 5 and out.stop.kind == "no-progress" and out.stop.verdict == "budget_stop"
    assert out.stop.reason.startswith("no-progress guard: the same tool call repeated 4 times")
    assert out.stop.meter.words() == "no-progress"


def test_different_calls_same_result_conclude_on_the_seventh_and_terminate_on_the_eighth() -> None:
    script = [tool(name="read", args=f'{{"n": {i}}}', result="same", mutated=False) for i in range(12)]
    out = drive(Policy(), script)
    assert out.injected(CONCLUDE) == [6] and out.calls == 8
    assert (
        "6 consecutive turns with no filesystem mutations"
        in next(d for d in out.gov.decisions if d.kind == CONCLUDE).reason
    )


def test_compliant_answer_after_conclude_lands_normally() -> None:
    out = drive(Policy(), [same_read()] * 4 + [T(text="What I finished and what I did not.")])
    assert out.stop.kind == "done" and out.stop.verdict == "unverified_success"


def test_productive_turns_after_conclude_still_spend_the_grace() -> None:
    out = drive(Policy(), [same_read()] * 4 + writes(6, 10))
    assert out.calls == 8 and out.stop.kind == "no-progress"  # the 4th post-directive tool turn terminates


def test_distinct_reads_without_writes_get_recon_notices_and_are_never_concluded() -> None:
    script = [tool(name="read", args=f'{{"n": {i}}}', result=f"fresh {i}", mutated=False) for i in range(65)]
    out = drive(Policy(), script)
    assert (
        out.stop is None and out.injected(RECON) == [9, 19, 29, 39, 49, 59] and out.injected(CONCLUDE) == []
    )


def test_writing_every_turn_never_fires() -> None:
    out = drive(Policy(grant=10**9), writes(100, 10))
    assert out.stop is None and out.gov.decisions == []


def test_fidgeting_past_the_floor_concludes_at_turn_sixty() -> None:
    script = []
    for i in range(70):
        result = f"fresh {i}" if i % 6 == 0 else "same"
        script.append(tool(name="read", args=f'{{"n": {i}}}', result=result, mutated=False))
    out = drive(Policy(), script)
    assert out.injected(CONCLUDE) == [59]
    assert "ran past 60 turns" in next(d for d in out.gov.decisions if d.kind == CONCLUDE).reason


def test_no_progress_thresholds_are_parameters() -> None:
    assert drive(Policy(repeat_cap=2), [same_read()] * 9).gov.decisions[0].turn == 1
    script = [tool(name="read", args=f'{{"n": {i}}}', result="same", mutated=False) for i in range(12)]
    assert drive(Policy(stagnant_cap=3), script).injected(CONCLUDE) == [3]
    reads = [tool(name="read", args=f'{{"n": {i}}}', result=f"fresh {i}", mutated=False) for i in range(12)]
    assert drive(Policy(recon_turns=5), reads).injected(RECON) == [4, 9]


def test_mutation_tool_names_count_even_when_the_world_says_nothing() -> None:
    script = [tool(name="edit", args='{"path": "a"}', result="same", mutated=None) for _ in range(12)]
    out = drive(Policy(), script)
    assert out.injected(CONCLUDE) == [3]  # repeats still conclude (same call, same result) ...
    stag = [tool(name="edit", args=f'{{"n": {i}}}', result="same", mutated=None) for i in range(12)]
    assert drive(Policy(), stag).stop is None  # ... but an edit is never stagnant


# -- tool-timeout guard (§5.9) --------------------------------------------------------------------------------------


def timeout(cmd: str, timed_out: bool = True) -> T:
    return T(
        prompt=10,
        calls=(("sh", f'{{"command": "{cmd}"}}'),),
        results=(ResultFact(f"h{cmd}{timed_out}", is_error=True, timed_out=timed_out),),
        mutated=False,
    )


def test_three_timeouts_of_one_exact_call_stop_the_leaf() -> None:
    script = [timeout("make"), timeout("ls"), timeout("make"), timeout("make", False), timeout("make")]
    out = drive(Policy(), script)
    assert out.calls == 5 and out.stop.kind == "tool-timeouts" and out.stop.verdict == "budget_stop"
    assert (
        out.stop.reason == "the same command timed out 3 times, so it was stopped rather than run again: make"
    )
    assert out.stop.meter.words() == "tool-timeouts: 3 of 3 timeouts of one command"


def test_different_commands_never_combine() -> None:
    out = drive(Policy(), [timeout("a"), timeout("b"), timeout("c"), timeout("a"), timeout("b")])
    assert out.stop is None


# -- deadline landing and wall pace (§5.6, §5.7) -------------------------------------------------------------------


def test_wall_pace_once_strictly_after_half_the_wall() -> None:
    script = [tool(prompt=1, elapsed=s, mutated=True, args=f'{{"n": {s}}}') for s in (100, 300, 300.5, 400)]
    out = drive(Policy(deadline_s=600, **FREE), script, timed=True)
    assert out.injected(WALL_PACE) == [2]
    pace = next(d for d in out.gov.decisions if d.kind == WALL_PACE and d.action == "inject")
    assert "now reads 5m1s gone and 5m left" in pace.text  # 300.5 s rounds half up to 301 s


def test_deadline_landing_at_the_reserve_gives_four_calls_and_grades_the_clock() -> None:
    # wall 600 s: reserve 60 s. At 539.9 s 60.1 s remain (> reserve); at 540 s it starts.
    script = [
        tool(prompt=1, elapsed=s, end=s + 1, mutated=True, args=f'{{"n": {s}}}')
        for s in (10, 539.9, 540, 545, 550, 555, 560)
    ]
    out = drive(Policy(deadline_s=600, **FREE), script, timed=True)
    assert out.injected(DEADLINE_LANDING) == [2]
    assert out.calls == 6  # the ordering turn is landing turn 1: calls 3..6
    assert (out.stop.kind, out.stop.exhausted, out.stop.verdict) == (
        "deadline",
        "deadline",
        "provider_failure",
    )
    assert (
        out.stop.meter.words() == "deadline: 556 of 600 seconds"
    )  # re-read at land: the last call ended at 556 s
    assert out.injected(WALL_PACE) == [1]  # paced once, at 539.9 s, before the reserve


def test_a_leaf_entering_its_reserve_hears_only_the_landing() -> None:
    script = [tool(prompt=1, elapsed=s, mutated=True, args=f'{{"n": {s}}}') for s in (10, 545)]
    out = drive(Policy(deadline_s=600, **FREE), script, timed=True)
    assert out.injected(DEADLINE_LANDING) == [1] and out.injected(WALL_PACE) == []


def test_lease_expiry_inside_a_call_starts_the_landing_and_a_second_expiry_stops() -> None:
    gov = Governor(Policy(deadline_s=600, **FREE))
    step = gov.begin_turn(100)
    assert step.call_deadline_s == 600
    step = gov.call_failed(600, lease_expired=True)
    assert step.next == "retry" and [d.kind for d in step.decisions] == ["deadline", DEADLINE_LANDING]
    step = gov.begin_turn(600)
    assert step.call_deadline_s == 660  # a fresh clock of the whole reserve
    step = gov.call_failed(660, lease_expired=True)
    assert (step.stop.kind, step.stop.verdict) == ("deadline", "provider_failure")


def test_other_call_errors_stop_with_error() -> None:
    gov = Governor(Policy())
    gov.begin_turn()
    assert gov.call_failed().stop.kind == "error"


# -- turn cap, fold, verdicts, order ---------------------------------------------------------------------------


def test_turn_cap_clamps_to_the_backstop() -> None:
    assert Governor(Policy(max_turns=1_000)).cap == 400
    assert Governor(Policy(max_turns=0)).cap == 400


def test_fold_runs_two_calls_and_says_the_next_reply_is_the_result() -> None:
    out = drive(Policy(fold=True), writes(3, 10))
    assert out.calls == 2 and out.stop.kind == "turn-cap"
    assert out.injected("fold-last-call") == [0, 1]  # turn + 2 >= turnCap holds on both iterations, as in Go
    assert out.stop.meter.words() == "turns: 2 of 400 turns"


def test_no_phase_after_a_stop() -> None:
    gov = Governor(Policy())
    gov.begin_turn()
    gov.after_response(Reply(text="done"))
    with pytest.raises(GovernorError):
        gov.begin_turn()


# -- era rule sets ---------------------------------------------------------------------------------------------


def test_ink_s9_lands_on_raw_and_has_no_token_half_or_no_progress_guard() -> None:
    # 98%-cached turns: cost stays low, raw reaches 3 x 150,000 = 450,000 first
    script = [
        T(
            prompt=12_192,
            cached=0 if i == 0 else 11_948,
            completion=800,
            calls=(("read", '{"p": 1}'),),
            results=(ResultFact("same"),),
            mutated=False,
        )
        for i in range(60)
    ]
    out = drive(Policy.named("ink-s9"), script)
    start = next(d for d in out.gov.decisions if d.action == "start-landing")
    assert start.data["trigger"] == "raw" and start.turn == 34  # 35 x 12,992 = 454,720 >= 450,000
    assert (
        out.calls == 39 and out.stop.kind == "budget"
    )  # 4 landing turns, and the repeats never concluded it


def test_ink_s9_reuse_ceiling_lands_when_the_window_is_known() -> None:
    script = [tool(prompt=50_000, cached=49_000, mutated=True, args=f'{{"n": {i}}}') for i in range(10)]
    gov_out = drive(Policy.named("ink-s9", window=200_000, raw_lands=False), script)
    start = next(d for d in gov_out.gov.decisions if d.action == "start-landing")
    assert start.data["trigger"] == "reuse" and start.turn == 4  # 5 x 50,000 = 250,000 >= 240,000


# -- OpenHands ----------------------------------------------------------------------------------------------


def test_openhands_max_iterations_allows_one_call_fewer() -> None:
    out = drive(Policy.named("openhands", max_turns=50), writes(60, 10))
    assert out.calls == 49 and out.stop.kind == "turn-cap"


@pytest.mark.parametrize(
    ("script", "scenario", "calls"),
    [
        ([("a", "same", False)] * 6, "repeating-action-observation", 4),
        ([("a", "boom", True)] * 6, "repeating-action-error", 3),
        ([("a", "x", False), ("b", "y", False)] * 4, "alternating-pattern", 6),
    ],
)
def test_openhands_stuck_detector(script, scenario, calls) -> None:
    turns = [T(calls=(("sh", a),), results=(ResultFact(r, is_error=e),)) for a, r, e in script]
    out = drive(Policy.named("openhands"), turns)
    assert out.stop.kind == "stuck" and out.stop.data["scenario"] == scenario and out.calls == calls


def test_openhands_finish_tool_ends_the_run_with_its_message() -> None:
    out = drive(
        Policy.named("openhands"), [tool(name="think"), tool(name="finish", args='{"message": "Fixed."}')]
    )
    assert out.calls == 2 and (out.stop.kind, out.stop.text, out.stop.verdict) == (
        "done",
        "Fixed.",
        "unverified_success",
    )


# -- verdicts ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stop", "exhausted", "text", "verdict"),
    [
        ("budget", "budget", "x", "budget_stop"),
        ("turn-cap", None, "x", "turn_cap"),
        ("empty", None, "", "empty_response"),
        ("no-progress", "no-progress", "x", "budget_stop"),
        ("tool-timeouts", "tool-timeouts", "x", "budget_stop"),
        ("deadline", "deadline", "x", "provider_failure"),
        ("error", None, "x", "provider_failure"),
        ("cancelled", None, "", "unverified_success"),
        ("done", "budget", "x", "budget_stop"),
        ("done", "deadline", "x", "unverified_success"),
        ("done", None, "  ", "empty_response"),
        ("done", None, "x", "unverified_success"),
        ("overrun", None, "x", "unverified_success"),
        ("overrun", "overrun", "x", "budget_stop"),
    ],
)
def test_verdict_for(stop, exhausted, text, verdict) -> None:
    from workbench.govern.verdict import verdict_for

    assert verdict_for(stop, exhausted, text) == verdict
    assert verdict_for(stop, exhausted, text, preset="verified_success") == "verified_success"


def reads_productive_every(k: int, turns: int = 70) -> list[T]:
    return [
        tool(name="read", args=f'{{"n": {i}}}', result=f"fresh {i}" if i % k == 0 else "same", mutated=False)
        for i in range(turns)
    ]


def test_the_floor_reads_five_productive_turns_in_the_last_twenty() -> None:
    assert drive(Policy(), reads_productive_every(4)).injected(CONCLUDE) == []  # 5 of 20: working
    assert drive(Policy(), reads_productive_every(5)).injected(CONCLUDE) == [59]  # 4 of 20 at turn 60
    assert drive(Policy(turn_floor=40), reads_productive_every(5)).injected(CONCLUDE) == [39]
    assert drive(Policy(floor_min_productive=4), reads_productive_every(5)).injected(CONCLUDE) == []
    assert drive(Policy(floor_window=10, floor_min_productive=3), reads_productive_every(4)).injected(
        CONCLUDE
    ) == [59]
