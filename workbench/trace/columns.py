"""Columns from specs: one table of :class:`Column` per frame drives its dtypes, its rows and its docs table.

A frame is a sequence of columns, each with its ``name``, its pandas ``dtype`` (``"datetime"``: UTC datetimes;
``None``: whatever pandas infers), how to ``extract`` the value from one item (a run, a turn, a call, an event)
and a one-line ``doc``. :func:`frame` builds the typed DataFrame, :func:`markdown` the table the docs carry (a
test holds docs equal to it), and tests read the names from the spec rather than restating them. Inspect AI's
``analysis/_dataframe`` columns are the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

import orjson
import pandas as pd

from workbench.trace.schema import Event, EventKind, RecordedPolicy, Route, Run, ToolCall, ToolResult, Turn

T = TypeVar("T")

_TOKENS = ("prompt", "cached", "cache_write", "completion", "reasoning")


@dataclass(frozen=True)
class Column(Generic[T]):
    """One column of a frame: its name, its dtype, how to read it from an item, what it means."""

    name: str
    dtype: str | None
    extract: Callable[[T], Any] | None
    """``None``: the frame's builder sets the column itself (a sweep's ``path``), no item holds it."""
    doc: str


def names(columns: Sequence[Column[Any]]) -> tuple[str, ...]:
    return tuple(c.name for c in columns)


def dtypes(columns: Sequence[Column[Any]]) -> dict[str, str | None]:
    return {c.name: c.dtype for c in columns}


def of_dtype(columns: Sequence[Column[Any]], *kinds: str) -> tuple[str, ...]:
    """The names of the columns of any of these dtypes."""
    return tuple(c.name for c in columns if c.dtype in kinds)


def read(columns: Sequence[Column[T]], item: T) -> dict[str, Any]:
    """One item's row: every column the item holds."""
    return {c.name: c.extract(item) for c in columns if c.extract is not None}


def typed(data: dict[str, Any], columns: Sequence[Column[Any]]) -> pd.DataFrame:
    """``data`` (column name -> values, one per row) as a frame with the spec's columns, in order, and dtypes."""
    cols = list(names(columns))
    # no rows: every column starts as ``object`` (pandas would infer ``float64`` from an empty list)
    empty = all(len(data[c]) == 0 for c in cols)
    out = pd.DataFrame(columns=cols) if empty else pd.DataFrame({c: data[c] for c in cols}, columns=cols)
    for c in columns:
        if c.dtype == "datetime":
            out[c.name] = pd.to_datetime(out[c.name], utc=True)
        elif c.dtype is not None and c.dtype != "object":
            out[c.name] = out[c.name].astype(c.dtype)
    return out


def frame(columns: Sequence[Column[T]], items: Iterable[T]) -> pd.DataFrame:
    """One row per item, one column per spec entry."""
    items = list(items)
    data = {}
    for c in columns:
        if c.extract is None:
            raise ValueError(f"column {c.name!r} is set by its frame's builder, not read from an item")
        data[c.name] = [c.extract(x) for x in items]
    return typed(data, columns)


def markdown(columns: Sequence[Column[Any]]) -> str:
    """The spec as the docs' table: column, dtype, meaning."""
    lines = ["| column | dtype | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.dtype or 'inferred'} | {c.doc} |" for c in columns]
    return "\n".join(lines)


def docs_block(text: str, key: str) -> str | None:
    """The table between ``<!-- columns: key -->`` and ``<!-- /columns -->`` in a docs page (``None``: absent)."""
    start = f"<!-- columns: {key} -->\n"
    at = text.find(start)
    if at < 0:
        return None
    end = text.find("\n<!-- /columns -->", at)
    return None if end < 0 else text[at + len(start) : end]


# -- the four frames over runs (workbench.trace.frames) -----------------------------------------------------------


