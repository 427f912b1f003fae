"""``workbench report PATH... --out DIR``: the calibration report (HTML + Markdown + PNGs)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path

from workbench.cli import errors
from workbench.cli._sources import add_paths
from workbench.cli.ablation import ablation_overrides, add_ablation_arguments
from workbench.cli.invariants import INVARIANT_FLAGS, add_invariant_arguments, invariants_from_args
from workbench.format import printable
from workbench.outputs import inside, refusal
from workbench.paths import REPO_ROOT


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "report",
        help="write a calibration report (grant band, survival, stop reasons, charts)",
        description="Sweep a corpus over grants (and context lengths), find the grant band where every "
        "invariant holds, and write DIR/report.html (self-contained), DIR/report.md and PNGs. With no PATH: "
        "the bundled traces/ plus the agent histories on this machine.",
    )
    add_paths(p)
    errors.add_rules(p, many=True, metavar="RULES")
    errors.add_grants(p, "grants to sweep", "--grant", default="default 100000:600000:2000")
    p.add_argument(
        "--context-lengths",
        type=errors.context_lengths,
        metavar="N,N,...",
        default=None,
        help="comma list for the heat map, 'none' = no manager (default none,32768,65536,131072)",
    )
    p.add_argument(
        "--coverage-sources",
        default=None,
        metavar="SOURCE,...",
        help="comma list of sources (synthetic, claude-code, openhands, …) whose honest runs the coverage and "
        "recommendation read (default: all)",
    )
    p.add_argument(
        "--title", default="Calibration report", help="the report's title (default: Calibration report)"
    )
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="folder to write the report into; a report the workbench wrote there before is replaced whole",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace --out even when it is not a report the workbench wrote (its contents are deleted)",
    )
    p.add_argument("--progress", action="store_true", help="show sweep progress")
    p.add_argument(
        "--workers",
        type=errors.positive_int,
        metavar="N",
        help="local processes for the bills and the heat map's context replays, the PNGs and the files "
        "the cache does not know, each where enough work makes them pay (default: one per core)",
    )
    p.add_argument(
        "--by",
        default="source",
        choices=("source", "agent", "model", "all"),
        help="headline groups (default source)",
    )
    add_invariant_arguments(p)
    add_ablation_arguments(p)
    p.set_defaults(func=run)


def check_out(out: Path, inputs: list[Path], *, force: bool) -> None:
    """Refuse, before any work, an --out that would replace an input or something the user did not ask for."""
    for p in inputs:
        if os.path.exists(p) and inside(p, out):
            raise errors.UsageError(f"--out {out}", f"would replace the input {p}; choose another folder")
    why = refusal(out, force=force)
    if why:
        raise errors.UsageError(f"--out {out}", why)


def run(args: argparse.Namespace) -> int:
    from workbench.cli._load import load_runs  # the readers: not for --help
    from workbench.report import ReportConfig, build_report, write_report
    from workbench.report.build import default_paths

    inputs = [Path(p) for p in args.paths] or default_paths()
    check_out(args.out, inputs, force=args.force)

    kw: dict[str, object] = {"rules": tuple(args.rules), "title": args.title}
    if args.grants is not None:
        kw["grants"] = args.grants
    if args.context_lengths is not None:
        kw["context_lengths"] = args.context_lengths
    invariants = invariants_from_args(args)
    if invariants == "seed":
        kw["invariant_set"] = "seed"
    else:
        kw["analyst"] = invariants
        if args.invariants is not None or any(getattr(args, k) is not None for k in INVARIANT_FLAGS):
            # the analyst asked: their invariants head even a synthetic corpus
            kw["invariant_set"] = "analyst"
    kw["by"] = args.by
    from workbench.scale.executor import cores

    kw["workers"] = args.workers or cores()
    kw["progress"] = bool(args.progress)
    kw["overrides"] = ablation_overrides(args, tuple(args.rules))
    if args.coverage_sources:
        kw["coverage_sources"] = tuple(x.strip() for x in args.coverage_sources.split(",") if x.strip())
    try:
        config = ReportConfig(**kw)  # type: ignore[arg-type]
        command = (
            "workbench report " + " ".join(shlex.quote(a) for a in sys.argv[2:])
            if len(sys.argv) > 1
            else "workbench report"
        )
    except ValueError as exc:
        raise errors.UsageError("configuration", str(exc)) from exc
    if not inputs:
        raise errors.DataError("no PATH given", "no bundled traces/ or agent histories found on this machine")
    corpus = load_runs(
        inputs,
        "report",
        "leaves (sessions split at each user prompt; compaction calls and runs with no model call left out)",
        workers=args.workers,
    )
    inside_out = [f for f in (*corpus.files, *corpus.skipped) if inside(f, args.out)]
    if inside_out:
        raise errors.UsageError(
            f"--out {args.out}",
            f"holds the input {inside_out[0]}; it would be replaced; choose another folder",
        )
    try:
        report = build_report(inputs, corpus=corpus, config=config, command=command, now=datetime.now(UTC))
    except ValueError as exc:
        raise errors.DataError(str(exc)) from exc
    written = write_report(report, args.out, force=args.force, workers=config.workers)
    sources = report.facts["source"].value_counts().sort_index()
    by_source = ", ".join(f"{n} {src}" for src, n in sources.items())
    print(printable(f"replayed: {len(report.facts)} leaves ({by_source})"))
    from workbench.report.views import headlines

    print(f"invariants: {config.analyst.words if report.mode == 'analyst' else 'seed'}")
    for p in report.picks:
        print(printable(f"{p.group}: {p.headline}"))
        print(printable(f"  why: {p.why}"))
    if report.mode == "analyst":
        for h in headlines(report):
            flag = f" Widen the grid with {h['flag']}." if h.get("flag") else ""
            print(printable(f"{h['group']}: {h['text']}{flag}"))
    for f in report.findings:
        label = "seed probe" if report.mode == "analyst" else "seed band"
        print(printable(f"{label} ({f.rules}): {'grant band ' if f.band.found else ''}{f.words}"))
    print(f"report: {written.html.resolve()}")
    print(f"markdown: {written.markdown.resolve()}")
    notebooks = REPO_ROOT / "notebooks"
    if notebooks.is_dir():
        print(f"notebooks: jupyter lab {notebooks}")
    # the report is written from what could be read; a file that could not be read is the data's fault (docs/cli.md)
    return 1 if corpus.problems or corpus.refused else 0
