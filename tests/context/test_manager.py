"""ContextWindowManager decisions on small hand-built transcripts (exact numbers)."""

from __future__ import annotations

import pytest

from workbench.context import (
    CONTEXT_TRUNCATED,
    ContextTruncated,
    ContextWindowManager,
    claude_code_reserve,
    context_budget,
    split,
)
from workbench.estimate import Estimator
from workbench.trace import Message, ToolCall

# An estimator whose arithmetic is easy to follow: 1 char = 1 token for both classes, no overheads.
UNIT = Estimator(prose_divisor=1, dense_divisor=1, per_message=0, per_tool_call=0)


def turn(i: int, size: int) -> list[Message]:
    call = ToolCall(id=f"c{i}", name="", arguments="")
    return [
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", tool_call_id=f"c{i}", content="x" * size),
    ]


def transcript(*sizes: int) -> list[Message]:
    msgs = [Message(role="system", content="s" * 10), Message(role="user", content="u" * 10)]
    for i, s in enumerate(sizes):
        msgs += turn(i, s)
    return msgs


def mgr(length: int, **kw: object) -> ContextWindowManager:
    return ContextWindowManager(length, reserve=0, safety=0, estimator=UNIT, calibration_seed=1.0, **kw)  # type: ignore[arg-type]


def test_budget_is_length_minus_reserve_minus_safety_with_adr_reserve_order() -> None:
    assert context_budget(100_000, reserve=4_000, safety=1_000).tokens == 95_000
    assert context_budget(100_000, max_tokens=8_000, output_cap=32_000, safety=0).reserve_from == "max_tokens"
    assert context_budget(100_000, output_cap=32_000, safety=0).tokens == 68_000
    b = context_budget(100_000, safety=0)
    assert (b.reserve_from, b.reserve) == ("floor", 10_000)
    unknown = context_budget(None, reserve=0, safety=0)
    assert (unknown.context_length, unknown.length_known) == (8_192, False)


def test_claude_code_reserve_models_its_autocompact_threshold() -> None:
    assert claude_code_reserve(None) == 20_000
    assert claude_code_reserve(8_192) == 8_192
    assert context_budget(200_000, reserve=claude_code_reserve(64_000), safety=13_000).tokens == 167_000


def test_fits_without_pruning_then_drops_the_fewest_oldest_turns() -> None:
    msgs = transcript(30, 30, 30)  # head 20 + 3 turns of 30 = 110
    assert mgr(110).fit(msgs).action == "send"
    fit = mgr(80).fit(msgs)
    assert (fit.action, fit.turns_dropped, fit.messages_dropped) == ("pruned", 1, 2)
    assert (fit.tokens_before, fit.tokens_after) == (110, 80)
    assert list(fit.messages) == msgs[:2] + msgs[4:]
    ev = fit.event(7)
    assert ev is not None and ev.kind == "prune" and ev.turn == 7
    assert ev.data["turns_dropped"] == 1 and ev.data["tokens_before"] == 110 and ev.data["tokens_after"] == 80
    assert mgr(50).fit(msgs).turns_dropped == 2


def test_context_truncated_when_head_plus_newest_turn_does_not_fit() -> None:
    msgs = transcript(10, 40)
    fit = mgr(59).fit(msgs)  # floor = 20 + 40 = 60
    assert fit.truncated and fit.reason == CONTEXT_TRUNCATED and list(fit.messages) == []
    event = fit.event(3)
    # no call 3 is made: the terminus sits on the last call made, where the run's stop is graded
    assert event is not None and (event.kind, event.turn, event.data["blocked_turn"]) == (
        "context-truncated",
        2,
        3,
    )
    assert fit.event(0).turn is None  # type: ignore[union-attr]
    with pytest.raises(ContextTruncated) as err:
        fit.raise_if_truncated()
    assert err.value.retryable is False
    assert mgr(60).fit(msgs).turns_dropped == 1


