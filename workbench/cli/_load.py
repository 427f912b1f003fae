"""Loading the runs a subcommand was given, with every problem said once, the same way, on stderr."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from workbench.trace.corpus import Corpus, load
from workbench.trace.errors import TraceError


def load_runs(paths: Sequence[str], command: str) -> Corpus | None:
    """The runs under ``paths``; ``None`` (after saying why) when a path is missing or nothing could be read.
    Files that could not be read are reported as ``workbench COMMAND: file:line: what`` and the rest still load."""
    try:
        corpus = load(*paths)
    except TraceError as exc:
        print(f"workbench {command}: {exc}", file=sys.stderr)
        return None
    for problem in corpus.problems:
        print(f"workbench {command}: {problem}", file=sys.stderr)
    if corpus.renamed:
        first = next(iter(corpus.renamed.items()))
        print(
            f"workbench {command}: {len(corpus.renamed)} run(s) repeat a run_id loaded from another file "
            f"(copies?) and were renamed, e.g. {first[1][0]} in {first[1][1]} -> {first[0]}",
            file=sys.stderr,
        )
    if not corpus.runs:
        print(f"workbench {command}: no runs found in {', '.join(map(str, paths))}", file=sys.stderr)
        return None
    return corpus
