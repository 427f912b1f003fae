"""What every importer builds (:class:`TranscriptBuilder`: one run as a format's records arrive, one handler per
record type) and what every importer module is (:class:`Importer`). docs/importers/README.md, "Adding an importer"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from workbench.importers._common import in_turn_order
from workbench.importers.contract import Declared, Fact
from workbench.trace.schema import Event, Message, Outcome, Run, Segment, Span, ToolCall, ToolResult, Turn


@runtime_checkable
class Importer(Protocol):
    """An importer module (a test holds each listed one to it); its parts and the cache declaration
    (``CACHEABLE``, else ``dependencies(path)``): docs/importers/README.md."""

    NAME: str
    VERSION: str
    FACTS: Mapping[Fact, Declared]
    CACHEABLE: bool
    sniff: Callable[[Path, list[bytes]], bool]
    load: Callable[[Path], list[Run]]


class TranscriptBuilder:
    """One run as it is read: the pool, the turns, the calls awaiting results, the events and the lossy notes.

    ``context_start`` is the first pool message the next request sends (a compaction moves it)."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.turns: list[Turn] = []
        self.events: list[Event] = []
        self.segments: list[Segment] = []
        self.lossy: list[str] = []
        self.context_start = 0
        self._owner: dict[str, tuple[Turn, ToolCall | None, datetime | None]] = {}

    # -- the pool and the calls -----------------------------------------------------------------------

    @property
    def last_turn(self) -> int | None:
        """The index of the last turn so far (``None`` before the first): where an event now happened."""
        return len(self.turns) - 1 if self.turns else None

    def sent(self) -> list[Span]:
        """The request a turn starting now sends: the pool from the context start."""
        return [(self.context_start, len(self.messages))]

    def message(self, role: Any, content: str | None = None, **fields: Any) -> Message:
        """Append a message to the pool."""
        m = Message(role=role, content=content, **fields)
        self.messages.append(m)
        return m

    def turn(self, *, reply: Message | None = None, **fields: Any) -> Turn:
        """Start a turn (one model call) sending :meth:`sent` unless ``sent`` is given, then append ``reply`` (its
        answer in the pool) when given."""
        fields.setdefault("sent", self.sent())
        t = Turn(index=len(self.turns), **fields)
        if reply is not None:
            self.messages.append(reply)
        self.turns.append(t)
        return t

    def reply(self, **fields: Any) -> Turn:
        """A turn whose answer is an assistant message of its text and tool calls (the common case)."""
        text, calls = fields.get("text"), fields.get("tool_calls", [])
        return self.turn(reply=Message(role="assistant", content=text, tool_calls=list(calls)), **fields)

    def expect(
        self, call_id: str, turn: Turn, when: datetime | None = None, call: ToolCall | None = None
    ) -> None:
        """A tool call of ``turn`` (made at ``when``) whose result may come later."""
        self._owner[call_id] = (turn, call, when)

    def expect_all(self, turn: Turn, when: datetime | None = None) -> None:
        for c in turn.tool_calls:
            if c.id:
                self._owner[c.id] = (turn, c, when)

    def owner(self, call_id: str | None) -> Turn | None:
        """The turn that made this tool call, or ``None`` when no recorded call has this id."""
        found = self._owner.get(call_id) if call_id else None
        return found[0] if found else None

    def called(self, call_id: str | None) -> tuple[Turn, ToolCall | None, datetime | None] | None:
        """The turn, the call and the time of this tool call, or ``None`` when no recorded call has this id."""
        return self._owner.get(call_id) if call_id else None

    def result(
        self,
        call_id: str | None,
        content: str,
        *,
        when: datetime | None = None,
        duration_s: float | None = None,
        **fields: Any,
    ) -> Turn | None:
        """Attach a tool result to the turn that made the call; its duration, unless given, the time from the
        call to ``when``. ``None`` (nothing attached) when no recorded call has this id."""
        found = self._owner.get(call_id) if call_id else None
        if found is None:
            return None
        turn, _, called = found
        if duration_s is None and when and called:
            duration_s = (when - called).total_seconds()
        turn.tool_results.append(ToolResult.of(content, call_id=call_id, duration_s=duration_s, **fields))
        return turn

    def event(
        self, kind: str, reason: str | None = None, data: dict[str, Any] | None = None, **kw: Any
    ) -> Event:
        """Record an event after the last turn (``turn=`` to place it elsewhere)."""
        e = Event(turn=kw.pop("turn", self.last_turn), kind=kind, reason=reason, data=data or {}, **kw)
        self.events.append(e)
        return e

    def note(self, *notes: str) -> None:
        """Say what the mapping loses (``Run.lossy``)."""
        self.lossy.extend(notes)

    def count_note(self, n: int, text: str) -> None:
        """A note about ``n`` records, said only when there are any (``{n}`` in ``text`` is the count)."""
        if n:
            self.lossy.append(text.format(n=n))

    def ending(
        self,
        done: str,
        *,
        after_call: str = "recording ends after a tool call",
        nothing: str = "no model call recorded",
        text: bool = True,
    ) -> Outcome:
        """How a transcript that records no stop ended: with no call, after a tool call (unknown: it was cut), or
        done with the last reply (``done`` says why; ``text``: the reply is the outcome's text)."""
        last = self.turns[-1] if self.turns else None
        if last is None:
            return Outcome(detail=nothing)
        if last.tool_calls:
            return Outcome(detail=after_call)
        return Outcome(stop_reason="done", text=last.text if text else None, detail=done)

    def prompt_segments(self, prompts: list[tuple[int, str]]) -> list[Segment]:
        """The segments the prompts ``(turns before it, text)``, in turn order, open, each turn numbered by its
        segment: a prompt no call answered opens none, of two before one call the later is the one it answered,
        and calls before the first prompt are a segment of their own."""
        n = len(self.turns)
        starts: dict[int, str | None] = {0: None} if n and (not prompts or prompts[0][0] > 0) else {}
        starts.update((at, text) for at, text in prompts if at < n)
        bounds = [*starts, n]
        segments = []
        for i, (start, text) in enumerate(starts.items()):
            segments.append(Segment(index=i, start=start, stop=bounds[i + 1], prompt=text))
            for t in self.turns[start : bounds[i + 1]]:
                t.segment = i
        return segments

    # -- the run --------------------------------------------------------------------------------------

    def run(self, **fields: Any) -> Run:
        """The run read: the pool, the turns, the events (in the native order), segments and lossy notes, with
        the format's own fields (which win: ``lossy=`` for notes gathered elsewhere)."""
        built = {
            "lossy": self.lossy,
            "messages": self.messages,
            "turns": self.turns,
            "events": in_turn_order(self.events),
            "segments": self.segments,
        }
        return Run(**(built | fields))


def origin(name: str, version: str, path: Path | str) -> dict[str, str]:
    """A run's ``source``, ``source_file`` and ``importer`` as every importer writes them."""
    return {"source": name, "source_file": str(path), "importer": f"{name} {version}"}
