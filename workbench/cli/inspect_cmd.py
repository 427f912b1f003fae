"""``workbench inspect [PATH...] [--json]``: what each run holds and what its import could not map.

With no PATH it inspects the project's bundled ``traces/`` and the agent histories found on this machine
(``~/.claude/projects``, ``~/.codex/sessions``)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.format import printable, printable_lines
from workbench.paths import bundled_traces, real_histories

from . import errors
from ._format import table
from ._sources import add_paths

if TYPE_CHECKING:
    from workbench.trace.corpus import Corpus

COLUMNS = ("run_id", "source", "model", "calls", "prompt_tokens", "cached_tokens",
           "cache_write_tokens", "completion_tokens", "context_length", "segments", "stop",
           "label", "cost_usd", "events")  # fmt: skip


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "inspect",
        help="summarise recorded runs: calls, tokens, segments, stop, events, what the import lost",
        description="Summarise the runs in the given files or folders (default: bundled traces/ and the "
        "agent histories on this machine).",
    )
    add_paths(p, "a trace file or a folder (any supported format)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.set_defaults(func=run)


def default_paths() -> list[Path]:
    found = [p for p in (bundled_traces(),) if p.is_dir()]
    return found + real_histories()


def summaries(corpus: Corpus) -> list[dict[str, Any]]:
    from workbench.trace.frames import run_summary  # pandas: only when a command runs

    return [run_summary(r) for r in corpus.runs]


def run(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths] or default_paths()
    if not paths:
        raise errors.DataError("no PATH given", "no bundled traces/ or agent histories found on this machine")
    import orjson

    from ._load import read_corpus  # the readers (pydantic): only when a command runs

    corpus = read_corpus(paths, "inspect", "runs (one row each)")
    rows = summaries(corpus)
    if args.json:
        doc = {
            "runs": rows,
            "problems": [str(p) for p in corpus.problems],
            "skipped": [s.to_dict() for s in corpus.skipped],
            "corpus": dataclasses.asdict(corpus.summary()),
        }
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")
    else:
        if rows:
            print(table([_shown(r) for r in rows], COLUMNS, max_width=64))
            print()  # a blank line, then the count (a "\n" inside printable() would be shown escaped)
            print(
                printable(f"{len(rows)} runs from {len(corpus.files)} files ({', '.join(map(str, paths))})")
            )
            print(printable_lines(_lossy_text(rows)))
            print(printable_lines(_diagnostics_text(rows)))
        if corpus.skipped:
            print(printable_lines(skipped_text(corpus)))
    if not corpus.runs:
        raise errors.DataError(", ".join(str(p) for p in paths), "nothing could be read")
    return 1 if corpus.problems or corpus.refused else 0


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    """A row as the table shows it: a mixed session names each of its models (``--json`` has their shares)."""
    if len(row.get("models") or ()) > 1:
        return {**row, "model": " + ".join(m["model"] for m in row["models"])}
    return row


def _lossy_text(rows: list[dict[str, Any]]) -> list[str]:
    """Lossy notes grouped by source, each with how many runs it applies to (the notes repeat per source)."""
    by_source: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        counts[r["source"]] += 1
        for note in r["lossy"]:
            by_source[r["source"]][note].append(r["run_id"])
    lines = ["", "What the imports could not map:"]
    for source, notes in sorted(by_source.items()):
        lines.append(f"  {source} ({counts[source]} runs)")
        for note, ids in notes.items():
            which = "all runs" if len(ids) == counts[source] else f"{len(ids)} runs: {', '.join(ids[:3])}"
            if len(ids) > 3 and len(ids) != counts[source]:
                which += ", …"
            lines.append(f"    - {note} [{which}]")
    if len(lines) == 2:
        lines.append("  nothing: every field mapped")
    return lines


def _diagnostics_text(rows: list[dict[str, Any]]) -> list[str]:
    bad = [r for r in rows if r["diagnostics"]]
    if not bad:
        return ["", "Unreadable lines: none"]
    lines = ["", "Unreadable lines (kept everything else):"]
    for r in bad:
        lines.append(f"  {r['run_id']}: {len(r['diagnostics'])}")
        lines.extend(f"    {d}" for d in r["diagnostics"][:5])
    return lines


SKIPPED_SHOWN = 10
"""Entries listed per reason in the text output (all of them are in ``--json``)."""


def skipped_text(corpus: Corpus) -> list[str]:
    """Every entry not loaded, grouped by reason (the first few paths of each, and the count), one item a line."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for s in corpus.skipped:
        by_reason[s.reason].append(str(s.path))
    lines = ["", f"Not loaded ({len(corpus.skipped)} entries; --json lists every one):"]
    for reason, paths in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {reason} ({len(paths)})")
        lines.extend(f"    {p}" for p in paths[:SKIPPED_SHOWN])
        if len(paths) > SKIPPED_SHOWN:
            lines.append(f"    … and {len(paths) - SKIPPED_SHOWN} more")
    return lines
