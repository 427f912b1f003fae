"""DataFrame views of runs, in the manner of Inspect AI's log dataframes.

Four tables over a :class:`~workbench.trace.corpus.Corpus` (or any runs), each with typed columns —
nullable ``Int64`` for token counts (a source that does not say stays ``<NA>``, never 0), UTC datetimes,
``boolean`` for flags that may be unknown, ``category`` for repeated labels:

* :func:`runs_df` — one row per run: totals, peak prompt, stop, recorded policy, what the import lost;
* :func:`turns_df` — one row per model call: usage, timing, tool calls, whether the workspace changed;
* :func:`calls_df` — one row per tool call: name, argument size, its result (size, hash, error, time-out);
* :func:`events_df` — one row per event: compactions, governor decisions, prunes, injections.

:func:`run_summary` is the short per-run dict the CLI and the notebook reprs show; :func:`to_parquet`
writes the four tables to a folder.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from workbench.trace.schema import Run

# A Corpus is an Iterable[Run]: the frames take any runs and need not import corpus.py (which imports them).

_TOKENS = ("prompt", "cached", "cache_write", "completion", "reasoning")


def _runs(runs: Run | Iterable[Run]) -> list[Run]:
    if isinstance(runs, Run):
        return [runs]
    return list(runs)


def _typed(rows: list[dict[str, Any]], types: dict[str, str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(types))
    for col, dtype in types.items():
        if dtype == "datetime":
            frame[col] = pd.to_datetime(frame[col], utc=True)
        elif dtype == "object":
            continue
        else:
            frame[col] = frame[col].astype(dtype)
    return frame


def _total(run: Run, field: str) -> int | None:
    return run.total(field)


def _peak_prompt(run: Run) -> int | None:
    known = [t.usage.prompt for t in run.turns if t.usage.prompt is not None]
    return max(known) if known else None


def _ended_at(run: Run) -> Any:
    times = [t.ended_at or t.started_at for t in run.turns if (t.ended_at or t.started_at)]
    return max(times) if times else None


def _costs(run: Run) -> tuple[float | None, float | None, int]:
    """(the workbench's USD price, the USD the source recorded, calls that could not be priced)."""
    from workbench.pricing import run_cost

    c = run_cost(run)
    return c.usd, c.recorded_usd, c.unpriced_calls


def _event_counts(run: Run) -> str:
    counts = Counter(e.kind for e in run.events)
    return ", ".join(f"{k} x{n}" for k, n in sorted(counts.items()))


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


_RUN_TYPES = {
    "run_id": "string",
    "source": "category",
    "role": "category",
    "parent_run_id": "string",
    "parent_tool_call_id": "string",
    "model": "category",
    "source_file": "string",
    "importer": "string",
    "started_at": "datetime",
    "ended_at": "datetime",
    "duration_s": "Float64",
    "turns": "Int64",
    "tool_calls": "Int64",
    "tool_errors": "Int64",
    "mutating_turns": "Int64",
    "prompt_tokens": "Int64",
    "cached_tokens": "Int64",
    "cache_write_tokens": "Int64",
    "completion_tokens": "Int64",
    "reasoning_tokens": "Int64",
    "cost_usd": "Float64",
    "recorded_cost_usd": "Float64",
    "unpriced_calls": "Int64",
    "peak_prompt_tokens": "Int64",
    "context_length": "Int64",
    "output_cap": "Int64",
    "segments": "Int64",
    "events": "Int64",
    "compactions": "Int64",
    "stop_reason": "category",
    "verdict": "category",
    "label": "category",
    "label_source": "string",
    "score": "Float64",
    "instance_id": "string",
    "exhausted": "category",
    "policy_rules": "category",
    "policy_max_turns": "Int64",
    "policy_grant": "Int64",
    "task": "string",
    "lossy": "Int64",
    "lossy_notes": "string",
    "diagnostics": "Int64",
}


def runs_df(runs: Run | Iterable[Run]) -> pd.DataFrame:
    """One row per run."""
    rows = []
    for r in _runs(runs):
        started, ended = r.started_at, _ended_at(r)
        if started is None and r.turns:
            started = r.turns[0].started_at
        cost_usd, recorded_usd, unpriced = _costs(r)
        iid = r.metadata.get("instance_id")
        rows.append(
            {
                "run_id": r.run_id,
                "source": r.source,
                "role": r.role,
                "parent_run_id": r.parent_run_id,
                "parent_tool_call_id": r.parent_tool_call_id,
                "model": r.model,
                "source_file": r.source_file,
                "importer": r.importer,
                "started_at": started,
                "ended_at": ended,
                "duration_s": (ended - started).total_seconds() if started and ended else None,
                "turns": len(r.turns),
                "tool_calls": sum(len(t.tool_calls) for t in r.turns),
                "tool_errors": sum(1 for t in r.turns for x in t.tool_results if x.is_error),
                "mutating_turns": sum(1 for t in r.turns if t.mutated),
                "prompt_tokens": _total(r, "prompt"),
                "cached_tokens": _total(r, "cached"),
                "cache_write_tokens": _total(r, "cache_write"),
                "completion_tokens": _total(r, "completion"),
                "reasoning_tokens": _total(r, "reasoning"),
                "cost_usd": cost_usd,
                "recorded_cost_usd": recorded_usd,
                "unpriced_calls": unpriced,
                "peak_prompt_tokens": _peak_prompt(r),
                "context_length": r.context_length,
                "output_cap": r.output_cap,
                "segments": len(r.segments),
                "events": len(r.events),
                "compactions": sum(1 for e in r.events if e.kind == "compaction"),
                "stop_reason": r.outcome.stop_reason,
                "verdict": r.outcome.verdict,
                "label": r.outcome.label,
                "label_source": r.outcome.label_source,
                "score": r.outcome.score,
                "instance_id": iid if isinstance(iid, str) else None,
                "exhausted": r.outcome.exhausted,
                "policy_rules": r.policy.rules if r.policy else None,
                "policy_max_turns": r.policy.max_turns if r.policy else None,
                "policy_grant": r.policy.grant if r.policy else None,
                "task": r.task,
                "lossy": len(r.lossy),
                "lossy_notes": "; ".join(r.lossy) or None,
                "diagnostics": len(r.diagnostics),
            }
        )
    return _typed(rows, _RUN_TYPES)


_TURN_TYPES = {
    "run_id": "string",
    "source": "category",
    "turn": "Int64",
    "segment": "Int64",
    "model": "category",
    "started_at": "datetime",
    "ended_at": "datetime",
    "duration_s": "Float64",
    "prompt_tokens": "Int64",
    "cached_tokens": "Int64",
    "cache_write_tokens": "Int64",
    "completion_tokens": "Int64",
    "reasoning_tokens": "Int64",
    "cost_usd": "Float64",
    "recorded_cost_usd": "Float64",
    "finish_reason": "category",
    "tool_calls": "Int64",
    "tool_errors": "Int64",
    "mutated": "boolean",
    "sent_messages": "Int64",
    "text_chars": "Int64",
    "response_id": "string",
}


def turns_df(runs: Run | Iterable[Run]) -> pd.DataFrame:
    """One row per model call."""
    from workbench.pricing import price_usage
    from workbench.trace.route import price_provider, route_of

    rows = []
    for r in _runs(runs):
        for t in r.turns:
            u = t.usage
            route = route_of(r, t)
            price = price_usage(t.model or r.model, u, t.started_at or r.started_at, price_provider(route))
            rows.append(
                {
                    "run_id": r.run_id,
                    "source": r.source,
                    "turn": t.index,
                    "segment": t.segment,
                    "model": t.model or r.model,
                    "route": None if route is None else route.key,
                    "route_basis": None if route is None else route.basis,
                    "started_at": t.started_at,
                    "ended_at": t.ended_at,
                    "duration_s": (t.ended_at - t.started_at).total_seconds()
                    if t.started_at and t.ended_at
                    else None,
                    "prompt_tokens": u.prompt,
                    "cached_tokens": u.cached,
                    "cache_write_tokens": u.cache_write,
                    "completion_tokens": u.completion,
                    "reasoning_tokens": u.reasoning,
                    "cost_usd": price.usd if price else None,
                    "recorded_cost_usd": u.cost,
                    "finish_reason": t.finish_reason,
                    "tool_calls": len(t.tool_calls),
                    "tool_errors": sum(1 for x in t.tool_results if x.is_error),
                    "mutated": t.mutated,
                    "sent_messages": sum(b - a for a, b in t.sent) if t.sent is not None else None,
                    "text_chars": len(t.text) if t.text is not None else None,
                    "response_id": t.response_id,
                }
            )
    return _typed(rows, _TURN_TYPES)


_CALL_TYPES = {
    "run_id": "string",
    "turn": "Int64",
    "call": "Int64",
    "call_id": "string",
    "name": "category",
    "arguments_chars": "Int64",
    "has_result": "boolean",
    "result_size": "Int64",
    "result_sha256": "string",
    "is_error": "boolean",
    "timed_out": "boolean",
    "duration_s": "Float64",
}


def calls_df(runs: Run | Iterable[Run]) -> pd.DataFrame:
    """One row per tool call, with its result where one was recorded (paired by call id)."""
    rows = []
    for r in _runs(runs):
        for t in r.turns:
            results = {x.call_id: x for x in t.tool_results if x.call_id}
            for k, c in enumerate(t.tool_calls):
                res = results.get(c.id) if c.id else None
                rows.append(
                    {
                        "run_id": r.run_id,
                        "turn": t.index,
                        "call": k,
                        "call_id": c.id,
                        "name": c.name,
                        "arguments_chars": len(c.arguments),
                        "has_result": res is not None,
                        "result_size": res.size if res else None,
                        "result_sha256": res.digest() if res else None,
                        "is_error": res.is_error if res else None,
                        "timed_out": res.timed_out if res else None,
                        "duration_s": res.duration_s if res else None,
                    }
                )
    return _typed(rows, _CALL_TYPES)


_EVENT_TYPES = {
    "run_id": "string",
    "turn": "Int64",
    "kind": "category",
    "reason": "string",
    "pre_tokens": "Int64",
    "data": "string",
}


def events_df(runs: Run | Iterable[Run]) -> pd.DataFrame:
    """One row per event; ``data`` is the event's numbers as JSON, ``pre_tokens`` pulled out for compactions."""
    rows = []
    for r in _runs(runs):
        for e in r.events:
            pre = e.data.get("pre_tokens")
            rows.append(
                {
                    "run_id": r.run_id,
                    "turn": e.turn,
                    "kind": e.kind,
                    "reason": e.reason,
                    "pre_tokens": pre if isinstance(pre, int) and not isinstance(pre, bool) else None,
                    "data": orjson.dumps(e.data, default=str, option=orjson.OPT_SORT_KEYS).decode(),
                }
            )
    return _typed(rows, _EVENT_TYPES)


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
