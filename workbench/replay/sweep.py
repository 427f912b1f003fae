"""Sweeps: a corpus × a grid of policies → one DataFrame row per (run or segment, policy).

``sweep(runs, {"grant": range(100_000, 300_001, 10_000)})`` — ``runs`` is a Corpus, a list of Runs or one Run;
``grid`` is a dict of Policy parameter -> values (their cartesian product over ``base``) or a list of Policies.
Interactive sessions are split into their segments (``segments=True``). Progress is a tqdm bar over runs. Work runs
in this process (the default, and always for Runs built in memory), on local
processes (``workers=N``) or on a Dask cluster (``client=dask.distributed.Client(...)``) — the workers get file
paths and load them there, never pickled Runs — with the same rows in every case (docs/scale.md). Groups of policies that differ only in
grant, cache weight, landing share or turn cap take the vectorised fast path where it is exact for a run
(``workbench.replay.fast``); ``fast=False`` forces the governor path.

Columns: ``COLUMNS``, one spec in ``workbench.replay.columns`` (names, dtypes, meanings; the table in
docs/frames.md is generated from it).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from workbench.govern.policy import Policy
from workbench.replay import fast
from workbench.replay.columns import BOOLEANS, COLUMNS, INTEGERS, NULLABLE, RESULT_FIELDS
from workbench.replay.distinct import Fingerprints, distinct
from workbench.replay.engine import replay
from workbench.replay.facts import RunFacts, run_facts, usage_unknown
from workbench.replay.grid import Grid, expand
from workbench.replay.parallel import corpus_out_of_gc, run_dask, run_local
from workbench.replay.sheet import Sheet, probe_key
from workbench.trace.identity import COPY_MARK
from workbench.trace.lazy import LazyRuns, RunRef
from workbench.trace.schema import Run

SHEET_CHUNK = 4_096
"""Leaves answered together from a loaded corpus's sheet."""


def _leaves(runs: Any, segments: bool) -> list[Run]:
    if isinstance(runs, Run):
        runs = [runs]
    out: list[Run] = []
    for r in runs:
        out.extend(r.leaves() if segments else [r])
    return out


def _column(values: Any, name: str) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    if name in INTEGERS:
        return np.asarray(values, dtype=np.int64)
    if name in BOOLEANS:
        return np.asarray(values, dtype=bool)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def policy_groups(policies: Sequence[Policy]) -> list[list[int]]:
    """Indices of the policies that differ only in the fast path's fields, group by group."""
    groups: dict[tuple, list[int]] = {}
    for k, p in enumerate(policies):
        groups.setdefault(fast.group_key(p), []).append(k)
    return list(groups.values())


