"""``workbench calibrate PATH... [--rules ...] [--json] [--out DIR]``: every constant against a corpus.

Prints one row per constant — its seed value, what the value in use does on the corpus, the recommendation and band
with the runs and calls behind it, or "not enough data" — and, with ``--json``, one JSON object per constant per
line. ``--out DIR`` also writes ``calibration.json``, ``calibration.csv``, ``calibration.md`` and one evidence chart
per constant (``<constant>.png``); each file is written under a temporary name and renamed into place.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from workbench.cli._format import table
from workbench.cli._load import load_runs
from workbench.govern.policy import RULE_SETS, Policy

if TYPE_CHECKING:
    from workbench.analysis.calibration import Calibration

COLUMNS = ("constant", "seed", "in_use", "recommendation", "rule", "runs", "calls")


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "calibrate",
        help="every constant against a corpus: seed value, effect, recommendation and band, or not enough data",
        description=__doc__,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="trace files or folders")
    p.add_argument("--rules", choices=sorted(RULE_SETS), default="current", help="rule set (default current)")
    p.add_argument("--json", action="store_true", help="one JSON object per constant per line")
    p.add_argument(
        "--out", type=Path, metavar="DIR", help="also write the table, JSON and one chart per constant"
    )
    p.set_defaults(func=run)


def render(cal: Calibration) -> str:
    rows = []
    for r in cal.rows:
        rows.append(
            {
                "constant": r.name,
                "seed": r.seed,
                "in_use": r.in_use,
                "recommendation": r.recommendation_words,
                "rule": r.rule if r.status == "recommended" else "",
                "runs": r.runs,
                "calls": r.calls,
            }
        )
    out = [f"Calibration under {cal.policy_label}: {cal.corpus}", "", table(rows, COLUMNS, max_width=60), ""]
    out.append("What the value in use does on this corpus:")
    out += [f"- {r.name}: {r.effect}" for r in cal.rows]
    out += ["", "Notes:"] + [f"- {n}" for n in cal.notes]
    return "\n".join(out)


def markdown(cal: Calibration) -> str:
    from workbench.report.tables import md_table

    frame = cal.to_frame()
    lines = ["# Calibration of every constant", "", f"Under {cal.policy_label}: {cal.corpus}", ""]
    lines.append(md_table(frame.drop(columns=["touched"])))
    for r in cal.rows:
        lines += [
            "",
            f"## {r.name}",
            "",
            f"- home: `{r.home}` — {r.provenance}",
            f"- on this corpus: {r.effect}",
        ]
        lines += [f"- recommendation: {r.recommendation_words}", f"- rule: {r.rule}"]
        lines += [f"- evidence: {r.runs:,} runs, {r.calls:,} calls"] + [f"- {n}" for n in r.notes]
    return "\n".join(lines) + "\n"


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` under a temporary name in the same folder, then rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_outputs(cal: Calibration, out: Path) -> list[Path]:
    from workbench.charts.calibration import constant_chart
    from workbench.report.figures import png_bytes

    out.mkdir(parents=True, exist_ok=True)
    written = []
    files = {
        "calibration.json": orjson.dumps(cal.to_dicts(), option=orjson.OPT_INDENT_2, default=str),
        "calibration.csv": cal.to_frame().to_csv(index=False).encode(),
        "calibration.md": markdown(cal).encode(),
    }
    for r in cal.rows:
        files[f"{slug(r.name)}.png"] = png_bytes(constant_chart(r))
    for name, data in files.items():
        write_atomic(out / name, data)
        written.append(out / name)
    return written


def run(args: argparse.Namespace) -> int:
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        print(f"workbench calibrate: --out {args.out} exists and is not a folder", file=sys.stderr)
        return 2
    corpus = load_runs(args.paths, "calibrate")
    if corpus is None:
        return 1
    from workbench.analysis.calibration import calibrate  # pandas, lifelines: only when a calibration runs

    try:
        cal = calibrate(corpus, Policy.named(args.rules))
    except ValueError as exc:
        print(f"workbench calibrate: {exc}", file=sys.stderr)
        return 1
    if args.json:
        for d in cal.to_dicts():
            sys.stdout.write(orjson.dumps(d, default=str).decode() + "\n")
    else:
        print(render(cal))
    if args.out is not None:
        try:
            written = write_outputs(cal, args.out)
        except OSError as exc:
            print(f"workbench calibrate: cannot write to {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"wrote {len(written)} files to {args.out}", file=sys.stderr)
    return 1 if corpus.problems else 0
