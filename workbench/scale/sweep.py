"""Sweeps at scale: a loaded corpus swept from its sheet (``Corpus.sheet``, from the corpus index), and sweeps on
local processes (``workers=N``) or a Dask cluster (``client=``) — the workers get file paths and load them there,
never pickled Runs — with the rows ``workbench.replay.sweep.sweep`` gives in this process (docs/scale.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from workbench.govern.policy import Policy
from workbench.replay.grid import Grid, expand
from workbench.replay.sheet import Sheet, probe_key
from workbench.replay.sweep import (
    Chunk,
    frame_of,
    leaves_of,
    policy_groups,
    replayable,
    sweep_runs,
    warn_excluded,
)
from workbench.replay.sweep import sweep as replay_sweep
from workbench.scale.executor import IN_PROCESS, Executor, chosen, local
from workbench.scale.indexed import file_facts
from workbench.scale.lazy import LazyRuns
from workbench.scale.loading import load_file
from workbench.trace.corpus import RunStore
from workbench.trace.schema import Run

SHEET_CHUNK = 4_096
"""Leaves answered together from a loaded corpus's sheet."""
SHEET_PARALLEL_FROM = 8 * SHEET_CHUNK
"""Leaves of a corpus's sheet from which ``workers`` local processes sweep it (fewer: this process; the sheet
sweeps 1,310 leaves x 50 grants in 0.3 s here, a pool costs about as much)."""
PARALLEL_FROM = 256
"""Leaves of Runs in memory from which ``workers`` local processes sweep them (fewer: this process alone)."""


def corpus_sheet(corpus: Any) -> tuple[Sheet, np.ndarray] | None:
    """The index's sheet and leaf places of a corpus loaded through the index whose runs are as loaded (none
    relabelled since), at any size: its runs are read-only, so the sheet describes them."""
    runs = getattr(corpus, "runs", None)
    return runs.sheet() if isinstance(runs, LazyRuns) else None


class LeafView(Sequence[Run]):
    """Some leaves of a lazily loaded corpus (``workbench.scale.lazy``), each built from its run only when read:
    ``leaf_of`` gives each leaf's run and its place among that run's leaves."""

    def __init__(self, runs: Sequence[Run], leaf_of: np.ndarray, idx: np.ndarray) -> None:
        self._runs, self._leaf_of, self._idx = runs, leaf_of, idx

    def __len__(self) -> int:
        return len(self._idx)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return LeafView(self._runs, self._leaf_of, self._idx[i])
        r, k = self._leaf_of[self._idx[i]]
        run = self._runs[int(r)]
        return run.segment_run(run.segments[int(k)]) if len(run.segments) > 1 else run


