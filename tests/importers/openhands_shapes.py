"""OpenHands files in each documented shape, written by the tests (shared by the importer and bad-input tests).

Shapes, from the upstream code (not copied from any sample):
* V1 events: openhands-sdk ``openhands/sdk/event/*`` dumped with their ``kind`` tag; metrics as
  ``openhands/sdk/llm/utils/metrics.py`` ``Metrics`` (``token_usages[]`` with ``response_id``); the V1 harness line
  as OpenHands/benchmarks ``benchmarks/utils/models.py`` ``EvalOutput`` (``metadata.llm``).
* Conversation folders: ``base_state.json`` + ``events/event-<05d index>-<id>.json``
  (``openhands/sdk/conversation/persistence_const.py``).
* V0 events as ``openhands/events/serialization/event.py`` ``event_to_dict``; 2024 histories as
  ``[action, observation]`` pairs (``evaluation/utils/shared.py`` ``EvalOutput.history``, "for compatibility with
  the old format") and the first resolver's flat events; resolver lines as ``openhands/resolver/resolver_output.py``.
* Completion logs as ``openhands/llm/llm.py`` (V0) and ``openhands/sdk/llm/utils/telemetry.py`` (V1) write them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

T0 = "2025-10-01T12:00:{:02d}.000000"


def text(s: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": s}]


def v1_events() -> list[dict[str, Any]]:
    """A V1 conversation: system prompt, task, a response with two parallel tool calls, a failing command, an
    agent message, a finish. Response ids r1 (2 actions), r2, r3 (message), r4 (finish)."""
    n = iter(range(60))

    def ev(kind: str, source: str, **rest: Any) -> dict[str, Any]:
        i = next(n)
        return {"kind": kind, "id": f"e{i:02d}", "timestamp": T0.format(i), "source": source, **rest}

    def action(rid: str, call: str, tool: str, args: dict, thought: str = "", **rest: Any) -> dict[str, Any]:
        return ev(
            "ActionEvent",
            "agent",
            thought=text(thought) if thought else [],
            action={"kind": "TerminalAction" if tool == "terminal" else "FinishAction", **args},
            tool_name=tool,
            tool_call_id=call,
            tool_call={"id": call, "name": tool, "arguments": json.dumps(args), "origin": "completion"},
            llm_response_id=rid,
            security_risk="UNKNOWN",
            **rest,
        )

    def obs(call: str, tool: str, out: str, **extra: Any) -> dict[str, Any]:
        return ev(
            "ObservationEvent",
            "environment",
            tool_name=tool,
            tool_call_id=call,
            observation={"kind": "TerminalObservation", "content": text(out), "is_error": False, **extra},
            action_id="x",
        )

    return [
        ev(
            "SystemPromptEvent",
            "agent",
            system_prompt={"type": "text", "text": "You are OpenHands agent."},
            tools=[{"name": "terminal", "description": "run", "parameters": {}}],
        ),
        ev("MessageEvent", "user", llm_message={"role": "user", "content": text("Fix the bug in x.py")}),
        action("r1", "c1", "terminal", {"command": "ls"}, "Look around", reasoning_content="think"),
        action("r1", "c2", "terminal", {"command": "cat x.py"}),
        obs("c1", "terminal", "x.py", exit_code=0),
        obs("c2", "terminal", "print(1)", exit_code=0),
        {
            "kind": "TokenEvent",
            "id": "tok",
            "timestamp": T0.format(40),
            "source": "agent",
            "prompt_token_ids": [1],
        },
        action("r2", "c3", "terminal", {"command": "pytest"}),
        obs("c3", "terminal", "1 failed", exit_code=1),
        ev(
            "MessageEvent",
            "agent",
            llm_message={"role": "assistant", "content": text("I will fix it now.")},
            llm_response_id="r3",
        ),
        action("r4", "c4", "finish", {"message": "Fixed x.py"}),
        obs("c4", "finish", "Fixed x.py"),
        ev("ConversationStateUpdateEvent", "environment", key="execution_status", value="finished"),
    ]


def v1_metrics(with_r3: bool = False) -> dict[str, Any]:
    usages = [
        {
            "model": "m",
            "prompt_tokens": 1000,
            "completion_tokens": 50,
            "cache_read_tokens": 0,
            "cache_write_tokens": 900,
            "reasoning_tokens": 20,
            "context_window": 200000,
            "per_turn_token": 1050,
            "response_id": "r1",
        },
        {
            "model": "m",
            "prompt_tokens": 1300,
            "completion_tokens": 30,
            "cache_read_tokens": 1000,
            "cache_write_tokens": 300,
            "reasoning_tokens": 0,
            "context_window": 200000,
            "per_turn_token": 1330,
            "response_id": "r2",
        },
        {
            "model": "m",
            "prompt_tokens": 1500,
            "completion_tokens": 12,
            "cache_read_tokens": 1300,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
            "context_window": 200000,
            "per_turn_token": 1512,
            "response_id": "r4",
        },
    ]
    if with_r3:
        usages.insert(2, {**usages[2], "prompt_tokens": 1400, "completion_tokens": 9, "response_id": "r3"})
    return {
        "model_name": "m",
        "accumulated_cost": 0.0123,
        "max_budget_per_task": None,
        "accumulated_token_usage": {"model": "m", "prompt_tokens": 3800, "response_id": ""},
        "costs": [
            {"model": "m", "cost": 0.004, "timestamp": 1.0},
            {"model": "m", "cost": 0.005, "timestamp": 2.0},
        ],
        "response_latencies": [
            {"model": "m", "latency": 2.5, "response_id": "r1"},
            {"model": "m", "latency": 1.0, "response_id": "r2"},
        ],
        "token_usages": usages,
    }


def v1_output_line(
    instance: str = "repo__proj-1", metrics: bool = True, resolved: bool | None = True
) -> dict:
    line: dict[str, Any] = {
        "instance_id": instance,
        "attempt": 1,
        "test_result": {"git_patch": "diff --git a/x.py b/x.py"},
        "instruction": "Fix the bug in x.py",
        "metadata": {
            "llm": {
                "model": "litellm_proxy/claude-sonnet-4",
                "api_key": "**********",
                "max_input_tokens": 200000,
                "max_output_tokens": 64000,
                "temperature": 0.0,
                "usage_id": "agent",
            },
            "dataset": "princeton-nlp/SWE-bench_Verified",
            "max_iterations": 100,
            "eval_output_dir": "/out",
            "openhands_sdk_version": "1.3.0",
        },
        "history": v1_events(),
        "metrics": v1_metrics() if metrics else None,
        "error": None,
    }
    if resolved is not None:
        line["test_result"]["report"] = {"resolved": resolved, "empty_generation": False}
    return line


def write_conversation(folder: Path, events: list[dict[str, Any]] | None = None) -> Path:
    """A V1 conversation folder as the SDK persists it."""
    events = v1_events() if events is None else events
    (folder / "events").mkdir(parents=True)
    base = {
        "id": "3f2c9a5e-0000-4000-8000-000000000001",
        "agent": {
            "kind": "Agent",
            "llm": {"model": "anthropic/claude-sonnet-4", "api_key": "**********", "usage_id": "agent"},
            "tools": [{"name": "terminal"}],
        },
        "workspace": {"kind": "LocalWorkspace", "working_dir": "/w"},
        "max_iterations": 500,
        "execution_status": "finished",
        "stats": {"usage_to_metrics": {"agent": v1_metrics()}},
    }
    (folder / "base_state.json").write_text(json.dumps(base))
    for i, e in enumerate(events):
        (folder / "events" / f"event-{i:05d}-{e['id']}.json").write_text(json.dumps(e))
    return folder


def completion_log(rid: str, prompt: int, completion: int, cost: float, v1: bool = True) -> dict[str, Any]:
    response = {
        "id": rid,
        "created": 1759320000,
        "model": "claude-sonnet-4",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": prompt // 2},
        },
    }
    if v1:
        return {
            "context_window": 200000,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [],
            "kwargs": {},
            "response": response,
            "cost": cost,
            "timestamp": 1759320001.5,
            "latency_sec": 4.25,
            "usage_summary": {"prompt_tokens": prompt, "completion_tokens": completion},
        }
    return {
        "messages": [{"role": "user", "content": "hi"}],
        "response": response,
        "args": [],
        "kwargs": {"tools": []},
        "timestamp": 1759320001.5,
        "cost": cost,
    }


# -- V0 shapes ----------------------------------------------------------------------------------------------


def v0_action(i: int, action: str, args: dict, source: str = "agent", message: str = "") -> dict:
    return {
        "id": i,
        "timestamp": T0.format(i),
        "source": source,
        "message": message,
        "action": action,
        "args": args,
    }


def v0_obs(i: int, cause: int, observation: str, content: str, extras: dict) -> dict:
    return {
        "id": i,
        "timestamp": T0.format(i),
        "source": "agent",
        "message": "",
        "cause": cause,
        "observation": observation,
        "content": content,
        "extras": extras,
    }


def pair_history() -> list[list[dict]]:
    """2024 ``[action, observation]`` pairs: the task with a NullObservation, two commands, a finish."""
    null = {"message": "No observation", "observation": "null", "content": "", "extras": {}}
    return [
        [
            v0_action(
                0, "message", {"content": "Fix it", "images_urls": None, "wait_for_response": False}, "user"
            ),
            null,
        ],
        [
            v0_action(1, "run", {"command": "ls", "thought": "Look first", "is_confirmed": "confirmed"}),
            v0_obs(2, 1, "run", "a.py", {"command_id": -1, "command": "ls", "exit_code": 0}),
        ],
        [
            v0_action(3, "run", {"command": "pytest", "thought": "", "is_confirmed": "confirmed"}),
            v0_obs(4, 3, "run", "1 failed", {"command_id": -1, "command": "pytest", "exit_code": 1}),
        ],
        [v0_action(5, "finish", {"outputs": {}, "thought": "Done"}), null],
    ]


def pair_output_line() -> dict:
    return {
        "instance_id": "django__django-1",
        "instruction": "Fix it",
        "metadata": {
            "agent_class": "CodeActAgent",
            "model_name": "gpt-4o",
            "max_iterations": 30,
            "llm_config": {"model": "gpt-4o-2024-05-13"},
        },
        "history": pair_history(),
        "metrics": {"accumulated_cost": 0.06, "costs": [0.01, 0.02, 0.03]},
        "error": None,
        "test_result": {"git_patch": "", "resolved": False},
    }


def resolver_line() -> dict:
    """The first resolver's output: flat events (arguments beside ``action``), costs as floats, ``success``."""
    history = [
        {"content": "Fix issue 5", "images_urls": None, "wait_for_response": False, "action": "message"},
        {"command": "touch LICENSE", "thought": "Create it", "keep_prompt": True, "action": "run"},
        {"content": "", "command_id": -1, "command": "touch LICENSE", "exit_code": 0, "observation": "run"},
        {"code": "print(open('LICENSE').read())", "thought": "Check", "action": "run_ipython"},
        {"content": "MIT", "code": "print(...)", "observation": "run_ipython"},
        {"outputs": {}, "thought": "The license is added.", "action": "finish"},
    ]
    return {
        "issue": {
            "owner": "octo",
            "repo": "demo",
            "number": 5,
            "title": "Add a license",
            "body": "MIT please",
        },
        "issue_type": "issue",
        "instruction": "Fix issue 5",
        "base_commit": "",
        "git_patch": "diff",
        "history": history,
        "metrics": {"accumulated_cost": 0.03, "costs": [0.01, 0.01, 0.01]},
        "success": True,
        "comment_success": None,
        "result_explanation": "added",
        "error": None,
    }


