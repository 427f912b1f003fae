"""Loading the runs a subcommand was given, with every problem said once, the same way, on stderr."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.cli import errors
from workbench.trace.corpus import Corpus, load
from workbench.trace.errors import TraceError


def load_runs(paths: Sequence[str], command: str) -> Corpus | None:
    """The runs under ``paths``; ``None`` (after saying why) when a path is missing or nothing could be read.
    Files that could not be read are reported as ``workbench COMMAND: file:line: what`` and the rest still load."""
    try:
        corpus = load(*paths)
    except TraceError as exc:
        errors.say(command, str(exc))
        return None
    for problem in corpus.problems:
        errors.say(command, str(problem))
    if not corpus.runs:
        errors.say(command, ", ".join(map(str, paths)), "no runs found")
        return None
    return corpus
