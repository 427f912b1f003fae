"""Whether pausing Python's cyclic garbage collector around a command pays: a warm load (cache filled first) of
../shared/traces and of 1,000 synthetic runs, each in a fresh interpreter, with the collector as Python leaves it
and with it paused (``gc.disable()`` + ``gc.freeze()``, what ``workbench.cli.main`` would do), taken in turn.

    python benchmarks/gc_bench.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHILD = """
import gc, json, sys, time
if sys.argv[1] == "paused":
    gc.disable(); gc.freeze()
from workbench.scale import load
t0 = time.perf_counter()
corpus = load(sys.argv[2])
n = sum(1 for _ in corpus.runs)
print(json.dumps({"s": time.perf_counter() - t0, "runs": n}))
"""


def _once(mode: str, folder: Path, cache: Path) -> float:
    env = {**os.environ, "WORKBENCH_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(folder)], env=env, capture_output=True, text=True, check=True
    )
    return float(json.loads(out.stdout.splitlines()[-1])["s"])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "benchmarks"))
    from scale_bench import _synthetic

    data = Path(tempfile.gettempdir()) / "workbench-bench"
    data.mkdir(exist_ok=True)
    corpora = {"shared traces": REPO.parent / "shared" / "traces", "1,000 synthetic": _synthetic(data, 1_000)}
    for label, folder in corpora.items():
        if not folder.is_dir():
            print(f"{label}: absent, skipped")
            continue
        cache = data / f"gc-cache-{folder.name}"
        _once("on", folder, cache)  # fills the cache: every timed load is warm
        best = {"on": float("inf"), "paused": float("inf")}
        for _ in range(args.rounds):
            for mode in best:
                best[mode] = min(best[mode], _once(mode, folder, cache))
        print(
            f"{label}: warm load, collector on {best['on']:.2f} s, paused {best['paused']:.2f} s, "
            f"on/paused {best['on'] / best['paused']:.2f}x (best of {args.rounds})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
