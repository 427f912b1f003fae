"""The workspace folder a live run works in: path confinement and the measure of change.

Change is measured the way the seed's workspace measures ``MutationCount`` (docs/governors.md §1.3): a revision
counter that the write tools move, plus a bounded before/after walk of the tree that moves it once more when the
endpoints differ (so a file written by a shell command counts too). The walk skips dot entries and
dependency/cache folders and stops after :data:`WALK_LIMIT` entries.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

# docs/governors.md §1.3 (seed 001 MutationCount): the workspace walk is bounded at 6,000 entries.
WALK_LIMIT = 6_000
# docs/governors.md §1.3: the walk skips dependency and cache folders (dot entries are skipped by name).
SKIPPED_DIRS = frozenset(
    {"node_modules", "vendor", "__pycache__", "venv", "site-packages", "target", "bower_components"}
)

Snapshot = frozenset[tuple[str, int, int]]
"""(relative path, size, mtime in ns) of every file the walk saw."""


class PathEscape(ValueError):
    """A tool path that resolves outside the workspace."""


def walk(root: Path, limit: int = WALK_LIMIT) -> Snapshot:
    """The tree's files as (path, size, mtime_ns), breadth first, at most ``limit`` entries."""
    seen: list[tuple[str, int, int]] = []
    entries = 0
    queue = [root]
    while queue and entries < limit:
        folder = queue.pop(0)
        try:
            with os.scandir(folder) as it:
                children = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in children:
            if entries >= limit:
                break
            if entry.name.startswith("."):
                continue
            entries += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED_DIRS:
                        queue.append(Path(entry.path))
                    continue
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            seen.append((os.path.relpath(entry.path, root), stat.st_size, stat.st_mtime_ns))
    return frozenset(seen)


@dataclass
class Workspace:
    """A folder the tools may touch, and its revision (moves on every write and every walked change)."""

    root: Path
    revision: int = 0
    _walk_limit: int = field(default=WALK_LIMIT, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def resolve(self, path: str) -> Path:
        """``path`` (relative to the root, or absolute) as a real path inside the workspace; symlinks are
        followed before the check, so a link pointing out is an escape too."""
        if not path or "\x00" in path:
            raise PathEscape(f"{path!r} is not a usable path")
        try:
            candidate = (self.root / path).resolve()
        except RuntimeError:  # Python 3.11 reports a symlink loop this way
            raise PathEscape(f"{path[:200]!r} is a symbolic link loop") from None
        except OSError as exc:
            raise PathEscape(f"{path[:200]!r} is not a usable path ({exc.strerror or exc})") from None
        if candidate != self.root and self.root not in candidate.parents:
            raise PathEscape(f"{path[:200]!r} is outside the workspace")
        return candidate

    def wrote(self) -> None:
        """A write tool filed a change."""
        self.revision += 1

    def snapshot(self) -> Snapshot:
        return walk(self.root, self._walk_limit)

    def settle(self, before: Snapshot) -> None:
        """Compare the walk's endpoints; a difference is one more revision."""
        if self.snapshot() != before:
            self.revision += 1
