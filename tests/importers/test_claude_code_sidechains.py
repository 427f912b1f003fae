"""Claude Code sessions from before the ``subagents/`` folder: Task subagents written inline.

The fixtures are written here in the shape Claude Code 1.0.x wrote (``isSidechain: true`` lines in the session
file; the sidechain's first line has ``parentUuid: null`` and the Task prompt as its content; the Task result's
``toolUseResult`` carries ``totalTokens``/``totalToolUseCount``, later versions also ``agentId``). Expected
figures come from a plain ``json`` reading of the file, not from the importer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson

from workbench.importers import claude_code
from workbench.scale import load
from workbench.trace import read_run, runs_df, write_run

SESSION = "s-old"


class Writer:
    """Lines of one session file, each with the fields Claude Code writes on every line."""

    def __init__(self) -> None:
        self.lines: list[dict] = []
        self.clock = 0

    def _base(self, side: bool, uuid: str, parent: str | None, **extra: object) -> dict:
        self.clock += 1
        return {
            "parentUuid": parent,
            "isSidechain": side,
            "userType": "external",
            "cwd": "/w",
            "sessionId": SESSION,
            "version": "1.0.60",
            "uuid": uuid,
            "timestamp": f"2025-07-01T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z",
            **extra,
        }

    def user(self, side: bool, uuid: str, parent: str | None, content: object, **extra: object) -> None:
        self.lines.append(
            {
                **self._base(side, uuid, parent, **extra),
                "type": "user",
                "message": {"role": "user", "content": content},
            }
        )

    def assistant(
        self,
        side: bool,
        uuid: str,
        parent: str | None,
        mid: str,
        blocks: list[dict],
        usage: dict,
        **extra: object,
    ) -> None:
        """One line per content block, each repeating the call's usage (output_tokens a placeholder but last)."""
        for i, block in enumerate(blocks):
            u = dict(usage) if i == len(blocks) - 1 else {**usage, "output_tokens": 1}
            self.lines.append(
                {
                    **self._base(side, f"{uuid}.{i}", parent if i == 0 else f"{uuid}.{i - 1}", **extra),
                    "type": "assistant",
                    "message": {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-sonnet-4",
                        "content": [block],
                        "stop_reason": None,
                        "usage": u,
                    },
                }
            )

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(d) + "\n" for d in self.lines))
        return path


def usage(fresh: int, read: int, write: int, out: int) -> dict:
    return {
        "input_tokens": fresh,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "output_tokens": out,
        "service_tier": "standard",
    }


def task(tid: str, prompt: str) -> dict:
    return {
        "type": "tool_use",
        "id": tid,
        "name": "Task",
        "input": {"description": "look", "prompt": prompt, "subagent_type": "general-purpose"},
    }


def result(tid: str, text: str) -> dict:
    return {"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": text}]}


def sidechain(w: Writer, tag: str, prompt: str, calls: int, agent: str | None = None) -> None:
    """A subagent: its prompt (the root), ``calls`` calls each reading a file, then a final answer."""
    extra = {"agentId": agent} if agent else {}
    w.user(True, f"{tag}-root", None, prompt, **extra)
    parent = f"{tag}-root"
    for k in range(calls):
        w.assistant(
            True,
            f"{tag}-a{k}",
            parent,
            f"msg_{tag}_{k}",
            [
                {"type": "text", "text": "reading"},
                {"type": "tool_use", "id": f"{tag}-t{k}", "name": "Read", "input": {"file_path": f"/f{k}"}},
            ],
            usage(3, 1000 * (k + 1), 200, 40 + k),
            **extra,
        )
        w.user(True, f"{tag}-r{k}", f"{tag}-a{k}.1", [result(f"{tag}-t{k}", f"contents {k}")], **extra)
        parent = f"{tag}-r{k}"
    w.assistant(
        True,
        f"{tag}-fin",
        parent,
        f"msg_{tag}_fin",
        [{"type": "text", "text": f"{tag} found it"}],
        usage(2, 5000, 50, 77),
        **extra,
    )


