"""Finding and loading recorded runs: files or folders, in any supported format."""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.trace.errors import TraceError, UnknownFormatError
from workbench.trace.schema import Run

if TYPE_CHECKING:
    import pandas as pd

TRACE_SUFFIXES = (".jsonl", ".json")


def discover(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """Every trace-shaped file under ``paths`` (files as given; folders walked in sorted order)."""
    for raw in paths:
        p = Path(raw).expanduser()
        if _is_folder_run(p):
            yield p
        elif p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs.sort()
                # A folder that is one run (an OpenHands V1 conversation) is yielded whole, not walked.
                runs = [d for d in dirs if _is_folder_run(Path(root) / d)]
                yield from (Path(root) / d for d in runs)
                dirs[:] = [d for d in dirs if d not in runs]
                for f in sorted(files):
                    if f.endswith(TRACE_SUFFIXES):
                        yield Path(root) / f
        elif p.exists():
            yield p
        else:
            raise TraceError(str(p), "no such file or folder")


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

    def words(self, works_on: str) -> str:
        """``corpus: 230 files (2 skipped, 1 unreadable), 25 runs (...), 31 leaves (...); works on …``."""
        files = f"{self.files:,} file{'s' if self.files != 1 else ''} read"
        extra = [f"{self.skipped:,} skipped, in no supported format"] if self.skipped else []
        extra += [f"{self.unreadable:,} unreadable"] if self.unreadable else []
        roles = [f"{self.subagents:,} subagent"] if self.subagents else []
        roles += [f"{self.compactions:,} compaction"] if self.compactions else []
        runs = f"{self.runs:,} runs" + (f" ({', '.join(roles)})" if roles else "")
        leaves = f"{self.leaves:,} leaves"
        if self.sessions_split:
            leaves += f" ({self.sessions_split:,} sessions split into {self.segments:,} segments)"
        head = files + (f" ({'; '.join(extra)})" if extra else "")
        return f"corpus: {head}, {runs}, {leaves}; works on {works_on}"


def _is_folder_run(path: Path) -> bool:
    """A folder that holds one run: an OpenHands V1 conversation (``base_state.json`` + ``events/``)."""
    return (path / "base_state.json").is_file() and (path / "events").is_dir()


@dataclass
class Corpus:
    """Runs loaded from some paths, and the files that could not be read at all."""

    runs: list[Run] = field(default_factory=list)
    problems: list[TraceError] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)
    """Files found by walking a folder that no importer recognises (not traces, or an unsupported format)."""
    files: list[Path] = field(default_factory=list)

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def by_id(self, run_id: str) -> Run:
        for r in self.runs:
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

    def summary(self) -> CorpusSummary:
        """The counts every command prints in its corpus line."""
        split = [r for r in self.runs if len(r.segments) > 1]
        return CorpusSummary(
            files=len(self.files),
            skipped=len(self.skipped),
            unreadable=len(self.problems),
            runs=len(self.runs),
            subagents=sum(r.role == "subagent" for r in self.runs),
            compactions=sum(r.role == "compaction" for r in self.runs),
            leaves=len(self.runs) - len(split) + sum(len(r.segments) for r in split),
            sessions_split=len(split),
            segments=sum(len(r.segments) for r in split),
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per run (:func:`workbench.trace.frames.runs_df`)."""
        from workbench.trace.frames import runs_df

        return runs_df(self.runs)

    def _repr_html_(self) -> str:
        frame = self.to_frame()
        cols = [
            "run_id", "source", "role", "model", "turns", "prompt_tokens", "cached_tokens",
            "completion_tokens", "peak_prompt_tokens", "segments", "compactions", "stop_reason", "label",
            "lossy", "diagnostics",
        ]  # fmt: skip
        head = (
            f"<p><b>Corpus</b>: {len(self.runs)} runs from {len(self.files)} files"
            f"{f', {len(self.problems)} unreadable' if self.problems else ''}</p>"
        )
        problems = "".join(f"<li>{html.escape(str(p))}</li>" for p in self.problems)
        table = frame[cols].to_html(index=False, na_rep="—", max_rows=60) if len(frame) else ""
        return head + table + (f"<ul>{problems}</ul>" if problems else "")


def load_file(path: str | os.PathLike[str]) -> list[Run]:
    """The runs in one file, whatever its format. Raises TraceError if it is not a readable trace."""
    # Imported here: the importers build on this package (schema, errors), so importing them at the top of the
    # module that loads the package would be a cycle.
    from workbench.importers import detect

    p = Path(path)
    module = detect(p)
    return module.load(p)


def load(*paths: str | os.PathLike[str], skip_unknown: bool = True) -> Corpus:
    """Load every run under ``paths``. Files no importer recognises are skipped when they were found by
    walking a folder (``skip_unknown``) and reported in ``Corpus.problems`` otherwise."""
    corpus = Corpus()
    explicit = {Path(p).expanduser() for p in paths if not Path(p).expanduser().is_dir()}
    for f in discover(paths):
        try:
            runs = load_file(f)
        except UnknownFormatError as exc:
            if skip_unknown and f not in explicit:
                corpus.skipped.append(f)
                continue
            corpus.problems.append(exc)
            continue
        except TraceError as exc:
            corpus.problems.append(exc)
            continue
        corpus.files.append(f)
        corpus.runs.extend(runs)
    return corpus
