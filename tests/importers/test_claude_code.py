"""Claude Code sessions: calls, tokens, compactions, subagent links and segments against the raw files.

The expected figures come from an independent reading of each file with the standard ``json`` module (not the
importer): one call per ``message.id``, each usage field the maximum over that id's lines.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.importers import claude_code, detect
from workbench.trace import read_run, write_run

SESSIONS = {
    # session id: (calls, compaction trigger, preTokens) — pinned from the raw files
    "258c7280-ae70-4798-800f-63464d01a85d": (152, "auto", 167094),
    "4d5611e5-241a-462a-8d15-5122611a9569": (139, "auto", 170251),
    "8463c716-a2ea-4c14-9efa-87158ebd9f20": (143, "auto", 167731),
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04": (217, "manual", 142431),
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46": (157, "auto", 167117),
}


def raw_calls(path: Path) -> dict[str, dict[str, int]]:
    """message.id -> the maximum of each usage field over that id's lines (plain json)."""
    calls: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if d.get("type") != "assistant":
                continue
            m = d["message"]
            u = m["usage"]
            acc = calls.setdefault(m["id"], {})
            for key in (
                "input_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
                "output_tokens",
            ):
                acc[key] = max(acc.get(key, 0), u.get(key) or 0)
    return calls


def raw_totals(path: Path) -> dict[str, int]:
    calls = raw_calls(path)
    return {
        "calls": len(calls),
        "prompt": sum(
            c["input_tokens"] + c["cache_read_input_tokens"] + c["cache_creation_input_tokens"]
            for c in calls.values()
        ),
        "cached": sum(c["cache_read_input_tokens"] for c in calls.values()),
        "cache_write": sum(c["cache_creation_input_tokens"] for c in calls.values()),
        "completion": sum(c["output_tokens"] for c in calls.values()),
    }


def all_files(shared: Path) -> list[Path]:
    root = shared / "claude-code"
    return sorted(root.glob("*.jsonl")) + sorted(root.glob("*/subagents/*.jsonl"))


def test_every_file_is_detected_as_claude_code(shared: Path) -> None:
    files = all_files(shared)
    assert len(files) == 20
    assert all(detect(f) is claude_code for f in files)


def test_calls_and_token_totals_match_an_independent_reading(shared: Path) -> None:
    for path in all_files(shared):
        (run,) = claude_code.load(path)
        expected = raw_totals(path)
        got = {
            "calls": len(run.turns),
            "prompt": run.total("prompt"),
            "cached": run.total("cached"),
            "cache_write": run.total("cache_write"),
            "completion": run.total("completion"),
        }
        assert got == expected, path.name
        assert run.diagnostics == [], path.name
        # per call, not only in total
        raw = raw_calls(path)
        for t in run.turns:
            c = raw[t.response_id]
            assert t.usage.cached == c["cache_read_input_tokens"]
            assert t.usage.completion == c["output_tokens"]


def test_main_sessions_call_counts_are_pinned(shared: Path) -> None:
    for sid, (calls, _, _) in SESSIONS.items():
        (run,) = claude_code.load(shared / "claude-code" / f"{sid}.jsonl")
        assert (run.run_id, run.role, len(run.turns)) == (sid, "main", calls)


def test_compaction_events_carry_trigger_and_pre_tokens(shared: Path) -> None:
    for sid, (_, trigger, pre) in SESSIONS.items():
        path = shared / "claude-code" / f"{sid}.jsonl"
        (run,) = claude_code.load(path)
        (event,) = [e for e in run.events if e.kind == "compaction"]
        assert (event.reason, event.data["trigger"], event.data["pre_tokens"]) == (trigger, trigger, pre)
        # the compaction call's own file is linked from the event and links back to the session
        (compact_file,) = sorted((path.with_suffix("") / "subagents").glob("agent-acompact-*.jsonl"))
        assert event.data["compaction_run_id"] == f"{sid}/{compact_file.stem}"
        (compaction,) = claude_code.load(compact_file)
        assert (compaction.role, compaction.parent_run_id, len(compaction.turns)) == ("compaction", sid, 1)
        assert compaction.run_id == event.data["compaction_run_id"]


