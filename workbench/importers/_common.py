"""Shared pieces of the importers: reading JSONL defensively and coercing fields with a diagnostic.

Every importer reads foreign files that may be truncated, corrupted or written by a newer version of the
tool. Nothing here raises on bad input: a bad line or field becomes a :class:`Diagnostic` naming the file,
the line and the field, and the importer keeps everything else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from workbench.trace.errors import TraceError
from workbench.trace.limits import (
    MAX_NESTING,
    MAX_TOKEN_COUNT,
    DiagnosticLog,
    TooLong,
    file_lines,
    nesting,
    open_bytes,
    read_document,
    too_deep,
    too_long,
)
from workbench.trace.schema import Diagnostic, Event, Run, ToolCall

# Beyond this a token count is not a token count: it is kept out of Usage (which would otherwise carry an absurd
# figure into every total) and reported. One bound for every reader: workbench.trace.limits.
MAX_TOKENS = MAX_TOKEN_COUNT


def iter_json_lines(path: Path, diags: list[Diagnostic]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every line that parses to a JSON object; other lines (not JSON, longer than
    the line limit, nested deeper than :data:`~workbench.trace.limits.MAX_NESTING`) become diagnostics."""
    name = str(path)
    with open_bytes(path) as fh:
        for number, raw in file_lines(fh):
            if isinstance(raw, TooLong):
                diags.append(too_long(name, number, raw))
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                if isinstance(diags, DiagnosticLog) and diags.full and b"\\u" not in raw:
                    diags.count_past_limit()  # past the limit: counted, not described (no surrogate escape to repair)
                    continue
                obj = _with_surrogates_repaired(raw, name, number, diags) if "surrogate" in str(exc) else None
                if obj is None:
                    truncated = not raw.endswith(b"\n")
                    what = "truncated line (file ends mid-line)" if truncated else f"not JSON ({exc})"
                    diags.append(Diagnostic(file=name, line=number, message=what))
                    continue
            if not isinstance(obj, dict):
                problem = f"not a JSON object ({type(obj).__name__})"
            elif too_deep(raw, obj):
                problem = f"nested deeper than {MAX_NESTING} levels"
            else:
                yield number, obj
                continue
            diags.append(Diagnostic(file=name, line=number, message=problem))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _with_surrogates_repaired(raw: bytes, file: str, line: int, diags: list[Diagnostic]) -> Any:
    """A line whose only fault is a lone UTF-16 surrogate escape (``"\\ud800"``, written by JavaScript or Python
    loggers from broken text): parsed by the standard library, each such string repaired with U+FFFD and
    named in a diagnostic, so one bad character does not drop the whole call. None when it is still not JSON."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, str):
        return None
    fields: list[str] = []
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        container, where = stack.pop()
        keyed = container.items() if isinstance(container, dict) else enumerate(container)
        for key, value in keyed:
            at = (
                (f"{where}.{key}" if where else str(key))
                if isinstance(container, dict)
                else f"{where}[{key}]"
            )
            if isinstance(value, dict | list):
                stack.append((value, at))
            elif isinstance(value, str) and _LONE_SURROGATE.search(value):
                container[key] = _LONE_SURROGATE.sub("\ufffd", value)
                fields.append(at)
    for where in sorted(fields):
        diags.append(
            Diagnostic(
                file=file,
                line=line,
                field=where or None,
                message="invalid text (a lone UTF-16 surrogate) replaced with U+FFFD; the rest of the line kept",
            )
        )
    return obj


def read_json_document(path: Path, diags: list[Diagnostic]) -> Any:
    """A whole-file JSON document, or ``None`` with a diagnostic naming the line where it stops parsing."""
    name = str(path)
    with open_bytes(path) as fh:  # refuses FIFOs, devices and unreadable files with a TraceError
        try:
            raw = fh.read()
        except OSError as exc:
            raise TraceError(name, f"cannot read: {exc.strerror or exc}") from exc
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        line = getattr(exc, "lineno", None) or 1
        truncated = raw.rstrip() and raw.rstrip()[-1:] not in (b"}", b"]")
        what = "truncated document (file ends mid-value)" if truncated else f"not JSON ({exc})"
        diags.append(Diagnostic(file=name, line=line, message=what))
        return None
    if too_deep(raw, doc):
        diags.append(
            Diagnostic(file=name, line=1, message=f"nested deeper than {MAX_NESTING} levels: not read")
        )
        return None
    return doc


class Head(list[bytes]):
    """A file's head lines for the sniffers (``detect``), each parsed at most once however many of them read it: a
    mini-swe-agent trajectory's head is its whole document, which four sniffers parsed in turn."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        super().__init__(lines)
        self._values: list[Any] | None = None

    def values(self) -> list[Any]:
        """Per line: its JSON value, or ``NOT_JSON``."""
        if self._values is None:
            self._values = [_value(raw) for raw in self]
        return self._values


