"""The native trace format: JSONL with a schema version, streamed in, appended and flushed turn by turn (the
layout, and why a turn line is the commit point: docs/trace-format.md, "On disk: native JSONL"). A corrupt or
truncated line is reported as ``file:line: what is wrong`` and the rest still loads."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import BaseModel, ValidationError

from workbench.outputs import replacing
from workbench.trace.errors import TraceError
from workbench.trace.limits import MAX_TOKEN_COUNT, DiagnosticLog, TooLong, file_lines, open_bytes, too_long
from workbench.trace.schema import (
    SCHEMA_NAME,
    SCHEMA_VERSION,
    Diagnostic,
    Event,
    Message,
    Outcome,
    Run,
    Segment,
    Turn,
)

_LIST_FIELDS = ("messages", "turns", "events", "segments", "outcome", "diagnostics")


def _dump(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS) + b"\n"


def _model_json(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", exclude_defaults=True)


def header_of(run: Run) -> dict[str, Any]:
    """The header line's ``run`` object: every run field except the per-turn lists."""
    data = run.model_dump(mode="json", exclude_defaults=True, exclude=set(_LIST_FIELDS))
    data["run_id"] = run.run_id
    data["source"] = run.source
    return data


class TraceWriter:
    """Append-only writer of one native trace; flushes after every turn.

    Use as a context manager, or call :meth:`close`. Messages are added to the pool with
    :meth:`add_message` (which returns their index); :meth:`add_turn` commits a turn.
    """

    def __init__(
        self, path: str | os.PathLike[str], run: Run, *, fsync: bool = False, stream: IO[bytes] | None = None
    ) -> None:
        self.path = Path(path)
        if stream is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        # ``stream``: a file the caller already opened at ``path`` (the live recorder opens it without following a link)
        self._fh: IO[bytes] = stream if stream is not None else open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self._fsync = fsync
        self._messages = 0
        self._fh.write(_dump({"schema": SCHEMA_NAME, "version": SCHEMA_VERSION, "run": header_of(run)}))
        self.flush()

    def add_message(self, message: Message) -> int:
        index = self._messages
        self._fh.write(_dump({"m": index, "message": _model_json(message)}))
        self._messages += 1
        return index

    def add_turn(self, turn: Turn) -> None:
        self._fh.write(_dump({"turn": _model_json(turn)}))
        self.flush()

    def add_event(self, event: Event) -> None:
        self._fh.write(_dump({"event": _model_json(event)}))

    def add_segment(self, segment: Segment) -> None:
        self._fh.write(_dump({"segment": _model_json(segment)}))

    def finish(self, outcome: Outcome) -> None:
        self._fh.write(_dump({"outcome": _model_json(outcome)}))
        self.flush()

    def flush(self) -> None:
        self._fh.flush()
        if self._fsync:
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self.flush()
            self._fh.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_run(run: Run, path: str | os.PathLike[str]) -> Path:
    """Write a whole run as a native trace, atomically (a temporary name in the same folder, renamed into place
    when complete). Writing what :func:`read_run` returns is byte-identical."""
    with replacing(path) as tmp, TraceWriter(tmp, run) as w:
        for m in run.messages:
            w.add_message(m)
        for s in run.segments:
            w.add_segment(s)
        events_by_turn: dict[int | None, list[Event]] = {}
        for e in run.events:
            events_by_turn.setdefault(e.turn, []).append(e)
        for e in events_by_turn.pop(None, []):
            w.add_event(e)
        for t in run.turns:
            w.add_turn(t)
            for e in events_by_turn.pop(t.index, []):
                w.add_event(e)
        for rest in events_by_turn.values():
            for e in rest:
                w.add_event(e)
        w.finish(run.outcome)
    return Path(path)


def iter_lines(path: Path) -> Iterator[tuple[int, bytes | TooLong]]:
    """(1-based line number, raw line) for every non-blank line; the last line may lack its newline; a line
    past the length limit is a :class:`TooLong` (never held whole)."""
    with open_bytes(path) as fh:
        yield from file_lines(fh)


def _field_of(err: ValidationError) -> str:
    loc = err.errors()[0].get("loc", ())
    return ".".join(str(p) for p in loc) or "?"


def _writable(record: Any) -> bool:
    """Can this record be written back? (orjson writes at most 255 levels of nesting; JSON reads 1024.)"""
    try:
        orjson.dumps(record)
    except orjson.JSONEncodeError:
        return False
    return True


_COUNT_FIELDS = ("prompt", "cached", "cache_write", "completion", "reasoning")


# The validators themselves (what Model.model_validate calls, without its per-call wrapper): a run of a hundred
# messages is a hundred calls.
_message = Message.__pydantic_validator__.validate_python
_turn = Turn.__pydantic_validator__.validate_python


def _kind_of(rec: Any) -> str | None:
    """The kind of a record (its one key besides ``m``), or ``None`` when it is not one record."""
    if not isinstance(rec, dict) or len(rec) - ("m" in rec) != 1:
        return None
    return next(str(key) for key in rec if key != "m")


