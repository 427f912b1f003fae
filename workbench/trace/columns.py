"""Columns from specs: one table of :class:`Column` per frame drives its dtypes, its rows (:func:`frame`) and its
docs table (:func:`markdown`, held equal to the docs by a test; docs/frames.md). Inspect AI's
``analysis/_dataframe`` columns are the model."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Any, Generic, TypeVar

import orjson
import pandas as pd

from workbench.trace.schema import Event, EventKind, Route, Run, ToolCall, ToolResult, Turn

T = TypeVar("T")


@dataclass(frozen=True)
class Column(Generic[T]):
    """One column of a frame: its name, its dtype, how to read it from an item, what it means."""

    name: str
    dtype: str | None
    extract: Callable[[T], Any] | str | None
    """A function of the item, or a dotted attribute path on it (``"run.outcome.label"``: ``None`` where a step
    on the way is ``None``); ``None``: the frame's builder sets the column itself (a sweep's ``path``)."""
    doc: str
    read: Callable[[T], Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        read = _path(self.extract) if isinstance(self.extract, str) else self.extract
        object.__setattr__(self, "read", read or self._unread)

    def _unread(self, item: T) -> Any:
        raise ValueError(f"column {self.name!r} is set by its frame's builder, not read from an item")


def _path(path: str) -> Callable[[Any], Any]:
    if "." not in path:
        return attrgetter(path)
    steps = path.split(".")

    def read(item: Any) -> Any:
        for step in steps:
            if item is None:
                return None
            item = getattr(item, step)
        return item

    return read


def names(columns: Sequence[Column[Any]]) -> tuple[str, ...]:
    return tuple(c.name for c in columns)


def dtypes(columns: Sequence[Column[Any]]) -> dict[str, str | None]:
    return {c.name: c.dtype for c in columns}


def of_dtype(columns: Sequence[Column[Any]], *kinds: str) -> tuple[str, ...]:
    """The names of the columns of any of these dtypes."""
    return tuple(c.name for c in columns if c.dtype in kinds)


def read_row(columns: Sequence[Column[T]], item: T) -> dict[str, Any]:
    """One item's row: every column the item holds."""
    return {c.name: c.read(item) for c in columns if c.extract is not None}


def typed(data: dict[str, Any], columns: Sequence[Column[Any]]) -> pd.DataFrame:
    """``data`` (column name -> values, one per row) as a frame with the spec's columns, in order, and dtypes."""
    cols = list(names(columns))
    # no rows: every column starts as ``object`` (pandas would infer ``float64`` from an empty list)
    empty = all(len(data[c]) == 0 for c in cols)
    out = pd.DataFrame(columns=cols) if empty else pd.DataFrame({c: data[c] for c in cols}, columns=cols)
    for c in columns:
        if c.dtype == "datetime":
            out[c.name] = pd.to_datetime(out[c.name], utc=True)
        elif c.dtype is not None:
            out[c.name] = out[c.name].astype(c.dtype)  # type: ignore[call-overload]  # the spec's dtype is a str
    return out


def frame(columns: Sequence[Column[T]], items: Iterable[T]) -> pd.DataFrame:
    """One row per item, one column per spec entry."""
    items = list(items)
    return typed({c.name: [c.read(x) for x in items] for c in columns}, columns)


def markdown(columns: Sequence[Column[Any]]) -> str:
    """The spec as the docs' table: column, dtype, meaning."""
    lines = ["| column | dtype | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.dtype or 'inferred'} | {c.doc} |" for c in columns]
    return "\n".join(lines)


def with_table(text: str, key: str, columns: Sequence[Column[Any]]) -> str:
    """A docs page with its ``key`` block regenerated from the spec (how the docs' tables are kept)."""
    old = docs_block(text, key)
    if old is None:
        raise ValueError(f"no <!-- columns: {key} --> block")
    return text.replace(
        f"<!-- columns: {key} -->\n{old}\n", f"<!-- columns: {key} -->\n{markdown(columns)}\n", 1
    )


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
        times = [when for t in run.turns if (when := t.ended_at or t.started_at) is not None]
        c = run_cost(run)
        return cls(run, started, max(times) if times else None, c.usd, c.recorded_usd, c.unpriced_calls)


@dataclass(frozen=True)
class TurnItem:
    """One model call of a run, with its route and its price."""

    run: Run
    turn: Turn
    route: Route | None
    cost_usd: float | None

    @property
    def sent_messages(self) -> int | None:
        return sum(b - a for a, b in self.turn.sent) if self.turn.sent is not None else None

    @property
    def text_chars(self) -> int | None:
        return len(self.turn.text) if self.turn.text is not None else None

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


