"""Regenerate the bundled synthetic corpus: ``python -m workbench.scenarios --out traces/synthetic``.

Writes one native trace per run (``<run_id>.jsonl``), removing stale ``*.jsonl`` files there first, so
the folder is exactly ``build_corpus(seed)``. Same seed, same bytes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from workbench.scenarios.corpus import DEFAULT_SEED, build_corpus
from workbench.trace.native import write_run


def write_corpus(out: Path, seed: int = DEFAULT_SEED) -> list[Path]:
    """Write ``build_corpus(seed)`` into ``out`` (replacing its ``*.jsonl``); returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.jsonl"):
        stale.unlink()
    return [write_run(run, out / f"{run.run_id}.jsonl") for run in build_corpus(seed)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.scenarios", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("traces/synthetic"), help="folder to write")
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"corpus seed (default {DEFAULT_SEED})"
    )
    args = parser.parse_args(argv)
    files = write_corpus(args.out, args.seed)
    print(f"wrote {len(files)} synthetic runs (seed {args.seed}) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
