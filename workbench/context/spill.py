"""Where the memo, the decayer and the fold preserve bytes before shortening them ("durable path").

``SpillStore.preserve(key, text)`` returns the path the text can be read back from, or ``None`` when it cannot
preserve it (then no pointer or stub naming a path may be emitted). Replays use :class:`MemorySpill`; a live loop
that wants real files passes :class:`DirectorySpill`.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Protocol


class SpillStore(Protocol):
    def preserve(self, key: str, text: str) -> str | None: ...


def _safe(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", key)[:60] or hashlib.sha256(key.encode()).hexdigest()[:12]


class MemorySpill:
    """Keeps spilled text in memory under ``observations/<key>.txt`` names (same key, same path)."""

    def __init__(self, prefix: str = "observations") -> None:
        self.prefix = prefix
        self.files: dict[str, str] = {}

    def preserve(self, key: str, text: str) -> str | None:
        path = f"{self.prefix}/{_safe(key)}.txt"
        self.files.setdefault(path, text)
        return path


class DirectorySpill:
    """Writes spilled text as files of one loop-owned folder; returns ``None`` (no pointer) when a write fails.

    The folder is made (mode 0700) and opened once, here; it must be a real folder owned by this user and
    writable by no one else. Every file is created inside the held descriptor with ``O_CREAT | O_EXCL |
    O_NOFOLLOW`` — a name that already exists is never opened for writing, so nothing planted there (a link to a
    host path) is written through. The folder belongs outside the workspace: the model's commands must not be
    able to reach it (``workbench run`` puts it beside the trace)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        self.fd = os.open(self.root, flags)
        st = os.fstat(self.fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            os.close(self.fd)
            raise PermissionError(
                f"{self.root} is not a folder of this user's alone (owner uid {st.st_uid}, mode "
                f"{stat.S_IMODE(st.st_mode):o}); spilled results are kept only in a folder nobody else can write"
            )
        self._written: set[str] = set()

    def name(self, key: str) -> str:
        return f"{_safe(key)}.txt"

    def preserve(self, key: str, text: str) -> str | None:
        name = self.name(key)
        if name not in self._written:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
            try:
                fd = os.open(name, flags, 0o600, dir_fd=self.fd)
            except OSError:
                return None  # a name this store did not write (or a full disk): no pointer names it
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(text.encode("utf-8", "surrogatepass"))
            except OSError:
                return None
            self._written.add(name)
        return str(self.root / name)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
