"""``workbench sweep PATH... --grants START:STOP:STEP [--rules ...] --out FILE.csv|.parquet`` (what it writes: the
parser's description below; the columns: ``workbench.replay.sweep``, docs/frames.md)."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

from workbench.cli import errors
from workbench.cli.replay_cmd import add_policy_arguments, policy_from_args


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="replay runs under a range of grants into a table",
        description="Replay every run (every segment of an interactive session) under each grant and write "
        "one row per (run, grant) to a CSV or Parquet file.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="trace files or folders")
    errors.add_grants(p, "grants to sweep", "--grant", required=True)
    add_policy_arguments(p, grant=False)
    p.add_argument(
        "--out", required=True, type=Path, metavar="FILE", help="the table to write: a .csv or .parquet file"
    )
    p.add_argument(
        "--workers",
        type=errors.positive_int,
        metavar="N",
        help="local processes, each loading its own files (default 1: this process, measured faster on small machines)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="parse a large corpus's new files, and sweep with --no-fast, on the Dask cluster at ADDRESS "
        "(tcp://host:port; needs dask.distributed; its workers must see these files and the cache folder)",
    )
    p.add_argument(
        "--no-fast",
        action="store_true",
        help="replay every grant through the Governor (slower; by default grant grids take an exact vectorised "
        "shortcut that gives the same rows)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the readers and the replay (pydantic, pandas) are imported when the command runs, not for --help
    from workbench.cli._format import check_table_out, write_table
    from workbench.cli._load import load_runs
    from workbench.scale.sweep import sweep

    check_table_out(args.out, args.paths)
    grants = list(args.grants)
    base = policy_from_args(argparse.Namespace(**{**vars(args), "grant": None}))
    client = dask_client(args.dask)
    corpus = load_runs(args.paths, "sweep", "leaves (sessions split at each user prompt)", client=client)
    check_table_out(args.out, corpus.files)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the runs left out are said below, once, in the CLI's words
        frame = sweep(
            corpus,
            {"grant": grants},
            base=base,
            workers=args.workers,
            client=client,
            fast=not args.no_fast,
            progress=not args.quiet,
        )
    for ex in frame.attrs.get("excluded", []):
        errors.say("sweep", ex["run_id"], f"left out, cost cannot be replayed: {ex['reason']}")
    write_table(frame, args.out)
    print(f"{len(frame)} rows ({frame['run_id'].nunique()} runs x {len(grants)} grants) -> {args.out}")
    return 1 if corpus.problems or corpus.refused else 0


def dask_client(address: str | None) -> Any:
    """A ``distributed.Client`` connected to ``address``, or ``None`` without ``--dask``."""
    if address is None:
        return None
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise errors.UsageError("--dask", "needs dask.distributed: pip install 'dask[distributed]'") from exc
    try:
        return Client(address, timeout=30)
    except OSError as exc:
        raise errors.DataError(f"--dask {address}: cannot connect: {exc}") from exc
