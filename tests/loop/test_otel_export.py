"""The live loop's OpenTelemetry GenAI spans, read back by the span importer: a round trip that replays to the same
decisions as the native trace, with content capture on (exact) and off (every decision the same; only the words of
a stop's text are withheld), and the key in no span."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip(
    "opentelemetry.sdk.trace", reason="the phoenix extra (opentelemetry SDK) is not installed"
)

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from workbench.govern import Policy
from workbench.importers.otel_genai import runs_from_spans
from workbench.loop.otel_export import SpanExport, capture_from_env, traces_endpoint
from workbench.paths import REPO_ROOT
from workbench.replay import replay
from workbench.trace import genai_spans as ga
from workbench.trace import read_run
from workbench.trace.schema import Run, ToolCall, ToolResult, Turn, Usage

SYNTHETIC = sorted((REPO_ROOT / "traces" / "synthetic").glob("*.jsonl"))
POLICIES = (
    Policy.named("current"),
    Policy.named("current", grant=60_000),
    Policy.named("ink-s9", grant=120_000),
    Policy.named("older"),
)


def export(run: Run, *, capture: bool, redact=lambda t: t) -> list[dict]:
    """``run`` sent turn by turn as the live loop's recorder sends it; the spans as the SDK writes them."""
    mem = InMemorySpanExporter()
    ex = SpanExport(run, exporter=mem, batch=False, capture=capture, redact=redact)
    by_turn: dict[int | None, list] = {}
    for e in run.events:
        by_turn.setdefault(e.turn, []).append(e)
    for e in by_turn.get(None, []):
        ex.event(e)
    for t in run.turns:
        ex.turn(t)
        for e in by_turn.get(t.index, []):
            ex.event(e)
    ex.finish(run.outcome)
    tally = ex.close()
    spans = [json.loads(s.to_json()) for s in mem.get_finished_spans()]
    assert tally.sent == len(spans) and tally.failed == 0
    return spans


def read_back(spans: list[dict]) -> Run:
    runs = runs_from_spans(spans, "memory")
    assert len(runs) == 1
    return runs[0]


def decision_key(d) -> tuple:
    """A decision without its words (its text and reason, and a quoted command among its numbers): what content
    capture withholds. Its kind, turn, phase, verdict, meter and every number stay."""
    out: list[object] = [type(d).__name__]
    for f in dataclasses.fields(d):
        value = getattr(d, f.name)
        if f.name in ("text", "reason"):
            continue
        if f.name == "numbers":
            value = tuple((k, v) for k, v in value if not isinstance(v, str))
        out.append((f.name, value))
    return tuple(out)


@pytest.mark.parametrize("path", SYNTHETIC, ids=lambda p: p.stem)
def test_captured_round_trip_replays_to_the_same_decisions(path: Path) -> None:
    run = read_run(path)
    back = read_back(export(run, capture=True))
    assert back.run_id == run.run_id
    assert len(back.turns) == len(run.turns)
    for a, b in zip(run.turns, back.turns, strict=True):
        assert b.usage == a.usage
        assert (b.started_at, b.ended_at, b.finish_reason, b.text, b.mutated, b.retries) == (
            a.started_at,
            a.ended_at,
            a.finish_reason,
            a.text,
            a.mutated,
            a.retries,
        )
        assert [(c.id, c.name, c.arguments) for c in b.tool_calls] == [
            (c.id, c.name, c.arguments) for c in a.tool_calls
        ]
        assert [(r.digest(), r.is_error, r.timed_out) for r in b.tool_results] == [
            (r.digest(), r.is_error, r.timed_out) for r in a.tool_results
        ]
    assert [(e.turn, e.kind, e.reason, e.data) for e in back.events] == [
        (e.turn, e.kind, e.reason, json.loads(json.dumps(e.data, default=str))) for e in run.events
    ]
    assert back.outcome.stop_reason == run.outcome.stop_reason
    for policy in POLICIES:
        want, got = replay(run, policy), replay(back, policy)
        assert got.decisions == want.decisions, policy.rules
        assert (got.stop_reason, got.stop_turn, got.verdict, got.spent) == (
            want.stop_reason,
            want.stop_turn,
            want.verdict,
            want.spent,
        )