def test_no_tools_sites_count_no_schema_bytes() -> None:
    tools = [{"name": "sh", "description": "d" * 200}]
    msgs = transcript(10)
    m = mgr(1_000)
    tool_site = m.fit(msgs, site="tool", tools=tools).tokens_before
    plain = m.fit(msgs, site="plain", tools=tools).tokens_before
    synthesis = m.fit(msgs, site="synthesis", tools=tools).tokens_before
    assert plain == synthesis == 30
    assert tool_site > 230
    with pytest.raises(ValueError, match="send site"):
        m.fit(msgs, site="stream")  # type: ignore[arg-type]


def test_calibration_only_grows_and_resets_on_a_runs_first_send() -> None:
    m = ContextWindowManager(10_000, reserve=0, safety=0, estimator=UNIT, calibration_seed=1.1)
    msgs = transcript(30)  # raw 50
    assert m.before_send(msgs).tokens_before == 55
    assert m.before_send(msgs, last_usage=100).factor == pytest.approx(2.0)  # 100 / 50
    assert m.before_send(msgs, last_usage=60).factor == pytest.approx(2.0)  # never shrinks
    assert m.before_send(msgs, last_usage=None).factor == pytest.approx(1.1)  # a new run's first send


def test_anchored_pricing_is_last_reported_plus_the_delta() -> None:
    m = mgr(10_000, pricing="anchored")
    first = transcript(30)
    m.before_send(first)
    grown = first + turn(9, 40)
    fit = m.before_send(grown, last_usage=500)  # anchor: 500 reported for raw 50
    assert fit.tokens_before == 540


def test_parallel_calls_recorded_as_separate_messages_stay_one_turn() -> None:
    a = ToolCall(id="a", name="", arguments="")
    b = ToolCall(id="b", name="", arguments="")
    msgs = [
        Message(role="user", content="u"),
        Message(role="assistant", tool_calls=[a]),
        Message(role="assistant", tool_calls=[b]),
        Message(role="tool", tool_call_id="a", content="x" * 50),
        Message(role="tool", tool_call_id="b", content="y" * 50),
        *turn(5, 5),
    ]
    part = split(msgs)
    assert part.starts == (1, 5)
    fit = mgr(20).fit(msgs)
    assert fit.turns_dropped == 1 and list(fit.messages) == [msgs[0], *msgs[5:]]


def test_guard_defers_to_the_provider_rather_than_orphan() -> None:
    # A result whose call lies in a LATER message cannot be kept paired by dropping a prefix.
    late = ToolCall(id="z", name="", arguments="")
    msgs = [
        Message(role="user", content="u"),
        Message(role="assistant", content="a" * 40),
        Message(role="tool", tool_call_id="z", content="r"),
        Message(role="assistant", tool_calls=[late]),
        Message(role="tool", tool_call_id="q", content="r"),
    ]
    fit = mgr(20).fit(msgs)
    # dropping the first turn would leave call "z" unanswered ("q" was orphaned already: not ours to fix)
    assert fit.action == "deferred" and fit.orphans is not None and fit.orphans.calls == ("z",)
    assert list(fit.messages) == msgs and fit.event(0).kind == "prune-deferred"  # type: ignore[union-attr]


def test_from_policy_absent_manager_is_none_and_names_map_to_pricing() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class P:
        context_length: int | None = None
        reserve: int | None = None
        safety: int | None = None
        calibration: float | None = None
        estimator: str = "adr"

    assert ContextWindowManager.from_policy(P()) is None  # ADR-107: no manager, every site a no-op
    m = ContextWindowManager.from_policy(
        P(100_000, reserve=1_000, safety=500, calibration=1.3, estimator="anchored")
    )
    assert m is not None and (m.pricing, m.calibration.factor, m.budget().tokens) == ("anchored", 1.3, 98_500)
    exact = ContextWindowManager.from_policy(P(8_000, estimator="exact"), model="gpt-5")
    assert exact is not None and exact.estimator.counter is not None
    with pytest.raises(ValueError, match="no offline tokenizer for model 'claude-opus-4-6'"):
        ContextWindowManager.from_policy(P(8_000, estimator="exact"), model="claude-opus-4-6")
    with pytest.raises(ValueError, match="unknown estimator 'magic'"):
        ContextWindowManager.from_policy(P(8_000, estimator="magic"))
