"""Sweep benchmark: the governor path's turns/second and the fast path's speed-up on grant grids.

    python benchmarks/sweep_bench.py [--synthetic 10000] [--grants 1001] [--synthetic-grants 101] [--sample-grants 5]

For each corpus (the real traces in ../shared/traces, and N synthetic mixed runs) it times, in one process:

* the governor path over a small grid (``--sample-grants`` grants): recorded turns fed per second and seconds per
  (run, policy) row;
* the fast path over the full grant grid (``--grants`` grants on the real corpus, ``--synthetic-grants`` on the
  synthetic one, which keeps 10,000 runs x grid in memory) — seconds per row;
* the speed-up = governor seconds per row / fast seconds per row, and checks that both paths give the same rows on
  the small grid (the full-grid answers are held equal by tests/replay/test_fast.py).

Every timing is CPU seconds of this process (not wall time: the machine may be shared, and others' load would be
measured too), the best of ``--repeats`` runs, on both corpora. Prints figures only; nothing here is asserted as a
timing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# Run from a checkout: measure this checkout's package, not whichever copy is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.paths import shared_traces
from workbench.scale import load
from workbench.scale.sweep import sweep
from workbench.scenarios.seed import mixed_corpus


def best_of(repeats: int, fn):
    """The fastest of ``repeats`` runs, in CPU seconds of this process (the machine is shared by several people:
    wall time would measure their load as much as this code)."""
    best, out = float("inf"), None
    for _ in range(repeats):
        out = None  # the previous result is not kept alive while the next run is timed
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def bench(name: str, runs: list, grants: list[int], sample: list[int], repeats: int) -> None:
    leaves = [leaf for r in runs for leaf in r.leaves()]
    turns = sum(len(leaf.turns) for leaf in leaves)
    t_slow, slow = best_of(
        repeats, lambda: sweep(leaves, {"grant": sample}, workers=1, progress=False, fast=False)
    )
    replayed = int(slow["turns_replayed"].sum())
    quick_small = sweep(leaves, {"grant": sample}, workers=1, progress=False)
    cols = [c for c in slow.columns if c != "path"]
    same = quick_small[cols].equals(slow[cols])
    t_fast, quick = best_of(repeats, lambda: sweep(leaves, {"grant": grants}, workers=1, progress=False))
    per_slow = t_slow / len(slow)
    per_fast = t_fast / len(quick)
    print(f"== {name}: {len(leaves):,} runs/segments, {turns:,} recorded turns")
    print(
        f"   governor path: {len(slow):,} rows in {t_slow:.2f} CPU s — {replayed / t_slow:,.0f} turns/s, "
        f"{per_slow * 1e6:,.0f} µs per row"
    )
    print(
        f"   fast path:     {len(quick):,} rows ({len(grants):,} grants) in {t_fast:.2f} CPU s — "
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
    parser.add_argument(
        "--grants", type=int, default=1_001, help="grants in the real corpus's grid (default 1,001)"
    )
    parser.add_argument(
        "--synthetic-grants",
        type=int,
        default=101,
        help="grants in the synthetic corpus's grid (default 101)",
    )
    parser.add_argument("--sample-grants", type=int, default=5, help="grants the governor path is timed on")
    parser.add_argument("--repeats", type=int, default=3, help="timings are the best of this many runs")
    args = parser.parse_args()
    grants = [50_000 + 500 * i for i in range(args.grants)]
    step = max(1, len(grants) // args.sample_grants)
    sample = grants[::step][: args.sample_grants]
    synthetic_grants = [50_000 + 5_000 * i for i in range(args.synthetic_grants)]
    print(
        f"(CPU seconds of this process, best of {args.repeats}; {os.cpu_count()} cores, shared with other work — "
        "wall time would measure their load too)"
    )
    root = shared_traces()
    if root is None:
        print("== real corpus: ../shared/traces is absent — skipped")
    else:
        bench("real corpus", load(root).runs, grants, sample, args.repeats)
    t0 = time.perf_counter()
    runs = mixed_corpus(args.synthetic, max_turns=60)
    print(f"(generated {len(runs):,} synthetic runs in {time.perf_counter() - t0:.1f} s)")
    bench(f"synthetic corpus ({args.synthetic:,} mixed runs)", runs, synthetic_grants, sample, args.repeats)


if __name__ == "__main__":
    main()