@dataclass(frozen=True)
class RunItem:
    """One run with what several of its columns share: its span in time and its price."""

    run: Run
    started_at: datetime | None
    ended_at: datetime | None
    cost_usd: float | None
    recorded_cost_usd: float | None
    unpriced_calls: int

    @classmethod
    def of(cls, run: Run) -> RunItem:
        from workbench.pricing import run_cost

        started = run.started_at
        if started is None and run.turns:
            started = run.turns[0].started_at
        times = [t.ended_at or t.started_at for t in run.turns if (t.ended_at or t.started_at)]
        c = run_cost(run)
        return cls(run, started, max(times) if times else None, c.usd, c.recorded_usd, c.unpriced_calls)

    @property
    def duration_s(self) -> float | None:
        if self.started_at and self.ended_at:
            return (self.ended_at - self.started_at).total_seconds()
        return None


@dataclass(frozen=True)
class TurnItem:
    """One model call of a run, with its route and its price."""

    run: Run
    turn: Turn
    route: Route | None
    cost_usd: float | None

    @classmethod
    def of(cls, run: Run, turn: Turn) -> TurnItem:
        from workbench.pricing import price_usage
        from workbench.trace.route import price_provider, route_of

        route = route_of(run, turn)
        model = turn.model or run.model
        price = price_usage(model, turn.usage, turn.started_at or run.started_at, price_provider(route))
        return cls(run, turn, route, price.usd if price else None)


@dataclass(frozen=True)
class CallItem:
    """One tool call, with its result where one was recorded (paired by call id)."""

    run: Run
    turn: Turn
    index: int
    call: ToolCall
    result: ToolResult | None


@dataclass(frozen=True)
class EventItem:
    run: Run
    event: Event


def _peak_prompt(run: Run) -> int | None:
    known = [t.usage.prompt for t in run.turns if t.usage.prompt is not None]
    return max(known) if known else None


def _instance_id(run: Run) -> str | None:
    iid = run.metadata.get("instance_id")
    return iid if isinstance(iid, str) else None


def _pre_tokens(e: Event) -> int | None:
    pre = e.data.get("pre_tokens")
    return pre if isinstance(pre, int) and not isinstance(pre, bool) else None


def _data_json(e: Event) -> str:
    return orjson.dumps(e.data, default=str, option=orjson.OPT_SORT_KEYS).decode()


def _result(c: CallItem, read: Callable[[ToolResult], Any]) -> Any:
    return read(c.result) if c.result else None


def _policy(r: RunItem, read: Callable[[RecordedPolicy], Any]) -> Any:
    return read(r.run.policy) if r.run.policy else None


_TOKEN_DOC = {
    "prompt": "prompt tokens (cache reads and writes included)",
    "cached": "prompt tokens read from the provider's cache",
    "cache_write": "prompt tokens written to the provider's cache",
    "completion": "completion tokens (reasoning included where the source counts it so)",
    "reasoning": "reasoning tokens",
}


def _run_tokens(field: str) -> Column[RunItem]:
    return Column(
        f"{field}_tokens",
        "Int64",
        lambda r: r.run.total(field),
        f"{_TOKEN_DOC[field]}, summed; <NA>: no call says",
    )


def _turn_tokens(field: str) -> Column[TurnItem]:
    return Column(
        f"{field}_tokens",
        "Int64",
        lambda t: getattr(t.turn.usage, field),
        f"{_TOKEN_DOC[field]}; <NA>: not recorded",
    )