class FileChunk:
    """Picklable work for a worker: file paths (each with the run_ids the corpus gave its runs, so a copy renamed
    ``~k`` keeps its name), the policies and the leaf count — never Runs. The worker loads its files itself and
    sends back column arrays."""

    def __init__(
        self,
        files: list[tuple[str, list[str]]],
        policies: list[Policy],
        use_fast: bool,
        groups: list[list[int]],
        segments: bool,
        size: int,
    ) -> None:
        self.files, self.policies, self.use_fast, self.groups = files, policies, use_fast, groups
        self.segments, self.size = segments, size
        self.keys: list[str | None] = [None] * len(files)
        self.carried: tuple[Sheet, list[tuple[int, int, int]]] | None = None
        """The files' rows of the corpus's sheet and each leaf's (file, run in file, leaf of run), when sent."""

    def runs(self) -> list[Run]:
        out: list[Run] = []
        for path, ids in self.files:
            runs = load_file(path)
            if [r.run_id for r in runs] != ids:
                runs = [
                    r if r.run_id == i else r.model_copy(update={"run_id": i})
                    for r, i in zip(runs, ids, strict=True)
                ]
            out.extend(leaves_of(runs, self.segments))
        return out

    def __call__(self) -> dict[str, list[np.ndarray]]:
        if not self.segments:
            return sweep_runs(self.runs(), self.policies, self.use_fast, self.groups)
        sheet, leaves = self.sheet()
        return sweep_runs(leaves, self.policies, self.use_fast, self.groups, sheet)

    def sheet(self) -> tuple[Sheet, FileLeaves]:
        """The files' sheet from their cached facts (``workbench.scale.index``), with the ids the corpus gave
        their runs, and their leaves, built only if the sheet cannot answer one."""
        if self.carried is not None:
            return self._kept(*self.carried)
        parts: list[Sheet] = []
        places: list[tuple[int, int, int]] = []  # per leaf: file, run in file, leaf of run
        for f, (path, ids) in enumerate(self.files):
            facts = file_facts(path, key=self.keys[f])
            part = Sheet.from_columns((), facts.sheet)
            names = [ids[r] + sfx for r, sfx in zip(facts.leaf_run.tolist(), facts.leaf_suffix, strict=True)]
            if names != list(part.run_id):
                renamed = np.empty(len(names), dtype=object)
                renamed[:] = names
                part = replace(part, run_id=renamed)
            parts.append(part)
            seen: dict[int, int] = {}
            for r in facts.leaf_run.tolist():
                places.append((f, r, seen.get(r, 0)))
                seen[r] = seen.get(r, 0) + 1
        return self._kept(Sheet.concat(parts, probe_key(Policy.named("current"))), places)

    def _kept(self, sheet: Sheet, places: list[tuple[int, int, int]]) -> tuple[Sheet, FileLeaves]:
        """The leaves whose cost can be replayed (as the corpus's sweep leaves the others out), built lazily."""
        keep = [j for j, why in enumerate(sheet.usage_unknown) if why is None]
        if len(keep) < len(places):
            sheet, places = sheet.take(np.asarray(keep, dtype=np.int64)), [places[j] for j in keep]
        return sheet, FileLeaves(self, places)


class FileLeaves(Sequence[Run]):
    """A worker's leaves, each built (its file loaded once) only when read."""

    def __init__(self, chunk: FileChunk, places: list[tuple[int, int, int]]) -> None:
        self._chunk, self._places = chunk, places
        self._loaded: dict[int, list[Run]] = {}

    def __len__(self) -> int:
        return len(self._places)

    def __getitem__(self, i: Any) -> Any:
        f, r, k = self._places[i]
        if f not in self._loaded:
            path, ids = self._chunk.files[f]
            runs = load_file(path)
            self._loaded[f] = [
                run if run.run_id == rid else run.model_copy(update={"run_id": rid})
                for run, rid in zip(runs, ids, strict=True)
            ]
        run = self._loaded[f][r]
        return run.segment_run(run.segments[k]) if len(run.segments) > 1 else run


def file_partition(corpus: Any) -> list[tuple[str, list[tuple[str, int]]]] | None:
    """The corpus's runs (id, segment count) grouped by the file each was loaded from, in corpus order — or
    ``None`` when they cannot be rebuilt from files (runs built in memory, or edited after loading)."""
    files = getattr(corpus, "files", None)
    runs = getattr(corpus, "runs", None)
    if not files or not isinstance(runs, RunStore):
        return None
    out: list[tuple[str, list[tuple[str, int]]]] = []
    for i in range(len(runs)):
        where = runs.origin(i)
        if where is None:
            return None
        item = (runs.run_id(i), runs.segment_count(i))
        if out and out[-1][0] == where:
            out[-1][1].append(item)
        else:
            out.append((where, [item]))
    sizes = getattr(corpus, "sizes", {})
    if len({w for w, _ in out}) != len(out) or any(sizes.get(w) != len(rs) for w, rs in out):
        return None
    return out


def _work(chunk: Chunk | FileChunk) -> dict[str, list[np.ndarray]]:
    return chunk()


def _with_keys(chunks: list[FileChunk], corpus: Any) -> None:
    """The index's cache keys on each chunk: a worker on this machine need not hash a file again."""
    file_keys = getattr(getattr(corpus, "runs", None), "file_keys", {})
    for chunk in chunks:
        chunk.keys = [file_keys.get(path) for path, _ in chunk.files]


