"""``workbench.load`` through the corpus cache and its index (``workbench.scale.index``): an unchanged file is
neither hashed nor parsed, its runs are references until read (``workbench.scale.lazy``), and the corpus carries
the sweep's fast-path sheet of every leaf."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from workbench.scale.cache import FileCache, cache_dir, cache_enabled, cacheable
from workbench.scale.index import (
    FileFacts,
    Indexed,
    PathIndex,
    gather,
    index_path,
    read_index,
    stat_sig,
    write_index,
)
from workbench.scale.lazy import LazyRuns, RunRef
from workbench.trace.errors import UnknownFormatError
from workbench.trace.failures import record_failure
from workbench.trace.identity import Identities
from workbench.trace.schema import Run
from workbench.trace.walk import SkippedFile

PARALLEL_FROM = 64
"""Files the cache does not know from which a load parses them on local processes (fewer: starting the processes,
about a second, costs more than it saves)."""


@dataclass
class _Walk:
    """One load's pass over the files found, in walk order: what each file gave (from the old index, a worker, or
    the cache's miss path, ``FileCache.facts``), gathered for the path index and the lazy store."""

    corpus: Any
    old: PathIndex | None
    fc: FileCache
    explicit: set[Path]
    skip_unknown: bool
    retain: int
    unchanged: dict[str, Indexed] = field(default_factory=dict)  # files the index answers, as they were
    still_skipped: dict[str, str] = field(default_factory=dict)  # no importer reads them; unchanged since
    skipped_now: dict[str, tuple[tuple[int, int, int, int], str]] = field(default_factory=dict)
    indexed: dict[str, Indexed] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # every loaded file, in walk order
    facts: dict[str, FileFacts | None] = field(default_factory=dict)  # None: the old index's gathered facts
    in_hand: dict[str, list[Run]] = field(default_factory=dict)
    volatile: set[str] = field(default_factory=set)  # read by an importer whose answer is never cached
    keys: dict[str, str] = field(default_factory=dict)
    held: int = 0  # runs loaded so far: past ``retain``, parsed runs are not held

    def triage(self, found_entries: list[Path | SkippedFile]) -> list[str]:
        """The files neither the old index nor its skip list answers: the ones to read."""
        misses: list[str] = []
        for f in found_entries:
            if isinstance(f, SkippedFile):
                continue
            s = str(f)
            known = self.old.unchanged(s) if self.old is not None else None
            why = None
            if self.old is not None and known is None and f not in self.explicit:
                why = self.old.still_skipped(s)
            if known is not None:
                self.unchanged[s] = known
            elif why is not None:
                self.still_skipped[s] = why
            else:
                misses.append(s)
        return misses

    def add(self, found: Path | SkippedFile, ahead: tuple[Any, ...] | None) -> None:
        """One entry of the walk; ``ahead``: what a worker made of it (``_parse_one``), if one did."""
        if isinstance(found, SkippedFile):
            self.corpus.skipped.append(found)
            return
        s = str(found)
        if s in self.still_skipped:
            self.corpus.skipped.append(SkippedFile(found, self.still_skipped[s]))
            self.skipped_now[s] = self.old.skipped[s]  # type: ignore[union-attr]
            return
        known = self.unchanged.get(s)
        if known is not None:
            self.indexed[s] = known
            self.keys[s] = known.key
            self._loaded(found, None, None)
            return
        if ahead is not None and ahead[0] == "skipped":
            if self.skip_unknown and found not in self.explicit:  # as record_failure files it, unopened
                self.corpus.skipped.append(SkippedFile(found, ahead[2]))
                self.skipped_now[s] = (ahead[1], ahead[2])
                return
            ahead = None  # a file named on the command line: its error is raised below, as always
        if ahead is None:
            ahead = self._read(found)
            if ahead is None:
                return
        sig, dep_sigs, got = ahead
        if got.key is None:
            self.volatile.add(s)
        else:
            self.keys[s] = got.key
            if sig is not None:
                self.indexed[s] = Indexed(sig, got.key, dep_sigs)
        self._loaded(found, got.facts, got.runs)

    def _read(self, f: Path) -> tuple[Any, ...] | None:
        """A file no index entry answers, through the cache's miss path; ``None`` when it could not be read
        (reported or skipped, never the end of the load: trace/failures.py)."""
        try:
            # a large corpus's runs are pickled when first built (``read``): a sweep may never build them
            return _read_one(f, self.fc, keep_runs=self.held < self.retain)
        except Exception as exc:
            before = len(self.corpus.skipped)
            record_failure(self.corpus, f, exc, self.skip_unknown, self.explicit)
            if isinstance(exc, UnknownFormatError) and len(self.corpus.skipped) > before:
                sig = stat_sig(f)  # in no supported format: not opened again while it is unchanged
                if sig is not None:
                    self.skipped_now[str(f)] = (sig, self.corpus.skipped[-1].reason)
            return None

    def _loaded(self, f: Path, facts: FileFacts | None, runs: list[Run] | None) -> None:
        s = str(f)
        self.order.append(s)
        self.facts[s] = facts
        self.held += len(facts.runs) if facts is not None else 0
        if runs is not None and self.held <= self.retain:  # a small corpus keeps what it parsed
            self.in_hand[s] = runs
        elif self.held > self.retain:
            self.in_hand.clear()
        self.corpus.files.append(f)

    def gathered(self) -> dict[str, Any]:
        """Every loaded file's facts in walk order: the old index's as they were when nothing changed, else
        gathered from each file's facts (the cache's, for a file the old index answered)."""
        old = self.old
        unchanged = all(self.facts[s] is None for s in self.order)
        if old is not None and old.facts is not None and old.order == self.order and unchanged:
            return old.facts
        per_file = [self.facts[s] or self.fc.facts(s, key=self.keys[s]).facts for s in self.order]
        return gather(self.order, per_file)

    def write_index(self, target: Path, gathered: dict[str, Any]) -> None:
        """The path index rewritten when anything changed (the volatile files' facts are not kept: with any,
        the index gathers no facts)."""
        old = self.old
        if (
            old is None
            or old.order != self.order
            or old.files != self.indexed
            or any(v is not None for v in self.facts.values())
            or old.skipped != self.skipped_now
        ):
            cached = [s for s in self.order if s not in self.volatile]
            kept = None if self.volatile else gathered
            write_index(target, PathIndex(self.indexed, cached, kept, skipped=self.skipped_now))