def _pre_tokens(e: EventItem) -> int | None:
    pre = e.event.data.get("pre_tokens")
    return pre if isinstance(pre, int) and not isinstance(pre, bool) else None


def _data_json(e: EventItem) -> str:
    return orjson.dumps(e.event.data, default=str, option=orjson.OPT_SORT_KEYS).decode()


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return (end - start).total_seconds() if start and end else None


def _errors(t: Turn) -> int:
    return sum(1 for x in t.tool_results if x.is_error)


_TOKEN_DOC = {
    "prompt": "prompt tokens (cache reads and writes included)",
    "cached": "prompt tokens read from the provider's cache",
    "cache_write": "prompt tokens written to the provider's cache",
    "completion": "completion tokens (reasoning included where the source counts it so)",
    "reasoning": "reasoning tokens",
}


def _summed(field: str) -> Callable[[RunItem], int | None]:
    return lambda r: r.run.total(field)


_SUMMED = [
    Column[RunItem](f"{f}_tokens", "Int64", _summed(f), f"{d}, summed; <NA>: no call says")
    for f, d in _TOKEN_DOC.items()
]
_PER_CALL = [
    Column[TurnItem](f"{f}_tokens", "Int64", f"turn.usage.{f}", f"{d}; <NA>: not recorded")
    for f, d in _TOKEN_DOC.items()
]

RUN_COLUMNS: tuple[Column[RunItem], ...] = (
    Column("run_id", "string", "run.run_id", "the run's id (a session's segment adds `#sN`)"),
    Column("source", "category", "run.source", "the format it was read from"),
    Column("role", "category", "run.role", "`main`, `subagent` or `compaction`"),
    Column("parent_run_id", "string", "run.parent_run_id", "the run that started this subagent"),
    Column("parent_tool_call_id", "string", "run.parent_tool_call_id", "the parent's call that did"),
    Column("model", "category", "run.model", "the run's model as recorded"),
    Column("source_file", "string", "run.source_file", "the file it was read from"),
    Column("importer", "string", "run.importer", "the importer and its version"),
    Column("started_at", "datetime", "started_at", "the run's start, else its first call's (UTC)"),
    Column("ended_at", "datetime", "ended_at", "the last call's end, else its start (UTC)"),
    Column(
        "duration_s", "Float64", lambda r: _seconds(r.started_at, r.ended_at), "`ended_at - started_at`, s"
    ),
    Column("turns", "Int64", lambda r: len(r.run.turns), "model calls"),
    Column("tool_calls", "Int64", lambda r: sum(len(t.tool_calls) for t in r.run.turns), "tool calls"),
    Column("tool_errors", "Int64", lambda r: sum(map(_errors, r.run.turns)), "tool results marked as errors"),
    Column(
        "mutating_turns", "Int64", lambda r: sum(1 for t in r.run.turns if t.mutated), "calls known to mutate"
    ),
    *_SUMMED,
    Column("cost_usd", "Float64", "cost_usd", "the workbench's price; <NA> unless every call is priced"),
    Column("recorded_cost_usd", "Float64", "recorded_cost_usd", "the USD the source itself recorded"),
    Column("unpriced_calls", "Int64", "unpriced_calls", "calls that could not be priced"),
    Column("peak_prompt_tokens", "Int64", lambda r: _peak_prompt(r.run), "the largest prompt of any call"),
    Column("context_length", "Int64", "run.context_length", "the model's context window, where known"),
    Column("output_cap", "Int64", "run.output_cap", "the completion cap per call, where known"),
    Column("segments", "Int64", lambda r: len(r.run.segments), "user-prompt segments of a session"),
    Column("events", "Int64", lambda r: len(r.run.events), "events (the `events_df` rows)"),
    Column(
        "compactions",
        "Int64",
        lambda r: sum(1 for e in r.run.events if e.kind == EventKind.COMPACTION),
        "context compactions",
    ),
    Column("stop_reason", "category", "run.outcome.stop_reason", "how the recording ended"),
    Column("verdict", "category", "run.outcome.verdict", "the grading the recorded stop earned"),
    Column("label", "category", "run.outcome.label", "an external grade (docs/labels.md)"),
    Column("label_source", "string", "run.outcome.label_source", "where the label was read"),
    Column("score", "Float64", "run.outcome.score", "the grader's number, where it gives one"),
    Column("instance_id", "string", lambda r: _instance_id(r.run), "the benchmark instance, where recorded"),
    Column("exhausted", "category", "run.outcome.exhausted", "what ran out, as recorded"),
    Column("policy_rules", "category", "run.policy.rules", "the recorded policy's rule set"),
    Column("policy_max_turns", "Int64", "run.policy.max_turns", "its turn cap"),
    Column("policy_grant", "Int64", "run.policy.grant", "its grant"),
    Column("task", "string", "run.task", "the task prompt"),
    Column("lossy", "Int64", lambda r: len(r.run.lossy), "what the import could not keep (count)"),
    Column("lossy_notes", "string", lambda r: "; ".join(r.run.lossy) or None, "… and in words"),
    Column("diagnostics", "Int64", lambda r: len(r.run.diagnostics), "problems met while reading"),
)
"""``runs_df``: one row per run."""