@pytest.mark.parametrize("path", SYNTHETIC, ids=lambda p: p.stem)
def test_without_content_every_decision_is_the_same_but_the_words(path: Path) -> None:
    run = read_run(path)
    spans = export(run, capture=False)
    text = json.dumps(spans)
    for t in run.turns:  # no content left the process
        if t.text and len(t.text) > 20:
            assert t.text not in text
        for c in t.tool_calls:
            if len(c.arguments) > 20:
                assert c.arguments not in text
    back = read_back(spans)
    if any(t.text or t.tool_calls for t in run.turns):
        assert any("without content capture" in note for note in back.lossy)
    for policy in POLICIES:
        want, got = replay(run, policy), replay(back, policy)
        assert [decision_key(d) for d in got.decisions] == [decision_key(d) for d in want.decisions]
        assert (got.stop_reason, got.stop_turn, got.verdict, got.spent) == (
            want.stop_reason,
            want.stop_turn,
            want.verdict,
            want.spent,
        )


def test_attributes_follow_the_conventions() -> None:
    run = Run(
        run_id="r1",
        source="native",
        model="m-1",
        turns=[
            Turn(
                index=0,
                usage=Usage(prompt=1200, cached=1000, cache_write=100, completion=30, reasoning=5),
                finish_reason="tool_calls",
                response_id="resp-1",
                tool_calls=[ToolCall(id="c1", name="sh", arguments='{"cmd": "ls"}')],
                tool_results=[ToolResult.of("a\nb", call_id="c1", duration_s=0.25)],
                mutated=False,
            ),
            Turn(index=1, usage=Usage(prompt=1300), text="done"),  # completion unknown: no attribute, never 0
        ],
    )
    raw = export(run, capture=False)
    spans = {s["name"]: s for s in raw}
    chats = [s for s in raw if s["name"] == "chat m-1"]
    assert [c["attributes"][ga.TURN_INDEX] for c in chats] == [0, 1]
    assert ga.OUTPUT_TOKENS not in chats[1]["attributes"]  # unknown is absent, never 0
    chat = chats[0]["attributes"]
    assert chat[ga.OPERATION] == "chat" and chat[ga.REQUEST_MODEL] == "m-1"
    assert (chat[ga.INPUT_TOKENS], chat[ga.OUTPUT_TOKENS]) == (1200, 30)
    assert (chat[ga.CACHE_READ_TOKENS], chat[ga.CACHE_WRITE_TOKENS], chat[ga.REASONING_TOKENS]) == (
        1000,
        100,
        5,
    )
    assert chat[ga.FINISH_REASONS] == ["tool_calls"] and chat[ga.RESPONSE_ID] == "resp-1"
    tool = spans["execute_tool sh"]
    assert tool["attributes"][ga.TOOL_NAME] == "sh" and tool["attributes"][ga.TOOL_CALL_ID] == "c1"
    assert ga.TOOL_ARGUMENTS not in tool["attributes"] and ga.TOOL_RESULT not in tool["attributes"]
    agent = spans["invoke_agent workbench"]
    assert agent["attributes"][ga.OPERATION] == "invoke_agent"
    assert tool["parent_id"] == agent["context"]["span_id"] == chats[0]["parent_id"]
    assert agent["resource"]["attributes"][ga.OI_PROJECT] == "default"
    back = read_back(raw)
    assert back.turns[1].usage.completion is None and back.turns[0].tool_results[0].duration_s == 0.25


def test_the_key_reaches_no_span() -> None:
    key = "sk-test-0123456789abcdefXYZ"
    run = Run(
        run_id="r-key",
        source="native",
        turns=[
            Turn(
                index=0,
                usage=Usage(prompt=10, completion=1),
                text=f"my key is {key}",
                tool_calls=[ToolCall(id="c1", name="sh", arguments=f'{{"cmd": "echo {key}"}}')],
                tool_results=[ToolResult.of(key, call_id="c1")],
            )
        ],
    )
    spans = export(run, capture=True, redact=lambda t: t.replace(key, "[redacted]"))
    assert key not in json.dumps(spans) and "[redacted]" in json.dumps(spans)


def test_capture_and_endpoint_settings() -> None:
    assert capture_from_env({ga.CAPTURE_ENV: "TRUE"}) is True
    assert capture_from_env({ga.CAPTURE_ENV: "1"}) is False  # the conventions' value is "true"
    assert capture_from_env({}) is False
    assert traces_endpoint("http://127.0.0.1:6006") == "http://127.0.0.1:6006/v1/traces"
    assert traces_endpoint("http://h:4318/v1/traces/") == "http://h:4318/v1/traces"
