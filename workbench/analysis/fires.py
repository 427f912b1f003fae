"""Where the governors fire across a corpus: wrap-up, landing, conclude, prune, stop — per run and policy.

Reads a sweep frame: the ``wrapup_at``, ``landing_started_at``, ``concluded_at``, ``stop_turn`` /
``stop_reason`` and ``diverges_at`` columns, and the ``events`` column's prune events (context replay).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

MARKER_COLUMNS = {
    "wrapup_at": "wrap-up",
    "landing_started_at": "landing",
    "concluded_at": "conclude",
    "diverges_at": "diverges",
}
EVENT_KINDS = {"prune": "prune", "context-truncated": "context-truncated"}


def _event_fields(event: Any) -> tuple[str | None, Any]:
    if isinstance(event, dict):
        return event.get("kind"), event.get("turn")
    return getattr(event, "kind", None), getattr(event, "turn", None)


def fire_points(
    frame: pd.DataFrame, policy_columns: Iterable[str] = ("rules", "grant", "context_length")
) -> pd.DataFrame:
    """One row per firing: the policy columns present in ``frame``, ``run_id``, ``kind`` and ``turn``.

    ``kind`` is ``wrap-up``, ``landing``, ``conclude``, ``diverges``, ``prune``, ``context-truncated`` or
    ``stop: <reason>`` (only for stops the policy made, not a recording's own end)."""
    keys = [c for c in policy_columns if c in frame.columns]
    out: list[dict[str, Any]] = []
    for rec in frame.to_dict("records"):
        base = {k: rec[k] for k in keys} | {"run_id": rec["run_id"]}
        for col, kind in MARKER_COLUMNS.items():
            turn = rec.get(col)
            if turn is not None and not pd.isna(turn):
                out.append(base | {"kind": kind, "turn": int(turn)})
        stop = rec.get("stop_turn")
        policy_stop = rec.get("stop_reason") not in (None, "done") and not rec.get("censored", False)
        if stop is not None and not pd.isna(stop) and policy_stop:
            out.append(base | {"kind": f"stop: {rec['stop_reason']}", "turn": int(stop)})
        for event in rec.get("events") or []:
            kind, turn = _event_fields(event)
            if kind in EVENT_KINDS and turn is not None:
                out.append(base | {"kind": EVENT_KINDS[kind], "turn": int(turn)})
    columns = [*keys, "run_id", "kind", "turn"]
    return pd.DataFrame(out, columns=columns)


def fire_summary(points: pd.DataFrame, by: Iterable[str] = ("rules", "grant")) -> pd.DataFrame:
    """Per policy and kind: how many runs it fired in, and the first / median turn it fired at."""
    keys = [c for c in by if c in points.columns]
    first = points.groupby([*keys, "run_id", "kind"], dropna=False)["turn"].min().reset_index()
    return (
        first.groupby([*keys, "kind"], dropna=False)["turn"]
        .agg(runs="count", first_turn="min", median_turn="median")
        .reset_index()
    )


def stop_mix(frame: pd.DataFrame, by: Iterable[str] = ("rules", "grant")) -> pd.DataFrame:
    """Share of runs per stop reason for each policy (censored runs counted as ``censored``)."""
    keys = [c for c in by if c in frame.columns]
    reason = frame["stop_reason"].where(~frame["censored"].astype(bool), "censored").fillna("none")
    counts = frame.assign(outcome=reason).groupby([*keys, "outcome"], dropna=False).size()
    return counts.unstack("outcome", fill_value=0).reset_index()
