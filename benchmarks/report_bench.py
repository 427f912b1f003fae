"""Benchmark the main job: `workbench report` from a fresh clone (no bytecode caches), as a new user runs it.

    python benchmarks/report_bench.py                # default corpus (bundled traces + real histories)
    python benchmarks/report_bench.py --shared       # also ../shared/traces when present
    python benchmarks/report_bench.py --repeat 3 --budget 30

Clones this checkout's HEAD into a temporary folder, then times `python -m workbench report --out DIR` there,
in a fresh interpreter each time. Prints every wall time, the median, and whether it is under the budget.
Commit first: the clone sees only committed files.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=30.0, help="seconds the main job must stay under")
    parser.add_argument("--shared", action="store_true", help="add ../shared/traces to the corpus")
    args = parser.parse_args()
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        head = subprocess.run(
            ["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        command = [sys.executable, "-m", "workbench", "report", "--out", str(Path(tmp) / "out")]
        if args.shared:
            shared = ROOT.parent / "shared" / "traces"
            if not shared.is_dir():
                print(f"--shared: {shared} is absent", file=sys.stderr)
                return 2
            command[4:4] = [str(clone / "traces"), str(shared)]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg"}
        env.pop("PYTHONPATH", None)
        print(f"clone of {head} in {clone}")
        print("command:", " ".join(command[1:]))
        for i in range(args.repeat):
            start = time.perf_counter()
            done = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                print(done.stdout, done.stderr, sep="\n", file=sys.stderr)
                return done.returncode
            times.append(elapsed)
            print(f"run {i + 1}: {elapsed:.2f} s")
        print(done.stdout.strip())
    median = statistics.median(times)
    verdict = "under" if median < args.budget else "OVER"
    print(
        f"median {median:.2f} s (min {min(times):.2f}, max {max(times):.2f}) on {os.cpu_count()} cores: {verdict} the {args.budget:.0f} s budget"
    )
    return 0 if median < args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
