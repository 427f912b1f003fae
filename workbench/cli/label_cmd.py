"""``workbench label PATH... --results FILE --out DIR``: attach a grader's verdicts to runs by instance id.

Runs whose importer found results beside them are labelled already (``workbench inspect`` shows ``label``);
this attaches labels from a results file that sits elsewhere: a SWE-bench run report (``resolved_ids`` /
``unresolved_ids``), a per-instance ``report.json``, an older ``results.json``, or a ``.jsonl`` / ``.csv`` table
with ``instance_id`` and ``label`` / ``resolved`` / ``score`` (docs/labels.md). The labelled runs are written
as native traces into DIR."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from workbench.labels import Label, attach, read_results
from workbench.trace.corpus import load
from workbench.trace.errors import TraceError

from .import_cmd import write_runs


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "label",
        help="attach resolved/unresolved labels from a results file to runs, by instance id",
        description="Attach a grader's verdicts (SWE-bench run reports, per-instance report.json, results.json, "
        "or a .jsonl/.csv table with instance_id and label/resolved/score) to the runs in PATH, matched by "
        "instance id, and write the labelled runs as native traces into DIR.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a trace file or a folder (any supported format)")
    p.add_argument(
        "--results", required=True, action="append", metavar="FILE", help="a results file (repeatable)"
    )
    p.add_argument(
        "--out", required=True, metavar="DIR", help="folder to write the labelled native traces into"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    labels: dict[str, Label] = {}
    try:
        for f in args.results:
            for k, v in read_results(f).items():
                labels.setdefault(k, v)
        corpus = load(*args.paths, skip_unknown=True)
    except TraceError as exc:
        print(f"workbench label: {exc}", file=sys.stderr)
        return 1
    if not corpus.runs:
        print("workbench label: nothing could be read from " + ", ".join(args.paths), file=sys.stderr)
        return 1
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"workbench label: {out}: exists and is not a folder", file=sys.stderr)
        return 2
    labelled, missing = attach(corpus.runs, labels)
    write_runs(corpus.runs, out)
    counts = Counter(r.outcome.label for r in corpus.runs if r.role == "main")
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: str(kv[0])) if k)
    print(f"labelled {labelled} of {labelled + len(missing)} runs ({summary or 'none'}); written to {out}")
    if missing:
        shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
        print(f"note: {len(missing)} run(s) have no entry in the results: {shown}", file=sys.stderr)
    return 0