RUN_COLUMNS: tuple[Column[RunItem], ...] = (
    Column("run_id", "string", lambda r: r.run.run_id, "the run's id (a session's segment adds `#sN`)"),
    Column("source", "category", lambda r: r.run.source, "the format it was read from"),
    Column("role", "category", lambda r: r.run.role, "`main`, `subagent` or `compaction`"),
    Column("parent_run_id", "string", lambda r: r.run.parent_run_id, "the run that started this subagent"),
    Column(
        "parent_tool_call_id", "string", lambda r: r.run.parent_tool_call_id, "the parent's call that did"
    ),
    Column("model", "category", lambda r: r.run.model, "the run's model as recorded"),
    Column("source_file", "string", lambda r: r.run.source_file, "the file it was read from"),
    Column("importer", "string", lambda r: r.run.importer, "the importer and its version"),
    Column("started_at", "datetime", lambda r: r.started_at, "the run's start, else its first call's (UTC)"),
    Column("ended_at", "datetime", lambda r: r.ended_at, "the last call's end, else its start (UTC)"),
    Column("duration_s", "Float64", lambda r: r.duration_s, "`ended_at - started_at` in seconds"),
    Column("turns", "Int64", lambda r: len(r.run.turns), "model calls"),
    Column("tool_calls", "Int64", lambda r: sum(len(t.tool_calls) for t in r.run.turns), "tool calls"),
    Column(
        "tool_errors",
        "Int64",
        lambda r: sum(1 for t in r.run.turns for x in t.tool_results if x.is_error),
        "tool results marked as errors",
    ),
    Column(
        "mutating_turns",
        "Int64",
        lambda r: sum(1 for t in r.run.turns if t.mutated),
        "calls whose tools changed the workspace (known to)",
    ),
    *(_run_tokens(f) for f in _TOKENS),
    Column(
        "cost_usd",
        "Float64",
        lambda r: r.cost_usd,
        "the workbench's price (`workbench.pricing`); <NA> unless every call is priced",
    ),
    Column(
        "recorded_cost_usd", "Float64", lambda r: r.recorded_cost_usd, "the USD the source itself recorded"
    ),
    Column("unpriced_calls", "Int64", lambda r: r.unpriced_calls, "calls that could not be priced"),
    Column("peak_prompt_tokens", "Int64", lambda r: _peak_prompt(r.run), "the largest prompt of any call"),
    Column(
        "context_length", "Int64", lambda r: r.run.context_length, "the model's context window, where known"
    ),
    Column("output_cap", "Int64", lambda r: r.run.output_cap, "the completion cap per call, where known"),
    Column("segments", "Int64", lambda r: len(r.run.segments), "user-prompt segments of a session"),
    Column("events", "Int64", lambda r: len(r.run.events), "events (the `events_df` rows)"),
    Column(
        "compactions",
        "Int64",
        lambda r: sum(1 for e in r.run.events if e.kind == EventKind.COMPACTION),
        "context compactions",
    ),
    Column("stop_reason", "category", lambda r: r.run.outcome.stop_reason, "how the recording ended"),
    Column("verdict", "category", lambda r: r.run.outcome.verdict, "the grading the recorded stop earned"),
    Column("label", "category", lambda r: r.run.outcome.label, "an external grade (docs/labels.md)"),
    Column("label_source", "string", lambda r: r.run.outcome.label_source, "where the label was read"),
    Column("score", "Float64", lambda r: r.run.outcome.score, "the grader's number, where it gives one"),
    Column("instance_id", "string", lambda r: _instance_id(r.run), "the benchmark instance, where recorded"),
    Column("exhausted", "category", lambda r: r.run.outcome.exhausted, "what ran out, as recorded"),
    Column(
        "policy_rules", "category", lambda r: _policy(r, lambda p: p.rules), "the recorded policy's rule set"
    ),
    Column("policy_max_turns", "Int64", lambda r: _policy(r, lambda p: p.max_turns), "its turn cap"),
    Column("policy_grant", "Int64", lambda r: _policy(r, lambda p: p.grant), "its grant"),
    Column("task", "string", lambda r: r.run.task, "the task prompt"),
    Column("lossy", "Int64", lambda r: len(r.run.lossy), "what the import could not keep (count)"),
    Column("lossy_notes", "string", lambda r: "; ".join(r.run.lossy) or None, "… and in words"),
    Column("diagnostics", "Int64", lambda r: len(r.run.diagnostics), "problems met while reading"),
)
"""``runs_df``: one row per run."""

