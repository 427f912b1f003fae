"""The JSON-lines samples of the registry (tests/samples/__init__.py), line by line: Claude Code, OpenHands output,
Codex CLI, OpenAI logs, Gemini CLI JSONL sessions, OTel SDK span lines, and the native format's ``small_run``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from workbench.trace import Message, Outcome, Run, ToolCall, ToolResult, Turn, Usage, write_run


def _j(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def claude_code_lines() -> list[bytes]:
    base = {"sessionId": "s1", "isSidechain": False, "timestamp": "2026-01-01T00:00:00Z"}
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
        "output_tokens": 1,
    }
    return [
        _j({**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "fix the bug"}}),
        _j(
            {
                **base,
                "type": "assistant",
                "uuid": "a1",
                "message": {
                    "id": "m1",
                    "model": "claude",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "looking"}],
                    "usage": usage,
                },
            }
        ),
        _j(
            {
                **base,
                "type": "assistant",
                "uuid": "a2",
                "message": {
                    "id": "m1",
                    "model": "claude",
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file": "x"}}],
                    "usage": {**usage, "output_tokens": 40},
                },
            }
        ),
        _j(
            {
                **base,
                "type": "user",
                "uuid": "u2",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
                },
            }
        ),
        _j(
            {
                **base,
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "c1",
                "compactMetadata": {"trigger": "auto", "preTokens": 1234},
            }
        ),
        _j(
            {
                **base,
                "type": "assistant",
                "uuid": "a3",
                "message": {
                    "id": "m2",
                    "model": "claude",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "done"}],
                    "usage": {**usage, "output_tokens": 7},
                },
            }
        ),
    ]


def openhands_lines() -> list[bytes]:
    def resp(n: int, prompt: int) -> dict:
        return {
            "id": f"r{n}",
            "model": "m",
            "choices": [
                {
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": f"t{n}",
                                "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'},
                            }
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 5},
        }

    def tcm(n: int, prompt: int) -> dict:
        return {"function_name": "execute_bash", "tool_call_id": f"t{n}", "model_response": resp(n, prompt)}

    history = [
        {
            "id": 0,
            "timestamp": "2025-01-01T00:00:00",
            "source": "user",
            "action": "message",
            "args": {"content": "task"},
        },
        {
            "id": 1,
            "timestamp": "2025-01-01T00:00:01",
            "source": "agent",
            "action": "run",
            "tool_call_metadata": tcm(1, 100),
        },
        {
            "id": 2,
            "timestamp": "2025-01-01T00:00:02",
            "source": "agent",
            "observation": "run",
            "content": "a",
            "tool_call_metadata": tcm(1, 100),
            "extras": {"metadata": {"exit_code": 0}},
        },
        {
            "id": 3,
            "timestamp": "2025-01-01T00:00:03",
            "source": "agent",
            "action": "run",
            "tool_call_metadata": tcm(2, 200),
        },
    ]
    run = {
        "instance_id": "i1",
        "metadata": {"agent_class": "CodeActAgent", "max_iterations": 10, "llm_config": {"model": "m"}},
        "history": history,
        "metrics": {},
        "error": None,
        "test_result": {},
    }
    return [_j(run), _j({**run, "instance_id": "i2"})]


def codex_lines() -> list[bytes]:
    def tc(total: int, inp: int) -> dict:
        return {
            "timestamp": "2025-01-01T00:00:01Z",
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {
                    "total_token_usage": {"total_tokens": total},
                    "model_context_window": 1000,
                    "last_token_usage": {
                        "input_tokens": inp,
                        "cached_input_tokens": 10,
                        "output_tokens": 5,
                        "reasoning_output_tokens": 2,
                    },
                },
            },
        }

    ts = "2025-01-01T00:00:00Z"
    return [
        _j({"timestamp": ts, "type": "session_meta", "payload": {"id": "sess", "timestamp": ts}}),
        _j(
            {
                "timestamp": ts,
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "do it"}],
                },
            }
        ),
        _j({"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": "do it"}}),
        _j({"timestamp": ts, "type": "turn_context", "payload": {"model": "gpt", "effort": "high"}}),
        _j(tc(105, 100)),
        _j(
            {
                "timestamp": ts,
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": '{"command": ["apply_patch"]}',
                    "call_id": "c1",
                },
            }
        ),
        _j(
            {
                "timestamp": ts,
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": '{"output": "ok", "metadata": {"exit_code": 0}}',
                },
            }
        ),
        _j(tc(105, 100)),
        _j(tc(310, 200)),
        _j(
            {
                "timestamp": ts,
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "done"}],
                },
            }
        ),
    ]


def openai_log_lines() -> list[bytes]:
    sys_, user = {"role": "system", "content": "s"}, {"role": "user", "content": "u"}
    ans = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "sh", "arguments": "{}"}}],
    }

    def call(msgs: list, answer: dict, n: int) -> dict:
        return {
            "request": {"messages": msgs},
            "response": {
                "id": f"r{n}",
                "choices": [{"message": answer}],
                "usage": {"prompt_tokens": 10 * n, "completion_tokens": n},
            },
            "started_at": "2025-01-01T00:00:00Z",
        }

    return [
        _j({"run": {"run_id": "r", "model": "m"}}),
        _j(call([sys_, user], ans, 1)),
        _j(
            call(
                [sys_, user, ans, {"role": "tool", "tool_call_id": "c1", "content": "x"}],
                {"role": "assistant", "content": "fin"},
                2,
            )
        ),
    ]


def small_run() -> Run:
    call = ToolCall(id="c1", name="sh", arguments='{"command": "ls"}')
    return Run(
        run_id="r1",
        source="synthetic",
        messages=[
            Message(role="user", content="list"),
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id="c1", content="a"),
        ],
        turns=[
            Turn(
                index=0,
                usage=Usage(prompt=10, completion=3),
                sent=[(0, 1)],
                tool_calls=[call],
                tool_results=[ToolResult.of("a", call_id="c1")],
            ),
            Turn(index=1, usage=Usage(prompt=20, cached=10, completion=2), sent=[(0, 3)], text="a"),
        ],
        outcome=Outcome(stop_reason="done"),
    )


def native_lines() -> list[bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_run(small_run(), Path(tmp) / "run.jsonl")
        return path.read_bytes().splitlines(keepends=True)


def claude_code_inline_lines() -> list[bytes]:
    """A session with two Task subagents written inline (isSidechain lines), 9 calls over 3 runs."""
    from tests.importers.test_claude_code_sidechains import session_with_parallel_tasks

    return [_j(d) for d in session_with_parallel_tasks().lines]


def openhands_v1_lines() -> list[bytes]:
    from tests.importers import openhands_shapes

    return [_j(openhands_shapes.v1_output_line(f"i{n}")) for n in (1, 2)]


def openhands_pairs_lines() -> list[bytes]:
    from tests.importers import openhands_shapes

    line = openhands_shapes.pair_output_line()
    return [_j(line), _j({**line, "instance_id": "django__django-2"})]


def openhands_resolver_lines() -> list[bytes]:
    from tests.importers import openhands_shapes

    line = openhands_shapes.resolver_line()
    return [_j(line), _j({**line, "issue": {**line["issue"], "number": 6}})]


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
