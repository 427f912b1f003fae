"""Import rate of the Claude Code importer on the real sessions, in MB/s on one core.

Goal (issue 2): at least 20 MB/s. Run from the checkout root::

    python benchmarks/import_bench.py [--repeat N] [PATH]

PATH defaults to ../shared/traces/claude-code (every session, subagent and compaction file). The process is
pinned to one CPU where the OS allows it; each file is imported ``--repeat`` times and the best pass is kept
(the least disturbed by other work on the machine). Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.importers import claude_code
from workbench.paths import shared_traces


def files_under(root: Path) -> list[Path]:
    return sorted(root.glob("*.jsonl")) + sorted(root.glob("*/subagents/*.jsonl"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="folder of Claude Code sessions")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    root = Path(args.path) if args.path else (shared_traces() or Path("missing")) / "claude-code"
    files = files_under(root)
    if not files:
        print(f"no Claude Code sessions under {root}", file=sys.stderr)
        return 1
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    size = sum(f.stat().st_size for f in files)
    passes = []
    calls = 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        calls = sum(len(run.turns) for f in files for run in claude_code.load(f))
        passes.append(time.perf_counter() - start)
    best = min(passes)
    print(f"files:        {len(files)} ({size / 1e6:.2f} MB, {calls} model calls)")
    print(f"best pass:    {best:.3f} s  (passes: {', '.join(f'{p:.3f}' for p in passes)})")
    print(f"import rate:  {size / 1e6 / best:.1f} MB/s on one core (goal: 20 MB/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