def _drop_implausible_counts(turn: Any, file: str, line: int, diags: list[Diagnostic]) -> None:
    """A usage count past :data:`~workbench.trace.limits.MAX_TOKEN_COUNT` is corruption: it becomes ``None``
    and a diagnostic, and the rest of the turn is kept."""
    usage = turn.get("usage") if isinstance(turn, dict) else None
    if not isinstance(usage, dict):
        return
    if all(type(v) is int and -MAX_TOKEN_COUNT <= v <= MAX_TOKEN_COUNT for v in usage.values()):
        return  # the usual usage: whole numbers in range (a cheap look before the field-by-field check)
    for key in _COUNT_FIELDS:
        value = usage.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_TOKEN_COUNT:
            diags.append(
                Diagnostic(
                    file=file,
                    line=line,
                    field=f"turn.usage.{key}",
                    message=f"implausible token count {value} (more than {MAX_TOKEN_COUNT:,}); dropped",
                )
            )
            usage[key] = None


def read_run(path: str | os.PathLike[str]) -> Run:
    """Read one native trace, streaming. Bad lines become ``run.diagnostics``; nothing valid is lost.

    Raises :class:`TraceError` when the file has no readable header (it is not a trace at all).
    """
    p = Path(path)
    name = str(p)
    try:
        lines = iter_lines(p)
        first = next(lines, None)
    except OSError as exc:
        raise TraceError(name, f"cannot read: {exc.strerror or exc}") from exc
    if first is None:
        raise TraceError(name, "empty file, no trace header")
    number, raw = first
    if isinstance(raw, TooLong):
        raise TraceError(name, too_long(name, number, raw).message, line=number, field="run")
    try:
        head = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise TraceError(name, f"header is not JSON ({exc})", line=number) from exc
    if not isinstance(head, dict) or head.get("schema") != SCHEMA_NAME:
        raise TraceError(name, f"not a native trace (no schema {SCHEMA_NAME!r})", line=number, field="schema")
    version = head.get("version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise TraceError(name, f"unsupported schema version {version!r}", line=number, field="version")
    try:
        run = Run.model_validate(head.get("run") or {})
        run.loaded_from = name
    except ValidationError as exc:
        raise TraceError(name, exc.errors()[0]["msg"], line=number, field="run." + _field_of(exc)) from exc
    if not _writable(head):
        raise TraceError(name, "too deeply nested to write back", line=number, field="run")

    diags: list[Diagnostic] = DiagnosticLog(name)

    def note(message: str, **where: Any) -> None:  # where: the line and field, where known
        diags.append(Diagnostic(file=name, message=message, **where))

    messages: dict[int, Message] = {}
    for number, raw in lines:
        if isinstance(raw, TooLong):
            diags.append(too_long(name, number, raw))
            continue
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            truncated = not raw.endswith(b"\n")
            what = "truncated line (writer stopped mid-line)" if truncated else f"not JSON ({exc})"
            note(what, line=number)
            continue
        kind = _kind_of(rec)
        if kind is None:
            note("not a trace record", line=number)
            continue
        try:
            if kind == "message":
                index = rec.get("m")
                # The writer puts message m on a line after m, so a larger index is corrupt (and would
                # otherwise make the pool as large as the number it names).
                if not isinstance(index, int) or index < 0 or index in messages or index >= number:
                    note(f"bad index {index!r}", line=number, field="m")
                    continue
                messages[index] = _message(rec["message"])
            elif kind == "turn":
                _drop_implausible_counts(rec["turn"], name, number, diags)
                turn = _turn(rec["turn"])
                u = turn.usage
                if u.cached is not None and u.prompt is not None and u.cached > u.prompt:
                    # Kept as recorded (the record is otherwise valid); consumers see the warning.
                    note(
                        f"cached {u.cached} exceeds prompt {u.prompt}", line=number, field="turn.usage.cached"
                    )
                run.turns.append(turn)
            elif kind == "event":
                if not _writable(rec):
                    note("too deeply nested", line=number, field="event.data")
                    continue
                run.events.append(Event.model_validate(rec["event"]))
            elif kind == "segment":
                run.segments.append(Segment.model_validate(rec["segment"]))
            elif kind == "outcome":
                run.outcome = Outcome.model_validate(rec["outcome"])
            else:
                note("unknown record kind", line=number, field=kind)
        except ValidationError as exc:
            note(exc.errors()[0]["msg"], line=number, field=f"{kind}.{_field_of(exc)}")
    pool_size = max(messages, default=-1) + 1
    missing = [i for i in range(pool_size) if i not in messages]
    for i in missing:
        note(f"message {i} missing (its line was unreadable)", field="message")
    run.messages = [
        messages[i] if i in messages else Message(role="user", kind="missing") for i in range(pool_size)
    ]
    for t in run.turns:
        if t.sent and any(stop > pool_size for _, stop in t.sent):
            note(f"turn {t.index} sends messages never written", field="turn.sent")
            t.sent = None
    run.diagnostics = diags
    return run
