"""``workbench report PATH... --out DIR``: the calibration report (HTML + Markdown + PNGs)."""

from __future__ import annotations

import argparse
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path

from workbench.cli.frontier_cmd import add_invariant_arguments, invariants_from_args
from workbench.paths import REPO_ROOT
from workbench.trace.errors import TraceError


def parse_grants(text: str) -> tuple[int, ...]:
    """``START:STOP:STEP`` (STOP inclusive), e.g. ``150000:300000:1000``; or a comma list."""
    try:
        if ":" in text:
            start, stop, step = (int(x.replace("_", "")) for x in text.split(":"))
            if step <= 0 or stop < start:
                raise ValueError
            return tuple(range(start, stop + 1, step))
        return tuple(sorted({int(x.replace("_", "")) for x in text.split(",") if x.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--grants {text!r}: expected START:STOP:STEP with STEP > 0 and STOP >= START, or a comma list"
        ) from None


def parse_context_lengths(text: str) -> tuple[int | None, ...]:
    """Comma list of context lengths; ``none`` means no context-window manager."""
    out: list[int | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        if part in {"none", "off", "-"}:
            out.append(None)
            continue
        try:
            out.append(int(part.replace("_", "")))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"--context-lengths: {part!r} is not a number or 'none'"
            ) from None
    return tuple(out)


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "report",
        help="write a calibration report (grant band, survival, stop reasons, charts)",
        description="Sweep a corpus over grants (and context lengths), find the grant band where every "
        "invariant holds, and write DIR/report.html (self-contained), DIR/report.md and PNGs. With no PATH: "
        "the bundled traces/ plus the agent histories on this machine.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="trace files or folders")
    p.add_argument("--rules", default="current", help="comma list of rule sets (default: current)")
    p.add_argument(
        "--grants", type=parse_grants, default=None, help="START:STOP:STEP (default 100000:600000:2000)"
    )
    p.add_argument(
        "--context-lengths",
        type=parse_context_lengths,
        default=None,
        help="comma list for the heat map, 'none' = no manager (default none,32768,65536,131072)",
    )
    p.add_argument(
        "--coverage-sources",
        default=None,
        help="comma list of sources (synthetic, claude-code, openhands, …) whose honest runs the coverage and "
        "recommendation read (default: all)",
    )
    p.add_argument(
        "--by", default="source", choices=("source", "agent", "model", "all"), help="headline groups"
    )
    add_invariant_arguments(p)
    p.add_argument("--title", default="Calibration report")
    p.add_argument("--out", type=Path, required=True, help="folder to write the report into")
    p.add_argument("--progress", action="store_true", help="show sweep progress")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.report import ReportConfig, build_report, write_report

    kw: dict[str, object] = {
        "rules": tuple(r.strip() for r in args.rules.split(",") if r.strip()),
        "title": args.title,
    }
    if args.grants is not None:
        kw["grants"] = args.grants
    if args.context_lengths is not None:
        kw["context_lengths"] = args.context_lengths
    try:
        invariants = invariants_from_args(args)
    except ValueError as exc:
        print(f"workbench report: {exc}", file=sys.stderr)
        return 2
    if invariants == "seed":
        kw["invariant_set"] = "seed"
    else:
        kw["analyst"] = invariants
        explicit = args.invariants is not None or any(
            getattr(args, k) is not None
            for k in (
                "keep_resolved",
                "keep_bound",
                "max_lost",
                "max_raw",
                "min_saved_usd",
                "min_saved_tokens",
            )
        )
        if explicit:
            kw["invariant_set"] = (
                "analyst"  # the analyst asked: their invariants head even a synthetic corpus
            )
    kw["by"] = args.by
    if args.coverage_sources:
        kw["coverage_sources"] = tuple(x.strip() for x in args.coverage_sources.split(",") if x.strip())
    try:
        config = ReportConfig(**kw)  # type: ignore[arg-type]
        command = (
            "workbench report " + " ".join(shlex.quote(a) for a in sys.argv[2:])
            if len(sys.argv) > 1
            else "workbench report"
        )
        report = build_report(
            args.paths or None, config=config, command=command, now=datetime.now(UTC), progress=args.progress
        )
    except (ValueError, TraceError) as exc:
        print(f"workbench report: {exc}", file=sys.stderr)
        return 2
    written = write_report(report, args.out)
    sources = report.facts["source"].value_counts().sort_index()
    corpus = ", ".join(f"{n} {src}" for src, n in sources.items())
    print(f"corpus: {len(report.facts)} leaves ({corpus}) from {len(report.provenance.files)} files")
    from workbench.report.render import headlines

    if report.mode == "analyst":
        print(f"invariants: {config.analyst.words}")
        for h in headlines(report):
            print(f"{h['group']}: {h['text']}")
        for f in report.findings:
            print(f"seed probe ({f.rules}): {'grant band ' if f.band.found else ''}{f.words}")
    else:
        for f in report.findings:
            rec = f" — recommended {f.recommended:,}" if f.recommended else ""
            print(f"{f.rules}: {'grant band ' if f.band.found else ''}{f.words}{rec}")
    print(f"report: {written.html.resolve()}")
    print(f"markdown: {written.markdown.resolve()}")
    notebooks = REPO_ROOT / "notebooks"
    if notebooks.is_dir():
        print(f"notebooks: jupyter lab {notebooks}")
    return 0
