"""OpenTelemetry GenAI spans: OTLP JSON, span lists and JSONL; semconv old and new, OpenInference; runs by trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.samples.lines import otel_span_lines
from workbench.importers import detect, otel_genai
from workbench.trace import TraceError, read_run, write_run

T1 = "5b8efff798038103d269b633813fc60c"
T2 = "0af7651916cd43dd8448eb211c80319c"
NS = 1_764_000_000_000_000_000


def kv(key: str, value: object) -> dict:
    if isinstance(value, bool):
        v = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}  # OTLP JSON writes 64-bit integers as strings
    elif isinstance(value, float):
        v = {"doubleValue": value}
    elif isinstance(value, list):
        v = {"arrayValue": {"values": [{"stringValue": x} for x in value]}}
    else:
        v = {"stringValue": value}
    return {"key": key, "value": v}


def otlp_span(
    trace: str,
    sid: str,
    parent: str,
    name: str,
    start_s: float,
    end_s: float,
    attrs: dict,
    error: bool = False,
) -> dict:
    return {
        "traceId": trace,
        "spanId": sid,
        "parentSpanId": parent,
        "name": name,
        "kind": 3,
        "startTimeUnixNano": str(NS + int(start_s * 1e9)),
        "endTimeUnixNano": str(NS + int(end_s * 1e9)),
        "attributes": [kv(k, v) for k, v in attrs.items()],
        "status": {"code": 2, "message": "boom"} if error else {},
    }


CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "anthropic",
    "gen_ai.request.model": "claude-sonnet-4",
}


def otlp_doc(scope_key: str = "scopeSpans") -> dict:
    spans_t1 = [
        otlp_span(
            T1, "aaaa000000000001", "", "invoke_agent coder", 0, 20, {"gen_ai.operation.name": "invoke_agent"}
        ),
        otlp_span(
            T1,
            "aaaa000000000002",
            "aaaa000000000001",
            "chat claude-sonnet-4",
            1,
            3,
            {
                **CHAT,
                "gen_ai.response.model": "claude-sonnet-4-20250514",
                "gen_ai.response.id": "msg_1",
                "gen_ai.response.finish_reasons": ["tool_use"],
                "gen_ai.usage.input_tokens": 5000,
                "gen_ai.usage.output_tokens": 80,
                "gen_ai.usage.cache_read.input_tokens": 4000,
                "gen_ai.usage.cache_creation.input_tokens": 900,
            },
        ),
        otlp_span(
            T1,
            "aaaa000000000003",
            "aaaa000000000001",
            "execute_tool bash",
            3.5,
            4,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "bash",
                "gen_ai.tool.call.id": "toolu_1",
                "gen_ai.tool.call.arguments": '{"cmd": "ls"}',
                "gen_ai.tool.call.result": "a.py",
            },
        ),
        otlp_span(
            T1,
            "aaaa000000000004",
            "aaaa000000000001",
            "execute_tool edit",
            4,
            5,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "edit",
                "gen_ai.tool.call.id": "toolu_2",
            },
            error=True,
        ),
        otlp_span(
            T1,
            "aaaa000000000005",
            "aaaa000000000001",
            "chat claude-sonnet-4",
            6,
            8,
            {
                **CHAT,
                "gen_ai.usage.input_tokens": 5200,
                "gen_ai.usage.output_tokens": 30,
                "gen_ai.usage.cache_read.input_tokens": 4900,
                "gen_ai.usage.reasoning.output_tokens": 10,
            },
        ),
        otlp_span(
            T1,
            "aaaa000000000006",
            "aaaa000000000001",
            "embeddings",
            9,
            10,
            {"gen_ai.operation.name": "embeddings"},
        ),
    ]
    spans_t2 = [
        # the deprecated spelling (semconv before 1.27)
        otlp_span(
            T2,
            "bbbb000000000001",
            "",
            "chat gpt-4o",
            0,
            1,
            {
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.prompt_tokens": 700,
                "gen_ai.usage.completion_tokens": 12,
            },
        ),
    ]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [kv("service.name", "agent")]},
                scope_key: [
                    {"scope": {"name": "opentelemetry.instrumentation.anthropic"}, "spans": spans_t1}
                ],
            },
            {"resource": {"attributes": []}, scope_key: [{"scope": {"name": "x"}, "spans": spans_t2}]},
        ]
    }


def independent(doc: dict) -> dict[str, dict[str, int]]:
    """Per trace: model spans and their input/output/cache-read sums, read from the OTLP shape directly."""
    out: dict[str, dict[str, int]] = {}
    for rs in doc["resourceSpans"]:
        for ss in rs.get("scopeSpans", rs.get("instrumentationLibrarySpans", [])):
            for sp in ss["spans"]:
                a = {x["key"]: next(iter(x["value"].values())) for x in sp["attributes"]}
                op = a.get("gen_ai.operation.name")
                inp = a.get("gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens"))
                if op in (None, "chat") and inp is not None:
                    t = out.setdefault(sp["traceId"], {"calls": 0, "prompt": 0, "completion": 0, "cached": 0})
                    t["calls"] += 1
                    t["prompt"] += int(inp)
                    t["completion"] += int(
                        a.get("gen_ai.usage.output_tokens", a.get("gen_ai.usage.completion_tokens"))
                    )
                    t["cached"] += int(a.get("gen_ai.usage.cache_read.input_tokens", 0))
    return out


@pytest.mark.parametrize("scope_key", ["scopeSpans", "instrumentationLibrarySpans"])
def test_otlp_json_runs_by_trace_equal_an_independent_reading(tmp_path: Path, scope_key: str) -> None:
    doc = otlp_doc(scope_key)
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(doc, indent=2))
    assert detect(path).NAME == "otel-genai"
    runs = {r.run_id: r for r in otel_genai.load(path)}
    want = independent(doc)
    assert set(runs) == set(want) == {T1, T2}
    for trace, w in want.items():
        r = runs[trace]
        assert (len(r.turns), r.total("prompt"), r.total("completion"), r.total("cached") or 0) == (
            w["calls"],
            w["prompt"],
            w["completion"],
            w["cached"],
        )
    r1 = runs[T1]
    t0, t1 = r1.turns
    assert (t0.usage.cache_write, t0.finish_reason, t0.response_id, t0.model) == (
        900,
        "tool_use",
        "msg_1",
        "claude-sonnet-4-20250514",
    )
    assert t1.usage.reasoning == 10
    assert [(c.id, c.name, c.arguments) for c in t0.tool_calls] == [
        ("toolu_1", "bash", '{"cmd": "ls"}'),
        ("toolu_2", "edit", ""),
    ]
    assert [(r.call_id, r.content, r.is_error, r.duration_s) for r in t0.tool_results] == [
        ("toolu_1", "a.py", False, 0.5),
        ("toolu_2", "", True, 1.0),
    ]
    assert (t0.ended_at - t0.started_at).total_seconds() == 2
    assert r1.metadata["embedding_spans"] == 1 and r1.metadata["root_span"] == "invoke_agent coder"
    assert r1.outcome.stop_reason == "done"
    assert runs[T2].model == "gpt-4o"
    again = read_run(write_run(r1, tmp_path / "out.jsonl"))
    assert again.model_dump(exclude={"loaded_from"}) == r1.model_dump(exclude={"loaded_from"})


def sdk_span(sid: str, parent: str | None, name: str, attrs: dict, t: int) -> dict:
    """The Python SDK's ``ReadableSpan.to_json()`` shape."""
    return {
        "name": name,
        "context": {"trace_id": "0x" + T1, "span_id": "0x" + sid, "trace_state": "[]"},
        "kind": "SpanKind.INTERNAL",
        "parent_id": None if parent is None else "0x" + parent,
        "start_time": f"2026-05-01T00:00:{t:02d}.000000Z",
        "end_time": f"2026-05-01T00:00:{t + 1:02d}.000000Z",
        "status": {"status_code": "UNSET"},
        "attributes": attrs,
        "events": [],
        "links": [],
        "resource": {"attributes": {"service.name": "phoenix-app"}, "schema_url": ""},
    }


