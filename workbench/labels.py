"""Outcome labels: whether a run succeeded, read from the grader's own results files into one mapping
``instance id -> Label`` (docs/labels.md: the shapes read, which report wins, ``lossy``).

Importers call :func:`find_beside` for results that sit beside their runs; ``workbench label --results FILE``
attaches a results file explicitly (:func:`attach`).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from workbench.trace.corpus import Corpus
from workbench.trace.errors import TraceError
from workbench.trace.limits import MAX_DOCUMENT_BYTES, open_bytes, read_document
from workbench.trace.schema import Run

RESOLVED = "resolved"
UNRESOLVED = "unresolved"

# Run-report id lists and the label each gives (first match wins, so an id listed as resolved is resolved).
_ID_LISTS: tuple[tuple[str, str], ...] = (
    ("resolved_ids", RESOLVED),
    ("unresolved_ids", UNRESOLVED),
    ("empty_patch_ids", UNRESOLVED),
    ("error_ids", "error"),
    ("incomplete_ids", "incomplete"),
)
# Older experiment results.json lists.
_OLD_LISTS: tuple[tuple[str, str], ...] = (
    ("resolved", RESOLVED),
    ("no_generation", UNRESOLVED),
    ("generated", UNRESOLVED),
    ("no_logs", "error"),
)
# How far above a run's file to look for results, and how large a results file may be.
SEARCH_LEVELS = 4
MAX_RESULTS_BYTES = MAX_DOCUMENT_BYTES  # the bound of every whole-document reader (workbench.trace.limits)


@dataclass(frozen=True)
class Label:
    """One grader's verdict on one instance."""

    label: str
    source: str
    score: float | None = None


def _load_json(path: Path) -> Any:
    try:
        return orjson.loads(read_document(path, "results file", MAX_RESULTS_BYTES))
    except orjson.JSONDecodeError as exc:
        raise TraceError(str(path), f"not JSON ({exc})") from exc
    except OSError as exc:
        raise TraceError(str(path), f"cannot read: {exc.strerror or exc}") from exc


def _from_lists(doc: dict[str, Any], lists: tuple[tuple[str, str], ...], source: str) -> dict[str, Label]:
    out: dict[str, Label] = {}
    for key, label in lists:
        ids = doc.get(key)
        if not isinstance(ids, list):
            continue
        for i in ids:
            if isinstance(i, str) and i not in out:
                out[i] = Label(label, source)
    return out


def _instance_report(doc: dict[str, Any], instance: str, source: str) -> dict[str, Label]:
    """A per-instance report.json: ``{instance: {...resolved}}`` or the inner object alone."""
    if isinstance(doc.get("resolved"), bool):
        return {instance: Label(RESOLVED if doc["resolved"] else UNRESOLVED, source)}
    out = {}
    for key, inner in doc.items():
        if isinstance(inner, dict) and isinstance(inner.get("resolved"), bool):
            out[key] = Label(RESOLVED if inner["resolved"] else UNRESOLVED, source)
    return out


def _row_label(row: dict[str, Any], source: str) -> Label | None:
    score = row.get("score")
    try:
        score_f = float(score) if score not in (None, "") else None
    except (TypeError, ValueError):
        score_f = None
    label = row.get("label")
    resolved = row.get("resolved")
    if isinstance(resolved, str):
        resolved = {"true": True, "1": True, "false": False, "0": False}.get(resolved.strip().lower())
    if isinstance(label, str) and label.strip():
        return Label(label.strip(), source, score_f)
    if isinstance(resolved, bool):
        return Label(RESOLVED if resolved else UNRESOLVED, source, score_f)
    if score_f is not None:
        return Label(RESOLVED if score_f >= 1 else UNRESOLVED, source, score_f)
    return None


