"""``workbench sweep PATH... --grant START:STOP:STEP [--rules ...] --out FILE.csv|.parquet``

Replays every run (every segment of an interactive session) under each grant of the range (STOP inclusive) and
writes one row per (run, grant) — the columns of ``workbench.replay.sweep`` — to a CSV or Parquet file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli._load import load_runs
from workbench.cli.replay_cmd import add_policy_arguments, policy_from_args
from workbench.replay.grid import parse_range
from workbench.replay.sweep import sweep


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep", help="replay runs under a range of grants into a table", description=__doc__
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="trace files or folders")
    p.add_argument(
        "--grant", required=True, metavar="START:STOP:STEP", help="grants to sweep (STOP inclusive)"
    )
    add_policy_arguments(p, grant=False)
    p.add_argument("--out", required=True, type=Path, help="output table: .csv or .parquet")
    p.add_argument("--workers", type=int, help="local processes, each loading its own files (default 1: this process, measured faster on small machines)")
    p.add_argument("--no-fast", action="store_true", help="always take the governor path")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    suffix = args.out.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        print(f"workbench sweep: --out must end in .csv or .parquet, got {args.out}", file=sys.stderr)
        return 2
    try:
        grants = parse_range(args.grant)
        base = policy_from_args(argparse.Namespace(**{**vars(args), "grant": None}))
    except ValueError as exc:
        print(f"workbench sweep: {exc}", file=sys.stderr)
        return 2
    corpus = load_runs(args.paths, "sweep")
    if corpus is None:
        return 1
    frame = sweep(
        corpus,
        {"grant": grants},
        base=base,
        workers=args.workers,
        fast=not args.no_fast,
        progress=not args.quiet,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        frame.to_csv(args.out, index=False)
    else:
        frame.to_parquet(args.out, index=False)
    print(f"{len(frame)} rows ({frame['run_id'].nunique()} runs x {len(grants)} grants) -> {args.out}")
    return 1 if corpus.problems else 0
