"""Finding and loading recorded runs: files or folders, in any supported format."""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, overload, runtime_checkable

from workbench.label_files import results_kind
from workbench.trace.errors import UNRECOGNISED, TraceError
from workbench.trace.schema import Run, is_sealed, seal
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


class LabelLike(Protocol):
    """An outcome label as ``workbench.labels.Label`` gives one: the word, where it was read, its score."""

    @property
    def label(self) -> str | None: ...
    @property
    def source(self) -> str | None: ...
    @property
    def score(self) -> float | None: ...


@runtime_checkable
class RunStore(Protocol):
    """Where a corpus's runs are kept: in memory (:class:`MemoryRuns`) or built from the corpus cache on access
    (``workbench.scale.lazy.LazyRuns``). A read-only sequence of Runs at every size: items are not assigned, and
    every run it gives out refuses assignment (``workbench.trace.schema.seal``); an edit is a new store."""

    file_keys: Mapping[str, str]
    """Each cached file's cache key, where the store was read through the corpus cache (else empty)."""

    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, i: int) -> Run: ...
    @overload
    def __getitem__(self, i: slice) -> list[Run]: ...
    def __iter__(self) -> Iterator[Run]: ...
    def run_id(self, i: int) -> str: ...
    def role(self, i: int) -> str: ...
    def segment_count(self, i: int) -> int: ...
    def origin(self, i: int) -> str | None:
        """The file run ``i`` was loaded from, as the loader gave it; ``None`` for a run built in memory or
        edited after loading (a sweep's workers, which reload files, cannot rebuild it)."""
        ...

    def read_only(self, rows: range | None = None) -> Iterator[tuple[Run, Sequence[bytes] | None]]:
        """Every run (of ``rows``, else all) with its leaves' content fingerprints where the store knows them."""
        ...

    def relabelled(self, labels: Mapping[int, LabelLike]) -> RunStore:
        """A store whose run ``i`` carries ``labels[i]`` as its outcome's label, source and score."""
        ...


READ_ONLY = (
    "a corpus's runs are read-only: corpus.with_runs(...) or corpus.with_labels(...) give a new corpus"
)


class ReadOnlyRuns(Sequence[Run]):
    """What every :class:`RunStore` shares: item assignment and deletion refused, equal to any sequence of the same
    runs, unhashable (as a list is)."""

    __slots__ = ()

    def __setitem__(self, i: object, value: object) -> None:
        raise TypeError(READ_ONLY)

    def __delitem__(self, i: object) -> None:
        raise TypeError(READ_ONLY)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class MemoryRuns(ReadOnlyRuns):
    """Runs held in memory, read-only (:class:`RunStore`). A run is rebuildable from the file it names
    (``Run.loaded_from``) when the loader made it (``from_files``) or another corpus gave it out unchanged (it is
    sealed); a run made or edited in memory is not."""

    def __init__(self, runs: Iterable[Run] = (), *, from_files: bool = False) -> None:
        given = tuple(runs)
        self._origins = tuple(r.loaded_from if from_files or is_sealed(r) else None for r in given)
        self._runs = tuple(seal(r) for r in given)
        self.file_keys: Mapping[str, str] = {}

    def __len__(self) -> int:
        return len(self._runs)

    @overload
    def __getitem__(self, i: int) -> Run: ...
    @overload
    def __getitem__(self, i: slice) -> list[Run]: ...
    def __getitem__(self, i: int | slice) -> Run | list[Run]:
        return list(self._runs[i]) if isinstance(i, slice) else self._runs[i]

    def __iter__(self) -> Iterator[Run]:
        return iter(self._runs)

    def __repr__(self) -> str:
        return f"<{len(self._runs):,} runs in memory>"

    def run_id(self, i: int) -> str:
        return self._runs[i].run_id

    def role(self, i: int) -> str:
        return self._runs[i].role

    def segment_count(self, i: int) -> int:
        return len(self._runs[i].segments)

    def origin(self, i: int) -> str | None:
        return self._origins[i]

    def read_only(self, rows: range | None = None) -> Iterator[tuple[Run, Sequence[bytes] | None]]:
        yield from ((self._runs[i], None) for i in (range(len(self._runs)) if rows is None else rows))

    def relabelled(self, labels: Mapping[int, LabelLike]) -> MemoryRuns:
        return MemoryRuns(labelled(r, labels[i]) if i in labels else r for i, r in enumerate(self._runs))


def labelled(run: Run, label: LabelLike) -> Run:
    """A copy of ``run`` whose outcome carries ``label`` (its word, source and score)."""
    outcome = run.outcome.model_copy(
        update={"label": label.label, "label_source": label.source, "score": label.score}
    )
    return run.model_copy(update={"outcome": outcome})


def _store(runs: RunStore | Iterable[Run]) -> RunStore:
    return runs if isinstance(runs, RunStore) else MemoryRuns(runs)


@dataclass(frozen=True)
class Corpus:
    """Runs loaded from some paths, and the files that could not be read at all. Read-only, whatever its size:
    ``runs`` refuses item assignment and every run it gives refuses assignment in place; ``with_runs`` and
    ``with_labels`` give a new corpus."""

    runs: RunStore = field(default_factory=MemoryRuns)
    """The runs (given as any iterable of Runs, kept as a :class:`RunStore`)."""
    problems: tuple[TraceError, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    """Entries that were not loaded, each with its reason: files found by walking a folder that no importer
    recognises, FIFOs, devices, sockets, unreadable files, dangling symlinks, symlink loops, folders too deep.
    Each is path-like (``os.fspath`` gives its path) and prints as ``path: reason``."""
    files: tuple[Path, ...] = ()
    renamed: Mapping[str, tuple[str, Path]] = field(default_factory=dict)
    """Runs whose run_id was already loaded from another file: new run_id -> (the file's run_id, the file)
    (``workbench.trace.identity``)."""
    sizes: Mapping[str, int] = field(default_factory=dict)
    """How many runs each file gave (``Run.loaded_from`` names the file): a sweep on workers reloads a file
    only when the corpus still holds every run it gave."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", _store(self.runs))
        for name in ("problems", "skipped", "files"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def __iter__(self) -> Iterator[Run]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def with_runs(self, runs: Iterable[Run]) -> Corpus:
        """This corpus with other runs (e.g. filtered, or edited copies), held in memory; its files, problems
        and skipped entries as they were."""
        return replace(self, runs=MemoryRuns(runs))

    def with_labels(self, labels: Mapping[str, LabelLike]) -> Corpus:
        """This corpus with each run named in ``labels`` (by ``run_id``) labelled so (its outcome's label, label
        source and score replaced); the others as they were. A large corpus stays built on access."""
        places = {
            i: labels[self.runs.run_id(i)] for i in range(len(self.runs)) if self.runs.run_id(i) in labels
        }
        return replace(self, runs=self.runs.relabelled(places))

    def by_id(self, run_id: str) -> Run:
        runs = self.runs
        for i in range(len(runs)):
            if runs.run_id(i) == run_id:
                return runs[i]
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
        """The counts every command prints in its corpus line (read from the store: no run is built)."""
        runs = self.runs
        roles = [runs.role(i) for i in range(len(runs))]
        seg_counts = [runs.segment_count(i) for i in range(len(runs))]
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
