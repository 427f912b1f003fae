"""Walking folders for recorded runs: every entry is either a regular file to read or a skipped entry with its
reason. Nothing is dropped silently, one bad entry never stops the walk, and nothing is opened before ``os.stat``
says it is a regular file (a FIFO would block the reader forever). See docs/corpus-discovery.md.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.outputs import is_partial

MAX_DEPTH = 32
"""Folder levels below a given folder that are searched; deeper entries are listed as skipped (a guard against
pathological trees, not a limit real corpora reach)."""

VCS_FOLDERS = frozenset({".git", ".hg", ".svn"})
DANGLING = "dangling or looping symbolic link: its target does not exist"
LOOPING = "dangling or looping symbolic link: the links loop"
"""Version-control metadata: listed as one skipped entry, not searched (thousands of objects, never runs)."""


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """An entry found under a folder (or given) that was not loaded, and why. ``refused`` marks what could not be
    read at all (a FIFO, device or socket, a dangling or looping link, no permission): commands report those as
    errors, while a file in no supported format or a second link to a file already read is only a note."""

    path: Path
    reason: str
    refused: bool = False

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"

    def __fspath__(self) -> str:
        return str(self.path)

    def to_dict(self) -> dict[str, str | bool]:
        return {"path": str(self.path), "reason": self.reason, "refused": self.refused}


def kind_of(mode: int) -> str | None:
    """Why a non-regular file is not read (``None`` for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "not read: a FIFO (named pipe), which could block forever"
    if stat.S_ISSOCK(mode):
        return "not read: a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "not read: a device"
    if stat.S_ISDIR(mode):
        return "not read: a folder"
    return "not read: not a regular file"


def _stat(path: Path, is_link: bool) -> tuple[os.stat_result | None, str | None]:
    """The entry's stat (following links), or why it cannot be had."""
    try:
        return os.stat(path), None
    except FileNotFoundError:
        return None, DANGLING if is_link else "vanished while walking"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, LOOPING
        return None, f"unreadable: {exc.strerror or exc}"


def scan(
    paths: Iterable[str | os.PathLike[str]],
    max_depth: int = MAX_DEPTH,
    is_unit: Callable[[Path], bool] | None = None,
) -> Iterator[Path | SkippedFile]:
    """Every regular file under ``paths`` (files as given, folders walked in sorted order, symlinks followed once),
    and a :class:`SkippedFile` for every other entry. A folder ``is_unit`` says is one run (an OpenHands
    conversation) is yielded whole, not walked. A given path that does not exist raises ``FileNotFoundError`` (a
    typo the user must hear about); anything found while walking never raises."""
    visited: dict[tuple[int, int], Path] = {}  # every file and folder searched so far, by identity
    for raw in paths:
        p = Path(raw).expanduser()
        is_link = p.is_symlink()
        st, why = _stat(p, is_link)
        if st is None:
            if not is_link and not os.path.lexists(p):
                raise FileNotFoundError(str(p))
            yield SkippedFile(p, why or "unreadable", refused=True)
            continue
        yield from _entry(p, st, 0, frozenset(), visited, max_depth, is_unit)


def _entry(
    path: Path,
    st: os.stat_result,
    depth: int,
    ancestors: frozenset[tuple[int, int]],
    visited: dict[tuple[int, int], Path],
    max_depth: int,
    is_unit: Callable[[Path], bool] | None,
) -> Iterator[Path | SkippedFile]:
    key = (st.st_dev, st.st_ino)
    if key in ancestors:
        yield SkippedFile(path, f"{LOOPING} (back into a folder being searched)", refused=True)
        return
    if key in visited:
        # a second link to the same file or folder: reading it again would count its runs twice
        yield SkippedFile(
            path, f"the same {'folder' if stat.S_ISDIR(st.st_mode) else 'file'} as {visited[key]}"
        )
        return
    visited[key] = path
    if stat.S_ISDIR(st.st_mode):
        if is_unit is not None and is_unit(path):
            yield path
            return
        yield from _walk(path, depth, ancestors | {key}, visited, max_depth, is_unit)
        return
    reason = kind_of(st.st_mode)
    yield path if reason is None else SkippedFile(path, reason, refused=True)


def _walk(
    folder: Path,
    depth: int,
    ancestors: frozenset[tuple[int, int]],
    visited: dict[tuple[int, int], Path],
    max_depth: int,
    is_unit: Callable[[Path], bool] | None,
) -> Iterator[Path | SkippedFile]:
    try:
        with os.scandir(folder) as it:
            # real entries before symlinks (each group sorted), so a link to a file here is the duplicate, not it
            entries = sorted(it, key=lambda e: (_is_link(e), e.name))
    except OSError as exc:
        yield SkippedFile(folder, f"unreadable folder: {exc.strerror or exc}", refused=True)
        return
    for entry in entries:
        path = Path(entry.path)
        if is_partial(entry.name):
            yield SkippedFile(
                path, "an unfinished output (a workbench command writing it was stopped): not read"
            )
            continue
        is_link = _is_link(entry)
        st, why = _stat(path, is_link)
        if st is None:
            yield SkippedFile(path, why or "unreadable", refused=True)
            continue
        if stat.S_ISDIR(st.st_mode):
            if entry.name in VCS_FOLDERS:
                yield SkippedFile(path, "version-control metadata folder: not searched")
                continue
            if depth + 1 > max_depth:
                yield SkippedFile(
                    path, f"too deep: more than {max_depth} folder levels below the given folder"
                )
                continue
        yield from _entry(path, st, depth + 1, ancestors, visited, max_depth, is_unit)


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False