def session_with_parallel_tasks(agent_ids: bool = False) -> Writer:
    """Main: a prompt, a call starting two Tasks at once, the subagents' lines interleaved, both results, an
    answer. With ``agent_ids`` the lines and results carry agentId (the 2.0.x inline shape)."""
    w = Writer()
    w.user(False, "u1", None, "find the bug")
    w.assistant(
        False,
        "m1",
        "u1",
        "msg_main_1",
        [
            {"type": "text", "text": "delegating"},
            task("toolu_A", "search the parser"),
            task("toolu_B", "search the lexer"),
        ],
        usage(10, 0, 9000, 300),
    )
    # Interleave two sidechains as concurrent subagents do: write each to its own writer, then merge by clock.
    a, b = Writer(), Writer()
    a.clock = b.clock = w.clock
    sidechain(a, "A", "search the parser", 2, "aaaa111" if agent_ids else None)
    sidechain(b, "B", "search the lexer", 3, "bbbb222" if agent_ids else None)
    merged = []
    for i in range(max(len(a.lines), len(b.lines))):
        merged.extend(x.lines[i] for x in (a, b) if i < len(x.lines))
    w.lines.extend(merged)
    w.clock = max(a.clock, b.clock) + 1
    for tid, text, n, agent in (
        ("toolu_A", "A found it", 2, "aaaa111"),
        ("toolu_B", "B found it", 3, "bbbb222"),
    ):
        extra = {
            "toolUseResult": {
                "content": [{"type": "text", "text": text}],
                "totalDurationMs": 1000,
                "totalTokens": 5129,
                "totalToolUseCount": n,
                "usage": usage(2, 5000, 50, 77),
                **({"agentId": agent} if agent_ids else {}),
            }
        }
        w.user(False, f"res-{tid}", "m1.2", [result(tid, text)], **extra)
    w.assistant(
        False, "m2", "res-toolu_B", "msg_main_2", [{"type": "text", "text": "fixed"}], usage(4, 9010, 400, 60)
    )
    return w


def plain_totals(path: Path) -> dict[str, int]:
    """Calls and tokens of the whole file, main and sidechain alike: one call per message.id, each usage field
    the maximum over that id's lines."""
    calls: dict[str, dict[str, int]] = {}
    for raw in path.read_text().splitlines():
        d = json.loads(raw)
        if d.get("type") != "assistant":
            continue
        acc = calls.setdefault(d["message"]["id"], {})
        for k, v in d["message"]["usage"].items():
            if isinstance(v, int):
                acc[k] = max(acc.get(k, 0), v)
    return {
        "calls": len(calls),
        "prompt": sum(
            c["input_tokens"] + c["cache_read_input_tokens"] + c["cache_creation_input_tokens"]
            for c in calls.values()
        ),
        "cached": sum(c["cache_read_input_tokens"] for c in calls.values()),
        "completion": sum(c["output_tokens"] for c in calls.values()),
    }


def test_each_inline_sidechain_is_a_child_run_linked_to_its_task(tmp_path: Path) -> None:
    path = session_with_parallel_tasks().write(tmp_path / f"{SESSION}.jsonl")
    main, a, b = claude_code.load(path)
    assert (main.run_id, main.role, len(main.turns)) == (SESSION, "main", 2)
    assert [(r.run_id, r.role, r.parent_run_id, r.parent_tool_call_id, len(r.turns)) for r in (a, b)] == [
        (f"{SESSION}/sidechain-1", "subagent", SESSION, "toolu_A", 3),
        (f"{SESSION}/sidechain-2", "subagent", SESSION, "toolu_B", 4),
    ]
    assert a.metadata["parent_match"] == b.metadata["parent_match"] == "prompt"
    assert a.metadata["subagent_type"] == "general-purpose"
    assert b.metadata["task_result"] == {"totalTokens": 5129, "totalToolUseCount": 3, "totalDurationMs": 1000}
    assert a.task == "search the parser" and a.outcome.text == "A found it"
    # Calls are grouped by message.id: the two lines of each tool-using call are one call.
    assert [t.response_id for t in b.turns] == ["msg_B_0", "msg_B_1", "msg_B_2", "msg_B_fin"]
    assert [len(t.tool_calls) for t in b.turns] == [1, 1, 1, 0]
    assert [[r.content for r in t.tool_results] for t in b.turns[:3]] == [
        ["contents 0"],
        ["contents 1"],
        ["contents 2"],
    ]
    assert [t.usage.completion for t in b.turns] == [40, 41, 42, 77]
    # The subagent's requests are its own transcript: prompt, then each answer and its result.
    assert [m.role for m in b.request(1)] == ["user", "assistant", "tool"]
    assert any("2 Task subagent(s) written inline" in n for n in main.lossy)
    assert any("linked to its Task call by prompt" in n for n in a.lossy)
    assert not any(r.diagnostics for r in (main, a, b))


