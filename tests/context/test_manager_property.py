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


@st.composite
def odd_transcripts(draw: st.DrawFn) -> list[Message]:
    """Any order of roles; results before their calls, results of unknown or missing calls, calls in the head.
    Ids are unique per side: one call and at most one result per id (a provider rejects duplicates)."""
    unused = ["a", "b", "c", "d"]
    unanswered = ["a", "b", "c", "d", "e"]
    out = []
    for _ in range(draw(st.integers(0, 16))):
        role = draw(st.sampled_from(["system", "user", "assistant", "assistant", "tool", "tool"]))
        if role == "assistant":
            calls = []
            for _ in range(draw(st.integers(0, 2))):
                cid = draw(st.sampled_from([*unused, None]))
                if cid is not None:
                    unused.remove(cid)
                calls.append(ToolCall(id=cid, name="t", arguments="x"))
            out.append(Message(role="assistant", content=draw(TEXT), tool_calls=calls))
        elif role == "tool":
            rid = draw(st.sampled_from([*unanswered, None]))
            if rid is not None:
                unanswered.remove(rid)
            out.append(Message(role="tool", tool_call_id=rid, content=draw(TEXT)))
        else:
            out.append(Message(role=role, content=draw(TEXT)))
    return out


@settings(max_examples=400, deadline=None)
@given(msgs=odd_transcripts(), grow=st.integers(0, 5))
def test_incremental_index_matches_the_reference_partition_and_guard(msgs: list[Message], grow: int) -> None:
    from workbench.context.index import TranscriptIndex
    from workbench.context.transcript import created_orphans
    from workbench.estimate import Estimator, MessageCosts

    ix = TranscriptIndex(MessageCosts(Estimator()))
    ix.sync(msgs[: max(0, len(msgs) - grow)])  # index a prefix first, then the rest incrementally
    ix.sync(msgs)
    part = split(msgs)
    if not ix.closed:
        return  # the manager uses the reference partition until the head is known
    assert (ix.head, tuple(ix.starts)) == (part.head, part.starts)
    for cut in [*part.starts, len(msgs)]:
        assert ix.created_orphans(cut) == created_orphans(msgs, part.head, cut)


@settings(max_examples=300, deadline=None)
@given(msgs=odd_transcripts(), length=st.integers(20, 400))
def test_the_guard_never_lets_pruning_create_an_orphan(msgs: list[Message], length: int) -> None:
    from workbench.context.transcript import created_orphans

    mgr = ContextWindowManager(length, reserve=0, safety=0)
    fit = mgr.before_send(msgs)
    part = split(msgs)
    if fit.pruned:
        cut = len(msgs) - (len(fit.messages) - part.head)
        assert not created_orphans(msgs, part.head, cut)
        assert not (set(orphans(fit.messages).calls) - set(orphans(msgs).calls))
        assert not (set(orphans(fit.messages).results) - set(orphans(msgs).results))
    elif fit.action == "deferred":
        assert list(fit.messages) == msgs and fit.orphans
