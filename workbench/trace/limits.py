"""Reading files the workbench did not write without trusting them: how long a line may be, how many problems a
file keeps one by one, how large a count may be, and how deep a record may nest. Each bound in one place.

A bound that is reached is never silent: the over-long line, the problems past the limit and the implausible
count each become a :class:`~workbench.trace.schema.Diagnostic`, and the rest of the file still loads.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from workbench.trace.errors import TraceError
from workbench.trace.schema import Diagnostic

# Workbench choice: the longest line read. The longest real line beside the checkout is an OpenHands run of 1.2 MB
# (20 calls); a 500-iteration run with large observations stays well below this. Past it a line is skipped
# (reported) without ever being held whole, so /dev/zero or a runaway log cannot exhaust memory.
MAX_LINE_BYTES = 64 << 20
# Workbench choice: the largest whole-document file read (an Inspect .json log, a trajectory, a results file) and
# the largest zip member inflated (an Inspect .eval sample). Parsed whole, a JSON document can take 5-20x its size
# in Python objects, so this bounds a reader at about a gigabyte; the largest real documents beside the checkout
# are 650 KB (mini-swe-agent trajectories), a hundredth of it. Past it a file is refused with one line, unread.
MAX_DOCUMENT_BYTES = 64 << 20
# Workbench choice: the most bytes inflated from one archive (an Inspect .eval), its members together: 16 members
# at the limit. Members past it are not inflated (each said), so a small zip cannot expand without bound.
MAX_INFLATED_BYTES = 16 * MAX_DOCUMENT_BYTES
# Workbench choice: past this many per file, problems are counted, not kept (1M bad lines once cost 810 MB).
MAX_DIAGNOSTICS_PER_FILE = 1_000
# Workbench choice: the largest token count a trace may hold. The largest context windows are ~10^7 tokens and a
# whole run's spend stays far below 10^12, so a larger figure is corruption, not a long run; it also keeps every
# count below 2^53, exact in a float64 pandas column (2^63 once overflowed numpy's int64 in sweeps).
MAX_TOKEN_COUNT = 10**12
# Workbench choice: records nested deeper than this are not kept (orjson writes at most 255 levels; a 300-deep
# timestamp once crashed an importer). Real traces nest a few dozen levels at most.
MAX_NESTING = 200

_CHUNK = 1 << 20


@dataclass(frozen=True)
class TooLong:
    """A line longer than :data:`MAX_LINE_BYTES`; only its length was read (``complete`` False when the file
    ended or the skip budget ran out before its newline)."""

    size: int
    complete: bool = True


def check_regular(path: Path) -> None:
    """Raise :class:`TraceError` unless ``path`` is a regular file we may open: a FIFO would block on open, a
    device (``/dev/zero``) never ends, a dangling link or an unreadable file cannot be read."""
    name = str(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        if os.path.islink(path):
            raise TraceError(name, "dangling or looping symbolic link") from exc
        raise TraceError(name, f"cannot read: {exc.strerror or exc}") from exc
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return
    raise TraceError(name, f"not read: {_kind(mode)}")


def _kind(mode: int) -> str:
    return (
        "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "not a regular file"
    )


def open_bytes(path: Path) -> IO[bytes]:
    """Open a regular file for reading; every refusal is a :class:`TraceError` naming the file. The path is
    checked first (for a clear message), then the *opened descriptor* (``fstat``): a file swapped for a FIFO or a
    device between the check and the open is refused, never read (the open itself does not block on a FIFO)."""
    check_regular(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise TraceError(str(path), f"cannot open: {exc.strerror or exc}") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise TraceError(str(path), f"not read: {_kind(mode)} (swapped in after it was checked)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_document(path: Path, what: str = "document", limit: int | None = None) -> bytes:
    """The whole of a regular file read as one document, refused (a :class:`TraceError` naming the file) past
    ``limit`` bytes (default :data:`MAX_DOCUMENT_BYTES`), whatever its size said: at most ``limit + 1`` bytes are
    ever read."""
    limit = limit or MAX_DOCUMENT_BYTES
    with open_bytes(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(limit + 1) if size <= limit else b""
        if size > limit or len(data) > limit:
            shown = f"{size:,}-byte" if size > limit else f"over {limit:,}-byte"
            raise TraceError(
                str(path), f"a {shown} {what}: larger than the {limit:,}-byte limit for a document read whole"
            )
    return data


def bounded_lines(fh: IO[bytes], max_line: int | None = None) -> Iterator[tuple[int, bytes | TooLong]]:
    """(1-based line number, raw line) for every non-blank line; a line longer than ``max_line`` (default
    :data:`MAX_LINE_BYTES`) is yielded as :class:`TooLong` after skipping it in chunks, so no more than
    ``max_line`` bytes are ever held."""
    max_line = max_line or MAX_LINE_BYTES
    number = 0
    while True:
        raw = fh.readline(max_line + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line and not raw.endswith(b"\n"):
            size, complete = len(raw), False
            while True:
                chunk = fh.readline(_CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if chunk.endswith(b"\n"):
                    complete = True
                    break
            yield number, TooLong(size, complete)
            continue
        if not raw.isspace():  # a blank line (only ASCII whitespace, what bytes.strip removes) is skipped
            yield number, raw


def file_lines(fh: IO[bytes]) -> Iterator[tuple[int, bytes | TooLong]]:
    """What :func:`bounded_lines` yields, for a file no longer than :data:`MAX_LINE_BYTES` read in one call and
    cut at each newline (no line of it can pass the limit; a line keeps its newline, as ``readline`` gives it);
    a longer file, or one that grew past the limit while read, is read line by line."""
    if os.fstat(fh.fileno()).st_size <= MAX_LINE_BYTES:
        data = fh.read(MAX_LINE_BYTES + 1)
        if len(data) <= MAX_LINE_BYTES:
            yield from _cut(data)
            return
        fh.seek(0)
    yield from bounded_lines(fh)


def _cut(data: bytes) -> Iterator[tuple[int, bytes]]:
    find, size = data.find, len(data)
    start = number = 0
    while start < size:
        end = find(b"\n", start)
        stop = size if end < 0 else end + 1
        raw = data[start:stop]
        number += 1
        start = stop
        if not raw.isspace():
            yield number, raw


def too_long(file: str, line: int, long: TooLong, max_line: int | None = None) -> Diagnostic:
    max_line = max_line or MAX_LINE_BYTES
    ended = "" if long.complete else " (the file ends inside it)"
    return Diagnostic(
        file=file,
        line=line,
        message=f"line of {long.size:,} bytes skipped: longer than the {max_line:,}-byte limit{ended}",
    )


def head_lines(
    path: Path, n: int, max_bytes: int, *, floor: int = 0, soft_bytes: int | None = None
) -> list[bytes]:
    """The first ``n`` non-blank lines of a regular file, reading at most about ``max_bytes``; an over-long line
    ends the head (a sniffer cannot use it). With ``soft_bytes``, the head also ends past ``soft_bytes`` once it
    holds ``floor`` lines (a bounded head of many short lines, or a few long ones)."""
    head: list[bytes] = []
    read = 0
    with open_bytes(path) as fh:
        for _, raw in bounded_lines(fh, max_line=max_bytes):
            if isinstance(raw, TooLong):
                break
            read += len(raw)
            head.append(raw)
            if len(head) >= n or read > max_bytes:
                break
            if soft_bytes is not None and read > soft_bytes and len(head) >= floor:
                break
    return head


class DiagnosticLog(list[Diagnostic]):
    """The problems of one file: the first ``limit`` kept one by one, the rest counted in one closing
    diagnostic ("… N more problems not kept"), so a file of a million bad lines costs a thousand objects."""

    def __init__(self, file: str, limit: int | None = None) -> None:
        super().__init__()
        self.file = file
        self.limit = limit or MAX_DIAGNOSTICS_PER_FILE
        self.dropped = 0

    def append(self, diagnostic: Diagnostic) -> None:
        if not self.dropped and len(self) < self.limit:
            super().append(diagnostic)
            return
        self._count()

    def _count(self) -> None:
        self.dropped += 1
        message = f"{self.dropped:,} more problems not kept (the first {self.limit:,} are listed)"
        if self.dropped == 1:
            super().append(Diagnostic(file=self.file, message=message))
        else:
            self[-1].message = message  # one object for all of them, updated in place

    @property
    def full(self) -> bool:
        """Past the limit: a caller may count a problem (:meth:`count_past_limit`) without building its diagnostic."""
        return bool(self.dropped) or len(self) >= self.limit

    def count_past_limit(self) -> None:
        """One more problem past the limit, counted without a Diagnostic object."""
        if not self.full:
            raise ValueError("count_past_limit() is for problems past the limit; append the diagnostic")
        self._count()

    def extend(self, diagnostics: Any) -> None:
        for d in diagnostics:
            self.append(d)

    @property
    def total(self) -> int:
        """How many problems were met, kept or not."""
        return len(self) - (1 if self.dropped else 0) + self.dropped

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle appends a list's items before it restores its attributes, and ``append`` reads them: rebuilt whole
        return _restored_log, (self.file, self.limit, self.dropped, list(self))


def _restored_log(file: str, limit: int, dropped: int, kept: list[Diagnostic]) -> DiagnosticLog:
    """A pickled :class:`DiagnosticLog` as it was: its diagnostics (the closing count among them) and its counts."""
    log = DiagnosticLog(file, limit)
    list.extend(log, kept)
    log.dropped = dropped
    return log


def too_deep(raw: bytes | str, value: Any, limit: int = MAX_NESTING) -> bool:
    """Does ``value``, parsed from the JSON text ``raw``, nest deeper than ``limit``? Each level opens a ``{`` or
    ``[``, so text with no more than ``limit`` of them cannot (counted in C, without walking the value); only
    text with more is walked by :func:`nesting`."""
    opens = raw.count(b"{") + raw.count(b"[") if isinstance(raw, bytes) else raw.count("{") + raw.count("[")
    if opens <= limit:
        return False
    return nesting(value, limit) > limit


def nesting(value: Any, limit: int = MAX_NESTING) -> int:
    """How deep ``value`` nests, counted without recursion and stopping at ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            children: Any = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((c, depth) for c in children)
    return deepest
