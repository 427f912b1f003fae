"""Start-up time of ``workbench --help`` and of every subcommand's ``--help`` against a bare ``python -c pass``,
best of N fresh interpreters.

Goals: ``workbench --help`` in at most 0.15 s (issue 11); every subcommand's ``--help`` within 8x a bare
interpreter (issue 24). Run from the checkout root::

    python benchmarks/startup_bench.py [--repeat N]

Each command runs in a fresh interpreter (``sys.executable``, not a shell shim, so a version manager's wrapper
is not counted); the best of ``--repeat`` is kept (the least disturbed by other work), and the commands are
interleaved round by round so a burst of other work on the machine hits all of them alike. Prints figures;
asserts nothing (tests/cli/test_startup.py holds the imports each ``--help`` may make).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.cli import SUBCOMMANDS, Subcommand  # noqa: E402  (after the checkout is on the path)

RATIO_GOAL = 8.0


def commands() -> dict[str, list[str]]:
    names = [s.name if isinstance(s, Subcommand) else s for s in SUBCOMMANDS]
    found = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "workbench --help": [sys.executable, "-m", "workbench", "--help"],
    }
    for name in names:
        found[f"workbench {name} --help"] = [sys.executable, "-m", "workbench", name, "--help"]
    return found


def measure(repeat: int) -> dict[str, float]:
    todo = commands()
    best = dict.fromkeys(todo, float("inf"))
    for _ in range(repeat):
        for name, command in todo.items():
            start = time.perf_counter()
            subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    figures = measure(args.repeat)
    bare = figures["python -c pass"]
    for name, seconds in figures.items():
        print(f"{name:32s} {seconds:.3f} s  ({seconds / bare:4.1f}x a bare interpreter)")
    worst = max(
        (s / bare, n) for n, s in figures.items() if n.endswith(" --help") and n != "workbench --help"
    )
    print(
        f"goal: workbench --help <= 0.150 s -> {'met' if figures['workbench --help'] <= 0.15 else 'NOT met'}; "
        f"every subcommand --help <= {RATIO_GOAL:.0f}x -> {'met' if worst[0] <= RATIO_GOAL else 'NOT met'} "
        f"(worst {worst[1]}, {worst[0]:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
