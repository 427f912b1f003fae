"""``workbench calibrate PATH... [--rules ...] [--compare PATH]... [--json] [--out DIR]``: every constant against a
corpus.

Prints one row per constant — its seed value, what the value in use does on the corpus, its status (recommended,
keep, evidence points elsewhere: <row>, not enough data, no value satisfies), the recommendation and band with the
runs and calls behind it — then the flags (a reserve and safety that cannot fit a window in use, a row outside
another corpus's band) and, with ``--compare``, every row against each other corpus's band; with ``--json``, one
JSON object per constant per line. ``--out DIR`` also writes ``calibration.json``, ``calibration.csv``, ``calibration.md`` and one evidence chart
per constant (``<constant>.png``), whole into a fresh folder swapped in at DIR (with a manifest).
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from workbench.cli import errors
from workbench.cli._format import table
from workbench.cli.ablation import ablation_overrides, add_ablation_arguments
from workbench.cli.invariants import add_invariant_arguments, invariants_from_args
from workbench.cli.report_cmd import check_out
from workbench.format import printable
from workbench.govern.policy import Policy
from workbench.outputs import MANIFEST, csv_text, fresh_folder, manifest, refusal, swap_in

if TYPE_CHECKING:
    from workbench.analysis.calibration import Calibration

COLUMNS = ("constant", "seed", "in_use", "status", "recommendation", "rule", "runs", "calls")


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "calibrate",
        help="every constant against a corpus: seed value, effect, recommendation and band, or not enough data",
        description=__doc__,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="trace files or folders")
    errors.add_rules(p)
    errors.add_grants(p, "the leaf grant's grid", default="default 100000:600000:10000, the frontier's")
    add_invariant_arguments(p)
    add_ablation_arguments(p)
    p.add_argument(
        "--compare",
        action="append",
        default=None,
        metavar="PATH",
        help="another corpus (repeatable): calibrated under the same rules, invariants, grid and ablations, and "
        "every row checked against it; a row whose answer falls outside its band is flagged, naming it and its "
        "band (default: none)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per constant per line")
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="also write the table (JSON, CSV, Markdown) and one chart per constant into this folder; a folder "
        "the workbench wrote before is replaced whole",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace --out even when it is not a folder the workbench wrote (its contents are deleted)",
    )
    p.set_defaults(func=run)


def render(cal: Calibration) -> str:
    rows = [
        {
            "constant": r.name,
            "seed": r.seed,
            "in_use": r.in_use,
            "status": r.status_words,
            "recommendation": r.recommendation_words,
            "rule": r.rule if r.status in ("recommended", "keep", "no value satisfies") else "",
            "runs": r.runs,
            "calls": r.calls,
        }
        for r in cal.rows
    ]
    out = [
        printable(f"Calibration under {cal.policy_label}: {cal.corpus}"),
        "",
        table(rows, COLUMNS, max_width=60),
    ]
    flagged = [(r.name, f) for r in cal.rows for f in r.flags]
    out += ["", "Flags:"] + ([printable(f"- {n}: {f}") for n, f in flagged] or ["- none"])
    # rows where some side has an answer (a row no corpus can place says nothing against another)
    checked = [
        r
        for r in cal.rows
        if r.checks and (r.answer is not None or any(c.value is not None for c in r.checks))
    ]
    if checked:
        out += ["", "Against the other corpora (this row's answer inside each one's band?):"]
        for r in checked:
            answer = (
                "no answer"
                if r.answer is None
                else f"{r.answer:,}"
                if isinstance(r.answer, int)
                else f"{r.answer:g}"
            )
            out.append(
                printable(f"- {r.name} ({r.status_words}, {answer}): " + "; ".join(c.words for c in r.checks))
            )
    out += ["", "What the value in use does on this corpus:"]
    out += [printable(f"- {r.name}: {r.effect}") for r in cal.rows]
    out += ["", "Notes:"] + [printable(f"- {n}") for n in cal.notes]
    return "\n".join(out)


def markdown(cal: Calibration) -> str:
    """The table and every row's words as Markdown (every value escaped: a run id cannot open a heading)."""
    from workbench.format import md_code, md_inline
    from workbench.report.tables import md_table

    frame = cal.to_frame()
    lines = ["# Calibration of every constant", "", md_inline(f"Under {cal.policy_label}: {cal.corpus}"), ""]
    lines.append(md_table(frame.drop(columns=["touched"])))
    for r in cal.rows:
        lines += ["", f"## {md_inline(r.name)}", "", f"- home: {md_code(r.home)} — {md_inline(r.provenance)}"]
        lines += [
            f"- on this corpus: {md_inline(r.effect)}",
            f"- recommendation: {md_inline(r.recommendation_words)}",
        ]
        lines += [f"- status: {md_inline(r.status_words)}"]
        lines += [f"- rule: {md_inline(r.rule)}", f"- evidence: {r.runs:,} runs, {r.calls:,} calls"]
        lines += [f"- **flag**: {md_inline(f)}" for f in r.flags]
        lines += [f"- against {md_inline(c.corpus)}: {md_inline(c.words)}" for c in r.checks]
        lines += [f"- {md_inline(n)}" for n in r.notes]
    return "\n".join(lines) + "\n"


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def write_outputs(cal: Calibration, out: Path, *, command: str, force: bool = False) -> list[Path]:
    """The table (JSON, CSV, Markdown) and one chart per constant, written whole into a fresh folder and swapped
    in at ``out`` with a manifest (``workbench.outputs``): a killed write leaves the previous folder or nothing."""
    from workbench.charts.calibration import constant_chart
    from workbench.report.figures import png_bytes

    why = refusal(out, force=force)
    if why:
        raise errors.UsageError(f"--out {out}", why)
    files = {
        "calibration.json": orjson.dumps(cal.to_dicts(), option=orjson.OPT_INDENT_2, default=str),
        "calibration.csv": csv_text(cal.to_frame()).encode(),
        "calibration.md": markdown(cal).encode(),
    }
    for r in cal.rows:
        files[f"{slug(r.name)}.png"] = png_bytes(constant_chart(r))
    fresh = fresh_folder(out)
    try:
        for name, data in files.items():
            (fresh / name).write_bytes(data)
        (fresh / MANIFEST).write_bytes(
            manifest([fresh / name for name in files], title="calibration", command=command)
        )
        swap_in(fresh, out)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    return [out / name for name in files]


