"""Import rate per format, in MB/s on one core.

Goal (issue 2): at least 20 MB/s for Claude Code. Run from the checkout root::

    python benchmarks/import_bench.py [--repeat N] [PATH ...]

PATH defaults to ../shared/traces (every file under it). Each file's format is detected by content, as
``workbench.load`` does; files no importer reads are left out. The process is pinned to one CPU where the OS
allows it; each file is imported ``--repeat`` times and the best pass per format is kept (the least disturbed by
other work on the shared machine). Prints one row per format; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.importers import detect
from workbench.paths import shared_traces
from workbench.trace.errors import TraceError


def files_under(roots: list[Path]) -> list[Path]:
    out: list[Path] = []
    for root in roots:
        if root.is_file():
            out.append(root)
            continue
        out.extend(sorted(p for p in root.rglob("*") if p.is_file()))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="files or folders (default: ../shared/traces)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    roots = [Path(p) for p in args.paths] or [shared_traces() or Path("missing")]
    by_format: dict[str, list[Path]] = defaultdict(list)
    for f in files_under(roots):
        try:
            module = detect(f)
        except (TraceError, OSError):
            continue
        by_format[module.NAME].append(f)
    if not by_format:
        print(f"no readable traces under {', '.join(map(str, roots))}", file=sys.stderr)
        return 1
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print(f"{'format':<16} {'files':>5} {'MB':>8} {'calls':>7} {'best s':>8} {'MB/s':>7}")
    for name, files in sorted(by_format.items()):
        module = detect(files[0])
        size = sum(f.stat().st_size for f in files)
        passes = []
        calls = 0
        for _ in range(args.repeat):
            start = time.perf_counter()
            calls = sum(len(run.turns) for f in files for run in module.load(f))
            passes.append(time.perf_counter() - start)
        best = min(passes)
        print(f"{name:<16} {len(files):>5} {size / 1e6:>8.2f} {calls:>7} {best:>8.3f} {size / 1e6 / best:>7.1f}")
    print("(one core, best of --repeat passes; the goal for Claude Code is 20 MB/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
