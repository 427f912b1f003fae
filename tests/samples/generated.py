"""Writers of the newer formats (SWE-agent, Inspect AI, Aider, Gemini CLI, OpenTelemetry GenAI spans) at any size,
in each tool's documented shape: ``calls`` model calls with ~2 kB of tool output each. A size figure for MB/s, not a
corpus. Enrolled in the one registry of format samples, tests/samples/__init__.py (``sized()``), which the tests
and ``benchmarks/import_bench.py --generated`` both read.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

OUTPUT = ("line of tool output " * 100)[:2000]


def swe_agent(path: Path, calls: int) -> Path:
    steps, history = [], [{"role": "system", "content": "SETTING", "agent": "primary"}]
    for i in range(calls):
        resp = f"DISCUSSION\nstep {i}\n```\nopen file_{i}.py\n```"
        steps.append(
            {
                "action": f"open file_{i}.py\n",
                "observation": OUTPUT,
                "response": resp,
                "thought": f"step {i}",
                "execution_time": 0.1,
                "state": "{}",
            }
        )
        history += [
            {"role": "assistant", "content": resp, "agent": "primary"},
            {"role": "user", "content": OUTPUT, "agent": "primary"},
        ]
    info = {
        "exit_status": "submitted",
        "submission": "diff",
        "model_stats": {
            "instance_cost": 1.0,
            "tokens_sent": 10**6,
            "tokens_received": 10**4,
            "api_calls": calls,
        },
    }
    path.write_text(
        json.dumps(
            {"environment": "swe_main", "trajectory": steps, "history": history, "info": info}, indent=2
        )
    )
    return path


def _inspect_sample(calls: int) -> dict:
    """Current Inspect (pooled): each model event's input is ``input_refs`` into ``events_data.messages``."""
    events, pool = [], [{"role": "user", "content": "task"}]
    for i in range(calls):
        answer = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"c{i}", "function": "bash", "arguments": {"cmd": f"cat {i}"}}],
        }
        usage = {
            "input_tokens": 10,
            "output_tokens": 50,
            "input_tokens_cache_read": 1000 * i,
            "input_tokens_cache_write": 500,
            "total_tokens": 560 + 1000 * i,
        }
        events.append(
            {
                "event": "model",
                "timestamp": "2025-06-01T10:00:00+00:00",
                "model": "m",
                "input": [],
                "input_refs": [[0, len(pool)]],
                "tools": [],
                "tool_choice": "auto",
                "config": {},
                "output": {
                    "model": "m",
                    "choices": [{"message": answer, "stop_reason": "tool_calls"}],
                    "usage": usage,
                },
            }
        )
        events.append(
            {
                "event": "tool",
                "type": "function",
                "id": f"c{i}",
                "function": "bash",
                "arguments": {"cmd": f"cat {i}"},
                "result": OUTPUT,
                "timestamp": "2025-06-01T10:00:01+00:00",
            }
        )
        pool += [answer, {"role": "tool", "content": OUTPUT, "tool_call_id": f"c{i}"}]
    return {
        "id": 1,
        "epoch": 1,
        "input": "task",
        "target": "",
        "messages": pool,
        "events": events,
        "events_data": {"messages": pool, "calls": []},
        "scores": {"match": {"value": "C"}},
    }


