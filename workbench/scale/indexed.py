"""``workbench.load`` through the corpus cache and its index (``workbench.scale.index``): an unchanged file is
neither hashed nor parsed, its runs are references until read (``workbench.scale.lazy``), and the corpus carries
the sweep's fast-path sheet of every leaf."""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.scale import entry as entries
from workbench.scale.index import (
    FileFacts,
    Indexed,
    PathIndex,
    facts_key,
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


def _facts_entry(entry: Path) -> Path:
    return entry.with_name(f"{entry.name}.facts-{facts_key()}.pickle")


def _read_facts(entry: Path) -> FileFacts | None:
    """A file's facts, or ``None`` (a miss): absent, or not usable (not ours, damaged, not decodable, not facts)
    — said in one line naming the entry, which is then computed again and rewritten."""
    target = _facts_entry(entry)
    try:
        data = entries.read_sealed(target)
    except entries.Damaged as exc:
        entries.warn(target, exc)
        return None
    if data is None:
        return None
    try:
        got = pickle.loads(data)  # only after read_sealed: ours, and whole
    except Exception as exc:
        entries.warn(target, f"cannot be decoded ({type(exc).__name__})")
        return None
    if not isinstance(got, FileFacts):
        entries.warn(target, "does not hold a file's facts (schema mismatch)")
        return None
    return got


def _write_facts(entry: Path, facts: FileFacts) -> None:
    with contextlib.suppress(OSError):  # a read-only or full cache only costs speed
        entries.write_sealed(_facts_entry(entry), pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL))


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
) -> None:
    """Fill ``corpus`` with what ``found_entries`` (the walk of ``paths``) holds; ``read_file`` reads a file no
    cache entry answers (``workbench.trace.corpus.read_file``). ``workers``: see ``workbench.load``."""
    from workbench.importers import detect
    from workbench.scale.cache import FileCache, cacheable, file_key

    fc = FileCache(root)
    target = index_path(root, tuple(os.fspath(p) for p in paths), f"skip_unknown={skip_unknown}")
    old = read_index(target)
    found_entries = list(found_entries)
    unchanged: dict[str, Indexed] = {}  # files the index answers, as they were
    still_skipped: dict[str, str] = {}  # files no importer reads, unchanged since they were last looked at
    misses: list[str] = []  # the rest: to read
    for f in found_entries:
        if isinstance(f, SkippedFile):
            continue
        s = str(f)
        known = old.unchanged(s) if old is not None else None
        why = old.still_skipped(s) if old is not None and known is None and f not in explicit else None
        if known is not None:
            unchanged[s] = known
        elif why is not None:
            still_skipped[s] = why
        else:
            misses.append(s)
    skipped_now: dict[str, tuple[tuple[int, int, int, int], str]] = {}
    # a corpus with more files to parse than runs to hold is large: its runs are pickled when first built
    parsed_ahead = _parse_ahead(misses, root, workers, pickle_runs=len(misses) <= retain)
    indexed: dict[str, Indexed] = {}
    order: list[str] = []  # every loaded file, in walk order
    facts: dict[str, FileFacts | None] = {}  # None: take it from the old index's gathered facts
    in_hand: dict[str, list[Run]] = {}
    volatile: set[str] = set()  # read by an importer whose answer is never cached
    keys: dict[str, str] = {}
    held = 0  # runs loaded so far: past ``retain``, parsed runs are not held
    for found in found_entries:
        if isinstance(found, SkippedFile):
            corpus.skipped.append(found)
            continue
        f = found
        s = str(f)
        known = unchanged.get(s)
        if s in still_skipped:
            corpus.skipped.append(SkippedFile(f, still_skipped[s]))
            skipped_now[s] = old.skipped[s]  # type: ignore[union-attr]
            continue
        if known is not None:
            order.append(s)
            indexed[s] = known
            keys[s] = known.key
            facts[s] = None
            corpus.files.append(f)
            continue
        ahead = parsed_ahead.pop(s, None)
        if ahead is not None and ahead[0] == "skipped":
            if skip_unknown and f not in explicit:  # as record_failure files it, without opening it again
                corpus.skipped.append(SkippedFile(f, ahead[2]))
                skipped_now[s] = (ahead[1], ahead[2])
                continue
            ahead = None  # a file named on the command line: its error is raised below, as always
        if ahead is not None:  # parsed on a worker: its cache entries are written, its facts are here
            sig, key, dep_sigs, got = ahead
            keys[s] = key
            if sig is not None:
                indexed[s] = Indexed(sig, key, dep_sigs)
            order.append(s)
            facts[s] = got
            held += len(got.runs)
            corpus.files.append(f)
            continue
        try:
            module = detect(f)
            if not cacheable(module):
                runs = module.load(f)
                volatile.add(s)
                got = FileFacts.of(runs)
            else:
                sig = stat_sig(f)
                key = file_key(f, module)
                entry = fc._entry(key)
                got = _read_facts(entry)
                runs = None
                if got is None:
                    runs = fc._read(entry)
                    if runs is None:
                        runs = module.load(f)
                        if held < retain:
                            # a large corpus's runs are pickled when first built (``read`` below): a sweep
                            # answers from the facts and may never build them
                            fc._write(entry, runs)
                    got = FileFacts.of(runs)
                    _write_facts(entry, got)
                keys[s] = key
                deps = getattr(module, "dependencies", None)
                dep_sigs = tuple((str(d), stat_sig(Path(d))) for d in deps(f)) if callable(deps) else ()
                if sig is not None:
                    indexed[s] = Indexed(sig, key, dep_sigs)
        except Exception as exc:  # reported or skipped, never the end of the load (trace/failures.py)
            before = len(corpus.skipped)
            record_failure(corpus, f, exc, skip_unknown, explicit)
            if isinstance(exc, UnknownFormatError) and len(corpus.skipped) > before:
                sig = stat_sig(f)  # in no supported format: not opened again while it is unchanged
                if sig is not None:
                    skipped_now[s] = (sig, corpus.skipped[-1].reason)
            continue
        order.append(s)
        facts[s] = got
        held += len(got.runs)
        if runs is not None and held <= retain:  # a small corpus keeps what it parsed; a large one drops it
            in_hand[s] = runs
        elif held > retain:
            in_hand.clear()
        corpus.files.append(f)

    gathered = _gathered(old, order, facts, fc, keys, indexed, volatile)
    if (
        old is None
        or old.order != order
        or old.files != indexed
        or any(v is not None for v in facts.values())
        or old.skipped != skipped_now
    ):
        cached_order = [s for s in order if s not in volatile]
        if not volatile:
            write_index(target, PathIndex(indexed, cached_order, gathered, skipped=skipped_now))
        else:  # the volatile files' facts are not kept: the index gathers the others alone
            write_index(target, PathIndex(indexed, cached_order, None, skipped=skipped_now))

    def read(file: str) -> list[Run]:
        if file in volatile or file not in keys:
            return read_file(file)
        runs = fc._read(fc._entry(keys[file]))
        return runs if runs is not None else fc.load_file(file)

    refs: list[RunRef] = []
    counts = gathered["run_counts"]
    leaf_counts = gathered["leaf_counts"]
    run_rows = gathered["runs"]
    at = 0
    for file, n in zip(order, counts.tolist(), strict=True):
        rows = run_rows[at : at + n]
        named = identities.admit_ids([(rid, parent) for rid, parent, _, _ in rows], Path(file))
        refs.extend(
            RunRef(file, k, rid, parent, role, segs, at + k)
            for k, ((rid, parent), (_, _, role, segs)) in enumerate(zip(named, rows, strict=True))
        )
        corpus.sizes[file] = n
        at += n
    # the sheet's leaves: their runs' places in the corpus and their ids as the corpus names them
    run_start = _starts(counts)
    leaf_file = np.repeat(np.arange(len(counts), dtype=np.int64), leaf_counts)
    leaf_run = gathered["leaf_run"] + run_start[leaf_file]
    leaf_k = np.zeros(len(leaf_run), dtype=np.int64)
    if len(leaf_run):
        first = np.r_[True, leaf_run[1:] != leaf_run[:-1]]
        starts = np.flatnonzero(first)
        leaf_k = np.arange(len(leaf_run)) - np.repeat(starts, np.diff(np.r_[starts, len(leaf_run)]))
    leaf_of = np.stack([leaf_run, leaf_k], axis=1) if len(leaf_run) else np.zeros((0, 2), np.int64)
    from workbench.govern.policy import Policy
    from workbench.replay.sheet import Sheet, probe_key

    sheet = Sheet.from_columns(probe_key(Policy.named("current")), gathered["sheet"])
    if corpus.renamed:
        ids = np.empty(len(leaf_run), dtype=object)
        ids[:] = [
            refs[r].run_id + sfx for r, sfx in zip(leaf_run.tolist(), gathered["leaf_suffix"], strict=True)
        ]
        sheet = _with_ids(sheet, ids)
    lazy = LazyRuns(
        refs,
        read,
        retain,
        run_prints=gathered["run_prints"],
        names=gathered["run_names"],
        leaf_prints=gathered["leaf_prints"],
        # where each row's leaves start among all leaves (kept run after run)
        leaf_start=np.searchsorted(leaf_run, np.arange(at + 1), side="left"),
        sheet=sheet,
        leaf_of=leaf_of,
        file_keys={s: keys[s] for s in order if s in keys and s not in volatile},
    )
    corpus.runs = lazy
    for file, runs in in_hand.items():
        lazy.keep(file, runs)
    if len(refs) <= retain:  # a small corpus holds every Run
        lazy.built()