def run(args: argparse.Namespace) -> int:
    if args.out is not None:
        check_out(args.out, [Path(p) for p in args.paths], force=args.force)
    invariants = invariants_from_args(args)
    policy = Policy.named(args.rules, **ablation_overrides(args, args.rules))
    from workbench.cli._load import load_runs  # the readers: not for --help

    works_on = (
        "leaves (sessions split at each user prompt; compaction calls and runs with no model call left out)"
    )
    corpus = load_runs(args.paths, "calibrate", works_on)
    others = [(path, load_runs([path], "calibrate", works_on)) for path in args.compare or ()]
    from workbench.analysis.calibration import calibrate  # pandas, lifelines: only when a calibration runs

    def one(runs: object, where: str) -> Calibration:
        try:
            return calibrate(
                runs, policy, grants=list(args.grants) if args.grants else None, invariants=invariants
            )
        except ValueError as exc:
            raise errors.DataError(where, str(exc)) from exc

    cal = one(corpus, " ".join(args.paths))
    if others:
        cal = cal.checked_against([(path, one(runs, f"--compare {path}")) for path, runs in others])
    if args.json:
        for d in cal.to_dicts():
            sys.stdout.write(orjson.dumps(d, default=str).decode() + "\n")
    else:
        print(render(cal))
    if args.out is not None:
        command = "workbench calibrate " + " ".join(shlex.quote(a) for a in sys.argv[2:])
        written = write_outputs(cal, args.out, command=command, force=args.force)
        errors.say("calibrate", f"wrote {len(written)} files to {args.out}")
    return 1 if corpus.problems or any(runs.problems for _, runs in others) else 0