def test_totals_over_all_runs_equal_an_independent_count_of_the_file(tmp_path: Path) -> None:
    path = session_with_parallel_tasks().write(tmp_path / f"{SESSION}.jsonl")
    expected = plain_totals(path)
    assert expected["calls"] == 9
    runs = claude_code.load(path)
    got = {
        "calls": sum(len(r.turns) for r in runs),
        "prompt": sum(r.total("prompt") or 0 for r in runs),
        "cached": sum(r.total("cached") or 0 for r in runs),
        "completion": sum(r.total("completion") or 0 for r in runs),
    }
    assert got == expected
    # The corpus, runs_df and `inspect --json` count the subagents too.
    corpus = load(tmp_path)
    frame = runs_df(corpus.runs)
    assert len(frame) == 3 and int(frame["turns"].sum()) == expected["calls"]
    assert int(frame["prompt_tokens"].sum()) == expected["prompt"]
    out = subprocess.run(
        [sys.executable, "-m", "workbench", "inspect", str(tmp_path), "--json"],
        capture_output=True,
        check=True,
    )
    rows = orjson.loads(out.stdout)["runs"]
    assert sum(r["calls"] for r in rows) == expected["calls"]
    assert sum(r["prompt_tokens"] for r in rows) == expected["prompt"]
    assert sorted(r["role"] for r in rows) == ["main", "subagent", "subagent"]


def test_agent_ids_link_by_the_task_result_even_when_prompts_repeat(tmp_path: Path) -> None:
    w = session_with_parallel_tasks(agent_ids=True)
    for d in w.lines:  # the same prompt for both Tasks: only agentId tells them apart
        if d["type"] == "user" and d["message"]["content"] in ("search the parser", "search the lexer"):
            d["message"]["content"] = "search"
        for block in d["message"]["content"] if isinstance(d["message"]["content"], list) else []:
            if block.get("name") == "Task":
                block["input"]["prompt"] = "search"
    path = w.write(tmp_path / f"{SESSION}.jsonl")
    _, a, b = claude_code.load(path)
    assert [(r.run_id, r.parent_tool_call_id, r.metadata["parent_match"]) for r in (a, b)] == [
        (f"{SESSION}/agent-aaaa111", "toolu_A", "agentId"),
        (f"{SESSION}/agent-bbbb222", "toolu_B", "agentId"),
    ]
    assert not any("linked to its Task call by" in n for n in a.lossy)


def test_without_a_prompt_match_the_times_decide(tmp_path: Path) -> None:
    w = Writer()
    w.user(False, "u1", None, "go")
    w.assistant(False, "m1", "u1", "msg_1", [task("toolu_1", "first job")], usage(1, 0, 10, 5))
    sidechain(w, "X", "a reworded first job", 1)  # the prompt differs from the Task input
    w.user(False, "r1", "m1.0", [result("toolu_1", "done 1")], toolUseResult={"totalTokens": 1})
    w.assistant(False, "m2", "r1", "msg_2", [task("toolu_2", "second job")], usage(1, 10, 10, 5))
    sidechain(w, "Y", "another wording", 1)
    w.user(False, "r2", "m2.0", [result("toolu_2", "done 2")])
    path = w.write(tmp_path / f"{SESSION}.jsonl")
    _, x, y = claude_code.load(path)
    assert [(r.parent_tool_call_id, r.metadata["parent_match"]) for r in (x, y)] == [
        ("toolu_1", "time"),
        ("toolu_2", "time"),
    ]


def test_an_unmatched_sidechain_still_counts_and_says_so(tmp_path: Path) -> None:
    w = Writer()
    w.user(False, "u1", None, "go")
    w.assistant(False, "m1", "u1", "msg_1", [{"type": "text", "text": "ok"}], usage(1, 0, 10, 5))
    sidechain(w, "Z", "orphan", 1)
    path = w.write(tmp_path / f"{SESSION}.jsonl")
    _, z = claude_code.load(path)
    assert (z.parent_run_id, z.parent_tool_call_id, len(z.turns)) == (SESSION, None, 2)
    assert any("was not found" in n for n in z.lossy)


def test_an_inline_copy_of_a_filed_subagent_is_not_counted_twice(tmp_path: Path) -> None:
    w = session_with_parallel_tasks(agent_ids=True)
    path = w.write(tmp_path / f"{SESSION}.jsonl")
    folder = claude_code.session_dir(path)
    folder.mkdir(parents=True)
    filed = Writer()
    sidechain(filed, "A", "search the parser", 2, "aaaa111")
    filed.write(folder / "agent-aaaa111.jsonl")
    runs = load(tmp_path).runs
    assert sorted(r.run_id for r in runs) == [SESSION, f"{SESSION}/agent-aaaa111", f"{SESSION}/agent-bbbb222"]
    assert sum(len(r.turns) for r in runs) == plain_totals(path)["calls"]


