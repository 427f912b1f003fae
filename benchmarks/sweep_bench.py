"""Sweep benchmark: the governor path's turns/second and the fast path's speed-up on grant grids.

    python benchmarks/sweep_bench.py [--synthetic 10000] [--grants 1001] [--sample-grants 5]

For each corpus (the real traces in ../shared/traces, and N synthetic mixed runs) it times, in one process:

* the governor path over a small grid (``--sample-grants`` grants): recorded turns fed per second and seconds per
  (run, policy) row;
* the fast path over the full grant grid (``--grants`` grants) — seconds per row;
* the speed-up = governor seconds per row / fast seconds per row, and checks that both paths give the same rows on
  the small grid (the full-grid answers are held equal by tests/replay/test_fast.py).

Prints figures only; nothing here is asserted as a timing.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from workbench.paths import shared_traces
from workbench.replay.sweep import sweep
from workbench.scenarios.seed import mixed_corpus
from workbench.trace import load


def bench(name: str, runs: list, grants: list[int], sample: list[int]) -> None:
    leaves = [leaf for r in runs for leaf in r.leaves()]
    turns = sum(len(leaf.turns) for leaf in leaves)
    t0 = time.perf_counter()
    slow = sweep(leaves, {"grant": sample}, workers=1, progress=False, fast=False)
    t_slow = time.perf_counter() - t0
    replayed = int(slow["turns_replayed"].sum())
    t0 = time.perf_counter()
    quick_small = sweep(leaves, {"grant": sample}, workers=1, progress=False)
    cols = [c for c in slow.columns if c != "path"]
    same = quick_small[cols].equals(slow[cols])
    t0 = time.perf_counter()
    quick = sweep(leaves, {"grant": grants}, workers=1, progress=False)
    t_fast = time.perf_counter() - t0
    per_slow = t_slow / len(slow)
    per_fast = t_fast / len(quick)
    print(f"== {name}: {len(leaves):,} runs/segments, {turns:,} recorded turns")
    print(
        f"   governor path: {len(slow):,} rows in {t_slow:.2f} s — {replayed / t_slow:,.0f} turns/s, "
        f"{per_slow * 1e6:,.0f} µs per row"
    )
    print(
        f"   fast path:     {len(quick):,} rows ({len(grants):,} grants) in {t_fast:.2f} s — "
        f"{per_fast * 1e6:,.1f} µs per row, {(quick.path == 'fast').mean():.1%} of rows on the fast path"
    )
    print(
        f"   speed-up per row: {per_slow / per_fast:,.0f}x; same answers on the {len(sample)}-grant grid: {same}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--synthetic", type=int, default=10_000, help="synthetic runs (default 10,000)")
    parser.add_argument("--grants", type=int, default=1_001, help="grants in the full grid (default 1,001)")
    parser.add_argument("--sample-grants", type=int, default=5, help="grants the governor path is timed on")
    args = parser.parse_args()
    grants = [50_000 + 500 * i for i in range(args.grants)]
    step = max(1, len(grants) // args.sample_grants)
    sample = grants[::step][: args.sample_grants]
    pd.set_option("display.width", 200)
    root = shared_traces()
    if root is None:
        print("== real corpus: ../shared/traces is absent — skipped")
    else:
        bench("real corpus", load(root).runs, grants, sample)
    t0 = time.perf_counter()
    runs = mixed_corpus(args.synthetic, max_turns=60)
    print(f"(generated {len(runs):,} synthetic runs in {time.perf_counter() - t0:.1f} s)")
    bench(f"synthetic corpus ({args.synthetic:,} mixed runs)", runs, grants, sample)


if __name__ == "__main__":
    main()