def _file_chunks(
    partition: list[tuple[str, list[tuple[str, int]]]],
    policies: list[Policy],
    use_fast: bool,
    groups: list[list[int]],
    segments: bool,
    size: int,
) -> list[FileChunk]:
    """Consecutive files grouped until a chunk holds about ``size`` leaves (a file is never split)."""
    chunks: list[FileChunk] = []
    files: list[tuple[str, list[str]]] = []
    count = 0
    for path, runs in partition:
        files.append((path, [rid for rid, _ in runs]))
        count += sum(n if segments and n > 1 else 1 for _, n in runs)
        if count >= size:
            chunks.append(FileChunk(files, policies, use_fast, groups, segments, count))
            files, count = [], 0
    if files:
        chunks.append(FileChunk(files, policies, use_fast, groups, segments, count))
    return chunks


def sweep(
    runs: Any,
    grid: Grid,
    *,
    base: Policy | str = "current",
    segments: bool = True,
    workers: int | None = None,
    client: Any = None,
    fast: bool = True,
    progress: bool = True,
    chunk_size: int | None = None,
) -> pd.DataFrame:
    """Replay every run (or segment) under every policy of ``grid``; one row each (the columns of
    ``workbench.replay.sweep``), the same rows wherever the work runs:

    * in this process — the default (measured faster here), and always for Runs built in memory (they are
      never pickled to another process); a large loaded corpus is answered from its sheet (``corpus_sheet``),
      building only the leaves the sheet cannot answer;
    * on ``workers`` local processes, or on a Dask cluster (``client=``; for a corpus with a sheet, only with
      ``fast=False``), for a corpus loaded from files (``workbench.load``): each worker gets file paths, loads
      them itself and sends back column arrays.
    """
    indexed = corpus_sheet(runs) if segments else None
    # the sheet's fast path stays here even with a client: shipping rows cost more than it saved (docs/scale.md)
    partition = file_partition(runs) if indexed is not None and client is not None and not fast else None
    if indexed is not None and partition is not None:  # each worker gets its files' sheet rows, never a Run
        return _files(runs, partition, indexed, grid, base, chosen(None, client), fast, progress, chunk_size)
    if indexed is not None:
        many = len(indexed[0].run_id) >= SHEET_PARALLEL_FROM
        executor = local(workers) if many and client is None else IN_PROCESS
        return _from_sheet(runs, indexed, grid, base, fast, progress, chunk_size, executor)
    wants_remote = client is not None or workers not in (None, 1)
    if not wants_remote:
        return _plain(runs, grid, base, segments, fast, progress, chunk_size)
    return _remote(runs, grid, base, segments, workers, client, fast, progress, chunk_size)


def _plain(
    runs: Any,
    grid: Grid,
    base: Policy | str,
    segments: bool,
    fast: bool,
    progress: bool,
    chunk_size: int | None,
    executor: Executor = IN_PROCESS,
) -> pd.DataFrame:
    """Runs (in memory, or a corpus's) swept by ``workbench.replay.sweep.sweep`` with its chunks on ``executor`` —
    this process, or forked local processes that find the chunks in their memory (nothing is pickled to them;
    only their column arrays come back)."""
    return replay_sweep(
        runs, grid, base=base, segments=segments, fast=fast, progress=progress, chunk_size=chunk_size,
        slots=executor.size, run_chunks=lambda chunks: executor.map(_work, chunks),
    )  # fmt: skip