def test_child_runs_round_trip_through_the_native_format(tmp_path: Path) -> None:
    path = session_with_parallel_tasks().write(tmp_path / f"{SESSION}.jsonl")
    for i, run in enumerate(claude_code.load(path)):
        back = read_run(write_run(run, tmp_path / f"native-{i}.jsonl"))
        assert back.model_dump(exclude={"loaded_from"}) == run.model_dump(exclude={"loaded_from"})


def test_a_warmup_sidechain_counts_but_takes_no_task_call(tmp_path: Path) -> None:
    w = Writer()
    w.user(False, "u1", None, "go")
    sidechain(w, "W", "Warmup", 0)  # Claude Code 2.0.x pre-warms a subagent on its own
    w.assistant(False, "m1", "u1", "msg_1", [task("toolu_1", "real job")], usage(1, 0, 10, 5))
    sidechain(w, "X", "real job", 1)
    w.user(False, "r1", "m1.0", [result("toolu_1", "done")])
    _, warm, job = claude_code.load(w.write(tmp_path / f"{SESSION}.jsonl"))
    assert (warm.parent_tool_call_id, warm.metadata.get("warmup"), len(warm.turns)) == (None, True, 1)
    assert any("warmup sidechain" in n for n in warm.lossy)
    assert (job.parent_tool_call_id, job.metadata["parent_match"]) == ("toolu_1", "prompt")


def test_agent_files_beside_the_session_link_by_the_task_result(tmp_path: Path) -> None:
    """Claude Code 2.0.x wrote ``agent-<id>.jsonl`` beside the session file; the Task result names the agent."""
    w = session_with_parallel_tasks(agent_ids=True)
    main_lines = [d for d in w.lines if not d["isSidechain"]]
    side = [d for d in w.lines if d["isSidechain"] and d.get("agentId") == "bbbb222"]
    (tmp_path / f"{SESSION}.jsonl").write_text("".join(json.dumps(d) + "\n" for d in main_lines))
    (tmp_path / "agent-bbbb222.jsonl").write_text("".join(json.dumps(d) + "\n" for d in side))
    (sub,) = claude_code.load(tmp_path / "agent-bbbb222.jsonl")
    assert (sub.run_id, sub.role, sub.parent_run_id, sub.parent_tool_call_id) == (
        f"{SESSION}/agent-bbbb222",
        "subagent",
        SESSION,
        "toolu_B",
    )


def test_a_meta_file_beside_a_subagent_names_its_task_call(tmp_path: Path) -> None:
    folder = tmp_path / SESSION / "subagents"
    folder.mkdir(parents=True)
    sub = Writer()
    sidechain(sub, "A", "anything", 1, "cafe123")
    sub.write(folder / "agent-cafe123.jsonl")
    (folder / "agent-cafe123.meta.json").write_text(
        json.dumps({"agentType": "Explore", "toolUseId": "toolu_Z"})
    )
    (run,) = claude_code.load(folder / "agent-cafe123.jsonl")
    assert run.parent_tool_call_id == "toolu_Z"


def test_a_sidechain_before_the_first_prompt_does_not_make_the_session_a_subagent(tmp_path: Path) -> None:
    w = Writer()
    sidechain(w, "W", "Warmup", 0, "warm001")  # 2.0.x may warm a subagent before the user types
    w.user(False, "u1", None, "go")
    w.assistant(False, "m1", "u1", "msg_1", [{"type": "text", "text": "ok"}], usage(1, 0, 10, 5))
    path = w.write(tmp_path / f"{SESSION}.jsonl")
    main, warm = claude_code.load(path)
    assert (main.role, len(main.turns), main.task) == ("main", 1, "go")
    assert (warm.run_id, warm.role, warm.metadata["warmup"]) == (f"{SESSION}/agent-warm001", "subagent", True)
    assert sum(len(r.turns) for r in (main, warm)) == plain_totals(path)["calls"]


def test_a_subagent_file_stays_one_subagent_run(tmp_path: Path) -> None:
    folder = tmp_path / SESSION / "subagents"
    folder.mkdir(parents=True)
    w = Writer()
    sidechain(w, "A", "look", 2, "abc1234")
    (run,) = claude_code.load(w.write(folder / "agent-abc1234.jsonl"))
    assert (run.role, run.run_id, len(run.turns)) == ("subagent", f"{SESSION}/agent-abc1234", 3)
