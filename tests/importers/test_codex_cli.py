"""Codex CLI rollout: one call per change of total_tokens; usage, context window and tool pairing."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.importers import codex_cli, detect


def raw_calls(path: Path) -> list[dict[str, int]]:
    calls, last = [], None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            p = d["payload"]
            if d["type"] == "event_msg" and p.get("type") == "token_count" and p.get("info"):
                total = p["info"]["total_token_usage"]["total_tokens"]
                if total != last:
                    calls.append(p["info"]["last_token_usage"])
                    last = total
    return calls


def rollout(shared: Path) -> Path:
    (path,) = sorted((shared / "codex-cli").glob("rollout-*.jsonl"))
    return path


def test_calls_and_tokens_match_an_independent_reading(shared: Path) -> None:
    path = rollout(shared)
    assert detect(path) is codex_cli
    (run,) = codex_cli.load(path)
    raw = raw_calls(path)
    assert len(run.turns) == len(raw) == 39
    assert [t.usage.prompt for t in run.turns] == [c["input_tokens"] for c in raw]
    assert [t.usage.cached for t in run.turns] == [c["cached_input_tokens"] for c in raw]
    assert [t.usage.completion for t in run.turns] == [c["output_tokens"] for c in raw]
    assert [t.usage.reasoning for t in run.turns] == [c["reasoning_output_tokens"] for c in raw]
    assert (run.total("prompt"), run.total("cached"), run.total("completion")) == (1099261, 1027328, 22305)
    assert run.total("cache_write") is None
    assert run.context_length == 258400
    assert run.model == "gpt-5.1-codex"
    assert run.diagnostics == []


def test_function_calls_pair_with_their_outputs(shared: Path) -> None:
    path = rollout(shared)
    (run,) = codex_cli.load(path)
    with open(path, encoding="utf-8") as fh:
        items = [json.loads(x)["payload"] for x in fh]
    calls = [p["call_id"] for p in items if p.get("type") == "function_call"]
    outputs = [p["call_id"] for p in items if p.get("type") == "function_call_output"]
    assert [c.id for t in run.turns for c in t.tool_calls] == calls
    assert sorted(r.call_id for t in run.turns for r in t.tool_results) == sorted(outputs)
    for t in run.turns:
        assert {r.call_id for r in t.tool_results} <= {c.id for c in t.tool_calls}
    patched = sum(1 for p in items if p.get("type") == "function_call" and "apply_patch" in p["arguments"])
    # every apply_patch turn writes (as the command apply_patch); the shell commands are read by the parser
    patch_turns = [t for t in run.turns if any("apply_patch" in c.arguments for c in t.tool_calls)]
    assert len(patch_turns) == patched > 0
    assert all(t.mutated is True and "apply_patch" in (t.mutated_rule or "") for t in patch_turns)
    assert all(t.mutated_rule for t in run.turns if t.tool_calls)


def test_requests_grow_by_answer_and_output(shared: Path) -> None:
    (run,) = codex_cli.load(rollout(shared))
    assert [m.role for m in run.request(0)] == ["user", "user"]
    for i in range(1, len(run.turns)):
        prev, req = run.request(i - 1), run.request(i)
        assert req[: len(prev)] == prev
        assert [m.role for m in req[len(prev) :]] == ["assistant", "tool"]
    assert run.segments[0].prompt.startswith("finish up the users work")


def test_a_forked_session_keeps_its_own_identity_and_says_it_repeats_its_origin(tmp_path: Path) -> None:
    from tests.samples.lines import codex_lines

    origin = codex_lines()  # a session "sess", its session_meta first
    ts = "2025-01-02T00:00:00Z"
    meta = {"id": "fork", "timestamp": ts, "forked_from_id": "sess", "source": "cli"}
    head = json.dumps({"timestamp": ts, "type": "session_meta", "payload": meta}).encode()
    path = tmp_path / "rollout-fork.jsonl"
    path.write_bytes(b"\n".join([head, *origin]) + b"\n")
    (plain,) = codex_cli.load(_write(tmp_path / "rollout-sess.jsonl", origin))
    (fork,) = codex_cli.load(path)
    assert (plain.run_id, fork.run_id) == ("sess", "fork")
    assert fork.metadata["forked_from_id"] == "sess" and "forked_from_id" not in plain.metadata
    assert fork.started_at is not None and fork.started_at.isoformat().startswith("2025-01-02")
    said = [n for n in fork.lossy if "repeats" in n]
    assert said == [
        "from line 2 the file repeats session sess's history, copied when this one was forked from it; the copy's "
        "end is not marked, so its calls count here too"
    ]
    assert not any("repeats" in n for n in plain.lossy)
    # the copy's calls are the origin's, counted here too (which of them are copies is not in the file)
    assert [t.usage for t in fork.turns] == [t.usage for t in plain.turns]


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path
