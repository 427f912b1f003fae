"""OpenHands outcome labels: where each evaluation writes whether a run resolved its task (:func:`label_of` names
the place it used in ``Outcome.label_source``), else the results files beside the run (:mod:`workbench.labels`).
The places: docs/importers/openhands.md, "Outcome, labels and dollars"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench import labels as labels_mod
from workbench.trace.schema import Outcome


def set_label(
    outcome: Outcome,
    d: dict[str, Any],
    resolver: bool,
    lossy: list[str],
    path: Path | None = None,
    instance: str | None = None,
) -> None:
    """``Outcome.label`` and where it came from: the evaluation's ``test_result`` (or a resolver's own
    ``success``, which its LLM judged); else SWE-bench results beside the file (``workbench.labels``, e.g. the
    V1 harness's ``output.report.json``)."""
    found = label_of(d.get("test_result"), d.get("report"), d.get("instance_id"))
    if found is None and resolver and isinstance(d.get("success"), bool):
        found = (
            "resolved" if d["success"] else "unresolved",
            "openhands resolver success (judged by the resolver's own LLM, not by tests)",
        )
    if found is None and path is not None and instance:
        beside, notes = labels_mod.find_beside(path, instance)
        lossy.extend(notes)
        if beside is not None:
            outcome.label, outcome.label_source, outcome.score = beside.label, beside.source, beside.score
            return
    if found is None:
        lossy.append("no resolved/unresolved label recorded (test_result has no resolved field)")
        return
    outcome.label, outcome.label_source = found
    outcome.score = score_of(d.get("test_result"))


def score_of(test_result: Any) -> float | None:
    """A numeric grade where the benchmark gives one: ``test_result.score`` (a number) or commit0's
    ``test_result.eval_result.passed`` (the fraction of tests passed)."""
    tr = test_result if isinstance(test_result, dict) else {}
    ev = tr.get("eval_result") if isinstance(tr.get("eval_result"), dict) else {}
    for value in (tr.get("score"), ev.get("passed")):
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            return float(value)
    return None


def label_of(test_result: Any, report: Any, instance_id: Any = None) -> tuple[str, str] | None:
    """(label, source) from an OpenHands ``test_result``, in the places its evaluations write it:
    ``test_result.resolved``, ``test_result.report.resolved`` (SWE-bench eval_infer), a SWE-bench harness
    report keyed by instance id (``test_result.report.<id>.resolved``), ``test_result.result.resolved``
    (Multi-SWE-bench), a top-level ``report.resolved``; else a score (GAIA, commit0)."""
    tr = test_result if isinstance(test_result, dict) else {}
    rep = tr.get("report") if isinstance(tr.get("report"), dict) else {}
    places: list[tuple[Any, str]] = [
        (tr, "test_result.resolved"),
        (rep, "test_result.report.resolved"),
        (tr.get("result"), "test_result.result.resolved"),
        (report, "report.resolved"),
    ]
    if isinstance(instance_id, str) and isinstance(rep.get(instance_id), dict):
        places.insert(2, (rep[instance_id], f"test_result.report.{instance_id}.resolved"))
    for holder, name in places:
        if isinstance(holder, dict) and isinstance(holder.get("resolved"), bool):
            return ("resolved" if holder["resolved"] else "unresolved"), f"openhands {name}"
    # Benchmarks that grade by a score (the harness's eval_infer counts these as resolved): GAIA's boolean
    # test_result.score, commit0's test_result.eval_result.passed == 1.0, a numeric score of 1 or more.
    score = tr.get("score")
    if isinstance(score, bool):
        return ("resolved" if score else "unresolved"), "openhands test_result.score"
    ev = tr.get("eval_result") if isinstance(tr.get("eval_result"), dict) else {}
    for value, name in ((ev.get("passed"), "test_result.eval_result.passed"), (score, "test_result.score")):
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            return ("resolved" if value >= 1 else "unresolved"), f"openhands {name}"
    return None
