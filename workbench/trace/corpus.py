"""Finding and loading recorded runs: files or folders, in any supported format."""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.trace.errors import UNRECOGNISED, TraceError, UnknownFormatError
from workbench.trace.schema import Run
from workbench.trace.walk import SkippedFile, scan

if TYPE_CHECKING:
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

    def words(self, works_on: str) -> str:
        """``corpus: 230 files (2 skipped, 1 unreadable), 25 runs (...), 31 leaves (...); works on …``."""
        files = f"{self.files:,} file{'s' if self.files != 1 else ''} read"
        extra = [f"{self.skipped:,} skipped, in no supported format"] if self.skipped else []
        extra += [f"{self.unreadable:,} unreadable"] if self.unreadable else []
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

    @property
    def refused(self) -> list[SkippedFile]:
        """The skipped entries that could not be read at all (FIFOs, devices, dangling links, no permission):
        commands report these as errors, beside ``problems``."""
        return [s for s in self.skipped if s.refused]

    def summary(self) -> CorpusSummary:
        """The counts every command prints in its corpus line."""
        split = [r for r in self.runs if len(r.segments) > 1]
        unknown = sum(1 for s in self.skipped if not s.refused and s.reason in NOT_A_TRACE)
        return CorpusSummary(
            files=len(self.files),
            skipped=unknown,
            unreadable=len(self.problems) + len(self.refused),
            left_out=sum(1 for s in self.skipped if not s.refused) - unknown,
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
            f"{f', {len(self.problems)} unreadable' if self.problems else ''}"
            f"{f', {len(self.skipped)} skipped' if self.skipped else ''}</p>"
        )
        problems = "".join(f"<li>{html.escape(str(p))}</li>" for p in self.problems)
        skipped = "".join(f"<li>{html.escape(str(s))}</li>" for s in self.skipped[:60])
        more = f"<li>… and {len(self.skipped) - 60} more</li>" if len(self.skipped) > 60 else ""
        table = frame[cols].to_html(index=False, na_rep="—", max_rows=60) if len(frame) else ""
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


def load_file(path: str | os.PathLike[str]) -> list[Run]:
    """The runs in one file, whatever its format. Raises TraceError if it is not a readable trace."""
    # Imported here: the importers build on this package (schema, errors), so importing them at the top of the
    # module that loads the package would be a cycle.
    from workbench.importers import detect

    p = Path(path)
    module = detect(p)
    return module.load(p)


def load(*paths: str | os.PathLike[str], skip_unknown: bool = True) -> Corpus:
    """Load every run under ``paths``. Every file is considered, whatever its name; its format is detected by
    content. Entries that are not loaded are listed in ``Corpus.skipped`` with their reason; a file given
    explicitly that no importer recognises (or any file, with ``skip_unknown=False``) is a problem instead.
    One bad entry never stops the load."""
    # Imported here: the importers build on this package (schema, errors), so importing them at the top of the
    # module that loads the package would be a cycle.
    from workbench.importers import detect

    corpus = Corpus()
    explicit = {Path(p).expanduser() for p in paths if not Path(p).expanduser().is_dir()}
    for found in scan_paths(paths):
        if isinstance(found, SkippedFile):
            corpus.skipped.append(found)
            continue
        f = found
        try:
            module = detect(f)
        except UnknownFormatError as exc:
            if skip_unknown and f not in explicit:
                corpus.skipped.append(SkippedFile(f, exc.message))
                continue
            corpus.problems.append(exc)
            continue
        except TraceError as exc:  # not a readable regular file after all (it changed, or no permission)
            corpus.skipped.append(SkippedFile(f, exc.message, refused=True))
            continue
        except OSError as exc:
            corpus.skipped.append(SkippedFile(f, f"unreadable: {exc.strerror or exc}", refused=True))
            continue
        try:
            runs = module.load(f)
        except TraceError as exc:
            corpus.problems.append(exc)
            continue
        except OSError as exc:
            corpus.problems.append(TraceError(str(f), f"cannot read: {exc.strerror or exc}"))
            continue
        except Exception as exc:  # an importer bug must not lose the rest of the corpus; it is reported
            corpus.problems.append(
                TraceError(str(f), f"the {module.NAME} importer failed: {type(exc).__name__}: {exc}")
            )
            continue
        corpus.files.append(f)
        corpus.runs.extend(runs)
    return corpus
