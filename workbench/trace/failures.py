"""What a load does with a file that did not load: one rule for the plain and the indexed loader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.label_files import results_kind
from workbench.trace.errors import TraceError, UnknownFormatError
from workbench.trace.walk import SkippedFile


def record_failure(corpus: Any, f: Path, exc: Exception, skip_unknown: bool, explicit: set[Path]) -> None:
    """File ``exc`` under ``corpus`` (a ``workbench.trace.corpus.Corpus``): a file found by walking a folder in no
    supported format is skipped (a grader's results file says so), one named on the command line is a problem; a
    trace error is a problem; an OS error (it changed under us, no permission) is a refused entry; anything else is
    an importer bug, reported as a problem so that the rest of the corpus still loads."""
    if isinstance(exc, UnknownFormatError):
        if skip_unknown and f not in explicit:
            corpus.skipped.append(SkippedFile(f, results_kind(f) or exc.message))
        else:
            corpus.problems.append(exc)
    elif isinstance(exc, TraceError):
        corpus.problems.append(exc)
    elif isinstance(exc, OSError):
        corpus.skipped.append(SkippedFile(f, f"unreadable: {exc.strerror or exc}", refused=True))
    else:
        corpus.problems.append(TraceError(str(f), f"the importer failed: {type(exc).__name__}: {exc}"))