TURN_COLUMNS: tuple[Column[TurnItem], ...] = (
    Column("run_id", "string", "run.run_id", "the run"),
    Column("source", "category", "run.source", "the format it was read from"),
    Column("turn", "Int64", "turn.index", "0-based index of the call"),
    Column("segment", "Int64", "turn.segment", "its session segment"),
    Column("model", "category", lambda t: t.turn.model or t.run.model, "the call's model, else the run's"),
    Column("route", "category", "route.key", "the provider path (`google via openrouter`; see Routes)"),
    Column("route_basis", "category", "route.basis", "`recorded` or `inferred`"),
    Column("started_at", "datetime", "turn.started_at", "the call's start (UTC)"),
    Column("ended_at", "datetime", "turn.ended_at", "its end (UTC)"),
    Column("duration_s", "Float64", lambda t: _seconds(t.turn.started_at, t.turn.ended_at), "its length, s"),
    *_PER_CALL,
    Column("cost_usd", "Float64", "cost_usd", "the workbench's price of the call, by its route"),
    Column("recorded_cost_usd", "Float64", "turn.usage.cost", "the USD the source recorded"),
    Column("finish_reason", "category", "turn.finish_reason", "the provider's finish reason"),
    Column("tool_calls", "Int64", lambda t: len(t.turn.tool_calls), "tool calls in the reply"),
    Column("tool_errors", "Int64", lambda t: _errors(t.turn), "their results marked as errors"),
    Column("mutated", "boolean", "turn.mutated", "the tools changed the workspace; <NA>: unknown"),
    Column("sent_messages", "Int64", "sent_messages", "messages in the request, where recorded"),
    Column("text_chars", "Int64", "text_chars", "characters of the reply's text"),
    Column("response_id", "string", "turn.response_id", "the provider's response id"),
)
"""``turns_df``: one row per model call."""

CALL_COLUMNS: tuple[Column[CallItem], ...] = (
    Column("run_id", "string", "run.run_id", "the run"),
    Column("turn", "Int64", "turn.index", "the call's model call"),
    Column("call", "Int64", "index", "0-based position in the reply"),
    Column("call_id", "string", "call.id", "the tool call's id"),
    Column("name", "category", "call.name", "the tool"),
    Column("arguments_chars", "Int64", lambda c: len(c.call.arguments), "characters of its arguments"),
    Column("has_result", "boolean", lambda c: c.result is not None, "a result was recorded for it"),
    Column("result_size", "Int64", "result.size", "the result's size"),
    Column(
        "result_sha256", "string", lambda c: c.result.digest() if c.result else None, "sha256 of the result"
    ),
    Column("is_error", "boolean", "result.is_error", "the result is an error"),
    Column("timed_out", "boolean", "result.timed_out", "the tool timed out"),
    Column("duration_s", "Float64", "result.duration_s", "the tool's time, where recorded"),
)
"""``calls_df``: one row per tool call."""

EVENT_COLUMNS: tuple[Column[EventItem], ...] = (
    Column("run_id", "string", "run.run_id", "the run"),
    Column("turn", "Int64", "event.turn", "the call after which it happened; <NA>: before the first"),
    Column("kind", "category", "event.kind", "what happened (`EventKind`, or a governor decision's kind)"),
    Column("reason", "string", "event.reason", "why, in words"),
    Column("pre_tokens", "Int64", _pre_tokens, "a compaction's prompt before it"),
    Column("data", "string", _data_json, "the event's numbers as JSON (keys sorted)"),
)
"""``events_df``: one row per event."""

FRAMES: dict[str, tuple[Column[Any], ...]] = {
    "runs_df": RUN_COLUMNS,
    "turns_df": TURN_COLUMNS,
    "calls_df": CALL_COLUMNS,
    "events_df": EVENT_COLUMNS,
}
"""Each frame's spec by its function's name (the docs pages' ``<!-- columns: NAME -->`` blocks)."""
