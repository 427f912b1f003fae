"""A small tool-loop run written in the trace schema's documented shape, with provider-consistent usage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from workbench.trace.schema import Message, Run, ToolCall, ToolResult, Turn, Usage

T0 = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def tool_loop(
    sizes: list[int],
    *,
    model: str = "claude-sonnet-4-5",
    prefix: int = 3000,
    gap_s: float = 5.0,
    tail: int = 3,
    cached: bool = True,
) -> Run:
    """One task message, then per turn an assistant call and a tool result of ``sizes[k]`` characters; prompts
    count 4 characters a token plus ``prefix``; an Anthropic-style split (read the previous request, write the
    rest, ``tail`` fresh)."""
    messages = [
        Message(role="system", content="You are a tool loop."),
        Message(role="user", content="fix it " * 20),
    ]
    turns: list[Turn] = []
    prev_cached_end = 0
    for k, n in enumerate(sizes):
        stop = len(messages)
        prompt = prefix + sum(len(m.content or "") for m in messages) // 4
        cached_k = min(prev_cached_end, prompt - tail) if k else 0
        write = prompt - tail - cached_k
        turns.append(
            Turn(
                index=k,
                started_at=T0 + timedelta(seconds=gap_s * k),
                ended_at=T0 + timedelta(seconds=gap_s * k + 1),
                usage=Usage(prompt=prompt, cached=cached_k, cache_write=write, completion=50)
                if cached
                else Usage(prompt=prompt, cached=0, completion=50),
                tool_calls=[ToolCall(id=f"c{k}", name="bash", arguments='{"command": "ls"}')],
                tool_results=[ToolResult.of("x" * n, call_id=f"c{k}")],
                sent=[(0, stop)],
                model=model,
            )
        )
        prev_cached_end = prompt - tail
        messages.append(
            Message(
                role="assistant",
                content=f"step {k}",
                tool_calls=[ToolCall(id=f"c{k}", name="bash", arguments="{}")],
            )
        )
        messages.append(
            Message(role="tool", content=("line\n" * (n // 5)) + "x" * (n % 5), tool_call_id=f"c{k}")
        )
    return Run(run_id="loop", source="native", model=model, messages=messages, turns=turns, started_at=T0)
