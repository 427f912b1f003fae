"""Small, valid files of the formats read by the SWE-agent, Inspect AI, Aider, Gemini CLI and OTel GenAI importers
(shared by the bad-input battery): JSONL formats as lines, whole-document formats as documents."""

from __future__ import annotations

import json
from typing import Any


def _j(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def gemini_cli_lines() -> list[bytes]:
    meta = {"sessionId": "s1", "projectHash": "p" * 64, "startTime": "2026-05-01T00:00:00Z", "kind": "main"}
    tokens = {"input": 100, "output": 5, "cached": 40, "thoughts": 2, "tool": 0, "total": 107}

    def gem(i: str, text: str, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return {
            "id": i,
            "timestamp": "2026-05-01T00:00:05Z",
            "type": "gemini",
            "content": text,
            "tokens": tokens,
            "model": "gemini-2.5-flash",
            "toolCalls": calls or [],
        }

    call = {
        "id": "c1",
        "name": "run_shell_command",
        "args": {"command": "ls"},
        "status": "success",
        "timestamp": "2026-05-01T00:00:04Z",
        "result": [
            {"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "a.py"}}}
        ],
    }
    return [
        _j(meta),
        _j(
            {
                "id": "u1",
                "timestamp": "2026-05-01T00:00:01Z",
                "type": "user",
                "content": [{"text": "list files"}],
            }
        ),
        _j(gem("g1", "", [call])),
        _j(gem("g2", "a.py")),
    ]


def otel_span_lines() -> list[bytes]:
    """One span a line (the shape of the Python SDK's ``span.to_json()``), two model calls and a tool call."""

    def span(
        sid: str, name: str, attrs: dict[str, Any], parent: str | None = "0xroot", t: int = 0
    ) -> dict[str, Any]:
        return {
            "name": name,
            "context": {"trace_id": "0x" + "a" * 32, "span_id": sid, "trace_state": "[]"},
            "kind": "SpanKind.CLIENT",
            "parent_id": parent,
            "start_time": f"2026-05-01T00:00:0{t}.000000Z",
            "end_time": f"2026-05-01T00:00:0{t + 1}.000000Z",
            "status": {"status_code": "UNSET"},
            "attributes": attrs,
            "events": [],
            "links": [],
            "resource": {"attributes": {"service.name": "agent"}, "schema_url": ""},
        }

    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4.1",
        "gen_ai.provider.name": "openai",
    }
    return [
        _j(span("0xroot", "invoke_agent coder", {"gen_ai.operation.name": "invoke_agent"}, parent=None)),
        _j(
            span(
                "0x01",
                "chat gpt-4.1",
                {**chat, "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 9},
                t=1,
            )
        ),
        _j(
            span(
                "0x02",
                "execute_tool bash",
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "bash",
                    "gen_ai.tool.call.id": "t1",
                },
                t=3,
            )
        ),
        _j(
            span(
                "0x03",
                "chat gpt-4.1",
                {**chat, "gen_ai.usage.input_tokens": 140, "gen_ai.usage.output_tokens": 4},
                t=5,
            )
        ),
    ]


def more_line_formats() -> dict[str, tuple[list[bytes], int, int]]:
    """name -> (lines, number of model calls in them, lines that must stay first)."""
    return {
        "gemini-cli": (gemini_cli_lines(), 2, 1),
        "otel-genai": (otel_span_lines(), 2, 0),
    }
