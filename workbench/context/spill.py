"""Where the memo, the decayer and the fold preserve bytes before shortening them ("durable path").

A ``SpillStore`` returns the path the text can be read back from, or ``None`` when it cannot preserve it (then
no pointer or stub naming a path may be emitted). Replays use :class:`MemorySpill`; a live loop that wants real
files passes :class:`DirectorySpill`.

Call signature::

    store.preserve(key, text) -> str | None
"""

from __future__ import annotations

import hashlib
import re
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
    """Writes spilled text under a directory; returns ``None`` (no pointer) when the write fails."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def preserve(self, key: str, text: str) -> str | None:
        path = self.root / f"{_safe(key)}.txt"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_text(text, encoding="utf-8")
        except OSError:
            return None
        return str(path)
