"""Fidelity on the real traces (../shared/traces): the recorded policy reproduces the recorded stop, and a policy
that cannot fire reproduces every recording."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.govern import Policy
from workbench.replay import replay, replay_leaves
from workbench.replay.censoring import finished_on_own
from workbench.scale import load

pytestmark = pytest.mark.real

CANNOT_FIRE = Policy(
    grant=10**12,
    max_turns=10**9,
    turn_backstop=None,
    no_progress=False,
    tool_timeouts=False,
    empty_abandon=False,
    wrapup_at=None,
)


@pytest.fixture(scope="module")
def corpus(shared: Path):
    c = load(shared)
    assert any(r.source == "openhands" for r in c.runs)
    return c


def test_ponyc_4588_under_its_recorded_policy_stops_where_the_recording_stopped(corpus) -> None:
    run = corpus.by_id("ponylang__ponyc-4588")
    policy = Policy.recorded(run)
    assert (policy.rules, policy.max_turns) == ("openhands", 50)
    res = replay(run, policy)
    assert run.outcome.stop_reason == "max-iterations" and len(run.turns) == 49
    assert (res.stop_reason, res.stop_turn, res.cut_turns, res.censored) == ("turn-cap", 48, 0, False)
    assert res.verdict == "turn_cap" and res.diverges_at is None
    assert res.meter.words() == "turns: 49 of 50 turns"


def test_every_openhands_run_under_its_recorded_policy_reproduces_its_recording(corpus) -> None:
    for run in corpus.runs:
        if run.source != "openhands":
            continue
        res = replay(run, Policy.recorded(run))
        assert res.stop_turn == len(run.turns) - 1 and res.cut_turns == 0, run.run_id
        assert not res.censored and res.diverges_at is None, run.run_id


def test_a_policy_that_cannot_fire_reproduces_every_recording(corpus) -> None:
    seen = 0
    for run in corpus.runs:
        for leaf, res in zip(run.leaves(), replay_leaves(run, CANNOT_FIRE), strict=True):
            seen += 1
            assert res.stop_turn == len(leaf.turns) - 1 and res.cut_turns == 0, leaf.run_id
            assert res.censored is (not finished_on_own(leaf)), leaf.run_id
            if finished_on_own(leaf):
                assert res.stop_reason == (leaf.outcome.stop_reason or "done"), leaf.run_id
            assert all(d.action in ("inject", "stop") or d.kind == "steered" for d in res.decisions), (
                leaf.run_id
            )
            assert all(
                d.kind in ("nudge-empty", "nudge-length") for d in res.decisions if d.action == "inject"
            )
    assert seen >= 25


def test_real_runs_under_the_current_rules(corpus) -> None:
    run = corpus.by_id("ponylang__ponyc-4588")
    res = replay(run, Policy())
    assert (res.landing_started_at, res.stop_turn, res.spent) == (16, 19, 283_123)
    assert res.cut_turns == 29 and res.good_outcome_after_cut is False


def test_the_context_manager_hook_on_a_real_run(corpus) -> None:
    run = corpus.by_id("ponylang__ponyc-4588")
    res = replay(run, Policy(grant=10**9, context_length=8_000))
    ctx = res.context
    assert ctx is not None and ctx.truncated_at is not None
    # the terminus ends the run before the provider call of turn truncated_at
    assert (res.stop_reason, res.stop_turn, res.verdict) == (
        "context-truncated",
        ctx.truncated_at - 1,
        "context_truncated",
    )
    if ctx.first_prune_at is not None:
        assert res.diverges_at is not None and res.diverges_at <= ctx.first_prune_at
    assert replay(run, Policy(grant=10**9)).context is None  # no context_length: no manager


def test_openhands_rules_honour_the_recorded_max_iterations(corpus) -> None:
    run = corpus.by_id("ponylang__ponyc-4588")
    res = replay(run, Policy.named("openhands"))
    assert res.policy.max_turns == 50 and res.stop_reason == "turn-cap" and res.stop_turn == 48
    assert replay(run, Policy.named("openhands", max_turns=20)).stop_turn == 18  # an explicit limit wins
