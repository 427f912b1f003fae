"""A corpus's runs, built only when asked for: a read-only sequence of Runs (``workbench.trace.corpus.RunStore``)
whose items are kept as references (the file a run came from, its place in that file, the id the corpus gave it)
and turned into pydantic Runs on access.

``workbench.load`` reads a folder through the corpus cache and its index (``workbench.scale.index``) without
building a single Run; ``corpus.runs[i]``, iteration, or anything that reads a run's messages builds it from the
cached entry (one unpickle of its file's runs). A small corpus keeps every run it built (the same object each
time); past ``RETAIN`` runs only the files read last are kept, so memory stays bounded whatever the corpus size.
That is all ``retain`` changes: at every size items are not assigned (``TypeError``), every run given out refuses
assignment in place (``workbench.trace.schema.seal``), and an edit is a new store (``relabelled``)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from workbench.trace.corpus import LabelLike, ReadOnlyRuns, labelled
from workbench.trace.schema import Run, seal

if TYPE_CHECKING:
    import numpy as np

    from workbench.replay.sheet import Sheet

RETAIN = 4_096
"""Runs a corpus keeps once built; past this, only the most recently read files' runs are kept."""


@dataclass(frozen=True, slots=True)
class RunRef:
    """Where a run of the corpus comes from: its file, its place in the file's runs, and the id and parent the
    corpus gave it (``workbench.trace.identity``: a repeated run is renamed ``~k``)."""

    file: str
    index: int
    run_id: str
    parent_run_id: str | None
    role: str
    segments: int
    row: int = -1
    """Its row in the corpus's facts (``LazyRuns``'s ``leaf_start``); -1: none."""


