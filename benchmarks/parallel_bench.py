"""Parallel sweeps: this process vs local processes vs a Dask LocalCluster with 1 and 2 workers, wall time.

    python benchmarks/parallel_bench.py [--runs 2000] [--grants 100] [--governor-grants 4]

Writes ``--runs`` synthetic mixed runs as native traces to a temporary folder, loads them (``workbench.load``),
then sweeps them two ways — the fast path over ``--grants`` grants, and the governor path (``fast=False``) over
``--governor-grants`` — in this process, on local processes, and on a Dask LocalCluster (one process per worker,
one thread each) with 1 and 2 workers. Workers get file paths and load them themselves (never pickled Runs), so a
worker's time includes reading its files. Prints wall seconds and the ratio to this process, and checks every
backend gave the same rows; asserts nothing about time. The machine may be shared: the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd

from workbench.scale import load
from workbench.scale.sweep import sweep
from workbench.scenarios.seed import mixed_corpus
from workbench.trace.native import write_run


def timed(corpus, grid, **kw):  # wall time: parallelism is about wall time
    t0 = time.perf_counter()
    out = sweep(corpus, grid, progress=False, **kw)
    return time.perf_counter() - t0, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2_000)
    parser.add_argument("--grants", type=int, default=100)
    parser.add_argument("--governor-grants", type=int, default=4)
    args = parser.parse_args()
    from dask.distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory(prefix="wb-parallel-") as tmp:
        for i, run in enumerate(mixed_corpus(args.runs, max_turns=60)):
            write_run(run, Path(tmp) / f"{i:06d}.jsonl")
        corpus = load(tmp)
        print(
            f"{len(corpus.runs):,} runs in {len(corpus.files):,} files; {os.cpu_count()} cores, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        grids = {
            f"fast path, {args.grants} grants": (
                {"grant": range(50_000, 50_000 + 5_000 * args.grants, 5_000)},
                True,
            ),
            f"governor path, {args.governor_grants} grants": (
                {"grant": range(100_000, 100_000 + 50_000 * args.governor_grants, 50_000)},
                False,
            ),
        }
        for name, (grid, fast) in grids.items():
            base_t, base = timed(corpus, grid, workers=1, fast=fast)
            print(f"== {name}: {len(base):,} rows; this process {base_t:.2f} s")
            t, two = timed(corpus, grid, workers=2, fast=fast)
            pd.testing.assert_frame_equal(base, two)
            print(f"   2 local processes: {t:.2f} s  ({base_t / t:.2f}x this process)")
            for n in (1, 2):
                cluster = LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
                )
                with cluster, Client(cluster) as client:
                    client.run(__import__, "workbench.replay.sweep")  # workers warm, as in use
                    t, via = timed(corpus, grid, client=client, fast=fast)
                pd.testing.assert_frame_equal(base, via)
                print(f"   Dask LocalCluster, {n} worker(s): {t:.2f} s  ({base_t / t:.2f}x this process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
