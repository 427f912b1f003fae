"""mini-swe-agent trajectories written by the tests, in the shapes mini-swe-agent's own code saves.

* 1.x (``trajectory_format: mini-swe-agent-1``): ``{role, content}`` messages, the action in a fenced
  ```` ```bash ```` block, usage in ``extra.response`` (an OpenAI/OpenRouter chat.completion), a final ``user``
  message holding the submission.
* 2.x (``mini-swe-agent-1.1``): ``extra.actions`` / ``extra.cost`` / ``extra.timestamp``, the ``mswea_bash_command``
  fence, tool-call models (``tool_calls`` + ``role: "tool"``), Responses-API models (the response object with
  ``output`` items), and a closing ``role: "exit"`` message.
"""

from __future__ import annotations

from typing import Any

SYSTEM = "You are a helpful assistant that can interact multiple times with a computer shell."
TASK = "<pr_description>Fix the bug in parse()</pr_description>"


def chat_response(n: int, prompt: int, completion: int, cached: int, cost: float | None) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": 7},
    }
    if cost is not None:
        usage["cost"] = cost
    return {
        "id": f"gen-{n}",
        "model": "openai/gpt-4.1",
        "object": "chat.completion",
        "created": 1_763_500_000 + 10 * n,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "x"}}],
        "usage": usage,
    }


def v1(calls: int = 3, *, status: str = "Submitted", step_limit: int = 250) -> dict[str, Any]:
    """A 1.x text-based run: ``calls`` calls, prompt 1000*(i+1), completion 50+i, cached 900*i, cost 0.01*(i+1);
    call 1 fails (return code 2); the last call submits."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for i in range(calls):
        cmd = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff" if i == calls - 1 else f"ls dir{i}"
        msgs.append(
            {
                "role": "assistant",
                "content": f"THOUGHT: step {i}\n\n```bash\n{cmd}\n```",
                "extra": {"response": chat_response(i, 1000 * (i + 1), 50 + i, 900 * i, 0.01 * (i + 1))},
            }
        )
        if i == calls - 1 and status == "Submitted":
            msgs.append({"role": "user", "content": "diff --git a/x b/x"})
        else:
            code = 2 if i == 1 else 0
            msgs.append(
                {"role": "user", "content": f"<returncode>{code}</returncode>\n<output>\nout{i}\n</output>"}
            )
    return {
        "info": {
            "exit_status": status,
            "submission": "diff --git a/x b/x" if status == "Submitted" else "",
            "model_stats": {
                "instance_cost": round(sum(0.01 * (i + 1) for i in range(calls)), 10),
                "api_calls": calls,
            },
            "mini_version": "1.15.0",
            "config": {
                "agent": {"step_limit": step_limit, "cost_limit": 3.0},
                "model": {"model_name": "openai/gpt-4.1"},
            },
        },
        "messages": msgs,
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": "demo__demo-1",
    }


def v2_text(calls: int = 2) -> dict[str, Any]:
    """A 2.x text-based run: ``extra.actions``, ``extra.cost`` (LiteLLM's price), ``extra.timestamp``, an exit message."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for i in range(calls):
        resp = chat_response(i, 2000 + 100 * i, 30, 0, None)
        msgs.append(
            {
                "role": "assistant",
                "content": f"THOUGHT\n\n```mswea_bash_command\ncat f{i}\n```",
                "extra": {
                    "actions": [{"command": f"cat f{i}"}],
                    "cost": 0.002,
                    "timestamp": 1_763_500_005.0 + 10 * i,
                    "response": resp,
                },
            }
        )
        msgs.append(
            {
                "role": "user",
                "content": f"<returncode>0</returncode>\n<output>\nfile {i}\n</output>",
                "extra": {"returncode": 0, "timestamp": 1_763_500_006.0 + 10 * i},
            }
        )
    msgs.append(
        {
            "role": "exit",
            "content": "LimitsExceeded",
            "extra": {"exit_status": "LimitsExceeded", "submission": ""},
        }
    )
    return {
        "info": {
            "model_stats": {"instance_cost": 0.002 * calls, "api_calls": calls},
            "config": {
                "agent": {"step_limit": calls, "cost_limit": 0},
                "agent_type": "minisweagent.agents.default.DefaultAgent",
            },
            "mini_version": "2.4.6",
            "exit_status": "LimitsExceeded",
            "submission": "",
        },
        "messages": msgs,
        "trajectory_format": "mini-swe-agent-1.1",
    }


def v2_toolcall() -> dict[str, Any]:
    """A 2.x tool-call run: two parallel ``bash`` tool calls answered by ``role: "tool"`` messages (in reverse order)."""
    calls = [
        {"id": "call_a", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "bash", "arguments": '{"command": "pwd"}'}},
    ]
    return {
        "info": {
            "model_stats": {"instance_cost": 0.004, "api_calls": 1},
            "config": {"agent": {"step_limit": 0, "cost_limit": 0}},
            "mini_version": "2.1.0",
            "exit_status": "Submitted",
            "submission": "",
        },
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": TASK},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": calls,
                "extra": {
                    "actions": [{"command": "ls", "tool_call_id": "call_a"}],
                    "cost": 0.004,
                    "response": chat_response(0, 1500, 40, 1024, None),
                },
            },
            {
                "role": "tool",
                "tool_call_id": "call_b",
                "content": "<returncode>1</returncode><output>/x</output>",
            },
            {
                "role": "tool",
                "tool_call_id": "call_a",
                "content": "<returncode>0</returncode><output>a b</output>",
            },
            {"role": "exit", "content": "Submitted", "extra": {"exit_status": "Submitted", "submission": ""}},
        ],
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": "demo__tool-1",
    }


def v2_responses() -> dict[str, Any]:
    """A 2.x Responses-API run: the response object is the message; its function call answered by a
    ``function_call_output`` item."""
    return {
        "info": {
            "model_stats": {"instance_cost": 0.003, "api_calls": 1},
            "config": {"agent": {"step_limit": 10}},
            "mini_version": "2.2.0",
            "exit_status": "TimeExceeded",
            "submission": "",
        },
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": TASK},
            {
                "object": "response",
                "id": "resp_1",
                "model": "gpt-5-mini",
                "created_at": 1_763_500_100,
                "status": "completed",
                "output": [
                    {"type": "reasoning", "summary": []},
                    {
                        "type": "function_call",
                        "call_id": "fc_1",
                        "name": "bash",
                        "arguments": '{"command": "ls"}',
                    },
                ],
                "usage": {
                    "input_tokens": 1200,
                    "output_tokens": 80,
                    "input_tokens_details": {"cached_tokens": 1024},
                    "output_tokens_details": {"reasoning_tokens": 64},
                },
                "extra": {"cost": 0.003, "actions": [{"command": "ls", "tool_call_id": "fc_1"}]},
            },
            {
                "type": "function_call_output",
                "call_id": "fc_1",
                "output": "<returncode>-1</returncode> Command timed out",
            },
            {
                "role": "exit",
                "content": "TimeExceeded",
                "extra": {"exit_status": "TimeExceeded", "submission": ""},
            },
        ],
        "trajectory_format": "mini-swe-agent-1.1",
        "instance_id": "demo__resp-1",
    }