def _table(path: Path) -> dict[str, Label]:
    source = f"results table {path.name}"
    out: dict[str, Label] = {}
    try:  # a regular file (checked on the descriptor) of at most MAX_RESULTS_BYTES: a FIFO or /dev/zero is refused
        raw = read_document(path, "results table", MAX_RESULTS_BYTES)
    except OSError as exc:
        raise TraceError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    rows: Iterator[dict[str, Any]]
    if path.suffix == ".csv":
        try:
            rows = iter(csv.DictReader(io.StringIO(raw.decode("utf-8", "replace"))))
        except csv.Error as exc:
            raise TraceError(str(path), f"not a CSV table ({exc})") from exc
    else:
        rows = _jsonl_rows(path, raw)
    try:
        out.update(_labelled(rows, source))  # row by row: only the labels are kept
    except csv.Error as exc:
        raise TraceError(str(path), f"not a CSV table ({exc})") from exc
    return out


def _jsonl_rows(path: Path, raw: bytes) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise TraceError(str(path), f"not JSON ({exc})", line=n) from exc
        if isinstance(obj, dict):
            yield obj


def _labelled(rows: Iterator[dict[str, Any]], source: str) -> dict[str, Label]:
    out: dict[str, Label] = {}
    for row in rows:
        iid = row.get("instance_id")
        lab = _row_label(row, source)
        if isinstance(iid, str) and lab is not None:
            out[iid] = lab
    return out


def read_results(path: str | os.PathLike[str]) -> dict[str, Label]:
    """Every instance's label in one results file, whichever of the known shapes it has.

    Raises :class:`TraceError` when the file is unreadable or in no known shape."""
    p = Path(path)
    if p.suffix in (".csv", ".jsonl"):
        out = _table(p)
    else:
        doc = _load_json(p)
        if not isinstance(doc, dict):
            raise TraceError(str(p), "results file is not a JSON object")
        if any(isinstance(doc.get(k), list) for k, _ in _ID_LISTS):
            out = _from_lists(doc, _ID_LISTS, f"run report {p.name}")
        elif any(isinstance(doc.get(k), list) for k, _ in _OLD_LISTS):
            out = _from_lists(doc, _OLD_LISTS, f"results {p.name}")
        else:
            out = _instance_report(doc, p.parent.name, f"instance report {p.parent.name}/{p.name}")
    if not out:
        raise TraceError(
            str(p),
            "no labels found (expected resolved_ids/unresolved_ids, a per-instance report with 'resolved', "
            "or a table with instance_id and label/resolved/score)",
        )
    return out


def _stamp(path: Path) -> tuple[str, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=256)
def _results_in(folder: str, stamp: tuple[Any, ...]) -> tuple[dict[str, Label], tuple[str, ...]]:
    """Run-level results found directly in ``folder`` (memoised on the folder's listing and file stamps)."""
    del stamp  # part of the cache key only
    base = Path(folder)
    found: dict[str, Label] = {}
    problems: list[str] = []
    for c in _run_results(base):
        if not c.is_file() or c.name == "report.json" or c.name.endswith(".traj.json"):
            continue
        try:
            if c.stat().st_size > MAX_RESULTS_BYTES:
                continue
            with open_bytes(c) as fh:  # the descriptor checked: a FIFO swapped in is never read
                head = fh.read(4096)
        except (OSError, TraceError):
            continue
        if not any(k.encode() in head for k, _ in _ID_LISTS + _OLD_LISTS):
            continue
        try:
            labels = read_results(c)
        except TraceError as exc:
            problems.append(str(exc))
            continue
        for k, v in labels.items():
            found.setdefault(k, v)
    return found, tuple(problems)


def _run_results(folder: Path) -> list[Path]:
    """Where run-level results may sit in ``folder`` (present or not): its ``sb-cli-reports/*.json``, its
    ``*.json`` and ``results/results.json``."""
    found = sorted(folder.glob("sb-cli-reports/*.json")) + sorted(folder.glob("*.json"))
    return [*found, folder / "results" / "results.json"]


