"""Samples of the versions issue 21 names, as documents (the registry, tests/samples/__init__.py, writes them):
any-agent's own span model, 2024 OpenHands output lines named by ``question_id`` or ``id``, and the OpenHands SDK's
completion log before January 2026."""

from __future__ import annotations

from typing import Any


def any_agent_trace() -> dict[str, Any]:
    """any-agent's own span model (``AgentTrace``: ``{spans, final_output}``): integer ``trace_id``/``span_id`` in
    ``context``, the parent as a ``SpanContext`` object, ``call_llm``/``execute_tool`` operations, start and end in
    epoch nanoseconds, its own usage and cost attribute names."""
    trace = 0x4BF92F3577B34DA6A3CE929D0E0E4736

    def span(sid: int, parent: int | None, name: str, attrs: dict[str, Any], t: int) -> dict[str, Any]:
        return {
            "name": name,
            "kind": "internal",
            "parent": None
            if parent is None
            else {
                "trace_id": trace,
                "span_id": parent,
                "is_remote": False,
                "trace_flags": 1,
                "trace_state": {},
            },
            "start_time": 1_760_000_000_000_000_000 + t * 1_000_000_000,
            "end_time": 1_760_000_000_000_000_000 + (t + 1) * 1_000_000_000,
            "status": {"status_code": "unset", "description": None},
            "context": {
                "trace_id": trace,
                "span_id": sid,
                "is_remote": False,
                "trace_flags": 1,
                "trace_state": {},
            },
            "attributes": attrs,
            "links": [],
            "events": [],
            "resource": {"attributes": {"service.name": "any_agent"}, "schema_url": ""},
        }

    llm = {"gen_ai.operation.name": "call_llm", "gen_ai.request.model": "gpt-4.1-mini"}
    return {
        "spans": [
            span(
                11,
                10,
                "call_llm gpt-4.1-mini",
                {
                    **llm,
                    "gen_ai.usage.input_tokens": 900,
                    "gen_ai.usage.output_tokens": 30,
                    "gen_ai.usage.input_cost": 0.00036,
                    "gen_ai.usage.output_cost": 0.000048,
                },
                1,
            ),
            span(
                12,
                10,
                "execute_tool search",
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search",
                    "gen_ai.output": "found",
                },
                2,
            ),
            span(
                13,
                10,
                "call_llm gpt-4.1-mini",
                {
                    **llm,
                    "gen_ai.usage.input_tokens": 1000,
                    "gen_ai.usage.output_tokens": 12,
                    "gen_ai.usage.cached_tokens": 768,
                },
                3,
            ),
            span(10, None, "invoke_agent [any_agent]", {"gen_ai.operation.name": "invoke_agent"}, 0),
        ],
        "final_output": "done",
    }


def openhands_2024_line(key: str, value: Any) -> dict[str, Any]:
    """A 2024 OpenHands output line named by ``question_id`` or ``id`` (an integer or a string) instead of
    ``instance_id``: its history the ``[action, observation]`` pairs of the time."""
    from tests.importers import openhands_shapes

    line = openhands_shapes.pair_output_line()
    del line["instance_id"]
    return {key: value, **line}


def sdk_completion_before_2026(filler: int) -> dict[str, Any]:
    """The SDK's completion log before January 2026: ``{messages, tools, kwargs, context_window, response, cost,
    timestamp}`` with the request first; ``filler`` characters of conversation push the other keys past the
    sniffing head."""
    from tests.importers import openhands_shapes

    log = openhands_shapes.completion_log("resp-old-1", 4000, 90, 0.02)
    chat = [
        {"role": "system", "content": "You are OpenHands agent."},
        {"role": "user", "content": "x" * filler},
        {"role": "assistant", "content": "ok", "tool_calls": []},
    ]
    return {
        "messages": chat,
        "tools": [],
        "kwargs": {"temperature": 0},
        "context_window": 200000,
        "response": log["response"],
        "cost": 0.02,
        "timestamp": 1759320001.5,
    }
