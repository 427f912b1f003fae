"""Gemini CLI sessions: the JSON record (2025) and the JSONL stream with rewinds and rewrites (2026)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.importers import detect, gemini_cli
from workbench.trace import TraceError, read_run, write_run

META = {
    "sessionId": "8d2c1f6e-1111-4a4a-9b9b-000000000001",
    "projectHash": "f" * 64,
    "startTime": "2025-09-01T10:00:00.000Z",
    "lastUpdated": "2025-09-01T10:05:00.000Z",
}


def user(i: str, text: str) -> dict:
    return {"id": i, "timestamp": "2025-09-01T10:00:01.000Z", "type": "user", "content": [{"text": text}]}


def gemini(i: str, text: str, tokens: dict | None, calls: list | None = None) -> dict:
    m = {
        "id": i,
        "timestamp": "2025-09-01T10:00:05.000Z",
        "type": "gemini",
        "content": text,
        "thoughts": [
            {"subject": "Plan", "description": "read the file", "timestamp": "2025-09-01T10:00:02.000Z"}
        ],
        "tokens": tokens,
        "model": "gemini-2.5-pro",
    }
    if calls is not None:
        m["toolCalls"] = calls
    return m


def read_call(result: str | None) -> dict:
    call = {
        "id": "read_file-1",
        "name": "read_file",
        "args": {"absolute_path": "/w/a.py"},
        "status": "success",
        "timestamp": "2025-09-01T10:00:04.000Z",
        "displayName": "ReadFile",
        "resultDisplay": "",
    }
    if result is not None:
        call["result"] = [
            {"functionResponse": {"id": "read_file-1", "name": "read_file", "response": {"output": result}}}
        ]
    return call


T1 = {"input": 9000, "output": 40, "cached": 8000, "thoughts": 120, "tool": 0, "total": 9160}
T2 = {"input": 9500, "output": 200, "cached": 9000, "thoughts": 0, "tool": 30, "total": 9730}
T_OLD = {"input": 100, "output": 5, "cached": 0, "total": 105}  # the first releases: no thoughts or tool


def session_messages() -> list[dict]:
    return [
        user("u1", "what does a.py do?"),
        {"id": "i1", "timestamp": "2025-09-01T10:00:01.500Z", "type": "info", "content": "Loaded 1 file"},
        gemini("g1", "", T1, [read_call("print('hi')")]),
        gemini("g2", "It prints hi.", T2),
        user("u2", "thanks"),
        gemini("g3", "You're welcome.", T_OLD),
    ]


def independent(messages: list[dict]) -> dict[str, int]:
    calls = [m for m in messages if m["type"] == "gemini"]
    return {
        "calls": len(calls),
        "prompt": sum(m["tokens"]["input"] + m["tokens"].get("tool", 0) for m in calls),
        "cached": sum(m["tokens"]["cached"] for m in calls),
        "completion": sum(m["tokens"]["output"] + m["tokens"].get("thoughts", 0) for m in calls),
    }


def check_totals(run, want: dict[str, int]) -> None:
    assert len(run.turns) == want["calls"]
    assert run.total("prompt") == want["prompt"]
    assert run.total("cached") == want["cached"]
    assert run.total("completion") == want["completion"]


def test_json_session(tmp_path: Path) -> None:
    path = tmp_path / "session-2025-09-01T10-00-8d2c1f6e.json"
    msgs = session_messages()
    path.write_text(json.dumps({**META, "messages": msgs}, indent=2))
    assert detect(path).NAME == "gemini-cli"
    (run,) = gemini_cli.load(path)
    check_totals(run, independent(msgs))
    assert run.run_id == META["sessionId"] and run.model == "gemini-2.5-pro"
    t0 = run.turns[0]
    assert (t0.usage.prompt, t0.usage.cached, t0.usage.completion, t0.usage.reasoning) == (
        9000,
        8000,
        160,
        120,
    )
    assert run.turns[1].usage.prompt == 9530
    assert [(c.name, c.arguments) for c in t0.tool_calls] == [("read_file", '{"absolute_path":"/w/a.py"}')]
    assert [(r.call_id, r.content) for r in t0.tool_results] == [("read_file-1", "print('hi')")]
    assert [(s.start, s.stop, s.prompt) for s in run.segments] == [
        (0, 2, "what does a.py do?"),
        (2, 3, "thanks"),
    ]
    assert run.turns[0].segment == 0 and run.turns[2].segment == 1
    assert run.outcome.stop_reason == "done" and run.outcome.text == "You're welcome."
    assert run.metadata["skipped"] == {"info": 1}
    assert run.messages[1].reasoning == "Plan: read the file"
    again = read_run(write_run(run, tmp_path / "out.jsonl"))
    assert again.model_dump(exclude={"loaded_from"}) == run.model_dump(exclude={"loaded_from"})


def jsonl(records: list[dict]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def test_jsonl_rewrites_replace_and_rewinds_are_kept_and_said(tmp_path: Path) -> None:
    msgs = session_messages()
    g1_first = gemini("g1", "", None, [read_call(None)])  # written before its tokens and result arrived
    records = [
        {**META, "kind": "main"},
        msgs[0],
        g1_first,
        msgs[2],  # the same id again, complete
        msgs[3],
        {"$set": {"lastUpdated": "2025-09-01T10:04:00.000Z"}},
        user("u9", "no, try again"),
        gemini("g9", "Retrying.", {"input": 10000, "output": 3, "cached": 0, "total": 10003}),
        {"$rewindTo": "u9"},
        msgs[4],
        msgs[5],
    ]
    path = tmp_path / "session-x.jsonl"
    path.write_bytes(jsonl(records))
    assert detect(path).NAME == "gemini-cli"
    (run,) = gemini_cli.load(path)
    kept = [
        *msgs,
        user("u9", "x"),
        gemini("g9", "", {"input": 10000, "output": 3, "cached": 0, "total": 10003}),
    ]
    check_totals(run, independent(kept))
    assert [t.response_id for t in run.turns] == ["g1", "g2", "g9", "g3"]
    assert run.turns[0].usage.prompt == 9000  # the later write (with tokens) replaced the first
    assert any(n.startswith("2 message(s) were rewound by the user (1 model calls)") for n in run.lossy)
    assert run.metadata["shape"] == "jsonl"


def test_a_subagent_session_and_a_message_without_tokens(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl([{**META, "kind": "subagent"}, user("u1", "go"), gemini("g1", "done", None)]))
    (run,) = gemini_cli.load(path)
    assert run.role == "subagent"
    assert not run.turns[0].usage.known
    assert "1 model message(s) carry no tokens: their usage is unknown" in run.lossy


def test_bad_lines_and_fields_name_line_and_field(tmp_path: Path) -> None:
    bad = gemini("g2", "x", {**T2, "input": -3})
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        jsonl([META, user("u1", "go"), gemini("g1", "a", T1)]) + b"{oops\n" + jsonl([bad, {"what": 1}])
    )
    (run,) = gemini_cli.load(path)
    assert [(d.line, d.field) for d in run.diagnostics] == [(4, None), (5, "message.tokens.input"), (6, "")]
    assert len(run.turns) == 2 and run.turns[1].usage.prompt is None


def test_a_truncated_json_session_is_one_error_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    text = json.dumps({**META, "messages": session_messages()}, indent=2)
    path.write_text(text[:-40])
    with pytest.raises(TraceError) as err:
        gemini_cli.load(path)
    assert err.value.file == str(path) and err.value.line is not None