def _parse_ahead(
    misses: list[str], root: Path, workers: int | None, pickle_runs: bool
) -> dict[str, tuple[Any, ...]]:
    """The files the cache does not know, parsed on ``workers`` local processes (``workbench.scale.executor``)
    once there are ``PARALLEL_FROM`` of them: per file, its signature, cache key, dependencies' signatures and
    facts (its cache entries written by the worker). A file a worker does not answer — not cacheable, or in error
    — is read by the load's own loop, which reports what it raises as it does for every file. A worker that dies
    ends the load with its error."""
    from workbench.scale.executor import local

    executor = local(workers if len(misses) >= PARALLEL_FROM else 1)
    if executor.size <= 1:
        return {}
    out: dict[str, tuple[Any, ...]] = {}
    for i, got in executor.map(_parse_for(str(root), pickle_runs), misses):
        if got is not None:
            out[misses[i]] = got
    return out


@dataclass(frozen=True)
class _parse_for:
    root: str
    pickle_runs: bool

    def __call__(self, s: str) -> tuple[Any, ...] | None:
        return _parse_one(s, self.root, self.pickle_runs)


def _parse_one(s: str, root: str, pickle_runs: bool) -> tuple[Any, ...] | None:
    """One file on a worker: what the load's own loop does for a file the index does not know — its signature, key,
    dependencies' signatures and facts, or ``("skipped", signature, why)`` for a file in no supported format
    (``None``: leave it to the load)."""
    from workbench.importers import detect
    from workbench.scale.cache import FileCache, cacheable, file_key

    f = Path(s)
    try:
        module = detect(f)
        if not cacheable(module):
            return None
        fc = FileCache(Path(root))
        sig = stat_sig(f)
        key = file_key(f, module)
        entry = fc._entry(key)
        got = _read_facts(entry)
        if got is None:
            runs = fc._read(entry)
            if runs is None:
                runs = module.load(f)
                if pickle_runs:
                    fc._write(entry, runs)
            got = FileFacts.of(runs)
            _write_facts(entry, got)
        deps = getattr(module, "dependencies", None)
        dep_sigs = tuple((str(d), stat_sig(Path(d))) for d in deps(f)) if callable(deps) else ()
        return sig, key, dep_sigs, got
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


