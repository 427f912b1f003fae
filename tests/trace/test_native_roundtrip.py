"""The native format: write, read back, write again is byte-identical; requests rebuild from the pool."""

from __future__ import annotations

from pathlib import Path

from workbench.trace import (
    Event,
    Message,
    Outcome,
    Run,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
    read_run,
    write_run,
)


def small_run() -> Run:
    call = ToolCall(id="c1", name="sh", arguments='{"command": "ls"}')
    return Run(
        run_id="r1",
        source="synthetic",
        model="m",
        messages=[
            Message(role="system", content="be brief"),
            Message(role="user", content="list files"),
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id="c1", content="a\nb"),
        ],
        turns=[
            Turn(
                index=0,
                usage=Usage(prompt=10, completion=3),
                sent=[(0, 2)],
                tool_calls=[call],
                tool_results=[ToolResult.of("a\nb", call_id="c1")],
                mutated=False,
            ),
            Turn(index=1, usage=Usage(prompt=20, cached=10, completion=2), sent=[(0, 4)], text="a and b"),
        ],
        events=[Event(turn=0, kind="wrapup", data={"used": 0.71})],
        outcome=Outcome(stop_reason="done", verdict="unverified_success", text="a and b"),
    )


def test_round_trip_is_byte_identical(tmp_path: Path) -> None:
    first = write_run(small_run(), tmp_path / "a.jsonl")
    again = write_run(read_run(first), tmp_path / "b.jsonl")
    assert first.read_bytes() == again.read_bytes()


def test_request_is_rebuilt_from_ranges(tmp_path: Path) -> None:
    run = read_run(write_run(small_run(), tmp_path / "a.jsonl"))
    assert [m.role for m in run.request(0)] == ["system", "user"]
    assert [m.role for m in run.request(1)] == ["system", "user", "assistant", "tool"]
    assert run.request(1)[3].content == "a\nb"
    assert run.diagnostics == []
    assert run.loaded_from == str(tmp_path / "a.jsonl")
