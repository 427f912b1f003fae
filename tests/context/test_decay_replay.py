"""Decay replay on a synthetic run: memo pointers for repeated reads, decay past the unknown-window 32 KiB."""

from __future__ import annotations

from workbench.context.decay_replay import replay_decay
from workbench.trace import Message, Run, ToolCall, ToolResult, Turn, Usage


def run_reading(files: list[str]) -> Run:
    msgs = [Message(role="system", content="sys"), Message(role="user", content="task")]
    turns = []
    for t, name in enumerate(files):
        call = ToolCall(id=f"c{t}", name="read", arguments=name)
        turns.append(Turn(index=t, sent=[(0, len(msgs))], usage=Usage(prompt=100), tool_calls=[call],
                          tool_results=[ToolResult.of("x", call_id=f"c{t}")], mutated=(t % 4 == 3)))  # fmt: skip
        body = f"contents of {name}\n" * 400  # ~8-9 KB per file
        msgs += [
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id=f"c{t}", content=body),
        ]
    return Run(run_id="r", source="synthetic", messages=msgs, turns=turns)


def test_repeated_reads_become_pointers_and_old_results_decay() -> None:
    files = ["a.py", "b.py", "a.py", "c.py", "d.py", "e.py", "b.py", "f.py", "g.py"]
    d = replay_decay(run_reading(files), window=None)
    assert (d.working, d.safety) == (32_768, 32_768)
    frame = d.to_frame()
    assert d.pointers == 1  # a.py at turn 2 points at turn 0; b.py again at turn 6 finds its copy stubbed
    assert (frame["tool_bytes_after"] <= 32_768).all()
    assert frame["tool_bytes_before"].max() > 32_768
    assert d.decayed == frame["stubbed"].sum() > 0
    known = replay_decay(run_reading(files), window=200_000)
    assert (known.working, known.safety) == (105_856, 201_856)
    assert known.decayed == 0  # under 100 KB: nothing to do with a 200k window