def _from_sheet(
    corpus: Any,
    indexed: tuple[Sheet, np.ndarray],
    grid: Grid,
    base: Policy | str,
    fast: bool,
    progress: bool,
    chunk_size: int | None,
    executor: Executor = IN_PROCESS,
) -> pd.DataFrame:
    """A large loaded corpus swept from its sheet, a few thousand leaves at a time (numpy's per-call cost is then
    negligible), on ``executor`` (forked local processes find the chunks in their memory); only the leaves the
    sheet cannot answer are built."""
    policies, keys = expand(grid, base)
    groups = policy_groups(policies)
    sheet, leaf_of = indexed
    unknown = np.array([w is not None for w in sheet.usage_unknown], dtype=bool)
    excluded = [(sheet.run_id[j], sheet.usage_unknown[j]) for j in np.flatnonzero(unknown).tolist()]
    keep = np.flatnonzero(~unknown)
    leaves = LeafView(corpus.runs, leaf_of, keep)
    sheet = sheet.take(keep) if excluded else sheet
    warn_excluded(excluded)
    size = chunk_size or max(1, min(SHEET_CHUNK, -(-len(leaves) // (2 * executor.size))))
    chunks = [
        Chunk(
            leaves[i : i + size], policies, fast, groups, sheet.take(np.arange(i, min(i + size, len(leaves))))
        )
        for i in range(0, len(leaves), size)
    ]
    return frame_of(executor.map(_work, chunks), chunks, policies, keys, excluded, progress=progress)


def _files(
    corpus: Any,
    partition: list[tuple[str, list[tuple[str, int]]]],
    indexed: tuple[Sheet, np.ndarray],
    grid: Grid,
    base: Policy | str,
    executor: Executor,
    fast: bool,
    progress: bool,
    chunk_size: int | None,
) -> pd.DataFrame:
    """A corpus loaded through the index swept on a cluster by file: each chunk carries its files' rows of the
    corpus's sheet and their leaves' places (``FileChunk.carried``: per-run facts, a few arrays), a worker loads a
    file only for a leaf the sheet cannot answer, and the leaves the sheet leaves out are left out there too — the
    rows of ``_from_sheet``."""
    policies, keys = expand(grid, base)
    sheet, leaf_of = indexed
    excluded = [(sheet.run_id[j], w) for j, w in enumerate(sheet.usage_unknown.tolist()) if w is not None]
    warn_excluded(excluded)
    size = chunk_size or max(1, min(SHEET_CHUNK, -(-len(sheet.run_id) // (2 * executor.size))))
    chunks = _file_chunks(partition, policies, fast, policy_groups(policies), True, size)
    _with_keys(chunks, corpus)
    first = 0  # the chunk's first run in the corpus
    for chunk in chunks:
        counts = np.array([len(ids) for _, ids in chunk.files], dtype=np.int64)
        lo, hi = np.searchsorted(leaf_of[:, 0], [first, first + counts.sum()]).tolist()
        run = leaf_of[lo:hi, 0] - first
        file = np.repeat(np.arange(len(counts)), counts)
        in_file = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        places = list(zip(file[run].tolist(), in_file[run].tolist(), leaf_of[lo:hi, 1].tolist(), strict=True))
        chunk.carried = (sheet.take(np.arange(lo, hi)), places)
        first += int(counts.sum())
    return frame_of(executor.map(_work, chunks), chunks, policies, keys, excluded, progress=progress)


def _remote(
    runs: Any,
    grid: Grid,
    base: Policy | str,
    segments: bool,
    workers: int | None,
    client: Any,
    fast: bool,
    progress: bool,
    chunk_size: int | None,
) -> pd.DataFrame:
    """A corpus loaded from files swept on workers, each given file paths. Workers reload whole files, which would
    bring left-out runs back: a corpus with such runs, or one that cannot be rebuilt from its files, sweeps in
    this process (``client=`` refuses the latter)."""
    leaves, excluded = replayable(leaves_of(runs, segments))
    partition = file_partition(runs) if not excluded else None
    if client is not None and partition is None and not excluded:
        raise ValueError(
            "sweep(client=...) sends workers file paths, never Runs: pass a corpus loaded from files "
            "(workbench.load(...)) whose run list is as loaded"
        )
    if partition is None or (client is None and (workers or 1) <= 1):
        # Runs in memory: on forked local processes from PARALLEL_FROM leaves (never pickled, never on Dask)
        many = client is None and len(leaves) >= PARALLEL_FROM
        executor = local(workers) if many else IN_PROCESS
        return _plain(runs, grid, base, segments, fast, progress, chunk_size, executor)
    warn_excluded(excluded)
    policies, keys = expand(grid, base)
    groups = policy_groups(policies)
    executor = chosen(workers, client)
    slots = executor.size * 4
    size = chunk_size or max(1, -(-len(leaves) // slots))
    chunks = _file_chunks(partition, policies, fast, groups, segments, size)
    _with_keys(chunks, runs)
    return frame_of(executor.map(_work, chunks), chunks, policies, keys, excluded, progress=progress)