def openinference_spans() -> list[dict]:
    """A LangChain-style LLM span (OpenInference) wrapping the OpenAI client's span: counted once."""
    return [
        sdk_span(
            "01", None, "AgentExecutor", {"openinference.span.kind": "AGENT", "session.id": "sess-9"}, 0
        ),
        sdk_span(
            "02",
            "01",
            "ChatOpenAI",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4.1",
                "llm.token_count.prompt": 1000,
                "llm.token_count.completion": 50,
            },
            1,
        ),
        sdk_span(
            "03",
            "02",
            "ChatCompletion",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4.1-2025-04-14",
                "llm.token_count.prompt": 1000,
                "llm.token_count.completion": 50,
                "llm.token_count.prompt_details.cache_read": 600,
                "llm.token_count.completion_details.reasoning": 20,
                "llm.cost.total": 0.0031,
            },
            1,
        ),
        sdk_span(
            "04",
            "01",
            "search",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "search",
                "input.value": '{"q": "x"}',
                "output.value": "hits",
            },
            3,
        ),
    ]


def test_a_json_list_of_openinference_spans_counts_the_innermost_call(tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(openinference_spans(), indent=1))
    assert detect(path).NAME == "otel-genai"
    (run,) = otel_genai.load(path)
    (turn,) = run.turns
    u = turn.usage
    assert (u.prompt, u.completion, u.cached, u.reasoning, u.cost) == (1000, 50, 600, 20, 0.0031)
    assert turn.model == "gpt-4.1-2025-04-14"
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("search", '{"q": "x"}')]
    assert turn.tool_results[0].content == "hits"
    assert "1 model span(s) wrapping another model span were not counted as calls" in run.lossy
    assert run.metadata["conversation_id"] == "sess-9"