def test_requests_after_a_compaction_start_at_the_summary(shared: Path) -> None:
    for sid in SESSIONS:
        (run,) = claude_code.load(shared / "claude-code" / f"{sid}.jsonl")
        (event,) = [e for e in run.events if e.kind == "compaction"]
        after = run.request(event.turn + 1)
        assert after[0].kind == "compact-summary"
        assert after[0].content.startswith("This session is being continued")
        before = run.request(event.turn)
        assert before[0].role == "user" and before[0].kind != "compact-summary"


def test_each_request_is_the_previous_request_plus_answer_and_results(shared: Path) -> None:
    (run,) = claude_code.load(shared / "claude-code" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    compaction_turn = next(e.turn for e in run.events if e.kind == "compaction")
    for i in range(1, len(run.turns)):
        req, prev = run.request(i), run.request(i - 1)
        if i - 1 == compaction_turn:
            continue
        assert req[: len(prev)] == prev
        answer = req[len(prev)]
        assert answer.role == "assistant"
        assert [c.id for c in answer.tool_calls] == [c.id for c in run.turns[i - 1].tool_calls]
        answered = {m.tool_call_id for m in req if m.role == "tool"}
        asked = {c.id for m in req if m.role == "assistant" for c in m.tool_calls}
        assert answered <= asked
    # one range per turn: storage grows with messages, not turns x messages
    assert all(len(t.sent) == 1 for t in run.turns)
    assert len(run.messages) < 3 * len(run.turns)


def test_tool_results_are_paired_by_id(shared: Path) -> None:
    for sid in SESSIONS:
        (run,) = claude_code.load(shared / "claude-code" / f"{sid}.jsonl")
        for t in run.turns:
            ids = [c.id for c in t.tool_calls]
            assert all(r.call_id in ids for r in t.tool_results)
        paired = sum(len(t.tool_results) for t in run.turns)
        calls = sum(len(t.tool_calls) for t in run.turns)
        assert paired == calls


def test_subagents_link_to_the_task_call_that_started_them(shared: Path) -> None:
    root = shared / "claude-code"
    for sid in SESSIONS:
        (parent,) = claude_code.load(root / f"{sid}.jsonl")
        task_calls = {c.id: c for t in parent.turns for c in t.tool_calls}
        for f in sorted((root / sid / "subagents").glob("agent-a*.jsonl")):
            if "acompact" in f.name:
                continue
            (sub,) = claude_code.load(f)
            assert (sub.role, sub.parent_run_id) == ("subagent", sid)
            agent = f.stem.removeprefix("agent-")
            # independently: the parent's agent_progress line for this agent names the tool call
            with open(root / f"{sid}.jsonl", encoding="utf-8") as fh:
                rows = [json.loads(x) for x in fh if f'"agentId":"{agent}"' in x]
            expected = next(r["parentToolUseID"] for r in rows if r.get("data", {}).get("agentId") == agent)
            assert sub.parent_tool_call_id == expected
            assert task_calls[expected].name == "Task"
            assert parent.metadata["subagents"][agent] == expected


def test_session_with_only_its_subagent_file_still_links(shared: Path) -> None:
    (sub,) = claude_code.load(
        shared / "claude-code" / "6c2214d7-b87e-4432-8e41-22ba294ea584" / "subagents" / "agent-afc096d.jsonl"
    )
    assert (sub.role, sub.parent_run_id, sub.parent_tool_call_id) == (
        "subagent",
        "6c2214d7-b87e-4432-8e41-22ba294ea584",
        None,
    )
    assert len(sub.turns) == 18


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "258c7280-ae70-4798-800f-63464d01a85d",
            [(0, 151, "Implement spotter-gqc"), (151, 152, "did you push?")],
        ),
        (
            "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
            [(0, 138, "Work on bead"), (138, 217, "continue implementation")],
        ),
        (
            "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
            [(0, 44, "Work on bead"), (44, 157, "continue until all are done")],
        ),
        ("8463c716-a2ea-4c14-9efa-87158ebd9f20", [(0, 143, "Work on bead")]),
        ("tool_heavy", [(0, 2, "start phoenix in background"), (2, 4, "scrolling back in xterm.js")]),
    ],
)
def test_segments_start_at_real_user_prompts(shared: Path, name: str, expected: list) -> None:
    (run,) = claude_code.load(shared / "claude-code" / f"{name}.jsonl")
    got = [(s.start, s.stop, s.prompt) for s in run.segments]
    assert [(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in expected]
    assert all(p.startswith(e) for (_, _, p), (_, _, e) in zip(got, expected, strict=True))
    assert all(t.segment is not None for t in run.turns)
    leaves = run.leaves()
    assert sum(len(leaf.turns) for leaf in leaves) == len(run.turns)


def test_task_notifications_and_interruptions_are_not_segments(shared: Path) -> None:
    (run,) = claude_code.load(shared / "claude-code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    kinds = {m.kind for m in run.messages if m.role == "user"}
    assert {"notification", "interrupt", "compact-summary"} <= kinds
    assert all(not s.prompt.startswith("<task-notification>") for s in run.segments)
    queued = [e.data["text"] for e in run.events if e.kind == "queued-prompt"]
    assert "check again" in queued


def test_mutations_are_inferred_from_edit_tools_and_bash(shared: Path) -> None:
    from workbench.importers.shell import classify

    (run,) = claude_code.load(shared / "claude-code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    for t in run.turns:
        if not t.tool_calls:
            continue
        edited = any(c.name in claude_code.EDIT_TOOLS for c in t.tool_calls)
        shell = [classify(json.loads(c.arguments)["command"]).kind for c in t.tool_calls if c.name == "Bash"]
        if edited or "write" in shell:
            assert t.mutated is True, t.mutated_rule
        elif "unknown" in shell:
            assert t.mutated is None, t.mutated_rule
        assert t.mutated_rule
    assert any(t.mutated for t in run.turns)
    assert any("mutated is inferred from the calls" in note for note in run.lossy)
    assert any("system prompt and tool schemas are not recorded" in note for note in run.lossy)


def _line(kind: str, uuid: str, parent: str | None, **rest: object) -> str:
    return json.dumps(
        {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "isSidechain": False, **rest}
    )


def _answer(uuid: str, parent: str, mid: str, text: str) -> str:
    usage = {
        "input_tokens": 1,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "output_tokens": 2,
    }
    msg = {
        "id": mid,
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": text}],
        "usage": usage,
    }
    return _line("assistant", uuid, parent, message=msg)


def test_a_rewound_session_is_reported(tmp_path: Path) -> None:
    lines = [
        _line("user", "u1", None, message={"role": "user", "content": "first"}),
        _answer("a1", "u1", "m1", "one"),
        _line("user", "u2", "a1", message={"role": "user", "content": "second"}),
        _answer("a2", "u2", "m2", "two"),
        _line("user", "u3", "a1", message={"role": "user", "content": "second, edited"}),  # rewound to a1
        _answer("a3", "u3", "m3", "three"),
        json.dumps(
            {
                "type": "user",
                "uuid": "x",
                "parentUuid": None,
                "isSidechain": True,
                "message": {"role": "user", "content": "sub"},
            }
        ),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    run, side = claude_code.load(path)
    assert len(run.turns) == 3
    assert [(e.kind, e.turn, e.data["line"]) for e in run.events] == [("rewind", 1, 5)]
    assert any("rewound" in n for n in run.lossy)
    # The sidechain line is a subagent's prompt (written inline), not part of the rewind: a child run.
    assert (side.role, side.parent_run_id, side.task, len(side.turns)) == ("subagent", "s", "sub", 0)
    assert [s.prompt for s in run.segments] == ["first", "second", "second, edited"]
    back = read_run(write_run(run, tmp_path / "native.jsonl"))
    assert back.model_dump(exclude={"loaded_from"}) == run.model_dump(exclude={"loaded_from"})
