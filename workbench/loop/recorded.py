"""Recorded mode: re-execute a recorded run through the live loop, deterministically.

:class:`RecordedProvider` answers the k-th request with the k-th recorded turn's response;
:class:`RecordedTools` answers each tool call with its recorded result (and the turn's recorded ``mutated``
fact). Together they let the live loop, driven by the same Governor as the offline replay, meet exactly the
inputs the recorded run met. :func:`completion_json` renders a recorded turn as a chat-completions body, so a
loopback server can serve a recording over HTTP too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.loop.client import Completion
from workbench.loop.tools import Batch
from workbench.loop.wire import Reply
from workbench.trace.schema import Message, Run, ToolCall, ToolResult, Turn

END_OF_RECORDING = (
    "end-of-recording"  # the replay engine's word for the same ending (workbench.replay.engine)
)


class RecordingExhausted(Exception):
    """The loop asked for more model calls than the recording holds: the run ends ``end-of-recording``, as the
    offline replay of the same recording ends (not a provider failure: nothing failed)."""


def reply_of(turn: Turn) -> Reply:
    return Reply(
        text=turn.text or "",
        tool_calls=tuple(turn.tool_calls),
        finish_reason=turn.finish_reason,
        usage=turn.usage,
        response_id=turn.response_id,
        model=turn.model,
    )


def completion_json(turn: Turn) -> dict[str, Any]:
    """A recorded turn as the chat-completions body a server would have sent."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ]
    usage: dict[str, Any] = {}
    u = turn.usage
    if u.prompt is not None:
        usage["prompt_tokens"] = u.prompt
    if u.completion is not None:
        usage["completion_tokens"] = u.completion
    if u.cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": u.cached}
    if u.reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": u.reasoning}
    if u.cost is not None:
        usage["cost"] = u.cost
    body: dict[str, Any] = {
        "id": turn.response_id or f"recorded-{turn.index}",
        "object": "chat.completion",
        "model": turn.model or "recorded",
        "choices": [{"index": 0, "message": message, "finish_reason": turn.finish_reason}],
        "usage": usage,
    }
    return body


@dataclass
class RecordedProvider:
    """Answers the k-th request with turn k of ``run`` (whatever the request holds)."""

    run: Run
    requests: list[int] = field(default_factory=list)
    """How many messages each request carried (for tests and diagnostics)."""

    async def complete(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> Completion:
        k = len(self.requests)
        self.requests.append(len(messages))
        if k >= len(self.run.turns):
            raise RecordingExhausted(
                f"the recording {self.run.run_id} holds {len(self.run.turns)} model calls"
            )
        return Completion(reply=reply_of(self.run.turns[k]))

    async def aclose(self) -> None:
        return None


@dataclass
class RecordedTools:
    """Answers the calls of turn k with turn k's recorded results, in request order, and its ``mutated`` fact."""

    run: Run

    async def run_batch(self, calls: Sequence[ToolCall], turn: int) -> Batch:
        """Results aligned with the recorded calls as the replay aligns them (``workbench.replay.facts``): by call
        id, else by position when no recorded result carries an id; a call without a result is withheld content."""
        recorded = self.run.turns[turn]
        by_id = {r.call_id: r for r in recorded.tool_results if r.call_id is not None}
        results: list[ToolResult] = []
        for position, call in enumerate(calls):
            original = recorded.tool_calls[position] if position < len(recorded.tool_calls) else None
            rid = original.id if original is not None else None
            result = by_id.get(rid) if rid is not None else None
            if result is None and position < len(recorded.tool_results) and not by_id:
                result = recorded.tool_results[position]
            if result is None:
                result = ToolResult(call_id=call.id, content=None)
            results.append(result.model_copy(update={"call_id": call.id}))
        return Batch(results=tuple(results), mutated=recorded.mutated)
