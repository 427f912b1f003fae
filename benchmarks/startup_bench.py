"""Start-up time of ``workbench --help`` against a bare ``python -c pass``, best of N fresh interpreters.

Goal (issue 11): ``workbench --help`` in at most 0.15 s. Run from the checkout root::

    python benchmarks/startup_bench.py [--repeat N]

Each command runs in a fresh interpreter (``sys.executable``, not a shell shim, so a version manager's wrapper
is not counted); the best of ``--repeat`` is kept (the least disturbed by other work). Prints figures; asserts
nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def best_of(command: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def measure(repeat: int) -> dict[str, float]:
    return {
        "python -c pass": best_of([sys.executable, "-c", "pass"], repeat),
        "workbench --help": best_of([sys.executable, "-m", "workbench", "--help"], repeat),
        "workbench sweep --help": best_of([sys.executable, "-m", "workbench", "sweep", "--help"], repeat),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    figures = measure(args.repeat)
    bare = figures["python -c pass"]
    for name, seconds in figures.items():
        print(f"{name:24s} {seconds:.3f} s  ({seconds / bare:.1f}x a bare interpreter)")
    print(
        f"goal: workbench --help <= 0.150 s -> {'met' if figures['workbench --help'] <= 0.15 else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
