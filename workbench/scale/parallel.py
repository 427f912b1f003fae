"""Executing sweep work: in this process, on local processes (concurrent.futures) or on a Dask cluster — the
same chunks and the same function in every case, so every backend gives the same rows."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any

from workbench.scale.processes import fork_context, pool_options

Chunk = Any
Work = Callable[[Chunk], Any]


@contextmanager
def corpus_out_of_gc() -> Iterator[None]:
    """Keep the (large, long-lived) corpus out of the cyclic collector's scans while a sweep allocates.

    A sweep allocates many small objects; every full collection would otherwise walk every message of every run
    held in memory — measured at two thirds of the per-run cost on 1,000 runs. ``gc.freeze`` moves what exists now
    to the permanent generation and ``gc.unfreeze`` puts it back, so nothing is kept or lost; a caller who already
    froze objects keeps control (nothing is done then)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def run_local(
    work: Work, chunks: Sequence[Chunk], workers: int
) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    if workers <= 1 or len(chunks) <= 1:
        for i, chunk in enumerate(chunks):
            yield i, work(chunk)
        return
    # forked where the platform forks safely (else its default start method), each worker dying with this process
    with ProcessPoolExecutor(max_workers=workers, mp_context=fork_context(), **pool_options()) as pool:
        futures = {pool.submit(work, chunk): i for i, chunk in enumerate(chunks)}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()


def run_dask(work: Work, chunks: Sequence[Chunk], client: Any) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    from dask.distributed import as_completed as dask_completed

    futures = [client.submit(work, chunk, pure=False) for chunk in chunks]
    index = {f.key: i for i, f in enumerate(futures)}
    for fut in dask_completed(futures):
        yield index[fut.key], fut.result()