def test_jsonl_of_spans_and_fresh_only_input(tmp_path: Path) -> None:
    lines = otel_span_lines()
    third = json.loads(lines[3])
    third["attributes"]["gen_ai.usage.cache_read.input_tokens"] = 500  # more than input: fresh input only
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"".join([*lines[:3], json.dumps(third).encode() + b"\n"]))
    assert detect(path).NAME == "otel-genai"
    (run,) = otel_genai.load(path)
    assert [t.usage.prompt for t in run.turns] == [120, 640]
    assert "1 span(s) reported fresh input only: their prompt adds the cache reads and writes" in run.lossy
    assert [c.name for c in run.turns[0].tool_calls] == ["bash"]


def test_bad_lines_are_reported_and_a_file_without_genai_spans_is_one_error(tmp_path: Path) -> None:
    lines = otel_span_lines()
    path = tmp_path / "s.jsonl"
    bad = json.loads(lines[1])
    bad["attributes"]["gen_ai.usage.input_tokens"] = "many"
    path.write_bytes(lines[0] + b"{nope\n" + json.dumps(bad).encode() + b"\n" + lines[3])
    (run,) = otel_genai.load(path)
    assert [(d.line, d.field) for d in run.diagnostics] == [
        (2, None),
        (3, "span.attributes.gen_ai.usage.input_tokens"),
    ]
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps([sdk_span("01", None, "GET /", {"http.method": "GET"}, 0)]))
    with pytest.raises(TraceError, match="no GenAI model or tool spans"):
        otel_genai.load(plain)


def test_jsonl_of_otlp_export_requests_as_the_collector_file_exporter_writes(tmp_path: Path) -> None:
    doc = otlp_doc()
    first, second = ({"resourceSpans": [rs]} for rs in doc["resourceSpans"])
    path = tmp_path / "otel-export.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    assert detect(path).NAME == "otel-genai"
    runs = {r.run_id: r for r in otel_genai.load(path)}
    want = independent(doc)
    assert {t: (len(r.turns), r.total("prompt")) for t, r in runs.items()} == {
        t: (w["calls"], w["prompt"]) for t, w in want.items()
    }
