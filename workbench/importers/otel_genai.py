"""OpenTelemetry GenAI spans: OTLP JSON (``resourceSpans``), a JSON list of spans, or JSONL of either; a run per
trace id, a call per innermost model span. The shapes and their mapping: docs/importers/otel-genai.md."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from workbench.importers._common import Fields, dumps_args, read_prefix, skeleton
from workbench.importers.contract import FINAL_WITHOUT_CALLS, HASHED, declare, recorded, unknown
from workbench.importers.transcript import TranscriptBuilder, origin
from workbench.trace import genai_spans as ga
from workbench.trace.errors import TraceError
from workbench.trace.limits import read_document
from workbench.trace.route import observed
from workbench.trace.schema import Event, Outcome, RecordedPolicy, Route, Run, ToolCall, ToolResult, Usage

NAME = "otel-genai"
VERSION = "1"

FACTS = declare(
    mutated=unknown(
        "spans do not say whether a tool changed the workspace; the workbench's own spans do "
        "(workbench.turn.mutated, recorded)"
    ),
    new_info=HASHED,
    tool_error=recorded("span status error"),
    tool_timeout=unknown("not recorded apart from errors; the workbench's own spans record it"),
    ending=FINAL_WITHOUT_CALLS,
    tool_usage=unknown("tool spans carry no model usage"),
    cache_read=recorded("gen_ai.usage cache read attributes where present"),
    cache_write=recorded("gen_ai.usage cache write attributes where present"),
    route=recorded(
        "gen_ai.provider.name (gen_ai.system before it) and server.address where present; else the served "
        "model's vendor, inferred (workbench.trace.route)"
    ),
)

CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)

# any-agent names its model spans "call_llm" (any_agent.tracing: its own span model, AgentSpan)
MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion", "call_llm"})
TOOL_OPERATION = "execute_tool"

# (Usage field, attribute names in order of preference: current semconv, deprecated semconv, OpenInference)
USAGE_ATTRS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("input", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")),
    (
        "output",
        ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"),
    ),
    # then any-agent's `gen_ai.usage.cached_tokens` / `reasoning_tokens` and the `*_input_tokens` spellings
    # (OpenLLMetry, Laminar, OpenHands' SDK spans)
    (
        "cached",
        (
            "gen_ai.usage.cache_read.input_tokens",
            "llm.token_count.prompt_details.cache_read",
            "gen_ai.usage.cached_tokens",
            "gen_ai.usage.cache_read_input_tokens",
        ),
    ),
    (
        "cache_write",
        (
            "gen_ai.usage.cache_creation.input_tokens",
            "llm.token_count.prompt_details.cache_write",
            "gen_ai.usage.cache_creation_input_tokens",
        ),
    ),
    (
        "reasoning",
        (
            "gen_ai.usage.reasoning.output_tokens",
            "llm.token_count.completion_details.reasoning",
            "gen_ai.usage.reasoning_tokens",
        ),
    ),
)
MODEL_ATTRS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "llm.response.model_name")

ALWAYS = (
    "message contents are not mapped (span attributes and events carry them only when content capture is on)",
    "gen_ai.usage.input_tokens is read as the whole prompt, cache reads included, as the conventions say; where a "
    "span's cache reads exceed it the instrumentation reported fresh input only and the parts are added",
)


def sniff(path: Path, head: list[bytes]) -> bool:
    """Spans by their structure in the first 64 KiB: OTLP's ``resourceSpans``, or objects keyed by a trace id
    and a span id (camel or snake case, at the top of a span or in its ``context``; text or integer ids)."""
    sk = skeleton(read_prefix(path))
    if sk is None:
        return False
    keys = sk.anywhere()
    if "resourceSpans" in keys:
        return True
    return ("traceId" in keys and "spanId" in keys) or ("trace_id" in keys and "span_id" in keys)


@dataclass
class _Span:
    trace: str
    span: str
    parent: str | None
    name: str
    start: datetime | None
    end: datetime | None
    attrs: dict[str, Any]
    error: bool
    line: int | None
    where: str
    children: list[_Span] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def kind(self) -> str | None:
        op = self.attrs.get("gen_ai.operation.name")
        op = op if isinstance(op, str) else None
        oi = self.attrs.get("openinference.span.kind")
        oi = oi.upper() if isinstance(oi, str) else None
        if op == TOOL_OPERATION or oi == "TOOL":
            return "tool"
        if (
            op in MODEL_OPERATIONS
            or oi == "LLM"
            or any(a in self.attrs for _, names in USAGE_ATTRS for a in names)
        ):
            return "model"
        if op == "embeddings" or oi == "EMBEDDING":
            return "embedding"
        return None


def _value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain value (``intValue`` is a string in OTLP JSON)."""
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return v["intValue"]
    if "doubleValue" in v:
        return v["doubleValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        values = v["arrayValue"].get("values") if isinstance(v["arrayValue"], dict) else None
        return [_value(x) for x in values] if isinstance(values, list) else []
    if "kvlistValue" in v:
        return _attributes(v["kvlistValue"].get("values") if isinstance(v["kvlistValue"], dict) else None)
    return None


def _attributes(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    out: dict[str, Any] = {}
    if isinstance(raw, list):
        for kv in raw:
            if isinstance(kv, dict) and isinstance(kv.get("key"), str):
                out[kv["key"]] = _value(kv.get("value"))
    return out


def _hex(v: Any, width: int = 16) -> str | None:
    """An id as lower-case hex: text as written, an integer (any-agent's and the SDK's ``SpanContext``) as OTel
    formats it (32 hex digits for a trace id, 16 for a span id)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:0{width}x}" if v >= 0 else None
    if not isinstance(v, str) or not v:
        return None
    return v.lower().removeprefix("0x")


def _time(v: Any, f: Fields, line: int | None, where: str) -> datetime | None:
    """ISO text, or epoch nanoseconds (OTLP's ``*UnixNano``, a string or a number)."""
    if v is None or v == "" or v == 0 or v == "0":
        return None
    if isinstance(v, str) and v.isdigit():
        v = int(v)
    if isinstance(v, int) and not isinstance(v, bool):
        # nanoseconds since the epoch; a smaller figure is micro-, milli- or plain seconds
        for scale in (1e9, 1e6, 1e3, 1.0):
            if v / scale < 1e10:
                try:
                    return datetime.fromtimestamp(v / scale, UTC)
                except (OverflowError, OSError, ValueError):
                    break
        f.bad(line, where, f"not a timestamp: {v!r}")
        return None
    return f.time(v, line, where)


def _span(raw: Any, f: Fields, line: int | None, where: str) -> _Span | None:
    if not isinstance(raw, dict):
        f.bad(line, where, f"not a span object ({type(raw).__name__})")
        return None
    ctx = raw.get("context") if isinstance(raw.get("context"), dict) else {}
    trace = _hex(_first(raw, ctx, "traceId", "trace_id"), 32)
    span = _hex(_first(raw, ctx, "spanId", "span_id"))
    if trace is None or span is None:
        f.bad(line, where, "a span needs a trace id and a span id")
        return None
    up = raw.get("parent")  # any-agent: the parent's SpanContext, {trace_id, span_id, ...}
    parent = _hex(
        _first(up, {}, "spanId", "span_id")
        if isinstance(up, dict)
        else _first(raw, {}, "parentSpanId", "parent_span_id", "parent_id")
    )
    attrs = _attributes(raw.get("attributes"))
    if isinstance(raw.get("span_kind"), str) and ga.OI_KIND not in attrs:  # Phoenix keeps it beside them
        attrs = {**attrs, ga.OI_KIND: raw["span_kind"]}
    status = raw.get("status") if isinstance(raw.get("status"), dict) else {}
    code = status.get("code", status.get("status_code", raw.get("status_code")))
    return _Span(
        trace=trace,
        span=span,
        parent=parent,
        name=raw.get("name") if isinstance(raw.get("name"), str) else "",
        start=_time(raw.get("startTimeUnixNano", raw.get("start_time")), f, line, f"{where}.start"),
        end=_time(raw.get("endTimeUnixNano", raw.get("end_time")), f, line, f"{where}.end"),
        attrs=attrs,
        error=code in (2, "STATUS_CODE_ERROR", "ERROR", "error"),
        line=line,
        where=where,
        events=[e for e in raw["events"] if isinstance(e, dict)]
        if isinstance(raw.get("events"), list)
        else [],
    )


def _first(raw: dict[str, Any], ctx: dict[str, Any], *names: str) -> Any:
    """The first of ``names`` set (not ``None``, not empty) on the span, else on its context."""
    for src in (raw, ctx):
        for n in names:
            v = src.get(n)
            if v is not None and v != "":
                return v
    return None


def _spans_of(obj: Any, f: Fields, line: int | None, where: str) -> list[_Span]:
    """The spans in one JSON value: an OTLP export request, a list of spans, or one span."""
    out: list[_Span] = []
    if isinstance(obj, dict) and "resourceSpans" in obj:
        for i, rs in enumerate(f.items(obj.get("resourceSpans"), line, f"{where}resourceSpans")):
            if not isinstance(rs, dict):
                f.bad(line, f"{where}resourceSpans[{i}]", "not an object")
                continue
            scopes = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans"))
            for j, ss in enumerate(f.items(scopes, line, f"{where}resourceSpans[{i}].scopeSpans")):
                spans = ss.get("spans") if isinstance(ss, dict) else None
                for k, sp in enumerate(
                    f.items(spans, line, f"{where}resourceSpans[{i}].scopeSpans[{j}].spans")
                ):
                    s = _span(sp, f, line, f"{where}resourceSpans[{i}].scopeSpans[{j}].spans[{k}]")
                    if s is not None:
                        out.append(s)
        return out
    if isinstance(obj, list):
        for i, sp in enumerate(obj):
            out.extend(_spans_of(sp, f, line, f"{where}[{i}]"))
        return out
    if isinstance(obj, dict) and isinstance(obj.get("spans"), list) and "context" not in obj:
        # any-agent's AgentTrace: {spans, final_output}
        return _spans_of(obj["spans"], f, line, f"{where}spans")
    s = _span(obj, f, line, where or "span")
    return [s] if s is not None else []


def load(path: Path) -> list[Run]:
    path = Path(path)
    f = Fields(path)
    try:
        data = read_document(path, "OTel export")  # bounded, fd checked (workbench.trace.limits)
    except OSError as exc:
        raise TraceError(str(path), f"cannot open: {exc.strerror or exc}") from exc
    spans: list[_Span] = []
    try:
        doc = _loads(data)
        spans = _spans_of(doc, f, None, "")
    except orjson.JSONDecodeError as whole:
        lines = data.split(b"\n")
        if not any(_parses(ln) for ln in [ln for ln in lines if ln.strip()][:8]):
            # not JSONL either (no line of the head is a JSON value): a broken whole document
            raise TraceError(str(path), f"not JSON: {whole.msg}", line=whole.lineno) from None
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                obj = _loads(raw)
            except orjson.JSONDecodeError as exc:
                last = number == len(lines) and not data.endswith(b"\n")
                f.bad(number, None, "truncated line (file ends mid-line)" if last else f"not JSON ({exc})")
                continue
            if not isinstance(obj, dict | list):
                f.bad(number, None, f"not a span or an export request ({type(obj).__name__})")
                continue
            spans.extend(_spans_of(obj, f, number, ""))
    return _runs_of(spans, str(path), f, "in this file")


def runs_from_spans(objects: Any, source: str, *, where: str = "in this source") -> list[Run]:
    """The runs in span objects already parsed from JSON in any shape :func:`load` reads (a list of spans, an
    export request) — what a backend's API returns (``workbench.sources.phoenix``). ``source`` names where they came
    from in every run and diagnostic. Raises :class:`TraceError` when no span is a GenAI model or tool span."""
    f = Fields(Path(source))
    return _runs_of(_spans_of(objects, f, None, ""), source, f, where)


def _runs_of(spans: list[_Span], source: str, f: Fields, where: str) -> list[Run]:
    by_trace: dict[str, list[_Span]] = defaultdict(list)
    for s in spans:
        by_trace[s.trace].append(s)
    runs = [r for trace, members in by_trace.items() if (r := _run(source, trace, members, f)) is not None]
    if not runs:
        first = f.diagnostics[0] if f.diagnostics else None
        detail = f" (first problem: {first})" if first else ""
        raise TraceError(source, f"no GenAI model or tool spans {where}{detail}")
    # each problem goes to the run whose spans its line holds; the rest (bad lines, spans of no run) to the first
    line_trace = {s.line: s.trace for s in spans if s.line is not None}
    run_of = {r.run_id: r for r in runs}
    for d in f.diagnostics:
        owner = run_of.get(line_trace.get(d.line, "")) if d.line is not None else None
        (owner or runs[0]).diagnostics.append(d)
    return runs


# An integer literal beyond 64 bits (a 128-bit trace id written as a number, as any-agent's and the OTel SDK's
# SpanContext hold it): orjson reads those as floats, losing digits, so such a document is read with json.
_BIG_INT = re.compile(rb"[:\[,]\s*-?\d{20,}\s*[,\]}]")


def _loads(raw: bytes) -> Any:
    """``orjson.loads``, exact for integers of any size (raises ``orjson.JSONDecodeError`` alike)."""
    value = orjson.loads(raw)
    if _BIG_INT.search(raw) is None:
        return value
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return value


def _parses(raw: bytes) -> bool:
    try:
        return isinstance(orjson.loads(raw), dict | list)
    except orjson.JSONDecodeError:
        return False


def _route(s: _Span, rid: Any, model: str | None) -> Route | None:
    """The call's route from the semantic conventions: ``gen_ai.provider.name`` (``gen_ai.system`` before it)
    and ``server.address`` (the host called), else the response id and the served model (workbench.trace.route)."""
    name = next(
        (a for a in ("gen_ai.provider.name", "gen_ai.system") if isinstance(s.attrs.get(a), str)), None
    )
    host = s.attrs.get("server.address")
    provider = s.attrs[name] if name else None
    return observed(
        provider=ga.PROVIDER_VALUES.get(provider.lower(), provider) if provider else None,
        provider_field=f"attributes.{name}" if name else "provider",
        base_url=f"https://{host}" if isinstance(host, str) and host and "://" not in host else host,
        response_id=rid if isinstance(rid, str) else None,
        model=model,
    )


def _cost(s: _Span, f: Fields) -> float | None:
    """The recorded USD: OpenInference ``llm.cost.total``, ``gen_ai.usage.cost``, else any-agent's
    ``gen_ai.usage.input_cost`` + ``output_cost``."""
    for name in ("llm.cost.total", "gen_ai.usage.cost"):
        if s.attrs.get(name) is not None:
            return f.number(s.attrs[name], s.line, f"{s.where}.attributes.{name}")
    parts = [
        f.number(s.attrs[n], s.line, f"{s.where}.attributes.{n}")
        for n in ("gen_ai.usage.input_cost", "gen_ai.usage.output_cost")
        if s.attrs.get(n) is not None
    ]
    known = [p for p in parts if p is not None]
    return float(sum(known)) if known and len(known) == len(parts) else None


def _usage(s: _Span, f: Fields) -> tuple[Usage, bool]:
    got: dict[str, int | None] = {}
    for key, names in USAGE_ATTRS:
        name = next((n for n in names if s.attrs.get(n) is not None), None)
        got[key] = None if name is None else f.tokens(s.attrs[name], s.line, f"{s.where}.attributes.{name}")
    cost = _cost(s, f)
    prompt, cached, write = got["input"], got["cached"], got["cache_write"]
    added = False
    own = ga.TURN_INDEX in s.attrs  # the workbench's own spans send the whole prompt, as the conventions say
    if prompt is not None and cached is not None and cached > prompt and not own:
        prompt, added = prompt + cached + (write or 0), True  # fresh input only: the parts are added
    return (
        Usage(
            prompt=prompt,
            cached=cached,
            cache_write=write,
            completion=got["output"],
            reasoning=got["reasoning"],
            cost=cost,
        ),
        added,
    )


def _tool(s: _Span) -> tuple[ToolCall, ToolResult | None]:
    a = s.attrs
    cid = a.get("gen_ai.tool.call.id") or a.get("tool_call.id") or a.get("tool.id")
    cid = str(cid) if cid is not None else s.span
    name = (
        a.get("gen_ai.tool.name") or a.get("tool.name") or s.name.removeprefix("execute_tool ").strip() or "?"
    )
    args = a.get("gen_ai.tool.call.arguments", a.get("tool.parameters", a.get("input.value")))
    if args is None and isinstance(a.get(ga.ARGUMENTS_SHA256), str):
        args = ga.withheld_arguments(a[ga.ARGUMENTS_SHA256])  # not captured: the call keeps its identity
    result = a.get("gen_ai.tool.call.result", a.get("output.value"))
    duration = (s.end - s.start).total_seconds() if s.start and s.end else None
    if isinstance(a.get(ga.RESULT_DURATION), int | float) and not isinstance(a.get(ga.RESULT_DURATION), bool):
        duration = float(a[ga.RESULT_DURATION])  # the loop's own measure, not rounded to microseconds
    own_error, timed_out = a.get(ga.RESULT_ERROR), a.get(ga.RESULT_TIMED_OUT) is True
    is_error = own_error if isinstance(own_error, bool) else s.error
    usage = _json_model(Usage, a.get(ga.RESULT_USAGE))
    res = None
    if result is not None or s.error or own_error is not None:
        if result is None and isinstance(a.get(ga.RESULT_SHA256), str):
            size = a.get(ga.RESULT_SIZE)
            res = ToolResult(
                call_id=cid,
                sha256=a[ga.RESULT_SHA256],
                size=size if isinstance(size, int) and size >= 0 else None,
                is_error=is_error,
                timed_out=timed_out,
                duration_s=duration,
                usage=usage,
            )
        else:
            content = result if isinstance(result, str) else ("" if result is None else dumps_args(result))
            res = ToolResult.of(
                content, call_id=cid, is_error=is_error, timed_out=timed_out, duration_s=duration, usage=usage
            )
    return ToolCall(id=cid, name=str(name), arguments="" if args is None else dumps_args(args)), res


def _json_model(model: Any, raw: Any) -> Any:
    """A pydantic model from a JSON text attribute, or None where it is absent or not valid."""
    if not isinstance(raw, str):
        return None
    try:
        return model.model_validate_json(raw)
    except ValueError:
        return None


def _reply_text(attrs: dict[str, Any]) -> str | None:
    """The reply's text: the workbench's own attribute, else the text parts of ``gen_ai.output.messages``; without
    content capture, a stand-in naming its digest where the loop recorded that the reply had text."""
    text = attrs.get(ga.TURN_TEXT)
    if isinstance(text, str):
        return text
    raw = attrs.get(ga.OUTPUT_MESSAGES)
    if isinstance(raw, str):
        try:
            messages = orjson.loads(raw)
        except orjson.JSONDecodeError:
            messages = None
        if isinstance(messages, list):
            parts = [
                p.get("content")
                for m in messages
                if isinstance(m, dict)
                for p in m.get("parts") or ()
                if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
            ]
            if parts:
                return "".join(parts)
    if attrs.get(ga.TURN_HAS_TEXT) is True and isinstance(attrs.get(ga.TURN_TEXT_SHA256), str):
        return f"{ga.WITHHELD_PREFIX}{attrs[ga.TURN_TEXT_SHA256]}>"
    return None


def _events(spans: list[_Span], f: Fields) -> list[Event]:
    """The trace events the workbench's exporter put on its spans (``workbench.event.*`` attributes)."""
    out: list[Event] = []
    for s in spans:
        for i, e in enumerate(s.events):
            attrs = _attributes(e.get("attributes"))
            kind = attrs.get(ga.EVENT_KIND)
            if not isinstance(kind, str):
                continue
            turn = attrs.get(ga.EVENT_TURN)
            reason = attrs.get(ga.EVENT_REASON)
            data: Any = {}
            if isinstance(attrs.get(ga.EVENT_DATA), str):
                try:
                    data = orjson.loads(attrs[ga.EVENT_DATA])
                except orjson.JSONDecodeError:
                    f.bad(s.line, f"{s.where}.events[{i}]", "event data is not JSON")
            out.append(
                Event(
                    turn=turn if isinstance(turn, int) and not isinstance(turn, bool) else None,
                    kind=kind,
                    reason=reason if isinstance(reason, str) else None,
                    data=data if isinstance(data, dict) else {},
                )
            )
    return out


def _run(path: str, trace: str, spans: list[_Span], f: Fields) -> Run | None:
    by_id = {s.span: s for s in spans}
    for s in spans:
        if s.parent in by_id:
            by_id[s.parent].children.append(s)
    models = [s for s in spans if s.kind == "model"]
    tools = [s for s in spans if s.kind == "tool"]
    if not models and not tools:
        return None
    wrappers = [s for s in models if _has_model_inside(s)]
    b = _Trace(f)
    order = sorted((s for s in models if s not in wrappers), key=_in_time)
    for s in order:
        b.model_span(s)
    b.attach_tools(order, sorted(tools, key=_in_time))
    b.note(*ALWAYS)
    b.count_note(len(wrappers), "{n} model span(s) wrapping another model span were not counted as calls")
    b.count_note(
        b.added, "{n} span(s) reported fresh input only: their prompt adds the cache reads and writes"
    )
    b.count_note(b.orphans, "{n} tool span(s) started before any model call ended: not attached to a call")
    b.count_note(
        sum(1 for t in b.turns if not t.usage.known),
        "{n} model span(s) carry no token usage: their usage is unknown",
    )
    b.note("requests not recorded: the messages each call sent are not rebuilt from span attributes")
    embeddings = sum(1 for s in spans if s.kind == "embedding")
    outcome = b.ending(
        "the last model call made no tool call",
        after_call="the recording ends after a tool call",
        nothing="no model span in this trace",
        text=False,
    )
    root = next((s for s in spans if s.parent is None or s.parent not in by_id), None)
    conv = next(
        (s.attrs.get(k) for s in spans for k in ("gen_ai.conversation.id", "session.id") if s.attrs.get(k)),
        None,
    )
    own = next((s for s in spans if isinstance(s.attrs.get(ga.RUN_ID), str)), None)
    run_id, context_length, policy = trace, None, None
    model = b.names.most_common(1)[0][0] if b.names else None
    if own is not None:  # a run the workbench's own loop exported: its facts come back as it recorded them
        outcome, run_id = _own_outcome(own.attrs, outcome), own.attrs[ga.RUN_ID]
        model = own.attrs.get(ga.REQUEST_MODEL) if isinstance(own.attrs.get(ga.REQUEST_MODEL), str) else model
        cl = own.attrs.get(ga.CONTEXT_LENGTH)
        context_length = cl if isinstance(cl, int) and not isinstance(cl, bool) and cl > 0 else None
        policy = _json_model(RecordedPolicy, own.attrs.get(ga.POLICY))
        withheld = sum(1 for t in b.turns if (t.text or "").startswith(ga.WITHHELD_PREFIX))
        withheld += sum(
            1 for t in b.turns for c in t.tool_calls if c.arguments.startswith(ga.WITHHELD_PREFIX)
        )
        b.count_note(
            withheld,
            "{n} reply text(s) and tool argument(s) were exported without content capture: each is its SHA-256, "
            "which keeps a call's identity; rules that read their words (the stuck detector, shell-write "
            "inference) cannot be judged from them",
        )
    return b.run(
        run_id=run_id,
        **origin(NAME, VERSION, path),
        model=model,
        context_length=context_length,
        policy=policy,
        started_at=min((s.start for s in spans if s.start), default=None),
        events=_events(spans, f),
        outcome=outcome,
        metadata={
            "trace_id": trace,
            "root_span": root.name if root else None,
            "conversation_id": conv if isinstance(conv, str) else None,
            "spans": len(spans),
            "embedding_spans": embeddings,
        },
    )


def _in_time(s: _Span) -> tuple[datetime, int]:
    return (s.start or datetime.min.replace(tzinfo=UTC), s.line or 0)


def _has_model_inside(s: _Span) -> bool:
    stack, seen = list(s.children), set()
    while stack:
        c = stack.pop()
        if c.span in seen:
            continue
        seen.add(c.span)
        if c.kind == "model":
            return True
        stack.extend(c.children)
    return False


class _Trace(TranscriptBuilder):
    """One trace's spans as they are read: a turn per model span (in time order), each tool span attached to its
    call."""

    def __init__(self, f: Fields) -> None:
        super().__init__()
        self.f = f
        self.added = self.orphans = 0
        self.names: Counter[str] = Counter()

    def model_span(self, s: _Span) -> None:
        usage, fresh_only = _usage(s, self.f)
        self.added += fresh_only
        model = next((s.attrs[a] for a in MODEL_ATTRS if isinstance(s.attrs.get(a), str)), None)
        if model:
            self.names[model] += 1
        reasons = s.attrs.get("gen_ai.response.finish_reasons")
        reason = reasons[0] if isinstance(reasons, list) and reasons and isinstance(reasons[0], str) else None
        rid = s.attrs.get("gen_ai.response.id")
        mutated, retries, segment = (
            s.attrs.get(k) for k in (ga.TURN_MUTATED, ga.TURN_RETRIES, ga.TURN_SEGMENT)
        )
        timed = s.attrs.get(ga.TURN_TIMED)
        timed = timed if isinstance(timed, list) and len(timed) == 2 else [True, True]
        self.turn(
            sent=None,
            started_at=s.start if timed[0] is not False else None,
            ended_at=s.end if timed[1] is not False else None,
            usage=usage,
            finish_reason=reason if isinstance(reason, str) else None,
            text=_reply_text(s.attrs),
            response_id=rid if isinstance(rid, str) else None,
            model=model,
            mutated=mutated if isinstance(mutated, bool) else None,
            route=_json_model(Route, s.attrs.get(ga.TURN_ROUTE)) or _route(s, rid, model),
            retries=retries
            if isinstance(retries, int) and not isinstance(retries, bool) and retries >= 0
            else 0,
            segment=segment
            if isinstance(segment, int) and not isinstance(segment, bool) and segment >= 0
            else None,
        )

    def attach_tools(self, order: list[_Span], tools: list[_Span]) -> None:
        """The workbench's own spans name their turn; any other tool span belongs to the last call that ended
        before it."""
        by_index = {
            s.attrs[ga.TURN_INDEX]: turn
            for s, turn in zip(order, self.turns, strict=True)
            if isinstance(s.attrs.get(ga.TURN_INDEX), int)
        }
        ends = [s.end for s in order]
        for t in tools:
            call, result = _tool(t)
            owner = by_index.get(t.attrs.get(ga.TURN_INDEX)) if ga.TURN_INDEX in t.attrs else None
            if owner is None:
                for turn, end in zip(self.turns, ends, strict=True):
                    if end is not None and t.start is not None and end <= t.start:
                        owner = turn
            if owner is None:
                self.orphans += 1
                continue
            owner.tool_calls.append(call)
            if result is not None:
                owner.tool_results.append(result)


def _own_outcome(attrs: dict[str, Any], inferred: Outcome) -> Outcome:
    """The outcome the workbench's loop put on its run span; the inferred one where it put none (a run cut off
    before it finished)."""
    fields = {
        "stop_reason": attrs.get(ga.OUTCOME_STOP),
        "verdict": attrs.get(ga.OUTCOME_VERDICT),
        "exhausted": attrs.get(ga.OUTCOME_EXHAUSTED),
        "detail": attrs.get(ga.OUTCOME_DETAIL),
        "text": attrs.get(ga.OUTCOME_TEXT),
    }
    kept = {k: v for k, v in fields.items() if isinstance(v, str)}
    return Outcome(**kept) if "stop_reason" in kept else inferred