def v0_trajectory() -> list[dict]:
    """A V0 trajectory (``save_trajectory_path``): function-calling events with their model responses."""

    def resp(rid: str, call: str, name: str, args: str, prompt: int) -> dict:
        return {
            "function_name": name,
            "tool_call_id": call,
            "model_response": {
                "id": rid,
                "created": 1738397940,
                "model": "gpt-4o-2024-08-06",
                "object": "chat.completion",
                "choices": [
                    {
                        "finish_reason": "tool_calls",
                        "index": 0,
                        "message": {
                            "content": None,
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "function": {"arguments": args, "name": name},
                                    "id": call,
                                    "type": "function",
                                }
                            ],
                        },
                    }
                ],
                "usage": {"completion_tokens": 20, "prompt_tokens": prompt, "total_tokens": prompt + 20},
            },
            "total_calls_in_response": 1,
        }

    return [
        {"id": 0, "timestamp": "2025-02-01T00:14:10.787622", "source": "user", "message": "list files",
         "action": "message", "args": {"content": "list files", "image_urls": None, "wait_for_response": False}},
        {"id": 1, "timestamp": "2025-02-01T00:14:12.000000", "source": "agent", "message": "Running command: ls",
         "action": "run", "tool_call_metadata": resp("chatcmpl-1", "call_1", "execute_bash", '{"command": "ls"}', 900),
         "args": {"command": "ls", "is_input": False, "thought": "", "blocking": False, "hidden": False,
                  "confirmation_state": "confirmed"}},
        {"id": 2, "timestamp": "2025-02-01T00:14:13.000000", "source": "agent", "message": "Command `ls` executed",
         "cause": 1, "observation": "run", "tool_call_metadata": resp("chatcmpl-1", "call_1", "execute_bash", '{"command": "ls"}', 900),
         "content": "a.py", "extras": {"command": "ls", "metadata": {"exit_code": 0, "pid": -1, "username": None,
                                        "hostname": None, "working_dir": None, "py_interpreter_path": None,
                                        "prefix": "", "suffix": ""}, "hidden": False}, "success": True},
        {"id": 3, "timestamp": "2025-02-01T00:14:15.000000", "source": "agent", "message": "All done!",
         "action": "finish", "tool_call_metadata": resp("chatcmpl-2", "call_2", "finish", "{}", 1000),
         "args": {"final_thought": "All done!", "task_completed": "true", "outputs": {}, "thought": ""}},
    ]  # fmt: skip
