"""Where a report's figures came from: corpus files with hashes, the policies, the version, the command."""

from __future__ import annotations

import hashlib
import html
import platform
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from workbench import __version__
from workbench.label_files import results_kind


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    """The file's sha256; for a folder that is one run (an OpenHands conversation), the hash of its files'
    relative paths and contents in sorted order."""
    h = hashlib.sha256()
    for f in _files_of(path):
        if path.is_dir():
            h.update(f.relative_to(path).as_posix().encode() + b"\0")
        with open(f, "rb") as fh:
            while block := fh.read(chunk):
                h.update(block)
    return h.hexdigest()


def _files_of(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in _files_of(path))


@dataclass(frozen=True)
class CorpusFile:
    path: str
    sha256: str
    size: int
    runs: int


@dataclass(frozen=True)
class Provenance:
    """Everything needed to reproduce a report: inputs by hash, policies, version and command."""

    files: tuple[CorpusFile, ...]
    policies: tuple[dict[str, Any], ...]
    command: str
    version: str = __version__
    python: str = field(default_factory=platform.python_version)
    generated_at: str | None = None
    problems: tuple[str, ...] = ()
    not_loaded: tuple[tuple[str, str], ...] = ()
    """Entries under the given paths that were not loaded, as (path, reason): nothing is dropped silently."""
    labels_read: tuple[tuple[str, str], ...] = ()
    """Grader results files beside the runs, read for their outcome labels (not traces), as (path, what it is)."""

    def not_loaded_by_reason(self) -> dict[str, int]:
        return dict(Counter(reason for _, reason in self.not_loaded).most_common())

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([f.__dict__ for f in self.files], columns=["path", "sha256", "size", "runs"])

    def _repr_html_(self) -> str:
        return (
            f"<div><b>workbench {html.escape(self.version)}</b> · <code>{html.escape(self.command)}</code>"
            f"{self.to_frame().to_html(index=False)}</div>"
        )


def provenance(
    files: Iterable[Path],
    runs_per_file: dict[str, int],
    policies: Sequence[dict[str, Any]],
    command: str,
    *,
    generated_at: datetime | None = None,
    problems: Iterable[str] = (),
    not_loaded: Iterable[tuple[str, str]] = (),
    digests: Mapping[str, str] | None = None,
) -> Provenance:
    """Hash every corpus file (``generated_at`` is an input: the report never reads the clock itself).
    ``digests``: SHA-256s already known, by file (the corpus cache keys a file by its SHA-256, so a loaded file
    is not read again). ``not_loaded`` entries that are grader results files (``workbench.label_files``) are
    listed as labels read, the rest as not loaded."""
    skipped = tuple(not_loaded)
    labels = tuple((p, why) for p, why in skipped if results_kind(p) == why)
    known = digests or {}
    entries = tuple(
        CorpusFile(str(p), known.get(str(p)) or sha256_of(p), size_of(p), runs_per_file.get(str(p), 0))
        for p in files
    )
    return Provenance(
        files=entries,
        policies=tuple(policies),
        command=command,
        generated_at=generated_at.isoformat(timespec="seconds") if generated_at else None,
        problems=tuple(problems),
        not_loaded=tuple(e for e in skipped if e not in labels),
        labels_read=labels,
    )
