"""The live loop's runs as OpenTelemetry GenAI spans over OTLP (Arize Phoenix, Langfuse, Jaeger, a collector): one
trace per run, the facts the conventions have no name for as ``workbench.*`` attributes, so a run read back from its
spans replays to the same decisions; message contents only with content capture on, else their SHA-256.
docs/loop.md, "Exporting spans"; needs the ``phoenix`` extra.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from workbench.loop.recorder import Recorder
from workbench.trace import genai_spans as a
from workbench.trace.schema import Event, Outcome, Run, ToolCall, ToolResult, Turn

INSTALL_HINT = "exporting spans needs the opentelemetry SDK: pip install -e '.[phoenix]'"
DEFAULT_PROJECT = "default"  # Phoenix's own project for spans that name none
AGENT = "workbench"
FLUSH_TIMEOUT_MS = 10_000  # at the end of a run: how long the last spans may take to reach the backend


class ExportUnavailable(RuntimeError):
    """The opentelemetry SDK is not installed (one line that says what to install)."""


def capture_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """Content capture as the conventions' variable sets it: on only for ``true`` (any case)."""
    env = os.environ if environ is None else environ
    return env.get(a.CAPTURE_ENV, "").strip().lower() == "true"


def traces_endpoint(url: str) -> str:
    """The OTLP/HTTP traces URL for ``url``: a base (``http://host:4318``, Phoenix's ``http://host:6006``) gains
    ``/v1/traces``, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` is read by the SDK; a URL already ending in it is kept."""
    url = url.rstrip("/")
    return url if url.endswith("/v1/traces") else url + "/v1/traces"


def check_endpoint(url: str) -> None:
    """Refuse, before a run starts, an endpoint that is not an http(s) URL or an SDK that is not installed."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url}: give an OTLP/HTTP URL, http://HOST:PORT")
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ModuleNotFoundError as exc:
        raise ExportUnavailable(INSTALL_HINT) from exc


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _ns(when: datetime | None) -> int | None:
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1_000_000) * 1_000  # whole microseconds: what a datetime holds


@dataclass
class ExportTally:
    """What reached the backend: spans sent and the first failure, if any (read after :meth:`SpanExport.close`)."""

    sent: int = 0
    failed: int = 0
    first_error: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def words(self, endpoint: str) -> str:
        if self.failed:
            why = f": {self.first_error}" if self.first_error else ""
            return f"{self.failed} of {self.sent + self.failed} spans were not accepted by {endpoint}{why}"
        return f"{self.sent} spans sent to {endpoint}"


def _counting(inner: Any, tally: ExportTally, redact: Callable[[str], str]) -> Any:
    """``inner`` (a SpanExporter) that counts what it exported and keeps the first failure's words."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Counting(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            try:
                result = inner.export(spans)
            except Exception as exc:  # an exporter that raises is a failed batch, never the run's end
                result, why = SpanExportResult.FAILURE, f"{type(exc).__name__}: {exc}"
            else:
                why = "the backend refused the batch"
            with tally.lock:
                if result == SpanExportResult.SUCCESS:
                    tally.sent += len(spans)
                else:
                    tally.failed += len(spans)
                    tally.first_error = tally.first_error or redact(why)[:300]
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30_000) -> bool:
            return bool(inner.force_flush(timeout_millis))

    return Counting()


