"""Finding and loading recorded runs: files or folders, in any supported format."""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.label_files import results_kind
from workbench.trace.errors import UNRECOGNISED, TraceError
from workbench.trace.schema import Run
from workbench.trace.walk import SkippedFile, scan

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def discover(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """Every regular file under ``paths`` (files as given; folders walked in sorted order). Entries that are not
    regular files are left out here; :func:`load` lists them in ``Corpus.skipped`` with their reasons."""
    for found in scan_paths(paths):
        if isinstance(found, Path):
            yield found


def scan_paths(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path | SkippedFile]:
    """:func:`workbench.trace.walk.scan`, with a missing given path as a :class:`TraceError`."""
    try:
        yield from scan(paths, is_unit=_is_folder_run)
    except FileNotFoundError as exc:
        raise TraceError(str(exc.args[0]) if exc.args else "?", "no such file or folder") from None


@dataclass(frozen=True)
class CorpusSummary:
    """What a corpus holds, counted one way for every command: files read, files skipped (no supported
    format) and unreadable, runs (by role), leaves (runs split into their segments) and segments."""

    files: int
    skipped: int
    unreadable: int
    runs: int
    subagents: int
    compactions: int
    leaves: int
    sessions_split: int
    segments: int
    left_out: int = 0
    """Entries listed with another reason: a second link to a file already read, a VCS folder, a folder too deep."""
    results: int = 0
    """Grader results files beside the runs (read for outcome labels, not as traces; docs/labels.md)."""

    def words(self, works_on: str) -> str:
        """``corpus: 230 files (2 skipped, 1 unreadable), 25 runs (...), 31 leaves (...); works on …``."""
        files = f"{self.files:,} file{'s' if self.files != 1 else ''} read"
        extra = [f"{self.skipped:,} skipped, in no supported format"] if self.skipped else []
        extra += [f"{self.unreadable:,} unreadable"] if self.unreadable else []
        extra += [f"{self.results:,} grader results, read for labels"] if self.results else []
        extra += [f"{self.left_out:,} left out, each with its reason"] if self.left_out else []
        roles = [f"{self.subagents:,} subagent"] if self.subagents else []
        roles += [f"{self.compactions:,} compaction"] if self.compactions else []
        runs = f"{self.runs:,} runs" + (f" ({', '.join(roles)})" if roles else "")
        leaves = f"{self.leaves:,} leaves"
        if self.sessions_split:
            leaves += f" ({self.sessions_split:,} sessions split into {self.segments:,} segments)"
        head = files + (f" ({'; '.join(extra)})" if extra else "")
        return f"corpus: {head}, {runs}, {leaves}; works on {works_on}"


NOT_A_TRACE = frozenset({UNRECOGNISED, "empty file"})
"""The reasons a readable file is skipped because it is in no supported format."""


def _is_folder_run(path: Path) -> bool:
    """A folder that holds one run: an OpenHands V1 conversation (``base_state.json`` + ``events/``)."""
    return (path / "base_state.json").is_file() and (path / "events").is_dir()


@dataclass
class Corpus:
    """Runs loaded from some paths, and the files that could not be read at all."""

    runs: list[Run] = field(default_factory=list)
    problems: list[TraceError] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    """Entries that were not loaded, each with its reason: files found by walking a folder that no importer
    recognises, FIFOs, devices, sockets, unreadable files, dangling symlinks, symlink loops, folders too deep.
    Each is path-like (``os.fspath`` gives its path) and prints as ``path: reason``."""
    files: list[Path] = field(default_factory=list)
    renamed: dict[str, tuple[str, Path]] = field(default_factory=dict)
    """Runs whose run_id was already loaded from another file: new run_id -> (the file's run_id, the file)
    (``workbench.trace.identity``)."""
    sizes: dict[str, int] = field(default_factory=dict)
    """How many runs each file gave (``Run.loaded_from`` names the file): a sweep on workers reloads a file
    only when the corpus still holds every run it gave."""
    as_loaded: dict[int, Run] = field(default_factory=dict, repr=False, compare=False)
    """The Run objects as the loader made them (by ``id``): a run replaced or edited with ``model_copy`` is not
    one of them, so a sweep sweeps it in this process rather than reloading its file."""
    sheet: Any = field(default=None, repr=False, compare=False)
    """The fast-path sheet of every leaf under the default guard settings, from the corpus index
    (``workbench.scale.index``) — what lets a sweep answer a large corpus without building its Runs. Valid for
    the runs the loader gave (``runs`` as loaded): a sweep checks that before reading it."""
    leaf_of: np.ndarray | None = field(default=None, repr=False, compare=False)
    """Per row of ``sheet``: its run's place in ``runs`` and the leaf's place among that run's leaves (2 columns)."""
    file_keys: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    """Each cached file's cache key as the index gave it (a sweep's workers read its facts without hashing)."""
    sheet_of: Any = field(default=None, repr=False, compare=False)
    """The run list ``sheet`` describes (``runs`` as the loader gave it)."""

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def by_id(self, run_id: str) -> Run:
        runs = self.runs
        if hasattr(runs, "run_id"):  # a lazy store names its runs without building them
            for i in range(len(runs)):
                if runs.run_id(i) == run_id:
                    return runs[i]
            raise KeyError(run_id)
        for r in runs:
            if r.run_id == run_id:
                return r
        raise KeyError(run_id)

    def children(self, run: str | Run) -> list[Run]:
        """The runs that name ``run`` as their parent: subagents and compaction calls of a session."""
        run_id = run if isinstance(run, str) else run.run_id
        return [r for r in self.runs if r.parent_run_id == run_id]

    def leaves(self) -> list[Run]:
        """Every run split into its segments (interactive sessions) — the units replays work on."""
        return [leaf for r in self.runs for leaf in r.leaves()]

    @property
    def refused(self) -> list[SkippedFile]:
        """The skipped entries that could not be read at all (FIFOs, devices, dangling links, no permission):
        commands report these as errors, beside ``problems``."""
        return [s for s in self.skipped if s.refused]

    def summary(self) -> CorpusSummary:
        """The counts every command prints in its corpus line."""
        runs = self.runs
        if hasattr(runs, "segment_count"):  # a lazy store reads its references: no run is built
            roles = [runs.role(i) for i in range(len(runs))]
            seg_counts = [runs.segment_count(i) for i in range(len(runs))]
        else:
            roles = [r.role for r in runs]
            seg_counts = [len(r.segments) for r in runs]
        split = [c for c in seg_counts if c > 1]
        unknown = sum(1 for s in self.skipped if not s.refused and s.reason in NOT_A_TRACE)
        results = sum(1 for s in self.skipped if not s.refused and results_kind(s.path) == s.reason)
        return CorpusSummary(
            files=len(self.files),
            skipped=unknown,
            unreadable=len(self.problems) + len(self.refused),
            left_out=sum(1 for s in self.skipped if not s.refused) - unknown - results,
            results=results,
            runs=len(roles),
            subagents=sum(r == "subagent" for r in roles),
            compactions=sum(r == "compaction" for r in roles),
            leaves=len(roles) - len(split) + sum(split),
            sessions_split=len(split),
            segments=sum(split),
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per run (:func:`workbench.trace.frames.runs_df`)."""
        from workbench.trace.frames import runs_df

        return runs_df(self.runs)

    def _repr_html_(self) -> str:
        from workbench.trace.frames import runs_df

        n = len(self.runs)
        # a large corpus shows its first and last 30 runs, built for the purpose (not every run of it)
        shown = self.runs if n <= 60 else [*self.runs[:30], *self.runs[n - 30 :]]
        frame = runs_df(list(shown))
        cols = [
            "run_id", "source", "role", "model", "turns", "prompt_tokens", "cached_tokens",
            "completion_tokens", "peak_prompt_tokens", "segments", "compactions", "stop_reason", "label",
            "lossy", "diagnostics",
        ]  # fmt: skip
        head = (
            f"<p><b>Corpus</b>: {len(self.runs)} runs from {len(self.files)} files"
            f"{f', {len(self.problems)} unreadable' if self.problems else ''}"
            f"{f', {len(self.skipped)} skipped' if self.skipped else ''}</p>"
        )
        problems = "".join(f"<li>{html.escape(str(p))}</li>" for p in self.problems)
        skipped = "".join(f"<li>{html.escape(str(s))}</li>" for s in self.skipped[:60])
        more = f"<li>… and {len(self.skipped) - 60} more</li>" if len(self.skipped) > 60 else ""
        table = frame[cols].to_html(index=False, na_rep="—", max_rows=60) if len(frame) else ""
        if n > 60:
            table += f"<p>(the first and last 30 of {n:,} runs)</p>"
        return (
            head
            + table
            + (f"<ul>{problems}</ul>" if problems else "")
            + (f"<p>Skipped:</p><ul>{skipped}{more}</ul>" if skipped else "")
        )

    def skipped_frame(self) -> pd.DataFrame:
        """One row per entry not loaded: ``path``, ``reason``, ``refused`` (could not be read at all)."""
        import pandas as pd

        return pd.DataFrame([s.to_dict() for s in self.skipped], columns=["path", "reason", "refused"])
