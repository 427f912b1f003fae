"""The one way the workbench runs work on other processes: :data:`IN_PROCESS`, :func:`local` (forked) and
:func:`dask` executors, each mapping a function over items (docs/scale.md, "One executor")."""

from __future__ import annotations

import multiprocessing
import os
import select
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def cores() -> int:
    """The cores this process may run on (its affinity where the platform says, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


class Executor(Protocol):
    """Where work runs: ``size`` slots; ``map`` yields each item's ``(index, result)`` in the order they finish."""

    @property
    def size(self) -> int: ...

    def map(self, work: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]: ...


@dataclass(frozen=True)
class InProcess:
    """Every item here, in order."""

    @property
    def size(self) -> int:
        return 1

    def map(self, work: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        for i, item in enumerate(items):
            yield i, work(item)


IN_PROCESS = InProcess()


@dataclass(frozen=True)
class Local:
    """``workers`` forked processes, started (and given every item) when ``map`` is called, ended when it stops."""

    workers: int

    @property
    def size(self) -> int:
        return self.workers

    def map(self, work: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        if len(items) <= 1:
            return IN_PROCESS.map(work, items)
        global _forked
        _forked = (work, items)  # what the workers find in their memory: all are forked at the first submit
        pool = ProcessPoolExecutor(
            max_workers=min(self.workers, len(items)),
            mp_context=multiprocessing.get_context("fork"),
            initializer=_end_with,
            initargs=(os.getpid(),),
        )
        got = _collect(pool, {pool.submit(_forked_item, i): i for i in range(len(items))})
        next(got)  # inside its try: from here on, closing it (or dropping it) shuts the pool down
        pool.shutdown(wait=False)  # each worker ends (freeing its memory) once all is done, read or not
        return got


Warned = list[tuple[str, type[Warning], str, int]]
"""The warnings a worker's item gave: message, category, file, line."""


def _collect(pool: ProcessPoolExecutor, futures: dict[Future[tuple[Any, Warned]], int]) -> Iterator[Any]:
    global _forked
    try:
        yield None
        for fut in as_completed(futures):
            result, warned = fut.result()
            for message, category, filename, lineno in warned:  # said here, as if the work had run here
                warnings.warn_explicit(message, category, filename, lineno)
            yield futures[fut], result
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        _forked = None
    pool.shutdown(wait=True)


@dataclass(frozen=True)
class Dask:
    """A Dask cluster's workers, through its ``distributed.Client``."""

    client: Any

    @property
    def size(self) -> int:
        try:
            return max(1, int(sum(self.client.nthreads().values())))
        except Exception:  # a client that cannot say: one slot
            return 1

    def map(self, work: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        from dask.distributed import as_completed as dask_completed

        futures = [self.client.submit(work, item, pure=False) for item in items]
        index = {f.key: i for i, f in enumerate(futures)}
        for fut in dask_completed(futures):  # type: ignore[no-untyped-call]  # distributed's is unannotated
            yield index[fut.key], fut.result()


_forked: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
"""The function and items of the ``Local.map`` whose workers are being forked."""


def _forked_item(i: int) -> tuple[Any, Warned]:
    """In a worker: the work on item ``i`` of the map it was forked for, and the warnings it gave (under the
    filters the worker was forked with), for the parent to give again: a warning is never lost to a worker."""
    assert _forked is not None
    work, items = _forked
    with warnings.catch_warnings(record=True) as caught:
        result = work(items[i])
    return result, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def can_fork() -> bool:
    """Whether :func:`local` can start processes here (``fork`` is the platform's safe default only on Linux)."""
    return sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods()


def local(workers: int | None) -> Executor:
    """``workers`` local processes; :data:`IN_PROCESS` for ``None``, 1 or less, or where ``fork`` is not safe."""
    if workers is None or workers <= 1 or not can_fork():
        return IN_PROCESS
    return Local(workers)


def dask(client: Any) -> Executor:
    """The cluster behind a Dask ``client``."""
    return Dask(client)


def chosen(workers: int | None = None, client: Any = None) -> Executor:
    """The executor a call's ``workers``/``client`` arguments name: Dask when given a client, else :func:`local`."""
    return dask(client) if client is not None else local(workers)


def _end_with(parent: int) -> None:
    """In a worker: exit as soon as ``parent`` (the process that started the pool) ends, however it ended."""
    try:
        fd = os.pidfd_open(parent)
    except (OSError, AttributeError):  # already gone (or no pidfd: not Linux, where no pool is started)
        if os.getppid() != parent:
            os._exit(0)
        return
    if os.getppid() != parent:  # it ended before the pidfd was open
        os._exit(0)

    def watch() -> None:
        select.select([fd], [], [])
        os._exit(0)

    threading.Thread(target=watch, name="workbench-parent-watch", daemon=True).start()


__all__ = ["IN_PROCESS", "Dask", "Executor", "InProcess", "Local", "chosen", "cores", "dask", "local"]