def inspect_eval(path: Path, calls: int) -> Path:
    ev = {
        "eval_id": "e",
        "task": "t",
        "model": "m",
        "created": "2025-06-01T10:00:00+00:00",
        "dataset": {},
        "config": {},
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": ev, "plan": {}}))
        z.writestr("samples/1_epoch_1.json", json.dumps(_inspect_sample(calls)))
    return path


def aider(path: Path, calls: int) -> Path:
    parts = ["\n# aider chat started at 2024-10-30 14:05:09\n\n> Aider v0.60.1  \n> Main model: sonnet  \n"]
    for i in range(calls):
        parts.append(
            f"\n#### change {i}  \n\n{OUTPUT}\n\n> Tokens: 12k sent, 1.2k cache write, 2.5k cache hit, "
            f"340 received.\nCost: $0.05 message, ${0.05 * (i + 1):.2f} session.  \n> Applied edit to f{i}.py  \n"
        )
    path.write_text("".join(parts))
    return path


def gemini_cli(path: Path, calls: int) -> Path:
    lines = [{"sessionId": "s", "projectHash": "p" * 64, "startTime": "2026-05-01T00:00:00Z"}]
    for i in range(calls):
        lines.append(
            {
                "id": f"g{i}",
                "timestamp": "2026-05-01T00:00:05Z",
                "type": "gemini",
                "content": "",
                "model": "gemini-2.5-pro",
                "tokens": {
                    "input": 9000 + i,
                    "output": 40,
                    "cached": 8000,
                    "thoughts": 12,
                    "tool": 0,
                    "total": 9052 + i,
                },
                "toolCalls": [
                    {
                        "id": f"c{i}",
                        "name": "read_file",
                        "args": {"path": f"{i}.py"},
                        "status": "success",
                        "timestamp": "2026-05-01T00:00:04Z",
                        "result": [
                            {
                                "functionResponse": {
                                    "id": f"c{i}",
                                    "name": "read_file",
                                    "response": {"output": OUTPUT},
                                }
                            }
                        ],
                    }
                ],
            }
        )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def otel_genai(path: Path, calls: int) -> Path:
    def kv(k: str, v: object) -> dict:
        return {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}}

    spans = []
    for i in range(calls):
        t = 1_764_000_000_000_000_000 + i * 10**10
        spans.append(
            {
                "traceId": "ab" * 16,
                "spanId": f"{2 * i:016x}",
                "parentSpanId": "",
                "name": "chat m",
                "startTimeUnixNano": str(t),
                "endTimeUnixNano": str(t + 10**9),
                "attributes": [
                    kv("gen_ai.operation.name", "chat"),
                    kv("gen_ai.request.model", "m"),
                    kv("gen_ai.usage.input_tokens", 9000 + i),
                    kv("gen_ai.usage.output_tokens", 40),
                ],
            }
        )
        spans.append(
            {
                "traceId": "ab" * 16,
                "spanId": f"{2 * i + 1:016x}",
                "parentSpanId": "",
                "name": "execute_tool bash",
                "startTimeUnixNano": str(t + 2 * 10**9),
                "endTimeUnixNano": str(t + 3 * 10**9),
                "attributes": [
                    kv("gen_ai.operation.name", "execute_tool"),
                    kv("gen_ai.tool.name", "bash"),
                    kv("gen_ai.tool.call.result", OUTPUT),
                ],
            }
        )
    path.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": spans}]}]}))
    return path


# -- OpenHands shapes with no real sample in the shared traces, repeated: ``n`` repetitions of a unit -----------


def openhands_v1_output(path: Path, lines: int) -> Path:
    """V1 output: ``lines`` instances, each the 4 calls of ``v1_output_line``."""
    from tests.importers import openhands_shapes as shapes

    with open(path, "w") as fh:
        for i in range(lines):
            fh.write(json.dumps(shapes.v1_output_line(f"i{i}")) + "\n")
    return path


def openhands_conversation(path: Path, repeats: int) -> Path:
    """A V1 conversation folder of ``repeats`` copies of the sample's events after the first, ids and response ids
    made unique per copy so each call stays its own."""
    from tests.importers import openhands_shapes as shapes

    events = []
    for k in range(repeats):
        for e in shapes.v1_events()[1:]:
            text = json.dumps(e).replace('"r', f'"k{k}r').replace('"c', f'"k{k}c').replace('"e', f'"k{k}e')
            events.append(json.loads(text))
    return shapes.write_conversation(path, events)


def openhands_trajectory(path: Path, repeats: int) -> Path:
    """A V0 trajectory array of ``repeats`` copies of the sample (its task message once), response and call ids
    unique per copy, event ids renumbered."""
    from tests.importers import openhands_shapes as shapes

    trajectory = []
    for k in range(repeats):
        text = json.dumps(shapes.v0_trajectory()[1:] if k else shapes.v0_trajectory())
        trajectory.extend(
            json.loads(text.replace("chatcmpl-", f"chatcmpl-{k}-").replace("call_", f"call_{k}_"))
        )
    for i, e in enumerate(trajectory):
        e["id"] = i
    path.write_text(json.dumps(trajectory, indent=4))
    return path
