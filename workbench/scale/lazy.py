"""A corpus's runs, built only when asked for: a list-like of Runs whose items are kept as references (the file a
run came from, its place in that file, the id the corpus gave it) and turned into pydantic Runs on access.

``workbench.load`` reads a folder through the corpus cache and its index (``workbench.scale.index``) without
building a single Run; ``corpus.runs[i]``, iteration, or anything that reads a run's messages builds it from the
cached entry (one unpickle of its file's runs). A small corpus keeps every run it built, so it behaves exactly
as a plain list (the same object each time); past ``RETAIN`` runs only the files read last are kept, so memory
stays bounded whatever the corpus size. Assigning an item stores that Run as given (an edited run is then no longer
"as loaded": a sweep on workers, which reloads files, sweeps it in this process)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, MutableSequence, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from workbench.trace.schema import Run

if TYPE_CHECKING:
    import numpy as np

    from workbench.scale.index import RunNames

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
    """Its row in the corpus's facts (``LazyRuns``'s ``prints``, ``names``, ``leaf_start``); -1: none."""


class LazyRuns(MutableSequence[Run]):
    """The corpus's runs (see the module docstring). ``read(file)`` gives a file's runs as its importer made them
    (from the cache, or by reading the file again)."""

    def __init__(
        self,
        refs: Iterable[RunRef],
        read: Callable[[str], list[Run]],
        retain: int = RETAIN,
        *,
        prints: Sequence[bytes] | None = None,
        names: Sequence[RunNames] | None = None,
        leaf_prints: Sequence[bytes] | None = None,
        leaf_start: np.ndarray | None = None,
    ) -> None:
        """``prints``, ``names``: per row of the corpus's facts (a ref's ``row``), its run's content fingerprint and
        names (``workbench.scale.index``); ``leaf_prints``: every row's leaves' fingerprints, row after row, row
        ``r``'s from ``leaf_start[r]`` to ``leaf_start[r + 1]`` (all four or none: ``read_only`` then builds every
        run)."""
        self._refs: list[RunRef | None] = list(refs)  # None: a Run assigned after loading (in ``_runs``)
        self._prints = prints
        self._names = names
        self._leaf_prints = leaf_prints
        self._leaf_start = leaf_start
        self._runs: list[Run | None] = [None] * len(self._refs)  # built (small corpus) or assigned
        self._read = read
        self._keep_all = len(self._refs) <= retain
        self._retain = retain
        self._files: OrderedDict[str, list[Run]] = OrderedDict()
        self._kept = 0

    @property
    def holds_all(self) -> bool:
        """A small corpus: every Run is built once and held (edits in place are kept, as in a list)."""
        return self._keep_all

    # -- what can be answered without building a run --
    def ref(self, i: int) -> RunRef | None:
        """The reference of item ``i``, or ``None`` when the item is a Run assigned after loading."""
        return self._refs[i]

    def run_id(self, i: int) -> str:
        ref = self._refs[i]
        return ref.run_id if ref is not None else self._assigned(i).run_id

    def role(self, i: int) -> str:
        ref = self._refs[i]
        return ref.role if ref is not None else self._assigned(i).role

    def segment_count(self, i: int) -> int:
        ref = self._refs[i]
        return ref.segments if ref is not None else len(self._assigned(i).segments)

    def _assigned(self, i: int) -> Run:
        run = self._runs[i]
        assert run is not None
        return run

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
        return self._build(i)

    def __iter__(self) -> Iterator[Run]:
        for k in range(len(self._refs)):
            yield self._build(k)

    @overload
    def __setitem__(self, i: int, value: Run) -> None: ...
    @overload
    def __setitem__(self, i: slice, value: Iterable[Run]) -> None: ...
    def __setitem__(self, i: int | slice, value: Run | Iterable[Run]) -> None:
        if isinstance(i, slice):
            values = list(value)  # type: ignore[arg-type]
            self._refs[i] = [None] * len(values)
            self._runs[i] = values
        else:
            self._refs[i] = None
            self._runs[i] = value  # type: ignore[assignment]

    def __delitem__(self, i: int | slice) -> None:
        del self._refs[i]
        del self._runs[i]

    def insert(self, index: int, value: Run) -> None:
        self._refs.insert(index, None)
        self._runs.insert(index, value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyRuns | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self._refs):,} runs, built on access>"

    def read_only(self) -> Iterator[tuple[Run, Sequence[bytes] | None]]:
        """Every run with its leaves' fingerprints, for a reader that edits nothing (a report).

        In a large corpus, a run whose fingerprint an earlier run of this pass shares is built from that one: a
        shallow copy under its own id, parent and names (``RunNames.apply``) that shares its turns and messages, so
        a copy costs neither a read nor memory. Its prints are the ones computed when its file was read
        (``FileFacts``), so nothing is fingerprinted. The pass holds one run per distinct content while it runs.

        A small corpus (``holds_all``), whose runs may have been edited in place, yields its runs as they are,
        with ``None`` for prints (fingerprint them afresh); so does a run assigned after loading."""
        if self._keep_all or self._prints is None or self._names is None or self._leaf_prints is None:
            for run in self:
                yield run, None
            return
        assert self._leaf_start is not None
        starts = self._leaf_start.tolist()
        twins: dict[bytes, Run] = {}
        for i, ref in enumerate(self._refs):
            if ref is None or ref.row < 0:
                yield self._build(i), None
                continue
            p, names = self._prints[ref.row], self._names[ref.row]
            twin = twins.get(p) if names.namable else None
            if twin is not None:
                run = names.apply(twin, ref.run_id, ref.parent_run_id)
                run.loaded_from = ref.file
            else:
                run = self._build(i)
                if names.namable:
                    twins[p] = run
            yield run, self._leaf_prints[starts[ref.row] : starts[ref.row + 1]]

    # -- building --
    def _build(self, i: int) -> Run:
        run = self._runs[i]
        if run is not None:
            return run
        ref = self._refs[i]
        assert ref is not None
        run = self._file_runs(ref.file)[ref.index]
        update: dict[str, object] = {}
        if run.run_id != ref.run_id:
            update["run_id"] = ref.run_id
        if run.parent_run_id != ref.parent_run_id:
            update["parent_run_id"] = ref.parent_run_id
        if update:
            run = run.model_copy(update=update)
            run.loaded_from = ref.file
        if self._keep_all:
            self._runs[i] = run  # a small corpus keeps what it built: one object per run, as a list would
        return run

    def _file_runs(self, file: str) -> list[Run]:
        got = self._files.get(file)
        if got is not None:
            self._files.move_to_end(file)
            return got
        got = self._read(file)
        for r in got:
            r.loaded_from = file
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