TURN_COLUMNS: tuple[Column[TurnItem], ...] = (
    Column("run_id", "string", lambda t: t.run.run_id, "the run"),
    Column("source", "category", lambda t: t.run.source, "the format it was read from"),
    Column("turn", "Int64", lambda t: t.turn.index, "0-based index of the call"),
    Column("segment", "Int64", lambda t: t.turn.segment, "its session segment"),
    Column("model", "category", lambda t: t.turn.model or t.run.model, "the call's model, else the run's"),
    Column(
        "route",
        "category",
        lambda t: None if t.route is None else t.route.key,
        "the provider path (`google via openrouter`; docs/trace-format.md#routes)",
    ),
    Column(
        "route_basis",
        "category",
        lambda t: None if t.route is None else t.route.basis,
        "`recorded` or `inferred`",
    ),
    Column("started_at", "datetime", lambda t: t.turn.started_at, "the call's start (UTC)"),
    Column("ended_at", "datetime", lambda t: t.turn.ended_at, "its end (UTC)"),
    Column(
        "duration_s",
        "Float64",
        lambda t: (
            (t.turn.ended_at - t.turn.started_at).total_seconds()
            if t.turn.started_at and t.turn.ended_at
            else None
        ),
        "`ended_at - started_at` in seconds",
    ),
    *(_turn_tokens(f) for f in _TOKENS),
    Column("cost_usd", "Float64", lambda t: t.cost_usd, "the workbench's price of the call, by its route"),
    Column("recorded_cost_usd", "Float64", lambda t: t.turn.usage.cost, "the USD the source recorded"),
    Column("finish_reason", "category", lambda t: t.turn.finish_reason, "the provider's finish reason"),
    Column("tool_calls", "Int64", lambda t: len(t.turn.tool_calls), "tool calls in the reply"),
    Column(
        "tool_errors",
        "Int64",
        lambda t: sum(1 for x in t.turn.tool_results if x.is_error),
        "their results marked as errors",
    ),
    Column("mutated", "boolean", lambda t: t.turn.mutated, "the tools changed the workspace; <NA>: unknown"),
    Column(
        "sent_messages",
        "Int64",
        lambda t: sum(b - a for a, b in t.turn.sent) if t.turn.sent is not None else None,
        "messages in the request, where recorded",
    ),
    Column(
        "text_chars",
        "Int64",
        lambda t: len(t.turn.text) if t.turn.text is not None else None,
        "characters of the reply's text",
    ),
    Column("response_id", "string", lambda t: t.turn.response_id, "the provider's response id"),
)
"""``turns_df``: one row per model call."""

CALL_COLUMNS: tuple[Column[CallItem], ...] = (
    Column("run_id", "string", lambda c: c.run.run_id, "the run"),
    Column("turn", "Int64", lambda c: c.turn.index, "the call's model call"),
    Column("call", "Int64", lambda c: c.index, "0-based position in the reply"),
    Column("call_id", "string", lambda c: c.call.id, "the tool call's id"),
    Column("name", "category", lambda c: c.call.name, "the tool"),
    Column("arguments_chars", "Int64", lambda c: len(c.call.arguments), "characters of its arguments"),
    Column("has_result", "boolean", lambda c: c.result is not None, "a result was recorded for it"),
    Column("result_size", "Int64", lambda c: _result(c, lambda x: x.size), "the result's size"),
    Column("result_sha256", "string", lambda c: _result(c, lambda x: x.digest()), "sha256 of the result"),
    Column("is_error", "boolean", lambda c: _result(c, lambda x: x.is_error), "the result is an error"),
    Column("timed_out", "boolean", lambda c: _result(c, lambda x: x.timed_out), "the tool timed out"),
    Column(
        "duration_s",
        "Float64",
        lambda c: _result(c, lambda x: x.duration_s),
        "the tool's time, where recorded",
    ),
)
"""``calls_df``: one row per tool call."""

EVENT_COLUMNS: tuple[Column[EventItem], ...] = (
    Column("run_id", "string", lambda e: e.run.run_id, "the run"),
    Column(
        "turn", "Int64", lambda e: e.event.turn, "the call after which it happened; <NA>: before the first"
    ),
    Column(
        "kind",
        "category",
        lambda e: e.event.kind,
        "what happened (`EventKind`, or a governor decision's kind)",
    ),
    Column("reason", "string", lambda e: e.event.reason, "why, in words"),
    Column("pre_tokens", "Int64", lambda e: _pre_tokens(e.event), "a compaction's prompt before it"),
    Column("data", "string", lambda e: _data_json(e.event), "the event's numbers as JSON (keys sorted)"),
)
"""``events_df``: one row per event."""

FRAMES: dict[str, tuple[Column[Any], ...]] = {
    "runs_df": RUN_COLUMNS,
    "turns_df": TURN_COLUMNS,
    "calls_df": CALL_COLUMNS,
    "events_df": EVENT_COLUMNS,
}
"""Each frame's spec by its function's name (the docs pages' ``<!-- columns: NAME -->`` blocks)."""