class LazyRuns(ReadOnlyRuns):
    """The corpus's runs (see the module docstring). ``read(file)`` gives a file's runs as its importer made them
    (from the cache, or by reading the file again)."""

    def __init__(
        self,
        refs: Iterable[RunRef],
        read: Callable[[str], list[Run]],
        retain: int = RETAIN,
        *,
        leaf_prints: Sequence[bytes] | None = None,
        leaf_start: np.ndarray | None = None,
        sheet: Sheet | None = None,
        leaf_of: np.ndarray | None = None,
        file_keys: Mapping[str, str] | None = None,
        labels: Mapping[int, LabelLike] | None = None,
    ) -> None:
        """``leaf_prints``: the leaves' content fingerprints of every row of the corpus's facts (a ref's ``row``;
        ``workbench.scale.index``), row after row, row ``r``'s from ``leaf_start[r]`` to ``leaf_start[r + 1]``
        (both or neither). ``sheet``, ``leaf_of``: the index's fast-path sheet of every leaf and each row's run and
        leaf place; ``file_keys``: each cached file's cache key. ``labels``: runs relabelled since loading (by place)."""
        self._refs: tuple[RunRef, ...] = tuple(refs)
        self._leaf_prints = leaf_prints
        self._leaf_start = leaf_start
        self._sheet, self._leaf_of = sheet, leaf_of
        self.file_keys: Mapping[str, str] = dict(file_keys or {})
        """Each cached file's cache key as the index gave it (a sweep's workers read its facts without hashing)."""
        self._labels: Mapping[int, LabelLike] = dict(labels or {})
        self._runs: list[Run | None] = [None] * len(self._refs)  # built (small corpus)
        self._read = read
        self._keep_all = len(self._refs) <= retain
        self._retain = retain
        self._files: OrderedDict[str, list[Run]] = OrderedDict()
        self._kept = 0

    # -- what can be answered without building a run --
    def ref(self, i: int) -> RunRef:
        return self._refs[i]

    def run_id(self, i: int) -> str:
        return self._refs[i].run_id

    def role(self, i: int) -> str:
        return self._refs[i].role

    def segment_count(self, i: int) -> int:
        return self._refs[i].segments

    def origin(self, i: int) -> str | None:
        return None if i in self._labels else self._refs[i].file

    def sheet(self) -> tuple[Sheet, np.ndarray] | None:
        """The index's sheet of every leaf and each row's run and leaf place, while every run is as loaded."""
        if self._sheet is None or self._leaf_of is None or self._labels:
            return None
        return self._sheet, self._leaf_of

    # -- the sequence --
    def __len__(self) -> int:
        return len(self._refs)

    @overload
    def __getitem__(self, i: int) -> Run: ...
    @overload
    def __getitem__(self, i: slice) -> list[Run]: ...
    def __getitem__(self, i: int | slice) -> Run | list[Run]:
        if isinstance(i, slice):
            return [self._build(k) for k in range(*i.indices(len(self._refs)))]
        return self._build(range(len(self._refs))[i])

    def __iter__(self) -> Iterator[Run]:
        for k in range(len(self._refs)):
            yield self._build(k)

    def __repr__(self) -> str:
        return f"<{len(self._refs):,} runs, built on access>"

    def relabelled(self, labels: Mapping[int, LabelLike]) -> LazyRuns:
        """This store with run ``i`` labelled ``labels[i]`` (kept as a label, applied when the run is built, so a
        large corpus stays built on access); a relabelled run is no longer as loaded."""
        out = LazyRuns(
            self._refs,
            self._read,
            self._retain,
            leaf_prints=self._leaf_prints,
            leaf_start=self._leaf_start,
            sheet=self._sheet,
            leaf_of=self._leaf_of,
            file_keys=self.file_keys,
            labels={**self._labels, **labels},
        )
        out._runs = [None if k in labels else r for k, r in enumerate(self._runs)]
        return out

    def read_only(self, rows: range | None = None) -> Iterator[tuple[Run, Sequence[bytes] | None]]:
        """Every run (of ``rows``, else all) with its leaves' fingerprints, for a reader (a report): the ones
        computed when its file was read (``FileFacts``), or ``None`` for a relabelled run or where the index
        gave none (fingerprinted afresh, when asked for)."""
        rows = range(len(self._refs)) if rows is None else rows
        # a pass reads file after file: it keeps the file it is on, not the last few read (``retain`` runs)
        here: dict[str, list[Run]] = {}
        prints, starts = (
            self._leaf_prints,
            self._leaf_start.tolist() if self._leaf_start is not None else None,
        )
        for i in rows:
            ref = self._refs[i]
            if self._runs[i] is None and ref.file not in here:
                here.clear()
                here[ref.file] = self._file_runs(ref.file, keep=self._keep_all)
            run = self._build(i, here.get(ref.file))
            if prints is None or starts is None or ref.row < 0 or i in self._labels:
                yield run, None
            else:
                yield run, prints[starts[ref.row] : starts[ref.row + 1]]

    # -- building --
    def _build(self, i: int, file_runs: list[Run] | None = None) -> Run:
        """Run ``i``, from ``file_runs`` (its file's runs, read already) where given."""
        run = self._runs[i]
        if run is not None:
            return run
        ref = self._refs[i]
        run = (self._file_runs(ref.file) if file_runs is None else file_runs)[ref.index]
        update: dict[str, object] = {}
        if run.run_id != ref.run_id:
            update["run_id"] = ref.run_id
        if run.parent_run_id != ref.parent_run_id:
            update["parent_run_id"] = ref.parent_run_id
        if update:
            run = run.model_copy(update=update)
            run.loaded_from = ref.file
        if i in self._labels:
            run = labelled(run, self._labels[i])
            run.loaded_from = ref.file
        seal(run)
        if self._keep_all:
            self._runs[i] = run  # a small corpus keeps what it built: one object per run, as a list would
        return run

    def _file_runs(self, file: str, keep: bool = True) -> list[Run]:
        """A file's runs, from the recently read files or read now (and kept among them where ``keep``)."""
        got = self._files.get(file)
        if got is not None:
            self._files.move_to_end(file)
            return got
        got = self._read(file)
        for r in got:
            r.loaded_from = file
        if not keep:
            return got
        self._files[file] = got
        self._kept += len(got)
        while not self._keep_all and self._kept > self._retain and len(self._files) > 1:
            _, dropped = self._files.popitem(last=False)
            self._kept -= len(dropped)
        return got

    def keep(self, file: str, runs: list[Run]) -> None:
        """A file's runs the loader already has in hand (as its importer made them): a small corpus keeps them,
        so nothing is read twice."""
        if self._keep_all:
            self._files[file] = runs
            self._kept += len(runs)
            for r in runs:
                r.loaded_from = file

    def built(self) -> None:
        """Every run built now (a small corpus): the files' lists are no longer needed."""
        if self._keep_all:
            for k in range(len(self._refs)):
                self._build(k)
            self._files.clear()
            self._kept = 0


__all__ = ["RETAIN", "LazyRuns", "RunRef"]
