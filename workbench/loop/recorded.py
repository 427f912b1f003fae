"""Recorded mode: re-execute a recorded run through the live loop, deterministically (``LiveLoop.from_recording``).
:class:`RecordedProvider` answers the k-th request with the k-th recorded response, :class:`RecordedTools` each call
with its recorded result (and ``mutated``), :class:`RecordedClock` replays the turn timestamps;
:func:`completion_json` renders a recorded turn as a chat-completions body, for a loopback server.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from workbench.loop.client import Completion
from workbench.loop.tools import Batch
from workbench.loop.wire import Reply
from workbench.replay.facts import run_facts
from workbench.trace.schema import Message, Run, ToolCall, ToolResult, Turn

T = TypeVar("T")

# the replay engine's word for the same ending (workbench.replay.engine)
END_OF_RECORDING = "end-of-recording"


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
    return {
        "id": turn.response_id or f"recorded-{turn.index}",
        "object": "chat.completion",
        "model": turn.model or "recorded",
        "choices": [{"index": 0, "message": message, "finish_reason": turn.finish_reason}],
        "usage": usage,
    }


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

    async def run_batch(
        self, calls: Sequence[ToolCall], turn: int, *, budget_s: float | None = None
    ) -> Batch:
        """Results aligned with the recorded calls as the replay aligns them (``workbench.replay.facts``): by call
        id, else by position when no recorded result carries an id; a call without a result is withheld content.
        ``budget_s`` is ignored: recorded results took their recorded time, which the recorded clock replays."""
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


@dataclass
class RecordedClock:
    """Recorded mode's time: the recording's turn timestamps, read as the offline replay reads them
    (``workbench.replay.facts``: seconds since the first turn started; timed only when every turn has both stamps).

    The reading at the top of turn k is its recorded start, after the model call its recorded end (it stays there
    through the tools, as the replay feeds the governor). A call whose recorded end falls past the deadline is cut
    at the deadline: the reading is the deadline, nothing is served, and the same recorded turn is served next,
    starting at the moment of expiry (later turns shift by as much) — the replay engine's rule. Past the last
    recorded turn the time is unknown (``turn_start`` gives None). Untimed recordings give no readings at all."""

    provider: RecordedProvider
    shift: float = 0.0
    _starts: tuple[float, ...] = field(init=False, repr=False)
    _ends: tuple[float, ...] = field(init=False, repr=False)
    _origin: datetime | None = field(init=False, repr=False)
    _reading: float | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        run = self.provider.run
        facts = run_facts(run)
        if facts.timed:
            self._starts = tuple(t.started_s or 0.0 for t in facts.turns)
            self._ends = tuple(t.ended_s or 0.0 for t in facts.turns)
            self._origin, self._reading = run.turns[0].started_at, 0.0
        else:
            self._starts, self._ends, self._origin, self._reading = (), (), None, None

    @property
    def timed(self) -> bool:
        return self._origin is not None

    def _next(self) -> int | None:
        """The recorded turn the next request is answered with (None: untimed, or past the recording)."""
        k = len(self.provider.requests)
        return k if k < len(self._starts) else None

    def read(self) -> float | None:
        return self._reading

    def turn_start(self) -> float | None:
        k = self._next()
        if k is None:
            return None
        self._reading = self._starts[k] + self.shift
        return self._reading

    async def call(self, request: Coroutine[Any, Any, T], deadline: float | None) -> T:
        k = self._next()
        if k is None:
            return await request
        start, end = self._starts[k] + self.shift, self._ends[k] + self.shift
        if deadline is not None and end > deadline:
            request.close()
            self.shift += deadline - start  # the re-issued call starts at the moment of expiry
            self._reading = deadline
            raise TimeoutError
        result = await request
        self._reading = end
        return result

    def stamp(self) -> datetime | None:
        """The wall time of the current reading (for the live trace's turn stamps); None when untimed."""
        if self._origin is None or self._reading is None:
            return None
        return self._origin + timedelta(seconds=self._reading)