def _folder_stamp(folder: Path) -> tuple[Any, ...]:
    return tuple(sorted(s for s in (_stamp(f) for f in _run_results(folder)) if s is not None))


def _report_candidates(folder: Path, instance: str) -> list[Path]:
    """Where per-instance reports of ``instance`` may sit under ``folder`` (present or not): what
    :func:`_instance_reports` checks, and the folder whose presence decides whether it globs."""
    evaluation = folder / "logs" / "run_evaluation"
    found = [folder / "logs" / instance / "report.json", evaluation]
    if evaluation.is_dir():
        found += sorted(evaluation.glob(f"*/*/{instance}/report.json"))
    return found


def _instance_reports(folder: Path, instance: str) -> list[Path]:
    direct = folder / "logs" / instance / "report.json"
    found = [direct] if direct.is_file() else []
    evaluation = folder / "logs" / "run_evaluation"
    if evaluation.is_dir():
        found += sorted(evaluation.glob(f"*/*/{instance}/report.json"))
    return found


def _folders(path: str | os.PathLike[str]) -> list[Path]:
    """The folders :func:`find_beside` searches: the run file's own and up to ``SEARCH_LEVELS`` above."""
    start = Path(path).resolve().parent
    return [start, *list(start.parents)[:SEARCH_LEVELS]]


def looked_at(path: str | os.PathLike[str], instances: list[str]) -> list[Path]:
    """Every path :func:`find_beside` reads or looks for when asked for any of ``instances`` beside ``path``,
    present or absent, including each match of the globs it lists (so a results file added, edited or removed
    changes this list or the state of a path in it). Importers name these as their cache dependencies."""
    out: list[Path] = []
    for folder in _folders(path):
        for instance in instances:
            out.extend(_report_candidates(folder, instance))
        out.extend(_run_results(folder))
    return out


def find_beside(path: str | os.PathLike[str], instance: str) -> tuple[Label | None, list[str]]:
    """The label of ``instance`` from results files near ``path`` (its folder and up to ``SEARCH_LEVELS``
    above), and notes on anything odd (disagreeing reports, unreadable results files)."""
    notes: list[str] = []
    folders = _folders(path)
    specific: Label | None = None
    general: Label | None = None
    for folder in folders:
        if specific is None:
            for rep in _instance_reports(folder, instance):
                try:
                    got = read_results(rep).get(instance)
                except TraceError as exc:
                    notes.append(f"unreadable results: {exc}")
                    continue
                if got is not None:
                    specific = got
                    break
        if general is None:
            labels, problems = _results_in(str(folder), _folder_stamp(folder))
            notes.extend(f"unreadable results: {p}" for p in problems)
            general = labels.get(instance)
        if specific is not None and general is not None:
            break
    if specific and general and specific.label != general.label:
        notes.append(
            f"label sources disagree: {specific.source} says {specific.label}, {general.source} says "
            f"{general.label} (kept the per-instance report)"
        )
    return specific or general, notes


def instance_id(run: Run) -> str:
    """The benchmark instance a run worked on: ``metadata['instance_id']``, else the run id."""
    iid = run.metadata.get("instance_id")
    return iid if isinstance(iid, str) and iid else run.run_id


def attach(corpus: Corpus, labels: Mapping[str, Label]) -> tuple[Corpus, int, list[str]]:
    """The corpus with every run whose instance id is in ``labels`` labelled so (replacing any label it had),
    the count labelled and the instance ids of runs left without a label. Subagent and compaction runs are left
    alone: the grade belongs to the session that produced the result. ``corpus`` itself is not changed."""
    by_run: dict[str, Label] = {}
    missing = []
    for run in corpus.runs:
        if run.role != "main":
            continue
        lab = labels.get(instance_id(run))
        if lab is None:
            missing.append(instance_id(run))
            continue
        by_run[run.run_id] = lab
    return corpus.with_labels(by_run), len(by_run), missing
