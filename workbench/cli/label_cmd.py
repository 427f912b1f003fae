"""``workbench label PATH... --results FILE --out DIR``: attach a grader's verdicts (a SWE-bench run report, a
per-instance ``report.json``, ``results.json``, or a ``.jsonl``/``.csv`` table; docs/labels.md) to runs by instance
id, and write the labelled runs as native traces into DIR."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from workbench.cli import errors
from workbench.cli.import_cmd import add_out_folder, check_out_folder, write_runs


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
        "--results",
        required=True,
        action="append",
        type=Path,
        metavar="FILE",
        help="a results file (repeatable)",
    )
    add_out_folder(p, "folder to write the labelled native traces into")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.cli._load import load_runs
    from workbench.labels import Label, attach, read_results
    from workbench.trace.errors import TraceError

    out: Path = args.out
    check_out_folder(out)
    labels: dict[str, Label] = {}
    for f in args.results:
        try:
            found = read_results(f)
        except TraceError as exc:
            raise errors.DataError(str(exc)) from exc
        for k, v in found.items():
            labels.setdefault(k, v)
    corpus, labelled, missing = attach(load_runs(args.paths, "label"), labels)
    runs = list(corpus.runs)
    inputs = [*corpus.files, *corpus.skipped, *args.results]
    write_runs(runs, out, inputs, force=args.force)
    counts = Counter(r.outcome.label for r in runs if r.role == "main")
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: str(kv[0])) if k)
    print(f"labelled {labelled} of {labelled + len(missing)} runs ({summary or 'none'}); written to {out}")
    if missing:
        shown = ", ".join(missing[:5]) + (", …" if len(missing) > 5 else "")
        errors.say("label", f"{len(missing)} run(s) have no entry in the results", shown)
    return 0
