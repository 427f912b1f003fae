"""Properties of the decayer and the fold over random transcripts and windows."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.context.decay import Decayer, nbytes
from workbench.trace import Message, ToolCall


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    msgs = [Message(role="user", content="task")]
    for t in range(draw(st.integers(1, 12))):
        cid = f"c{t}"
        text = "t" * draw(st.integers(0, 600))
        msgs.append(
            Message(role="assistant", content=text, tool_calls=[ToolCall(id=cid, name="sh", arguments="ls")])
        )
        msgs.append(Message(role="tool", tool_call_id=cid, content="x" * draw(st.integers(0, 3_000))))
    return msgs


@settings(max_examples=200, deadline=None)
@given(
    msgs=transcripts(),
    working=st.integers(500, 8_000),
    extra=st.integers(0, 8_000),
    consumed=st.integers(0, 30),
    samples=st.lists(st.integers(0, 3_000), max_size=5),
)
def test_decay_only_shortens_keeps_pairing_and_respects_the_safety_bound(
    msgs: list[Message], working: int, extra: int, consumed: int, samples: list[int]
) -> None:
    safety = working + extra
    dec = Decayer()
    dec.acted_past(consumed)
    for s in samples:
        dec.observe(s)
    out, _ = dec.decay_within(msgs, working, safety)
    out, _ = dec.fold_within(out, working, safety)
    assert len(out) == len(msgs)
    for a, b in zip(msgs, out, strict=True):
        assert (a.role, a.tool_call_id, [c.id for c in a.tool_calls]) == (
            b.role,
            b.tool_call_id,
            [c.id for c in b.tool_calls],
        )
        assert nbytes(b.content) <= nbytes(a.content)
    live = sum(nbytes(m.content) for m in out if m.role == "tool")
    if live > safety:  # only if nothing eligible is left to stub
        assert all(
            m.tool_call_id in dec.stubs
            or nbytes(m.content) <= nbytes(f"[sh ls — {nbytes(m.content)} bytes, superseded]")
            for m in out
            if m.role == "tool"
        )
    # write-once: a second pass over its own output changes nothing that was stubbed
    again, _ = dec.decay_within(out, working, safety)
    for a, b in zip(out, again, strict=True):
        if a.role == "tool" and a.tool_call_id in dec.stubs:
            assert a.content == b.content