NOT_JSON = object()
"""A head line that does not parse (``Head.values``)."""


def _value(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return NOT_JSON


def head_value(head: list[bytes], i: int) -> Any:
    """Head line ``i``'s JSON value, or ``NOT_JSON``."""
    return head.values()[i] if isinstance(head, Head) else _value(head[i])


def parse_head(head: list[bytes]) -> list[dict[str, Any]]:
    """The head lines that parse to JSON objects (for sniffing; bad lines are simply skipped)."""
    values = head.values() if isinstance(head, Head) else [_value(raw) for raw in head]
    return [v for v in values if isinstance(v, dict)]


class Fields:
    """Typed field access for one file: each coercion failure is a diagnostic, the value becomes ``None``."""

    def __init__(self, path: Path | str) -> None:
        self.file = str(path)
        self.diagnostics: list[Diagnostic] = DiagnosticLog(self.file)
        self.naive_times = 0  # timestamps without a zone, read as UTC (importers say so in lossy)

    def bad(self, line: int | None, field: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(file=self.file, line=line, field=field, message=message))

    def tokens(self, value: Any, line: int | None, field: str) -> int | None:
        """A token count: a non-negative integer (integral floats accepted) or ``None``."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.bad(line, field, f"expected a token count, got {type(value).__name__} {_short(value)}")
            return None
        if isinstance(value, float):
            if not value.is_integer():
                self.bad(line, field, f"expected a whole number of tokens, got {value!r}")
                return None
            value = int(value)
        if value < 0:
            self.bad(line, field, f"negative token count {value}")
            return None
        if value > MAX_TOKENS:
            self.bad(line, field, f"implausible token count {value}")
            return None
        return value

    def number(self, value: Any, line: int | None, field: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.bad(line, field, f"expected a number, got {type(value).__name__} {_short(value)}")
            return None
        if value != value or abs(value) > 1e15:
            self.bad(line, field, f"implausible number {value!r}")
            return None
        return float(value)

    def text(self, value: Any, line: int | None, field: str) -> str | None:
        if value is None or isinstance(value, str):
            return value
        self.bad(line, field, f"expected text, got {type(value).__name__} {_short(value)}")
        return None

    def obj(self, value: Any, line: int | None, field: str) -> dict[str, Any] | None:
        if value is None or isinstance(value, dict):
            return value
        self.bad(line, field, f"expected an object, got {type(value).__name__} {_short(value)}")
        return None

    def items(self, value: Any, line: int | None, field: str) -> list[Any]:
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.bad(line, field, f"expected a list, got {type(value).__name__} {_short(value)}")
        return []

    def plain(self, value: Any, line: int | None, field: str) -> Any:
        """A free-form value kept as recorded, or ``None`` when it cannot be written back (nested deeper
        than orjson writes)."""
        try:
            orjson.dumps(value)
        except orjson.JSONEncodeError as exc:
            self.bad(line, field, f"dropped: cannot be written back ({exc})")
            return None
        return value

    def plain_fields(
        self, src: dict[str, Any], keys: Iterable[str], line: int | None, at: str
    ) -> dict[str, Any]:
        """The ``keys`` set in ``src`` (not ``None``), in that order, each as :meth:`plain` reads it (``at``: the
        field path up to the key)."""
        return {k: self.plain(src[k], line, f"{at}{k}") for k in keys if src.get(k) is not None}

    def time(self, value: Any, line: int | None, field: str) -> datetime | None:
        """An ISO-8601 timestamp (``Z`` accepted) or epoch seconds, as an aware UTC datetime.

        A timestamp without a zone is read as UTC (the importer says so in ``lossy``)."""
        if value is None:
            return None
        try:
            if isinstance(value, str):
                dt = datetime.fromisoformat(value)
            elif isinstance(value, int | float) and not isinstance(value, bool):
                dt = datetime.fromtimestamp(value, UTC)
            else:
                raise ValueError(f"got {type(value).__name__}")
        except (ValueError, OverflowError, OSError) as exc:
            self.bad(line, field, f"not a timestamp ({exc}): {_short(value)}")
            return None
        if dt.tzinfo is None:
            self.naive_times += 1
            return dt.replace(tzinfo=UTC)
        return dt.astimezone(UTC)


def _short(value: Any, n: int = 60) -> str:
    if nesting(value, limit=8) > 8:  # repr of a deep value is long and can exhaust the recursion limit
        return f"a {type(value).__name__} nested deeper than 8 levels"
    s = repr(value)
    return s if len(s) <= n else s[: n - 1] + "…"


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of a text: a long vocabulary written as one block."""
    return frozenset(text.split())


def dumps_args(value: Any) -> str:
    """Tool-call arguments held as parsed JSON, re-serialised compactly (the exact streamed text is lost)."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return repr(value)


def require_runs(path: Path, runs: list[Run], diags: list[Diagnostic], what: str) -> list[Run]:
    """Raise one clear error when a file yielded nothing at all (a file of bad lines is not a trace)."""
    if runs:
        return runs
    first = diags[0] if diags else None
    detail = f" (first problem: {first})" if first else ""
    raise TraceError(
        str(path), f"no readable {what} in this file{detail}", line=first.line if first else None
    )


def in_turn_order(events: list[Event]) -> list[Event]:
    """Events ordered as the native format stores them (before the first turn, then after each turn), keeping
    file order within a turn, so a written and re-read run equals the imported one."""
    return sorted(events, key=lambda e: -1 if e.turn is None else e.turn)


NAIVE_TIMES = "timestamps carry no zone: read as UTC"


PREFIX_BYTES = 1 << 16
"""How much of a file the whole-document sniffers look at (enough for any format's opening keys)."""


def read_prefix(path: Path, n: int = PREFIX_BYTES) -> bytes:
    """The first ``n`` bytes of a file (for sniffing whole-document formats); ``b""`` when unreadable or not a
    regular file (checked on the opened descriptor: a FIFO swapped in after a check is never read)."""
    try:
        with open_bytes(path) as fh:
            return fh.read(n)
    except (OSError, TraceError):
        return b""


def load_document(path: Path) -> Any:
    """A whole JSON document, refused past :data:`~workbench.trace.limits.MAX_DOCUMENT_BYTES` before it is read;
    a file that does not parse is one clear error naming the file and the line."""
    try:
        data = read_document(path, "JSON document")
    except OSError as exc:
        raise TraceError(str(path), f"cannot open: {exc.strerror or exc}") from exc
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        truncated = data.rstrip()[-1:] not in (b"}", b"]")
        what = "truncated JSON document (the file ends mid-document)" if truncated else f"not JSON: {exc.msg}"
        raise TraceError(str(path), what, line=exc.lineno) from None


IMAGE_PARTS = ("image", "image_url", "input_image")


def text_of(content: Any, images: tuple[str, ...] = IMAGE_PARTS) -> str | None:
    """Chat content as text: a string, or a list of parts whose text parts are joined (parts of an ``images``
    type as a marker)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict):
                if isinstance(p.get("text"), str):
                    parts.append(p["text"])
                elif p.get("type") in images:
                    parts.append("[image]")
        return "\n".join(parts)
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return None


def function_calls(
    raw: list[Any], bad: Callable[[int], None] | None = None, loose: bool = True
) -> list[ToolCall]:
    """Chat-completions ``tool_calls`` (``{id, function: {name, arguments}}``) as tool calls; an entry without a
    function is skipped (``bad(j)`` told of it). Arguments that are not text become their ``str`` (``loose``), or
    empty."""
    calls = []
    for j, tc in enumerate(raw):
        fn = tc.get("function") if isinstance(tc, dict) and isinstance(tc.get("function"), dict) else None
        if fn is None:
            if bad is not None:
                bad(j)
            continue
        args = fn.get("arguments")
        calls.append(
            ToolCall(
                id=tc.get("id") if isinstance(tc.get("id"), str) else None,
                name=fn.get("name") if isinstance(fn.get("name"), str) else "?",
                arguments=args if isinstance(args, str) else ("" if args is None or not loose else str(args)),
            )
        )
    return calls


def chat_text(content: Any) -> str | None:
    """:func:`text_of`, with any other value as its ``str`` (a log that records content as an object)."""
    return text_of(content) if content is None or isinstance(content, str | list) else str(content)


_JSON_TOKEN = re.compile(rb'"((?:[^"\\]|\\.)*)"(\s*:)?|[{}\[\]]')
_JSON_STOP = re.compile(rb'["{}\[\]]')
_COLON = re.compile(rb"\s*:")


def _json_keys(text: bytes) -> Iterator[tuple[bytes | None, bytes]]:
    """``_JSON_TOKEN.finditer(text)`` as object keys ``(key, b"")`` and brackets ``(None, bracket)``, a string's
    end found by ``bytes.find`` (the regex only where a backslash-newline may end it): measured 4x faster."""
    at = 0
    while (m := _JSON_STOP.search(text, at)) is not None:
        q = at = m.end()
        if text[q - 1] != 0x22:  # a bracket
            yield None, m.group()
            continue
        k = q - 1
        while (k := text.find(b'"', k + 1)) != -1:
            b = k
            while text[b - 1] == 0x5C:
                b -= 1
            if (k - b) % 2 == 0:  # not escaped
                break
        if k == -1:  # no string opens here
            continue
        if b"\\\n" in text[q:k]:  # where the regex could stop before ``k``: its own answer
            got = _JSON_TOKEN.match(text, q - 1)
            at = got.end() if got else q
            if got and got.group(2):
                yield got.group(1), b""
        elif colon := _COLON.match(text, k + 1):
            yield text[q:k], b""
            at = colon.end()
        else:
            at = k + 1


@dataclass(frozen=True)
class Skeleton:
    """The object keys a JSON prefix shows, each with the keys of the objects around it (list items are
    transparent): ``(("parent",), "span_id")`` for ``{"parent": {"span_id": 1}}``. Read from a bounded head (a
    document cut anywhere), so order and completeness are never assumed. ``top``: the first character (``{`` or
    ``[``); ``cut_in``: the top-level key whose value the prefix ends inside, when it does."""

    top: bytes
    keys: frozenset[tuple[tuple[str, ...], str]]
    cut_in: str | None

    def at(self, *parents: str) -> set[str]:
        """The keys of objects at this path of parent keys (``at()``: the top-level object's)."""
        return {k for p, k in self.keys if p == parents}

    def anywhere(self) -> set[str]:
        return {k for _, k in self.keys}

    def under(self, parent: str) -> set[str]:
        """Keys of any object whose own key (in its parent) is ``parent``."""
        return {k for p, k in self.keys if p and p[-1] == parent}


def skeleton(prefix: bytes, max_keys: int = 20000) -> Skeleton | None:
    """The :class:`Skeleton` of a JSON document's prefix, or ``None`` when it does not open with ``{`` or ``[``.
    A tolerant scan of strings and brackets (no value is parsed), bounded by ``max_keys``."""
    text = prefix.lstrip()
    if text[:1] not in (b"{", b"["):
        return None
    # (bracket, the key this container is the value of; None for the root and for list items)
    stack: list[tuple[bytes, str | None]] = []
    pending: str | None = None  # the last key read in the innermost object
    keys: set[tuple[tuple[str, ...], str]] = set()
    for key, tok in _json_keys(text):
        if key is not None:
            if stack and stack[-1][0] == b"{":
                pending = key.decode("utf-8", "replace")
                keys.add((tuple(k for _, k in stack[1:] if k is not None), pending))
                if len(keys) >= max_keys:
                    break
            continue
        if tok in (b"{", b"["):
            stack.append((tok, pending if stack and stack[-1][0] == b"{" else None))
            pending = None
        elif stack:
            stack.pop()
            pending = None
    cut_in = stack[1][1] if len(stack) >= 2 and stack[0][0] == b"{" else None
    return Skeleton(top=text[:1], keys=frozenset(keys), cut_in=cut_in)
