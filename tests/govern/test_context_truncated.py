"""The context-window manager's terminus as the Governor takes it: at the top of a turn (the replay engine) or after
``begin_turn`` and its injections, before the call (the live loop's size check) — the same stop either way."""

from __future__ import annotations

import pytest

from workbench.govern import Governor, GovernorError, Policy, Reply, ResultFact
from workbench.govern.decisions import Stop
from workbench.govern.noprogress import CallFact

WRITE = Reply(prompt=12_000, cached=0, completion=500, calls=(CallFact("write", '{"path": "a"}', "c0"),))


def one_call(policy: Policy) -> Governor:
    """A governor that has made one call (0-24 s) and run its write."""
    gov = Governor(policy)
    gov.begin_turn(0.0)
    assert gov.after_response(WRITE, 24.0).next == "run-tools"
    gov.after_tools([ResultFact("h0")], True, 24.0)
    return gov


def fields(stop: Stop) -> tuple[object, ...]:
    meter = None if stop.meter is None else (stop.meter.name, stop.meter.reached, stop.meter.allowed)
    return (stop.turn, stop.phase, stop.kind, stop.reason, stop.numbers, stop.verdict, stop.exhausted, meter)


@pytest.mark.parametrize(
    "policy",
    [
        Policy.named("current"),
        Policy.named("current", grant=10_000),
        Policy.named("ink-s9", deadline_s=100.0),
    ],
    ids=["plain", "landing on the budget", "timed"],
)
def test_after_begin_turn_the_stop_is_the_one_given_at_the_top(policy: Policy) -> None:
    top = one_call(policy).context_truncated(turn=1).stop
    gov = one_call(policy)
    assert gov.begin_turn(25.0).next == "call"
    after = gov.context_truncated(turn=1).stop
    assert top is not None and after is not None
    assert fields(after) == fields(top)
    assert (after.turn, after.phase, after.kind, after.verdict) == (
        0,
        "start",
        "context-truncated",
        "context_truncated",
    )
    assert gov.stopped is after and gov.decisions[-1] is after


def test_the_meter_is_what_the_run_was_exhausting_re_read() -> None:
    stop = one_call(Policy.named("current", grant=10_000)).context_truncated(turn=1).stop
    assert stop is not None and stop.exhausted == "budget"
    assert stop.meter is not None and stop.meter.words() == "cost: 12,500 of 10,000 tokens of billed work"


def test_a_wall_pace_heard_at_the_truncated_turn_stays_in_the_decisions() -> None:
    gov = one_call(Policy.named("current", deadline_s=40.0))
    step = gov.begin_turn(24.0)  # 24 s of a 40 s wall: past half
    assert [(d.action, d.kind) for d in step.decisions] == [("note", "wall-pace"), ("inject", "wall-pace")]
    stop = gov.context_truncated(turn=1).stop
    assert stop is not None and (stop.kind, stop.meter) == ("context-truncated", None)
    assert [d.kind for d in gov.decisions] == ["wall-pace", "wall-pace", "context-truncated"]


def test_not_once_the_call_was_made_or_the_run_stopped() -> None:
    gov = Governor(Policy.named("current"))
    gov.begin_turn(0.0)
    gov.after_response(WRITE, 1.0)
    with pytest.raises(GovernorError, match="expected phase 'tools', got 'start' or 'response'"):
        gov.context_truncated(turn=1)
    stopped = Governor(Policy.named("current"))
    stopped.context_truncated(turn=0)
    with pytest.raises(GovernorError, match="the run has stopped"):
        stopped.context_truncated(turn=0)