def _gathered(
    old: PathIndex | None,
    order: list[str],
    facts: dict[str, FileFacts | None],
    fc: Any,
    keys: dict[str, str],
    indexed: dict[str, Indexed],
    volatile: set[str],
) -> dict[str, Any]:
    """Every loaded file's facts in walk order: the old index's as they were when nothing changed, else gathered
    from each file's facts entry (or the old index's, file by file)."""
    if (
        old is not None
        and old.facts is not None
        and old.order == order
        and all(facts[s] is None for s in order)
    ):
        return old.facts
    per_file: list[FileFacts] = []
    for s in order:
        got = facts[s]
        if got is None:
            got = _read_facts(fc._entry(keys[s]))
            if got is None:  # the facts entry was deleted: read from the runs again
                runs = fc._read(fc._entry(keys[s]))
                if runs is None:
                    runs = fc.load_file(s)
                got = FileFacts.of(runs)
                _write_facts(fc._entry(keys[s]), got)
        per_file.append(got)
    return gather(order, per_file)


def file_facts(path: str | os.PathLike[str], root: Path | None = None, key: str | None = None) -> FileFacts:
    """One file's facts through the cache (``root``, default the cache folder): what a sweep's worker reads of
    a file so that it builds no Run the sheet answers. ``key``: the file's cache key as the corpus index gave
    it (tried first; a miss — another machine's cache — hashes the file). Raises what loading the file raises."""
    from workbench.importers import detect
    from workbench.scale import cache as corpus_cache
    from workbench.scale.cache import FileCache, cacheable, file_key

    p = Path(path)
    if key is not None and corpus_cache.cache_enabled():
        fc = FileCache(root if root is not None else corpus_cache.cache_dir())
        got = _read_facts(fc._entry(key))
        if got is not None:
            return got
    module = detect(p)
    if not cacheable(module) or not corpus_cache.cache_enabled():
        return FileFacts.of(module.load(p))
    fc = FileCache(root if root is not None else corpus_cache.cache_dir())
    entry = fc._entry(file_key(p, module))
    got = _read_facts(entry)
    if got is None:
        got = FileFacts.of(fc.load_file(p))
        _write_facts(entry, got)
    return got
