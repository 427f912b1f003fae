"""Loading a corpus: every run under some paths, read by its importer, through the corpus cache and its index
(``workbench.scale.indexed``) unless the cache is off, plus the runs of a backend (``workbench.sources``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.importers import detect
from workbench.scale import cache as corpus_cache
from workbench.scale.indexed import load_indexed
from workbench.scale.lazy import RETAIN, LazyRuns
from workbench.sources import is_remote
from workbench.trace.corpus import Corpus, MemoryRuns, scan_paths
from workbench.trace.errors import TraceError
from workbench.trace.failures import record_failure
from workbench.trace.identity import Identities
from workbench.trace.schema import Run
from workbench.trace.walk import SkippedFile


def read_file(path: str | os.PathLike[str]) -> list[Run]:
    """The runs in one file, read by its importer (no cache). Raises TraceError if it is not a readable trace."""
    p = Path(path)
    module = detect(p)
    runs: list[Run] = module.load(p)
    return runs


def load_file(
    path: str | os.PathLike[str],
    *,
    cache: bool | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> list[Run]:
    """The runs in one file, whatever its format. Raises TraceError if it is not a readable trace.

    Through the corpus cache (``workbench.scale.cache``) unless ``cache=False`` or ``WORKBENCH_CACHE=off``:
    a file whose content this code has read before is not parsed again."""
    if cache is False or (cache is None and not corpus_cache.cache_enabled()):
        return read_file(path)
    root = Path(cache_dir) if cache_dir is not None else corpus_cache.cache_dir()
    return corpus_cache.FileCache(root).load_file(path)


def load(
    *paths: str | os.PathLike[str],
    skip_unknown: bool = True,
    cache: bool | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    retain: int = RETAIN,
    workers: int | None = None,
    client: Any = None,
) -> Corpus:
    """Load every run under ``paths``. Files no importer recognises are skipped when they were found by
    walking a folder (``skip_unknown``) and reported in ``Corpus.problems`` otherwise. Files are read through
    the corpus cache and its index (``cache``/``cache_dir``: see :func:`load_file` and docs/scale.md).

    With the cache, a corpus of more than ``retain`` runs builds its Runs only when they are read
    (``workbench.scale.lazy``): loading reads the index alone, and memory stays bounded; a smaller corpus holds
    every Run, as a list would. More files the cache does not know than ``retain`` are parsed on ``workers`` local
    processes (from ``PARALLEL_FROM``), or on a Dask ``client``'s workers, which must see the cache folder (default:
    this process; the CLI passes one per core): the corpus is the same either way."""
    remote = [p for p in paths if is_remote(p)]
    paths = tuple(p for p in paths if not is_remote(p))
    corpus = Loading()
    identities = Identities(renamed=corpus.renamed)
    explicit = {Path(p).expanduser() for p in paths if not Path(p).expanduser().is_dir()}

    if cache is False or (cache is None and not corpus_cache.cache_enabled()):
        _load_into(corpus, identities, paths, explicit, skip_unknown, cache, cache_dir)
    else:
        root = Path(cache_dir) if cache_dir is not None else corpus_cache.cache_dir()
        found = scan_paths(paths)
        load_indexed(
            corpus, identities, paths, found, read_file, explicit, skip_unknown, root, retain, workers, client
        )
    for source in remote:
        _load_remote(corpus, identities, os.fspath(source))
    return corpus.corpus()


@dataclass
class Loading:
    """A corpus while it loads: what the loader and ``record_failure`` add to, made a :class:`Corpus` at the end."""

    runs: list[Run] | LazyRuns = field(default_factory=list)
    problems: list[TraceError] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    renamed: dict[str, tuple[str, Path]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)

    def corpus(self) -> Corpus:
        runs = self.runs if isinstance(self.runs, LazyRuns) else MemoryRuns(self.runs, from_files=True)
        return Corpus(
            runs, tuple(self.problems), tuple(self.skipped), tuple(self.files), self.renamed, self.sizes
        )


def _load_remote(corpus: Loading, identities: Identities, url: str) -> None:
    """The runs of a backend (``phoenix://…``, workbench.sources) added to ``corpus``; a backend that cannot be
    read is one problem, as a file that cannot be read is."""
    from workbench.sources.phoenix import load_phoenix

    try:
        runs = load_phoenix(url, progress=True)
    except (TraceError, ValueError) as exc:
        corpus.problems.append(exc if isinstance(exc, TraceError) else TraceError(url, str(exc)))
        return
    admitted = identities.admit(runs, Path(url))
    corpus.runs = [*corpus.runs, *admitted]


def _load_into(
    corpus: Loading,
    identities: Identities,
    paths: tuple[str | os.PathLike[str], ...],
    explicit: set[Path],
    skip_unknown: bool,
    cache: bool | None,
    cache_dir: str | os.PathLike[str] | None,
) -> None:
    for found in scan_paths(paths):
        if isinstance(found, SkippedFile):
            corpus.skipped.append(found)
            continue
        f = found
        try:
            runs = load_file(f, cache=cache, cache_dir=cache_dir)
        except Exception as exc:  # reported or skipped, never the end of the load (trace/failures.py)
            record_failure(corpus, f, exc, skip_unknown, explicit)
            continue
        corpus.files.append(f)
        for r in runs:
            r.loaded_from = str(f)
        corpus.sizes[str(f)] = len(runs)
        admitted = identities.admit(runs, f)
        assert isinstance(corpus.runs, list)
        corpus.runs.extend(admitted)
