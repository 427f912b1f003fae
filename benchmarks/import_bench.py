"""Import rate per format, in MB/s on one core.

Goal (issue 2): at least 20 MB/s for Claude Code. Run from the checkout root::

    python benchmarks/import_bench.py [--repeat N] [--no-synthetic] [PATH ...]

PATH defaults to ../shared/traces (every file under it; a folder that is one run, an OpenHands conversation, as
one input). Each input's format is detected by content, as ``workbench.load`` does; inputs no importer reads are
left out. The formats and shapes with no real sample there (OpenHands V1 output, conversation folders and
trajectory arrays, SWE-agent, Inspect AI (.eval, counted inflated), Aider, Gemini CLI and OTel GenAI) are generated
by the tests' registry of format samples (``tests/samples``, ``sized()``) and marked synthetic. The process is pinned
to one CPU where the OS allows it; each input is imported ``--repeat`` times and the best pass per format is kept
(the least disturbed by other work on the shared machine). Prints one row per format; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.importers import detect
from workbench.paths import shared_traces
from workbench.trace.corpus import _is_folder_run
from workbench.trace.errors import TraceError


def files_under(roots: list[Path]) -> list[Path]:
    out: list[Path] = []
    for root in roots:
        if root.is_file() or _is_folder_run(root):
            out.append(root)
            continue
        runs = sorted(p for p in root.rglob("*") if p.is_dir() and _is_folder_run(p))
        out.extend(runs)
        out.extend(
            sorted(p for p in root.rglob("*") if p.is_file() and not any(r in p.parents for r in runs))
        )
    return out


def size_of(path: Path) -> int:
    """Bytes of data read: a folder run's files; a zip (an Inspect .eval) counted inflated, since its compression
    ratio says nothing about the reader."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            return sum(i.file_size for i in z.infolist())
    return path.stat().st_size


def bench(inputs: list[Path], repeat: int, kind: str) -> None:
    by_format: dict[str, list[tuple[Path, ModuleType]]] = defaultdict(list)
    for f in inputs:
        try:
            module = detect(f)
        except (TraceError, OSError):
            continue
        by_format[module.__name__.rsplit(".", 1)[-1]].append((f, module))
    for name, items in sorted(by_format.items()):
        size = sum(size_of(f) for f, _ in items)
        passes = []
        calls = 0
        for _ in range(repeat):
            start = time.perf_counter()
            calls = sum(len(run.turns) for f, module in items for run in module.load(f))
            passes.append(time.perf_counter() - start)
        best = min(passes)
        mb = size / 1e6
        print(f"{name:<24} {kind:<9} {len(items):>5} {mb:>8.2f} {calls:>7} {best:>8.3f} {mb / best:>7.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="files or folders (default: ../shared/traces)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-synthetic", action="store_true", help="only the real inputs")
    parser.add_argument(
        "--generated-calls",
        type=int,
        default=500,
        metavar="N",
        help="model calls in each generated file (tests/samples, sized())",
    )
    args = parser.parse_args()
    roots = [Path(p) for p in args.paths] or [shared_traces() or Path("missing")]
    inputs = files_under([r for r in roots if r.exists()])
    if not inputs and args.no_synthetic:
        print(f"no readable traces under {', '.join(map(str, roots))}", file=sys.stderr)
        return 1
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print(f"{'format':<24} {'inputs':<9} {'n':>5} {'MB':>8} {'calls':>7} {'best s':>8} {'MB/s':>7}")
    bench(inputs, args.repeat, "real")
    if not args.no_synthetic:
        with tempfile.TemporaryDirectory() as tmp:
            from tests.samples import write_sized  # the formats with no real recording here

            bench(write_sized(Path(tmp), args.generated_calls), args.repeat, "synthetic")
    print("(one core, best of --repeat passes; the goal for Claude Code is 20 MB/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