def sweep_runs(
    runs: Sequence[Run],
    policies: Sequence[Policy],
    use_fast: bool = True,
    groups: list[list[int]] | None = None,
    sheet: Sheet | None = None,
) -> dict[str, list[np.ndarray]]:
    """Every (run, policy) row for a chunk of runs, as column pieces — the unit of work every backend executes.

    Rows come run by run, in policy order within a run. A group's runs on the fast path are answered together
    (``fast.blocks``); the rest are replayed one (run, policy) at a time. ``sheet``, when given, is the runs'
    fast-path reading under some guard settings (a loaded corpus's, ``workbench.trace.index``): a group with
    those settings is answered from it, and only the runs it cannot answer are built (``runs`` may be lazy)."""
    runs = runs if isinstance(runs, LeafView | FileLeaves) else list(runs)
    policies = list(policies)
    labels = [p.label for p in policies]
    groups = groups if groups is not None else policy_groups(policies)
    P = len(policies)
    facts: dict[int, RunFacts] = {}  # read only for runs the governor path replays
    parts: list[tuple[np.ndarray, dict[str, Any], str]] = []  # (row positions, columns, path)
    for members in groups:
        group = [policies[k] for k in members]
        cols = np.asarray(members, dtype=np.int64)
        eligible = use_fast and fast.policy_eligible(group[0])
        if eligible and sheet is not None and sheet.key == probe_key(group[0]):
            ok = sheet.eligible(group[0])
            quick_idx = np.flatnonzero(ok)
            for i in np.flatnonzero(~ok).tolist():
                parts.append(
                    (i * P + cols, _governor_block(runs[i], i, members, policies, facts), "governor")
                )
            if len(quick_idx):
                block = fast.blocks(sheet.take(quick_idx), group, [labels[k] for k in members])
                pos = (quick_idx[:, None] * P + cols[None, :]).ravel()
                parts.append((pos, block, "fast"))
            continue
        reach = fast.Reach.of(group) if eligible else None
        quick: list[int] = []
        probes: list[fast.Probe] = []
        for i, run in enumerate(runs):
            if reach is not None and fast.run_eligible(run, group[0]):
                pr = fast.probe(run, group[0], reach)
                if pr is not None:
                    quick.append(i)
                    probes.append(pr)
                    continue
            parts.append((i * P + cols, _governor_block(run, i, members, policies, facts), "governor"))
        if quick:
            # a sheet of this group's quick runs only (``sheet``, the caller's, stays the one for every run)
            read = Sheet.of([runs[i] for i in quick], probes, probe_key(group[0]), flags=False)
            block = fast.blocks(read, group, [labels[k] for k in members])
            pos = (np.asarray(quick, dtype=np.int64)[:, None] * P + cols[None, :]).ravel()
            parts.append((pos, block, "fast"))
    total = len(runs) * P
    columns: dict[str, list[np.ndarray]] = {}
    positions = np.concatenate([pos for pos, _, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
    in_order = len(parts) == 1 and np.array_equal(positions, np.arange(total))
    for c in RESULT_FIELDS:
        if in_order:  # one part, already in row order (every run of one group on one path)
            columns[c] = [_column(parts[0][1][c], c)]
            continue
        columns[c] = [_scatter([_column(b[c], c) for _, b, _ in parts], positions, total, c)]
    paths = [_column([path] * len(pos), "path") for pos, _, path in parts]
    columns["path"] = [_scatter(paths, positions, total, "path")]
    columns["policy_index"] = [np.tile(np.arange(P, dtype=np.int64), len(runs))]
    return columns


def _governor_block(
    run: Run, i: int, members: list[int], policies: list[Policy], facts: dict[int, RunFacts]
) -> dict[str, list[Any]]:
    """The rows of one run under a group's policies, replayed by the governor (its facts read once per run)."""
    if i not in facts:
        facts[i] = run_facts(run)
    rows = [replay(run, policies[k], facts=facts[i]).row() for k in members]
    block = {c: [r[c] for r in rows] for c in RESULT_FIELDS}
    for c in NULLABLE:
        block[c] = [-1 if v is None else v for v in block[c]]
    return block


def _scatter(pieces: list[np.ndarray], positions: np.ndarray, total: int, name: str) -> np.ndarray:
    """The pieces' values placed at their row positions (every position is covered once)."""
    if not pieces:
        return _column([], name)
    values = np.concatenate(pieces)
    out = np.empty(total, dtype=values.dtype)
    out[positions] = values
    return out


class _Chunk:
    """Work for this process: some runs (a list, or a lazy corpus's leaves with their sheet) and every policy
    (never sent to another process)."""

    def __init__(
        self,
        runs: Sequence[Run],
        policies: list[Policy],
        use_fast: bool,
        groups: list[list[int]],
        sheet: Sheet | None = None,
    ) -> None:
        self.runs, self.policies, self.use_fast, self.groups = runs, policies, use_fast, groups
        self.sheet = sheet
        self.size = len(runs)

    def __call__(self) -> dict[str, list[np.ndarray]]:
        return sweep_runs(self.runs, self.policies, self.use_fast, self.groups, self.sheet)


class LeafView(Sequence[Run]):
    """Some leaves of a lazily loaded corpus (``workbench.trace.lazy``), each built from its run only when read:
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

    def runs(self) -> list[Run]:
        from workbench.trace.corpus import load_file

        out: list[Run] = []
        for path, ids in self.files:
            runs = load_file(path)
            if [r.run_id for r in runs] != ids:
                runs = [
                    r if r.run_id == i else r.model_copy(update={"run_id": i})
                    for r, i in zip(runs, ids, strict=True)
                ]
            out.extend(_leaves(runs, self.segments))
        return out

    def __call__(self) -> dict[str, list[np.ndarray]]:
        if not self.segments:
            return sweep_runs(self.runs(), self.policies, self.use_fast, self.groups)
        sheet, leaves = self.sheet()
        return sweep_runs(leaves, self.policies, self.use_fast, self.groups, sheet)

    def sheet(self) -> tuple[Sheet, FileLeaves]:
        """The files' sheet from their cached facts (``workbench.trace.index``), with the ids the corpus gave
        their runs, and their leaves, built only if the sheet cannot answer one."""
        from workbench.trace.indexed_load import file_facts

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
        key = probe_key(Policy.named("current"))
        return Sheet.concat(parts, key), FileLeaves(self, places)


class FileLeaves(Sequence[Run]):
    """A worker's leaves, each built (its file loaded once) only when read."""

    def __init__(self, chunk: FileChunk, places: list[tuple[int, int, int]]) -> None:
        self._chunk, self._places = chunk, places
        self._loaded: dict[int, list[Run]] = {}

    def __len__(self) -> int:
        return len(self._places)

    def __getitem__(self, i: Any) -> Any:
        from workbench.trace.corpus import load_file

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


def file_partition(corpus: Any) -> list[tuple[str, list[Run]]] | None:
    """The corpus's runs grouped by the file each was loaded from, in corpus order — or ``None`` when they
    cannot be rebuilt from files (runs built in memory, or a corpus whose run list was edited after loading)."""
    files = getattr(corpus, "files", None)
    runs = getattr(corpus, "runs", None)
    if not files or runs is None:
        return None
    as_loaded = getattr(corpus, "as_loaded", {})
    out: list[tuple[str, list[Any]]] = []
    if isinstance(runs, LazyRuns) and not as_loaded:  # a large corpus: its references, no Run built
        for i in range(len(runs)):
            ref = runs.ref(i)
            if ref is None:
                return None
            if out and out[-1][0] == ref.file:
                out[-1][1].append(ref)
            else:
                out.append((ref.file, [ref]))
        return out
    for run in runs:
        where = run.loaded_from
        if where is None or as_loaded.get(id(run)) is not run:
            return None
        if out and out[-1][0] == where:
            out[-1][1].append(run)
        else:
            out.append((where, [run]))
    sizes = getattr(corpus, "sizes", {})
    if len({w for w, _ in out}) != len(out) or any(sizes.get(w) != len(rs) for w, rs in out):
        return None
    return out


def _segment_count(run: Any) -> int:
    return run.segments if isinstance(run, RunRef) else len(run.segments)


def _work(chunk: _Chunk | FileChunk) -> dict[str, list[np.ndarray]]:
    with corpus_out_of_gc():
        return chunk()


def _file_chunks(
    partition: list[tuple[str, list[Run]]],
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
        files.append((path, [r.run_id for r in runs]))
        count += sum(_segment_count(r) if segments and _segment_count(r) > 1 else 1 for r in runs)
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
    dedup: bool = True,
    prints: Fingerprints | None = None,
) -> pd.DataFrame:
    """Replay every run (or segment) under every policy of ``grid``; one row each (columns: module docstring).

    In this process, leaves with the same content (copies: ``workbench.replay.distinct``) are replayed once and
    their rows copied, each with its own ``run_id`` (``dedup=False``: every leaf replayed; ``prints``: the
    leaves' fingerprints already computed).

    Where the work runs (the rows are the same in every case):

    * in this process — the default (measured faster here), and always for Runs built in memory (they are
      never pickled to another process);
    * on ``workers`` local processes, or on a Dask cluster (``client=``), for a corpus loaded from files
      (``workbench.load``): each worker gets file paths, loads them itself and sends back column arrays.
    """
    policies, keys = expand(grid, base)
    groups = policy_groups(policies)
    # A large corpus loaded through the index is swept from its sheet, building only the leaves it cannot answer.
    indexed = runs.fast_sheet() if segments and hasattr(runs, "fast_sheet") else None
    sheet: Sheet | None = None
    leaves: Sequence[Run]
    if indexed is not None:
        sheet, leaf_of = indexed
        unknown = np.array([w is not None for w in sheet.usage_unknown], dtype=bool)
        excluded = [(sheet.run_id[j], sheet.usage_unknown[j]) for j in np.flatnonzero(unknown).tolist()]
        keep = np.flatnonzero(~unknown)
        leaves = LeafView(runs.runs, leaf_of, keep)
        sheet = sheet.take(keep) if excluded else sheet
    else:
        leaves = _leaves(runs, segments)
        # A run no call of which recorded usage cannot be cost-replayed: its rows would read as 0 tokens at every
        # grant. It is left out and named (frame.attrs["excluded"]), never counted as spending nothing.
        excluded = [(r.run_id, why) for r in leaves if (why := usage_unknown(r)) is not None]
        if excluded:
            leaves = [r for r in leaves if usage_unknown(r) is None]
    if excluded:
        warnings.warn(
            f"{len(excluded)} run(s) left out of the sweep: cost cannot be replayed for a run whose calls "
            f"recorded no usage (first: {excluded[0][0]}: {excluded[0][1]})",
            stacklevel=2,
        )
    # Workers reload whole files, which would bring the left-out runs back: such a corpus sweeps in this process.
    wants_remote = client is not None or workers not in (None, 1)
    partition = file_partition(runs) if wants_remote and not excluded else None
    if client is not None and partition is None and not excluded:
        raise ValueError(
            "sweep(client=...) sends workers file paths, never Runs: pass a corpus loaded from files "
            "(workbench.load(...)) whose run list is as loaded"
        )
    # Measured (benchmarks/parallel_bench.py, docs/scale.md): on this 2-core machine local processes never beat
    # this process — the fast path answers a row in microseconds and a worker must first load its files — so
    # processes are used only when asked for.
    n_workers = (workers or 1) if partition is not None else 1
    remote = partition is not None and (client is not None or n_workers > 1)
    # Copies answer alike: replay each distinct leaf once here, and copy its rows back at the end.
    inputs = leaves
    # (not over a sheet: it answers every leaf from columns already, and fingerprinting would build every Run)
    # Fingerprinting costs about as much as the fast path itself, so it is done only where copies can be: the
    # loader names a repeated run ``<id>~<k>`` (workbench.trace.identity), or the caller has the prints already.
    wanted = dedup and not remote and sheet is None and len(leaves) > 1
    maybe_copies = wanted and (prints is not None or any(COPY_MARK in r.run_id for r in leaves))
    copies = distinct(leaves, prints) if maybe_copies else None
    if copies is not None and copies.merged:
        leaves = list(copies.uniques)
    else:
        copies = None
    results: Iterable[tuple[int, dict[str, list[np.ndarray]]]]
    if remote:
        assert partition is not None
        slots = max(n_workers, _cluster_size(client)) * 4
        size = chunk_size or max(1, -(-len(leaves) // slots))
        chunks: list[Any] = _file_chunks(partition, policies, fast, groups, segments, size)
        file_keys = getattr(runs, "file_keys", {})
        for chunk in chunks:  # the index's cache keys: a worker on this machine need not hash a file again
            chunk.keys = [file_keys.get(path) for path, _ in chunk.files]
        results = (
            run_dask(_work, chunks, client) if client is not None else run_local(_work, chunks, n_workers)
        )
    elif sheet is not None:
        # the sheet's rows are answered a few thousand leaves at a time: numpy's per-call cost is then negligible
        size = chunk_size or max(1, min(SHEET_CHUNK, len(leaves)))
        chunks = [
            _Chunk(
                leaves[i : i + size],
                policies,
                fast,
                groups,
                sheet.take(np.arange(i, min(i + size, len(leaves)))),
            )
            for i in range(0, len(leaves), size)
        ]
        results = run_local(_work, chunks, 1)
    else:
        size = chunk_size or max(1, min(64, len(leaves)))
        chunks = [_Chunk(leaves[i : i + size], policies, fast, groups) for i in range(0, len(leaves), size)]
        results = run_local(_work, chunks, 1)
    parts: dict[int, dict[str, list[np.ndarray]]] = {}
    bar = tqdm(total=len(leaves), desc="sweep", unit="run", disable=not progress)
    for i, got in results:
        parts[i] = got
        bar.update(chunks[i].size)
    bar.close()
    data: dict[str, Any] = {}
    take = copies.rows(len(policies)) if copies is not None else None
    for c in COLUMNS:
        pieces = [piece for i in sorted(parts) for piece in parts[i][c]]
        values = np.concatenate(pieces) if pieces else _column([], c)
        if take is not None:
            values = values[take]
        if c in NULLABLE:
            values = pd.arrays.IntegerArray(values.astype(np.int64), values < 0)
        data[c] = values
    if copies is not None:  # a copy's rows name the copy
        data["run_id"] = np.repeat(_column([r.run_id for r in inputs], "run_id"), len(policies))
    # the columns are fresh arrays owned by this frame: no copy, and no consolidation into 2-D blocks (which costs
    # as much as the fast path's own work on a large grid)
    frame = pd.DataFrame(data, columns=list(COLUMNS), copy=False)
    for key in keys:
        if key not in frame.columns:
            frame[key] = [getattr(policies[k], key) for k in frame["policy_index"]] if len(frame) else []
    frame.attrs["excluded"] = [{"run_id": rid, "reason": why} for rid, why in excluded]
    return frame


def _cluster_size(client: Any) -> int:
    if client is None:
        return 1
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # a client that cannot say: one slot per chunk group still works
        return 1


def grid_columns(grid: Mapping[str, Sequence[Any]]) -> list[str]:
    return list(grid)
