"""``workbench import PATH... --out DIR``: any supported file or folder -> native traces, one file per run."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from workbench.trace.corpus import load
from workbench.trace.errors import TraceError
from workbench.trace.frames import run_summary
from workbench.trace.native import write_run
from workbench.trace.schema import Run

from ._format import table

COLUMNS = (
    "run_id",
    "source",
    "role",
    "calls",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "written",
)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "import",
        help="convert recorded runs (Claude Code, OpenHands, Codex CLI, OpenAI-style logs, native) to native traces",
        description="Convert every run in the given files or folders to a native trace, one file per run.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a trace file or a folder to search")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write the native traces into")
    p.set_defaults(func=run)


def file_name(run: Run) -> str:
    """A file name for a run id (subagent ids hold ``/``): unsafe characters become ``_``."""
    safe = re.sub(r"[^A-Za-z0-9._#-]+", "_", run.run_id.replace("/", "__")).strip("._") or "run"
    return f"{safe}.jsonl"


def write_runs(runs: list[Run], out: Path) -> list[Path]:
    """Write each run as a native trace in ``out`` (colliding names get ``-1``, ``-2`` …); the paths written."""
    used: dict[str, int] = {}
    written = []
    for r in runs:
        name = file_name(r)
        n = used.get(name, 0)
        used[name] = n + 1
        if n:
            name = name.removesuffix(".jsonl") + f"-{n}.jsonl"
        written.append(write_run(r, out / name))
    return written


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    try:
        corpus = load(*args.paths, skip_unknown=True)
    except TraceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for problem in corpus.problems:
        print(f"error: {problem}", file=sys.stderr)
    rows = []
    for r, path in zip(corpus.runs, write_runs(corpus.runs, out), strict=True):
        for d in r.diagnostics[:3]:
            print(f"warning: {d}", file=sys.stderr)
        if len(r.diagnostics) > 3:
            print(
                f"warning: … and {len(r.diagnostics) - 3} more problems in {r.source_file}", file=sys.stderr
            )
        rows.append({**run_summary(r), "written": str(path)})
    if rows:
        print(table(rows, COLUMNS, max_width=60))
        print(f"\n{len(rows)} runs from {len(corpus.files)} files written to {out}")
    if corpus.skipped:
        print(
            f"note: {len(corpus.skipped)} file(s) in no supported format were skipped "
            f"(first: {corpus.skipped[0]})",
            file=sys.stderr,
        )
    if not corpus.runs:
        print("error: nothing could be read from " + ", ".join(args.paths), file=sys.stderr)
        return 1
    return 0
