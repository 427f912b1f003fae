"""The workspace folder a live run works in: path confinement and the measure of change (the seed's revision
counter plus a bounded before/after walk of the tree, :data:`WALK_LIMIT` entries: docs/governors.md §1.3)."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from workbench.loop import beneath

# docs/governors.md §1.3 (seed 001 MutationCount): the workspace walk is bounded at 6,000 entries.
WALK_LIMIT = 6_000
# docs/governors.md §1.3: the walk skips dependency and cache folders (dot entries are skipped by name).
SKIPPED_DIRS = frozenset(
    {"node_modules", "vendor", "__pycache__", "venv", "site-packages", "target", "bower_components"}
)

Snapshot = frozenset[tuple[str, int, int]]
"""(relative path, size, mtime in ns) of every file the walk saw."""


class PathEscape(ValueError):
    """A tool path that resolves outside the workspace, or through a symbolic link."""


def _names(folder: int) -> list[str]:
    """The sorted names in the folder held by ``folder`` (an ``O_PATH`` descriptor)."""
    listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=folder)
    try:
        with os.scandir(listing) as it:
            return sorted(entry.name for entry in it)
    finally:
        os.close(listing)


def walk(root: Path | int, limit: int = WALK_LIMIT) -> Snapshot:
    """The tree's files as (path, size, mtime_ns), breadth first, at most ``limit`` entries. ``root`` is a path or
    a held folder descriptor; every folder is opened from its parent's descriptor without following a link, so a
    folder swapped for a link while the walk runs is not entered."""
    seen: list[tuple[str, int, int]] = []
    entries = 0
    opened = os.open(root, beneath.DIR_FLAGS) if not isinstance(root, int) else os.dup(root)
    queue: list[tuple[str, int]] = [("", opened)]
    try:
        while queue and entries < limit:
            prefix, folder = queue.pop(0)
            try:
                children = _names(folder)
            except OSError:
                os.close(folder)
                continue
            for name in children:
                if entries >= limit:
                    break
                if name.startswith("."):
                    continue
                entries += 1
                try:
                    st = os.stat(name, dir_fd=folder, follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        if name not in SKIPPED_DIRS:
                            queue.append(
                                (prefix + name + "/", os.open(name, beneath.DIR_FLAGS, dir_fd=folder))
                            )
                        continue
                except OSError:
                    continue
                seen.append((prefix + name, st.st_size, st.st_mtime_ns))
            os.close(folder)
    finally:
        for _, fd in queue:
            os.close(fd)
    return frozenset(seen)


@dataclass
class Workspace:
    """A folder the tools may touch, and its revision (moves on every write and every walked change).

    The folder is opened once (:attr:`fd`); every path a tool names is resolved beneath that descriptor by the
    kernel (``workbench.loop.beneath``), never through a symbolic link, and the tool then works on the
    descriptor it got. ``owner``: the (uid, gid) files and folders the tools create are handed to (the sandbox's
    host user when the loop runs as root, so its commands can change what ``write`` made)."""

    root: Path
    revision: int = 0
    owner: tuple[int, int] | None = None
    _walk_limit: int = field(default=WALK_LIMIT, repr=False)
    fd: int = field(default=-1, init=False, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.root, beneath.DIR_FLAGS)

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError, TypeError):
            if self.fd >= 0:
                os.close(self.fd)

    def parts(self, path: str) -> tuple[str, ...]:
        """``path`` (relative to the root, or absolute under it) as normal components beneath the root; lexical
        only: the kernel resolves them when they are opened (:meth:`open`)."""
        if path and "\x00" not in path and path.startswith("/"):
            root = str(self.root)
            if path.rstrip("/") == root:
                return ()
            if not path.startswith(root + "/"):
                raise PathEscape(f"{path[:200]!r} is outside the workspace")
            path = path[len(root) + 1 :]
        try:
            return beneath.parts(path)
        except beneath.Escape as exc:
            raise PathEscape(str(exc)) from None

    def resolve(self, path: str) -> Path:
        """Where ``path`` names, for display: the root joined with its normal components (no link is followed,
        since none will be when it is opened)."""
        return self.root.joinpath(*self.parts(path))

    def open(self, components: tuple[str, ...], flags: int, mode: int = 0o644) -> int:
        """A descriptor of ``components`` beneath the root (no link followed, resolved by the kernel)."""
        try:
            return beneath.open_beneath(self.fd, components, flags, mode)
        except beneath.Escape as exc:
            raise PathEscape(str(exc)) from None

    def folder(self, components: tuple[str, ...], *, create: bool) -> int:
        """An ``O_PATH`` descriptor of the folder ``components`` beneath the root, made (with its parents) when
        ``create``."""
        try:
            if create:
                return beneath.make_dirs(self.fd, components, owner=self.owner)
            return beneath.open_beneath(self.fd, components, beneath.DIR_FLAGS)
        except beneath.Escape as exc:
            raise PathEscape(str(exc)) from None

    def hand_to(self, owner: tuple[int, int]) -> None:
        """Give the root and everything beneath it to ``owner`` (the sandbox's host user), walking by descriptor
        and never following a link; later creations are handed over as they are made."""
        self.owner = owner
        os.chown(self.root, *owner, follow_symlinks=False)
        for _, dirs, files, dirfd in os.fwalk(self.root, follow_symlinks=False):
            for name in dirs + files:
                with contextlib.suppress(OSError):
                    os.chown(name, *owner, dir_fd=dirfd, follow_symlinks=False)

    def wrote(self) -> None:
        """A write tool filed a change."""
        self.revision += 1

    def snapshot(self) -> Snapshot:
        return walk(self.fd, self._walk_limit)

    def settle(self, before: Snapshot) -> None:
        """Compare the walk's endpoints; a difference is one more revision."""
        if self.snapshot() != before:
            self.revision += 1