def load_indexed(
    corpus: Any,  # a workbench.scale.loading.Loading (not imported: that module imports this one)
    identities: Identities,
    paths: tuple[str | os.PathLike[str], ...],
    found_entries: Iterable[Path | SkippedFile],
    read_file: Callable[[str], list[Run]],
    explicit: set[Path],
    skip_unknown: bool,
    root: Path,
    retain: int,
    workers: int | None = None,
    client: Any = None,
) -> None:
    """Fill ``corpus`` with what ``found_entries`` (the walk of ``paths``) holds; ``read_file`` reads a file no
    cache entry answers (``workbench.trace.corpus.read_file``). ``workers``, ``client``: see ``workbench.load``."""
    fc = FileCache(root)
    target = index_path(root, tuple(os.fspath(p) for p in paths), f"skip_unknown={skip_unknown}")
    walk = _Walk(corpus, read_index(target), fc, explicit, skip_unknown, retain)
    found_entries = list(found_entries)
    misses = walk.triage(found_entries)
    # on workers only with more files to parse than runs to hold: a held corpus's runs would be built again here
    # from the cache, which cost more than the workers saved (docs/scale.md)
    ahead = _parse_ahead(misses, root, workers, client) if len(misses) > retain else {}
    for found in found_entries:
        walk.add(found, ahead.pop(str(found), None))
    gathered = walk.gathered()
    walk.write_index(target, gathered)

    def read(file: str) -> list[Run]:
        if file in walk.volatile or file not in walk.keys:
            return read_file(file)
        return fc.load_file(file, key=walk.keys[file])

    lazy = _lazy_runs(corpus, identities, walk, gathered, read, retain)
    corpus.runs = lazy
    for file, runs in walk.in_hand.items():
        lazy.keep(file, runs)
    if len(lazy) <= retain:  # a small corpus holds every Run
        lazy.built()


def _lazy_runs(
    corpus: Any,
    identities: Identities,
    walk: _Walk,
    gathered: dict[str, Any],
    read: Callable[[str], list[Run]],
    retain: int,
) -> LazyRuns:
    """The corpus's run store: a reference per run (its id as the corpus names it), and the sheet's leaves with
    their runs' places in the corpus and their ids as the corpus names them."""
    refs: list[RunRef] = []
    counts = gathered["run_counts"]
    run_rows = gathered["runs"]
    at = 0
    for file, n in zip(walk.order, counts.tolist(), strict=True):
        rows = run_rows[at : at + n]
        named = identities.admit_ids([(rid, parent) for rid, parent, _, _ in rows], Path(file))
        refs.extend(
            RunRef(file, k, rid, parent, role, segs, at + k)
            for k, ((rid, parent), (_, _, role, segs)) in enumerate(zip(named, rows, strict=True))
        )
        corpus.sizes[file] = n
        at += n
    leaf_run, leaf_of = _leaf_places(counts, gathered["leaf_counts"], gathered["leaf_run"])
    from workbench.govern.policy import Policy
    from workbench.replay.sheet import Sheet, probe_key

    sheet = Sheet.from_columns(probe_key(Policy.named("current")), gathered["sheet"])
    if corpus.renamed:
        ids = np.empty(len(leaf_run), dtype=object)
        ids[:] = [
            refs[r].run_id + sfx for r, sfx in zip(leaf_run.tolist(), gathered["leaf_suffix"], strict=True)
        ]
        sheet = _with_ids(sheet, ids)
    return LazyRuns(
        refs,
        read,
        retain,
        leaf_prints=gathered["leaf_prints"],
        # where each row's leaves start among all leaves (kept run after run)
        leaf_start=np.searchsorted(leaf_run, np.arange(at + 1), side="left"),
        sheet=sheet,
        leaf_of=leaf_of,
        file_keys={s: walk.keys[s] for s in walk.order if s in walk.keys and s not in walk.volatile},
    )


