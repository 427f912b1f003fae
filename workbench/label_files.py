"""Which files beside runs are a grader's results (read by ``workbench.labels``), told by their place and name
alone. Kept apart from ``workbench.labels`` (which builds on the trace package) so the folder walk can ask it
without an import cycle."""

from __future__ import annotations

import os
from pathlib import Path


def results_kind(path: str | os.PathLike[str]) -> str | None:
    """Why a file beside runs is not a trace, when it is a grader's results file this module reads (a folder walk
    lists it as skipped with this reason rather than as an unknown format)."""
    p = Path(path)
    if p.name == "report.json" and "logs" in p.parts:
        return "a SWE-bench per-instance report: read for outcome labels, not a trace (docs/labels.md)"
    if p.parent.name == "sb-cli-reports" and p.suffix == ".json":
        return "a SWE-bench run report: read for outcome labels, not a trace (docs/labels.md)"
    if p.name == "results.json":
        return "a SWE-bench results file: read for outcome labels, not a trace (docs/labels.md)"
    return None