class SpanExport:
    """Spans for one live run, emitted as the run goes: :meth:`turn` after each committed turn, :meth:`event`
    for each decision, :meth:`finish` with the outcome, then :meth:`close`.

    ``exporter``: any opentelemetry ``SpanExporter`` (default: OTLP/HTTP to ``endpoint``); ``batch=False`` sends
    each span as it ends (tests, and an exporter that must see every span before :meth:`close` returns)."""

    def __init__(
        self,
        header: Run,
        *,
        endpoint: str | None = None,
        project: str | None = None,
        capture: bool | None = None,
        redact: Callable[[str], str] = lambda text: text,
        exporter: Any = None,
        batch: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        try:
            from opentelemetry import trace as otel_trace
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
        except ModuleNotFoundError as exc:
            raise ExportUnavailable(INSTALL_HINT) from exc
        if exporter is None:
            if endpoint is None:
                raise ValueError("an OTLP endpoint or an exporter is needed")
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            except ModuleNotFoundError as exc:
                raise ExportUnavailable(INSTALL_HINT) from exc
            exporter = OTLPSpanExporter(endpoint=traces_endpoint(endpoint), headers=dict(headers or {}))
        self.endpoint = endpoint or type(exporter).__name__
        self.project = project or DEFAULT_PROJECT
        self.capture = capture_from_env() if capture is None else capture
        self._redact = redact
        self.tally = ExportTally()
        resource = Resource.create({"service.name": AGENT, a.OI_PROJECT: self.project})
        self._provider = TracerProvider(resource=resource)
        processor = BatchSpanProcessor if batch else SimpleSpanProcessor
        self._provider.add_span_processor(processor(_counting(exporter, self.tally, redact)))
        self._tracer = self._provider.get_tracer("workbench.loop", schema_url=a.SCHEMA_URL)
        self._header = header
        self._closed = False
        start = _ns(header.started_at) or _ns(datetime.now(UTC))
        self._root = self._tracer.start_span(
            f"{a.INVOKE_AGENT} {AGENT}", start_time=start, attributes=self._root_attributes(header)
        )
        self._context = otel_trace.set_span_in_context(self._root)
        self._last_end = start

    # -- what the spans carry ----------------------------------------------------------------------------------
    def _s(self, text: str) -> str:
        return self._redact(text)

    def _root_attributes(self, run: Run) -> dict[str, Any]:
        attrs: dict[str, Any] = {
            a.OPERATION: a.INVOKE_AGENT,
            a.AGENT_NAME: AGENT,
            a.OI_KIND: "AGENT",
            a.RUN_ID: self._s(run.run_id),
            a.CONVERSATION_ID: self._s(run.run_id),
        }
        if run.model:
            attrs[a.REQUEST_MODEL] = self._s(run.model)
        if run.context_length is not None:
            attrs[a.CONTEXT_LENGTH] = run.context_length
        if run.policy is not None:
            attrs[a.POLICY] = self._s(run.policy.model_dump_json(exclude_none=True))
        return attrs

    def _content(self, key_text: str, key_sha: str, text: str | None, attrs: dict[str, Any]) -> None:
        if text is None:
            return
        if self.capture:
            attrs[key_text] = self._s(text)
        else:
            attrs[key_sha] = _sha(self._s(text))

    def _model_attributes(self, turn: Turn) -> dict[str, Any]:
        u = turn.usage
        attrs: dict[str, Any] = {a.OPERATION: a.CHAT, a.OI_KIND: "LLM", a.TURN_INDEX: turn.index}
        model = turn.model or self._header.model
        if model:
            attrs[a.REQUEST_MODEL] = self._s(self._header.model or model)
            attrs[a.RESPONSE_MODEL] = self._s(model)
        for key, value in (
            (a.INPUT_TOKENS, u.prompt),
            (a.OUTPUT_TOKENS, u.completion),
            (a.CACHE_READ_TOKENS, u.cached),
            (a.CACHE_WRITE_TOKENS, u.cache_write),
            (a.REASONING_TOKENS, u.reasoning),
            (a.OI_COST, u.cost),
        ):
            if value is not None:  # unknown stays absent: never sent as 0
                attrs[key] = value
        if turn.finish_reason:
            attrs[a.FINISH_REASONS] = [self._s(turn.finish_reason)]
        if turn.response_id:
            attrs[a.RESPONSE_ID] = self._s(turn.response_id)
        if turn.mutated is not None:
            attrs[a.TURN_MUTATED] = turn.mutated
        if turn.retries:
            attrs[a.TURN_RETRIES] = turn.retries
        if turn.segment is not None:
            attrs[a.TURN_SEGMENT] = turn.segment
        # a span needs times; the record says it had none
        if turn.started_at is None or turn.ended_at is None:
            attrs[a.TURN_TIMED] = [turn.started_at is not None, turn.ended_at is not None]
        if turn.route is not None:
            attrs[a.TURN_ROUTE] = turn.route.model_dump_json(exclude_none=True)
            if turn.route.provider:
                attrs[a.PROVIDER] = turn.route.provider
        attrs[a.TURN_HAS_TEXT] = bool(turn.text)
        self._content(a.TURN_TEXT, a.TURN_TEXT_SHA256, turn.text, attrs)
        if self.capture:
            parts: list[dict[str, Any]] = []
            if turn.text:
                parts.append({"type": "text", "content": self._s(turn.text)})
            parts.extend(
                {"type": "tool_call", "id": c.id, "name": self._s(c.name), "arguments": self._s(c.arguments)}
                for c in turn.tool_calls
            )
            message: dict[str, Any] = {"role": "assistant", "parts": parts}
            if turn.finish_reason:
                message["finish_reason"] = turn.finish_reason
            attrs[a.OUTPUT_MESSAGES] = orjson.dumps([message]).decode()
        return attrs

    def _tool_attributes(self, call: ToolCall, result: ToolResult | None, turn_index: int) -> dict[str, Any]:
        attrs: dict[str, Any] = {
            a.OPERATION: a.EXECUTE_TOOL,
            a.OI_KIND: "TOOL",
            a.TOOL_NAME: self._s(call.name),
            a.TOOL_TYPE: "function",
            a.TURN_INDEX: turn_index,
        }
        if call.id is not None:
            attrs[a.TOOL_CALL_ID] = self._s(call.id)
        self._content(a.TOOL_ARGUMENTS, a.ARGUMENTS_SHA256, call.arguments, attrs)
        if result is None:
            return attrs
        if result.content is not None:
            self._content(a.TOOL_RESULT, a.RESULT_SHA256, result.content, attrs)
        elif result.sha256 is not None:
            attrs[a.RESULT_SHA256] = result.sha256
        if result.size is not None:
            attrs[a.RESULT_SIZE] = result.size
        attrs[a.RESULT_ERROR] = result.is_error
        attrs[a.RESULT_TIMED_OUT] = result.timed_out
        if result.duration_s is not None:
            attrs[a.RESULT_DURATION] = result.duration_s
        if result.usage is not None:
            attrs[a.RESULT_USAGE] = result.usage.model_dump_json(exclude_none=True)
        return attrs

    # -- the run as it goes ------------------------------------------------------------------------------------
    def turn(self, turn: Turn) -> None:
        """The model span of one committed turn and a tool span per call it made."""
        if self._closed:
            return
        now = _ns(datetime.now(UTC)) or 0
        start = _ns(turn.started_at) or self._last_end
        end = _ns(turn.ended_at) or max(start, now)
        model = turn.model or self._header.model or "model"
        span = self._tracer.start_span(
            f"{a.CHAT} {self._s(model)}",
            context=self._context,
            start_time=start,
            attributes=self._model_attributes(turn),
        )
        span.end(end_time=end)
        results = {r.call_id: r for r in turn.tool_results if r.call_id is not None}
        unpaired = [r for r in turn.tool_results if r.call_id is None]
        at = end
        for i, call in enumerate(turn.tool_calls):
            result = results.get(call.id) if call.id is not None else None
            if result is None and i < len(unpaired):
                result = unpaired[i]
            # a tool runs after the call that asked for it: its span starts a microsecond after the model span
            # ends (what the importer attaches by), and lasts what the tool took
            at += 1_000
            took = int((result.duration_s or 0) * 1e9) if result is not None else 0
            tool = self._tracer.start_span(
                f"{a.EXECUTE_TOOL} {self._s(call.name)}",
                context=self._context,
                start_time=at,
                attributes=self._tool_attributes(call, result, turn.index),
            )
            if result is not None and (result.is_error or result.timed_out):
                from opentelemetry.trace import Status, StatusCode

                tool.set_status(Status(StatusCode.ERROR))
            tool.end(end_time=at + took)
        self._last_end = max(end, at)

    def event(self, event: Event) -> None:
        """A trace event (a governor decision, a prune, an injection) as a span event on the run's span, named by
        its kind; its turn, reason and numbers ride along, so a read-back run carries the same events."""
        if self._closed:
            return
        attrs: dict[str, Any] = {a.EVENT_KIND: self._s(event.kind)}
        if event.turn is not None:
            attrs[a.EVENT_TURN] = event.turn
        if event.reason:
            attrs[a.EVENT_REASON] = self._s(event.reason)
        if event.data:
            attrs[a.EVENT_DATA] = self._s(orjson.dumps(event.data, default=str).decode())
        self._root.add_event(self._s(event.kind), attributes=attrs)

    def finish(self, outcome: Outcome) -> None:
        """The run's outcome on its span, and the span ended."""
        if self._closed:
            return
        for key, value in (
            (a.OUTCOME_STOP, outcome.stop_reason),
            (a.OUTCOME_VERDICT, outcome.verdict),
            (a.OUTCOME_EXHAUSTED, outcome.exhausted),
            (a.OUTCOME_DETAIL, outcome.detail),
        ):
            if value is not None:
                self._root.set_attribute(key, self._s(value))
        if outcome.text is not None and self.capture:
            self._root.set_attribute(a.OUTCOME_TEXT, self._s(outcome.text))
        self._root.end(end_time=max(self._last_end, _ns(datetime.now(UTC)) or 0))
        self._closed = True

    def close(self) -> ExportTally:
        """Flush what is left and shut the exporter down; the tally says what reached the backend. A run that
        did not finish (killed, failed) ends its span here, so the backend still sees its turns."""
        if not self._closed:
            self._root.end(end_time=max(self._last_end, _ns(datetime.now(UTC)) or 0))
            self._closed = True
        self._provider.force_flush(FLUSH_TIMEOUT_MS)
        self._provider.shutdown()
        return self.tally


class ExportingRecorder(Recorder):
    """A :class:`~workbench.loop.recorder.Recorder` that also sends each committed turn, event and the outcome as
    spans (:class:`SpanExport`). The native trace stays the record: the spans are what it writes, redacted the
    same way, sent after it is flushed."""

    def __init__(self, *args: Any, export: SpanExport, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.export = export

    def event(self, event: Event) -> None:
        super().event(event)
        self.export.event(self._clean(event))

    def turn(self, turn: Turn, events: Sequence[Event] = ()) -> None:
        super().turn(turn, events)
        self.export.turn(self._clean(turn))
        for event in events:
            self.export.event(self._clean(event))

    def finish(self, outcome: Outcome) -> None:
        super().finish(outcome)
        self.export.finish(self._clean(outcome))

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.export.close()
