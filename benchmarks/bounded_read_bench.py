"""Benchmark: what reading hostile files costs once the readers are bounded (issue 13).

* a log of 1,000,000 unreadable lines and two good calls: peak memory (tracemalloc) and time to load it, with the
  diagnostics it keeps (1,001: the first 1,000 and one count) — it cost 810 MB when every problem was an object;
* a 256 MiB line with no newline (what ``/dev/zero`` or a runaway log looks like): peak memory while it is skipped,
  against the 64 MiB line cap — the cap applies while reading, so the line is never held whole.

Run from the checkout root: ``python benchmarks/bounded_read_bench.py`` (writes its files to a temporary folder).
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package, not an installed one

from tests.samples import sample
from workbench.scale import load_file
from workbench.trace.limits import MAX_LINE_BYTES


def measure(path: Path) -> tuple[float, float, int, int]:
    """Seconds (a plain pass), peak MiB (a second pass under tracemalloc, which slows allocation ~10x), calls and
    diagnostics kept."""
    start = time.perf_counter()
    (run,) = load_file(path)
    seconds = time.perf_counter() - start
    tracemalloc.start()
    load_file(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak / 2**20, len(run.turns), len(run.diagnostics)


def main() -> None:
    lines = sample("openai_log", "request/response lines").lines()  # a header line, then two calls
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.jsonl"
        with bad.open("wb") as fh:
            fh.write(lines[0] + lines[1])
            for _ in range(1_000):
                fh.write(b"not json\n" * 1_000)
            fh.write(lines[2])
        seconds, peak, turns, diags = measure(bad)
        print(
            f"1,000,000 bad lines: {seconds:.1f} s, peak {peak:.1f} MiB, {turns} calls kept, {diags:,} diagnostics"
        )
        long = Path(tmp) / "long.jsonl"
        with long.open("wb") as fh:
            fh.write(lines[0] + lines[1])
            chunk = b"\0" * (1 << 20)
            for _ in range(256):
                fh.write(chunk)
            fh.write(b"\n" + lines[2])
        seconds, peak, turns, diags = measure(long)
        ratio = peak / (MAX_LINE_BYTES / 2**20)
        print(
            f"256 MiB line: {seconds:.1f} s, peak {peak:.1f} MiB ({ratio:.2f} x the {MAX_LINE_BYTES >> 20} MiB cap), "
            f"{turns} calls kept, {diags} diagnostic"
        )


if __name__ == "__main__":
    main()
