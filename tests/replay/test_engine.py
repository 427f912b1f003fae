"""Replay semantics (docs/architecture.md): the seed's figures, divergence, censoring, what was cut, time, segments."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from workbench.govern import Policy
from workbench.govern.messages import WRAPUP, WRAPUP_TEXT
from workbench.replay import replay, replay_leaves
from workbench.scenarios.seed import (
    CallSpec,
    TurnSpec,
    build_run,
    constant_turns,
    empty_burn,
    length_stopped_batch,
    repeated_call,
    tool_timeouts,
    warm_runaway,
)
from workbench.trace.schema import Message, Segment

COST_ONLY = dict(no_progress=False, tool_timeouts=False)


# -- the seed's published figures (TestACacheDiscountedRunawayLandsOnItsMoney) ------------------------------------


def test_warm_runaway_shape() -> None:
    run = warm_runaway()
    assert [run.turns[0].usage.cached, run.turns[1].usage.cached] == [0, 11_948]
    assert {t.usage.prompt for t in run.turns} == {12_192} and {t.usage.completion for t in run.turns} == {
        800
    }
    assert all(t.mutated and t.tool_calls[0].name == "write" for t in run.turns)
    assert len({t.tool_calls[0].arguments for t in run.turns}) == len(run.turns)  # a new file each turn
    assert len(run.request(3)) == 2 + 2 * 3
    assert run.metadata["generator"]["name"] == "warm_runaway"


def test_runaway_at_the_default_grant_reaches_1_273_216_raw_tokens() -> None:
    res = replay(warm_runaway(), Policy(grant=220_000))
    # crossing after 94 calls, all 4 landing turns (8,955 tokens < the 44,000 token half): 98 x 12,992
    assert (res.landing_started_at, res.stop_turn, res.raw) == (93, 97, 1_273_216)
    assert res.turns_replayed == 98 and res.stop_reason == "budget" and res.verdict == "budget_stop"


def test_runaway_at_250000_pushes_1_442_112_raw_tokens() -> None:
    res = replay(warm_runaway(), Policy(grant=250_000))
    assert (res.turns_replayed, res.raw) == (111, 1_442_112)


def test_at_190000_cost_only_and_landed_turn_counts_agree_at_85() -> None:
    landed = replay(warm_runaway(), Policy(grant=190_000))
    cost_only = replay(warm_runaway(), Policy(grant=190_000, **COST_ONLY))
    assert landed.turns_replayed == cost_only.turns_replayed == 85


def test_the_raw_count_is_about_5_8_times_the_grant() -> None:
    res = replay(warm_runaway(), Policy(grant=220_000))
    assert round(res.raw / 220_000, 1) == 5.8


# -- decisions, divergence, cuts ---------------------------------------------------------------------------------


def test_timeline_frame_and_divergence_after_the_first_injection() -> None:
    res = replay(warm_runaway(), Policy(grant=220_000))
    frame = res.to_frame()
    assert list(frame.columns[:5]) == ["turn", "phase", "action", "kind", "reason"]
    assert frame["kind"].tolist() == ["wrapup", "budget", "landing", "budget"]
    assert res.wrapup_at == 35 and res.diverges_at == 36
    assert frame.loc[frame.kind == "wrapup", "n_used"].iloc[0] > 0.7


def test_what_was_cut() -> None:
    res = replay(warm_runaway(), Policy(grant=220_000))
    assert (res.cut_turns, res.cut_tokens, res.cut_tool_calls, res.cut_mutations) == (42, 42 * 12_992, 42, 42)
    assert res.good_outcome_after_cut is False  # a runaway has no good outcome to cut
    done = constant_turns(10, 10_000)  # finishes on its own, with a final answer on turn 10
    res = replay(done, Policy(grant=40_000))
    assert res.stop_turn == 4 and res.cut_turns == 6 and res.good_outcome_after_cut is True


def test_a_recorded_injection_is_not_a_divergence() -> None:
    run = constant_turns(12, 100)
    policy = Policy(grant=1_000, landing_turns=20, landing_token_share=None, **COST_ONLY)
    plain = replay(run, policy)
    assert plain.wrapup_at == 7 and plain.diverges_at == 8
    # the same run, recorded by a loop that gave the warning after turn 7
    pool = list(run.messages)
    at = 2 + 2 * 8  # the end of turn 7's messages
    pool.insert(at, Message(role="user", content=WRAPUP_TEXT, kind=WRAPUP))
    turns = [
        t.model_copy(update={"sent": [(0, 2 + 2 * i + (1 if i >= 8 else 0))]})
        for i, t in enumerate(run.turns)
    ]
    recorded = run.model_copy(update={"messages": pool, "turns": turns})
    res = replay(recorded, policy)
    assert res.wrapup_at == 7 and res.diverges_at == 10  # only the budget landing (after turn 9) differs


def test_skipped_length_batch_diverges_unless_the_recording_answered_it_the_same_way() -> None:
    res = replay(length_stopped_batch(), Policy(**COST_ONLY))
    assert res.diverges_at == 4 and [d.kind for d in res.decisions][:1] == ["length-batch"]
    assert res.stop_reason == "done" and res.stop_turn == 7


# -- how the recording ended ------------------------------------------------------------------------------------


def test_run_that_finished_on_its_own_finishes_the_same_way() -> None:
    res = replay(constant_turns(5, 100), Policy())
    assert (res.stop_reason, res.stop_turn, res.censored, res.cut_turns) == ("done", 5, False, 0)


def test_recording_cut_by_a_limit_is_censored_when_the_policy_would_go_on() -> None:
    res = replay(warm_runaway(turns=20), Policy(grant=10**9))
    assert res.censored and res.stop_reason == "end-of-recording" and res.verdict is None
    assert res.stop_turn == 19 and res.cut_turns == 0
    assert any("censored" in n for n in res.notes)


def test_recording_ending_exactly_at_the_turn_cap_is_a_turn_cap_not_censored() -> None:
    res = replay(empty_burn(turns=4, completion=50), Policy(grant=100_000, max_turns=4))
    assert (res.stop_reason, res.stop_turn, res.censored) == ("turn-cap", 3, False)


def test_the_seed_scenarios_stop_where_the_seed_says() -> None:
    assert replay(repeated_call(), Policy()).stop_turn == 4
    assert replay(tool_timeouts(), Policy()).stop_reason == "tool-timeouts"
    assert replay(empty_burn(), Policy(grant=100_000)).turns_replayed == 1


# -- usage and mutation gaps ------------------------------------------------------------------------------------


def test_missing_usage_and_unrecorded_mutation_are_stated() -> None:
    specs = [
        TurnSpec(
            prompt=None, cached=None, completion=None, calls=(CallSpec("write", {"p": 1}),), mutated=None
        ),
        TurnSpec(prompt=100, cached=None, completion=10, text="done"),
    ]
    res = replay(build_run("gaps", specs, generator="test", params={}), Policy())
    assert res.spent == 110
    assert any("1 turn(s) reported no usage" in n for n in res.notes)
    assert any("no cache reads" in n for n in res.notes)
    assert any("leave the workspace change unknown: never read as no change" in n for n in res.notes)
    assert any("no turn timestamps" in n for n in res.notes)


# -- time --------------------------------------------------------------------------------------------------------


def timed_run(seconds: list[float]):
    specs = [
        TurnSpec(prompt=10, calls=(CallSpec("write", {"n": i}),), mutated=True, seconds=s)
        for i, s in enumerate(seconds)
    ]
    specs.append(TurnSpec(prompt=10, text="done", seconds=1))
    return build_run("timed", specs, generator="test", params={})


def test_deadline_landing_from_recorded_timestamps() -> None:
    run = timed_run([100.0] * 10)  # turn i starts at 100 i s
    res = replay(run, Policy(deadline_s=600, **COST_ONLY))
    # wall 600, reserve 60. Turn 4 starts at 400 s > 300 s: the wall pace (the first divergence). Turn 6 starts
    # at 600 s with 0 s left: the landing starts and its fresh clock ends at 660 s; turn 6 would end at 700 s, so
    # the call is cut inside the landing: a deadline stop after 6 calls.
    assert res.landing_kind == "deadline" and res.landing_started_at == 6
    assert (res.stop_reason, res.verdict, res.stop_turn) == ("deadline", "provider_failure", 5)
    assert res.timed and res.diverges_at == 4
    assert res.meter.words() == "deadline: 660 of 600 seconds"


def test_lease_expiry_mid_call_reissues_the_turn_as_the_first_landing_call() -> None:
    run = timed_run([250.0, 250.0, 50.0, 10.0, 10.0, 10.0])  # turn 2 runs 500-550; turn 1 runs 250-500
    res = replay(run, Policy(deadline_s=400, **COST_ONLY))
    # wall 400, reserve 40. Turn 1 (250-500) is cut at 400: landing ordered, turn 1 re-issued from 400 to 650 —
    # past the 440 landing clock: deadline stop with one call made.
    assert res.stop_reason == "deadline" and res.turns_replayed == 1
    assert res.diverges_at is None or res.diverges_at >= 1


def test_untimed_runs_get_no_deadline_rules() -> None:
    res = replay(constant_turns(5, 100), Policy(deadline_s=1))
    assert res.stop_reason == "done" and not res.timed


# -- segments, hook, views ---------------------------------------------------------------------------------------


def test_segments_replay_as_leaves() -> None:
    run = constant_turns(6, 1_000)
    run = run.model_copy(
        update={"segments": [Segment(index=0, start=0, stop=4), Segment(index=1, start=4, stop=7)]}
    )
    results = replay_leaves(run, Policy(grant=2_500, **COST_ONLY))
    assert [r.run_id for r in results] == ["seed-constant-turns#s0", "seed-constant-turns#s1"]
    assert [r.segment for r in results] == [0, 1]
    assert [r.turns for r in results] == [4, 3]


@dataclass(frozen=True)
class FakeContextReplay:
    first_prune_at: int | None
    truncated_at: int | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)


def test_context_hook_prune_bounds_divergence_and_truncation_ends_the_run() -> None:
    run = constant_turns(10, 100)
    fake = lambda r, p: FakeContextReplay(first_prune_at=3, truncated_at=6)  # noqa: E731
    res = replay(run, Policy(context_length=8_000), context_replayer=fake)
    assert res.diverges_at == 3 and res.stop_reason == "context-truncated" and res.stop_turn == 5
    assert res.verdict == "context_truncated" and res.context.first_prune_at == 3
    plain = replay(run, Policy(), context_replayer=fake)  # no context_length: no manager, no hook
    assert plain.context is None and plain.stop_reason == "done"


def test_result_views() -> None:
    res = replay(warm_runaway(), Policy())
    d = res.to_dict()
    for key in (
        "run_id",
        "rules",
        "grant",
        "stop_reason",
        "stop_turn",
        "verdict",
        "spent",
        "raw",
        "landing_started_at",
        "wrapup_at",
        "concluded_at",
        "diverges_at",
        "censored",
        "cut_turns",
        "cut_tokens",
        "cut_tool_calls",
        "cut_mutations",
        "good_outcome_after_cut",
        "recorded_stop",
        "turns",
        "events",
    ):
        assert key in d
    json.dumps(d)
    assert "<table>" in res._repr_html_() and "diverges at" in res._repr_html_()
    assert "budget at turn 97" in repr(res)


@pytest.mark.parametrize("rules", ["current", "ink-s9", "older", "openhands"])
def test_every_rule_set_replays(rules: str) -> None:
    res = replay(warm_runaway(), Policy.named(rules))
    assert res.policy.rules == rules and res.turns_replayed > 0
