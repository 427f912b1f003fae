"""The live loop's recorder: a native trace written as the run goes, crash-safe turn by turn (docs/trace-format.md).

Every message the loop sends enters the pool once (:meth:`Recorder.index`); a turn's ``sent`` is the ranges of pool
indices its request carried. Each turn is appended with the events that followed it, then flushed, through the one
descriptor opened before the first tool runs (:func:`open_trace`); every text field is redacted first.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from workbench.trace.native import TraceWriter
from workbench.trace.schema import Event, Message, Outcome, Run, Span, Turn


def spans_of(indices: Sequence[int]) -> list[Span]:
    """Pool indices as ``[start, stop)`` ranges (one range for an append-only transcript)."""
    spans: list[Span] = []
    for i in indices:
        if spans and spans[-1][1] == i:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return spans


def open_trace(path: Path) -> BinaryIO:
    """The trace file, opened once, before any tool runs, and written only through this descriptor: created (or
    truncated) without following a link at its name, and refused unless what was opened is a regular file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644
    )
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise IsADirectoryError(f"the trace {path} is not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


class Recorder:
    """Writes one live run to ``path``. Use as a context manager or call :meth:`close`."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: Run,
        *,
        redact: Callable[[str], str] = lambda text: text,
        fsync: bool = False,
    ) -> None:
        self.path = Path(path)
        self._redact = redact
        self._writer = TraceWriter(self.path, self._clean(header), fsync=fsync, stream=open_trace(self.path))
        self._pool: dict[int, int] = {}  # id(Message) -> pool index
        self._held: list[Message] = []  # keeps pooled objects alive so their ids stay unique

    def _clean(self, model):  # type: ignore[no-untyped-def]
        """A copy of ``model`` with the redactor applied inside every string value and mapping key: the record's
        structure (its fields, nesting and types) is kept; only text changes."""
        data = model.model_dump(mode="json")

        def scrub(value):  # type: ignore[no-untyped-def]
            if isinstance(value, str):
                return self._redact(value)
            if isinstance(value, list):
                return [scrub(v) for v in value]
            if isinstance(value, dict):
                return {self._redact(k): scrub(v) for k, v in value.items()}
            return value

        return type(model).model_validate(scrub(data))

    def index(self, message: Message) -> int:
        """The pool index of ``message`` (the same object always has the same index; a new one is written)."""
        key = id(message)
        if key not in self._pool:
            self._pool[key] = self._writer.add_message(self._clean(message))
            self._held.append(message)
        return self._pool[key]

    def sent(self, messages: Sequence[Message]) -> list[Span]:
        return spans_of([self.index(m) for m in messages])

    def event(self, event: Event) -> None:
        self._writer.add_event(self._clean(event))

    def turn(self, turn: Turn, events: Sequence[Event] = ()) -> None:
        """Commit one turn and the decisions that followed it; flushed before returning."""
        self._writer.add_turn(self._clean(turn))
        for event in events:
            self._writer.add_event(self._clean(event))
        self._writer.flush()

    def flush(self) -> None:
        self._writer.flush()

    def finish(self, outcome: Outcome) -> None:
        self._writer.finish(self._clean(outcome))

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
