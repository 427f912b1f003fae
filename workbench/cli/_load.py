"""Loading the runs a subcommand was given, with every problem said once, the same way, on stderr."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench.cli import errors
from workbench.scale import load
from workbench.scale.executor import cores
from workbench.trace.corpus import Corpus
from workbench.trace.errors import TraceError


def read_corpus(
    paths: Sequence[str | Path],
    command: str,
    works_on: str,
    *,
    one_problem: bool = True,
    workers: int | None = None,
    client: Any = None,
) -> Corpus:
    """The corpus under ``paths``, after printing each unreadable file (``workbench CMD: file:line: what``) and
    refused entry (FIFOs, devices, dangling links) and the corpus line; with ``one_problem``, the one thing given
    that could not be read is the error itself (one line)."""
    try:
        # one local process per core for the files the cache does not know (the library's default: this one)
        corpus = load(*paths, workers=workers or cores(), client=client)
    except TraceError as exc:
        raise errors.DataError(str(exc)) from exc
    if one_problem and len(corpus.problems) == 1 and not (corpus.runs or corpus.files or corpus.refused):
        raise errors.DataError(str(corpus.problems[0]))
    for problem in (*corpus.problems, *corpus.refused):
        errors.say(command, str(problem))
    errors.say(command, corpus.summary().words(works_on))  # on stderr, so --json stays clean
    return corpus


def load_runs(paths: Sequence[str | Path], command: str, works_on: str = "runs", **how: Any) -> Corpus:
    """The runs under ``paths``, after printing each unreadable file (``workbench CMD: file:line: what``) and
    the corpus line. Raises :class:`~workbench.cli.errors.DataError` when a path is missing or nothing could
    be read; the rest of a corpus still loads when some files cannot be read. ``how``: ``workers``, ``client``."""
    if not paths:
        raise errors.UsageError("PATH", "give a trace file or folder, or --phoenix URL --project NAME")
    corpus = read_corpus(paths, command, works_on, **how)
    if corpus.renamed:
        first = next(iter(corpus.renamed.items()))
        errors.say(
            command,
            f"{len(corpus.renamed)} run(s) repeat a run_id loaded from another file (copies?) and were renamed, "
            f"e.g. {first[1][0]} in {first[1][1]} -> {first[0]}",
        )
    if not corpus.runs:
        raise errors.DataError(", ".join(map(str, paths)), "no runs found")
    return corpus
