"""DataFrame views of runs, in the manner of Inspect AI's log dataframes: :func:`runs_df`, :func:`turns_df`,
:func:`calls_df`, :func:`events_df`, each from its spec in :mod:`workbench.trace.columns` (the columns, typed:
docs/trace-format.md, "Frames"); :func:`run_summary` is the short per-run dict the CLI and notebook reprs show."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.trace.columns import (
    CALL_COLUMNS,
    EVENT_COLUMNS,
    RUN_COLUMNS,
    TURN_COLUMNS,
    CallItem,
    EventItem,
    RunItem,
    TurnItem,
    frame,
)
from workbench.trace.schema import Run

# A Corpus is an Iterable[Run]: the frames take any runs and need not import corpus.py (which imports them).


def _runs(runs: Run | Iterable[Run]) -> list[Run]:
    return [runs] if isinstance(runs, Run) else list(runs)


def run_summary(run: Run) -> dict[str, Any]:
    """The figures one looks at first, as a plain dict (``None`` where the source does not say): the run's own
    :meth:`~workbench.trace.schema.Run.facts`, with ``cost_usd``, the workbench's price (``workbench.pricing``;
    ``None`` unless every call could be priced), beside ``recorded_cost_usd``, what the source itself recorded,
    and ``models``: per model (normalised name, the raw names it was recorded under), its calls and USD, so a
    mixed session (opus with haiku subcalls) is broken down."""
    from workbench.pricing import run_cost

    c = run_cost(run)
    out: dict[str, Any] = {}
    for key, value in run.facts().items():
        if key == "recorded_cost_usd":
            out["cost_usd"] = c.usd
            value = c.recorded_usd
        out[key] = value
        if key == "model":
            out["models"] = [
                {"model": m.model, "raw": list(m.raw), "calls": m.calls, "cost_usd": m.usd}
                for m in c.by_model
            ]
    return out


def runs_df(runs: Run | Iterable[Run]) -> pd.DataFrame:
    """One row per run (columns: ``workbench.trace.columns.RUN_COLUMNS``)."""
    return frame(RUN_COLUMNS, (RunItem.of(r) for r in _runs(runs)))


def turns_df(runs: Run | Iterable[Run]) -> pd.DataFrame:
    """One row per model call (``TURN_COLUMNS``)."""
    return frame(TURN_COLUMNS, (TurnItem.of(r, t) for r in _runs(runs) for t in r.turns))


def _calls(run: Run) -> Iterable[CallItem]:
    for t in run.turns:
        results = {x.call_id: x for x in t.tool_results if x.call_id}
        for k, c in enumerate(t.tool_calls):
            yield CallItem(run, t, k, c, results.get(c.id) if c.id else None)


def calls_df(runs: Run | Iterable[Run]) -> pd.DataFrame:
    """One row per tool call, with its result where one was recorded (paired by call id; ``CALL_COLUMNS``)."""
    return frame(CALL_COLUMNS, (c for r in _runs(runs) for c in _calls(r)))


def events_df(runs: Run | Iterable[Run]) -> pd.DataFrame:
    """One row per event; ``data`` is the event's numbers as JSON, ``pre_tokens`` pulled out for compactions
    (``EVENT_COLUMNS``)."""
    return frame(EVENT_COLUMNS, (EventItem(r, e) for r in _runs(runs) for e in r.events))


def to_parquet(runs: Run | Iterable[Run], folder: str | os.PathLike[str]) -> dict[str, Path]:
    """Write ``runs``, ``turns``, ``calls`` and ``events`` tables as Parquet files into ``folder``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    items = _runs(runs)
    paths = {}
    for name, build in (("runs", runs_df), ("turns", turns_df), ("calls", calls_df), ("events", events_df)):
        path = out / f"{name}.parquet"
        build(items).to_parquet(path, index=False)
        paths[name] = path
    return paths
