"""OpenAI-style request/response logs: the generic format, written here by hand."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.importers import detect, openai_log

SYSTEM = {"role": "system", "content": "be brief"}
USER = {"role": "user", "content": "list files, then count them"}
CALL = [{"id": "c1", "type": "function", "function": {"name": "sh", "arguments": '{"cmd": "ls"}'}}]
ANSWER1 = {"role": "assistant", "content": None, "tool_calls": CALL}
RESULT1 = {"role": "tool", "tool_call_id": "c1", "content": "a\nb"}
ANSWER2 = {"role": "assistant", "content": "2 files"}


def call(messages: list, answer: dict, prompt: int, cached: int, completion: int, n: int) -> dict:
    return {
        "request": {
            "model": "gpt-x",
            "messages": messages,
            "tools": [{"type": "function", "function": {"name": "sh"}}],
        },
        "response": {
            "id": f"r{n}",
            "model": "gpt-x",
            "choices": [
                {"message": answer, "finish_reason": "tool_calls" if answer.get("tool_calls") else "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        },
        "started_at": f"2025-01-01T00:00:0{n}Z",
        "ended_at": f"2025-01-01T00:00:0{n + 1}Z",
    }


def write(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_calls_usage_requests_and_results(tmp_path: Path) -> None:
    header = {
        "run": {
            "run_id": "demo",
            "model": "gpt-x",
            "context_length": 128000,
            "policy": {"grant": 150000, "max_turns": 30, "extra": 1},
        }
    }
    lines = [
        header,
        call([SYSTEM, USER], ANSWER1, 100, 0, 10, 0),
        call([SYSTEM, USER, ANSWER1, RESULT1], ANSWER2, 130, 100, 5, 2),
    ]
    path = write(tmp_path, lines)
    assert detect(path) is openai_log
    (run,) = openai_log.load(path)
    assert (run.run_id, run.model, run.context_length) == ("demo", "gpt-x", 128000)
    assert (run.policy.grant, run.policy.max_turns, run.policy.params) == (150000, 30, {"extra": 1})
    assert [(t.usage.prompt, t.usage.cached, t.usage.completion) for t in run.turns] == [
        (100, 0, 10),
        (130, 100, 5),
    ]
    # each request rebuilt exactly; messages stored once
    for t, line in zip(run.turns, lines[1:], strict=True):
        rebuilt = [m.model_dump(exclude_defaults=True) for m in run.request(t)]
        assert [m["role"] for m in rebuilt] == [m["role"] for m in line["request"]["messages"]]
        assert [m.get("content") for m in rebuilt] == [m.get("content") for m in line["request"]["messages"]]
    assert len(run.messages) == 5
    assert run.turns[0].tool_results[0].content == "a\nb"
    assert run.turns[0].tool_calls[0].arguments == '{"cmd": "ls"}'
    assert run.tool_schemas == [{"type": "function", "function": {"name": "sh"}}]
    assert run.outcome.stop_reason == "done" and run.outcome.text == "2 files"
    assert run.diagnostics == []


def test_a_rewritten_history_is_stored_as_ranges(tmp_path: Path) -> None:
    pruned = [SYSTEM, USER, ANSWER1, RESULT1, ANSWER2, {"role": "user", "content": "again"}]
    lines = [
        call([SYSTEM, USER], ANSWER1, 100, 0, 10, 0),
        call([SYSTEM, USER, ANSWER1, RESULT1], ANSWER2, 130, 100, 5, 2),
        call([SYSTEM, *pruned[4:]], {"role": "assistant", "content": "ok"}, 50, 0, 1, 4),
    ]
    (run,) = openai_log.load(write(tmp_path, lines))
    # the common prefix (the system message) is reused; what follows the rewrite is stored anew
    assert run.turns[2].sent == [(0, 1), (5, 7)]
    assert len(run.messages) == 8
    assert [m.content for m in run.request(2)] == ["be brief", "2 files", "again"]


def test_cached_above_prompt_is_reported_with_line(tmp_path: Path) -> None:
    path = write(tmp_path, [call([SYSTEM, USER], ANSWER2, 10, 50, 1, 0)])
    (run,) = openai_log.load(path)
    (d,) = run.diagnostics
    assert (d.file, d.line, d.field) == (str(path), 1, "response.usage.prompt_tokens_details.cached_tokens")
    assert run.turns[0].usage.cached == 50