def _leaf_places(
    counts: np.ndarray, leaf_counts: np.ndarray, file_leaf_run: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per leaf: its run's place in the corpus, and ``(run, k)`` — its run and its place among that run's
    leaves."""
    leaf_file = np.repeat(np.arange(len(counts), dtype=np.int64), leaf_counts)
    leaf_run = file_leaf_run + _starts(counts)[leaf_file]
    if not len(leaf_run):
        return leaf_run, np.zeros((0, 2), np.int64)
    first = np.r_[True, leaf_run[1:] != leaf_run[:-1]]
    starts = np.flatnonzero(first)
    leaf_k = np.arange(len(leaf_run)) - np.repeat(starts, np.diff(np.r_[starts, len(leaf_run)]))
    return leaf_run, np.stack([leaf_run, leaf_k], axis=1)


def _read_one(f: Path, fc: FileCache, keep_runs: bool, module: Any = None) -> tuple[Any, ...]:
    """One file through the cache's miss path: its signature, its dependencies' signatures and what
    ``FileCache.facts`` found. Raises what reading it raises."""
    from workbench.importers import detect

    module = module if module is not None else detect(f)
    sig = stat_sig(f)
    got = fc.facts(f, module, keep_runs=keep_runs)
    deps = getattr(module, "dependencies", None) if got.key is not None else None
    dep_sigs = tuple((str(d), stat_sig(Path(d))) for d in deps(f)) if callable(deps) else ()
    return sig, dep_sigs, got


def _parse_ahead(
    misses: list[str], root: Path, workers: int | None, client: Any
) -> dict[str, tuple[Any, ...]]:
    """The files the cache does not know, parsed a batch a task on a Dask ``client``'s workers, or on ``workers``
    local processes from ``PARALLEL_FROM`` files (``workbench.scale.executor``): per file, what ``_read_one``
    gives, its facts written there (the workers must see ``root``), its runs neither pickled (a large corpus does
    that when it builds them) nor sent back. A file a worker does not answer (not cacheable, or in error) is read
    by the load's own loop, which reports what it raises as for every file. A worker that dies ends the load."""
    from workbench.scale.executor import chosen

    executor = chosen(workers if len(misses) >= PARALLEL_FROM else 1, client if len(misses) > 1 else None)
    if executor.size <= 1:
        return {}
    per = max(1, min(64, len(misses) // (8 * executor.size)))  # enough tasks to balance, few to be cheap
    batches = [misses[i : i + per] for i in range(0, len(misses), per)]
    out: dict[str, tuple[Any, ...]] = {}
    for i, answers in executor.map(partial(_parse_batch, root=str(root)), batches):
        out.update((s, got) for s, got in zip(batches[i], answers, strict=True) if got is not None)
    return out


def _parse_batch(files: list[str], root: str) -> list[tuple[Any, ...] | None]:
    return [_parse_one(s, root) for s in files]


def _parse_one(s: str, root: str) -> tuple[Any, ...] | None:
    """One file on a worker: ``_read_one``'s answer without the runs, or ``("skipped", signature, why)`` for a
    file in no supported format (``None``: leave it to the load)."""
    from workbench.importers import detect

    f = Path(s)
    try:
        module = detect(f)
        if not cacheable(module):
            return None
        sig, dep_sigs, got = _read_one(f, FileCache(Path(root)), False, module)
        return sig, dep_sigs, got._replace(runs=None)
    except UnknownFormatError as exc:  # in no supported format: why, for a file found by walking a folder
        from workbench.label_files import results_kind

        sig = stat_sig(f)
        return None if sig is None else ("skipped", sig, results_kind(f) or exc.message)
    except Exception:  # reported by the load, which reads this file again in its own process
        return None


def _starts(counts: np.ndarray) -> np.ndarray:
    """Where each file's rows start, from the files' row counts."""
    out = np.zeros(len(counts), dtype=np.int64)
    if len(counts):
        np.cumsum(counts[:-1], out=out[1:])
    return out


def _with_ids(sheet: Any, ids: np.ndarray) -> Any:
    from dataclasses import replace

    return replace(sheet, run_id=ids)


def file_facts(path: str | os.PathLike[str], root: Path | None = None, key: str | None = None) -> FileFacts:
    """One file's facts through the cache (``root``, default the cache folder): what a sweep's worker reads of
    a file so that it builds no Run the sheet answers. ``key``: the file's cache key as the corpus index gave
    it (tried first; a miss — another machine's cache — hashes the file). Raises what loading the file raises."""
    from workbench.importers import detect

    if not cache_enabled():
        p = Path(path)
        return FileFacts.of(detect(p).load(p))
    return FileCache(root if root is not None else cache_dir()).facts(path, key=key).facts
