"""Properties of turn-atomic pruning over random transcripts (ADR-107's correctness crux)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.context import ContextWindowManager, orphans, split
from workbench.trace import Message, ToolCall

TEXT = st.text(alphabet='abcdefghij {}:,"\n', min_size=0, max_size=400)


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    msgs = [Message(role="system", content=draw(TEXT)) for _ in range(draw(st.integers(0, 2)))]
    msgs.append(Message(role="user", content=draw(TEXT)))
    n_calls = 0
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["text", "tools", "tools", "user"]))
        if kind == "text":
            msgs.append(Message(role="assistant", content=draw(TEXT)))
        elif kind == "user":
            msgs.append(Message(role="user", content=draw(TEXT)))
        else:
            k = draw(st.integers(1, 5))
            ids = [f"c{n_calls + i}" for i in range(k)]
            n_calls += k
            calls = [ToolCall(id=i, name="sh", arguments=draw(TEXT)) for i in ids]
            if draw(st.booleans()):
                msgs.append(Message(role="assistant", content=draw(TEXT), tool_calls=calls))
            else:  # parallel calls written as one assistant message each (as Claude Code records them)
                msgs.extend(Message(role="assistant", tool_calls=[c]) for c in calls)
            msgs.extend(Message(role="tool", tool_call_id=i, content=draw(TEXT)) for i in ids)
    return msgs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msgs=transcripts(), length=st.integers(50, 3_000), with_tools=st.booleans(), seed=st.floats(1.0, 1.5))
def test_pruning_is_turn_atomic_minimal_and_fits(
    msgs: list[Message], length: int, with_tools: bool, seed: float
) -> None:
    tools = [{"name": "sh", "parameters": {"type": "object"}}] if with_tools else None
    mgr = ContextWindowManager(length, reserve=10, safety=5, calibration_seed=seed)
    fit = mgr.before_send(msgs, site="tool", tools=tools)
    part = split(msgs)
    assert fit.action != "deferred"  # well-paired input never needs the guard
    if fit.truncated:
        assert fit.messages == []
        assert fit.tokens_after > fit.budget
        return
    out = list(fit.messages)
    # fits the budget
    assert mgr.price(fit.raw_after) <= fit.budget
    # never orphans
    assert not orphans(out)
    # keeps the head and the newest turn, in order, as the same objects
    assert all(a is b for a, b in zip(out[: part.head], msgs[: part.head], strict=True))
    if part.turns:
        newest = msgs[part.starts[-1] :]
        assert all(a is b for a, b in zip(out[-len(newest) :], newest, strict=True))
    # drops only a prefix of whole turns, and only as many as it needed
    if fit.pruned:
        k = fit.turns_dropped
        assert out == [*msgs[: part.head], *msgs[part.starts[k] :]]
        one_fewer = [*msgs[: part.head], *msgs[part.starts[k - 1] :]]
        assert mgr.price(mgr.raw_estimate(one_fewer, site="tool", tools=tools)) > fit.budget
    else:
        assert out == msgs


@settings(max_examples=150, deadline=None)
@given(msgs=transcripts(), length=st.integers(50, 3_000))
def test_truncated_only_when_the_floor_does_not_fit(msgs: list[Message], length: int) -> None:
    mgr = ContextWindowManager(length, reserve=10, safety=5)
    fit = mgr.before_send(msgs, site="plain")
    part = split(msgs)
    floor = [*msgs[: part.head], *(msgs[part.starts[-1] :] if part.turns else [])]
    floor_price = mgr.price(mgr.raw_estimate(floor, site="plain"))
    assert fit.truncated == (floor_price > fit.budget)
