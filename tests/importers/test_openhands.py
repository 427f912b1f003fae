"""OpenHands output: calls, tokens, policy and the recorded stop, against an independent json reading."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.importers import detect, openhands


def raw_runs(path: Path) -> dict[str, dict[str, int]]:
    """instance_id -> calls (unique model_response ids) and token sums over those calls (plain json)."""
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            responses = {}
            for e in d["history"]:
                tcm = e.get("tool_call_metadata")
                if tcm and "action" in e:
                    responses.setdefault(tcm["model_response"]["id"], tcm["model_response"]["usage"])
            cached = [(u.get("prompt_tokens_details") or {}).get("cached_tokens") for u in responses.values()]
            reasoning = [
                (u.get("completion_tokens_details") or {}).get("reasoning_tokens") for u in responses.values()
            ]
            out[d["instance_id"]] = {
                "calls": len(responses),
                "prompt": sum(u["prompt_tokens"] for u in responses.values()),
                "completion": sum(u["completion_tokens"] for u in responses.values()),
                "cached_in_response": sum(c for c in cached if c is not None),
                "reasoning": sum(r for r in reasoning if r is not None),
            }
    return out


def test_calls_and_tokens_match_an_independent_reading(shared: Path) -> None:
    expected_calls = {
        "ponylang__ponyc-4595": 23,
        "ponylang__ponyc-4593": 33,
        "ponylang__ponyc-4588": 49,
        "alibaba__fastjson2-2775": 20,
    }
    seen = {}
    for path in sorted((shared / "openhands").glob("*.jsonl")):
        assert detect(path) is openhands
        raw = raw_runs(path)
        for run in openhands.load(path):
            r = raw[run.run_id]
            assert len(run.turns) == r["calls"] == expected_calls[run.run_id]
            assert run.total("prompt") == r["prompt"]
            assert run.total("completion") == r["completion"]
            assert run.diagnostics == []
            seen[run.run_id] = run
    assert set(seen) == set(expected_calls)
    gpt5 = seen["alibaba__fastjson2-2775"]
    raw = raw_runs(shared / "openhands" / "fastjson2_gpt5.output.jsonl")["alibaba__fastjson2-2775"]
    assert gpt5.total("cached") == raw["cached_in_response"] == 218496
    assert gpt5.total("reasoning") == raw["reasoning"] == 12864
    assert round(gpt5.total("cost") or 0, 7) == 0.5808695
    # llama runs report no cache in the response (prompt_tokens_details: null); metrics.token_usages' 0 read is
    # OpenHands' default for that, not a report: the read is unknown on every call
    assert seen["ponylang__ponyc-4588"].total("cached") is None


def test_ponyc_4588_stopped_at_max_iterations(shared: Path) -> None:
    runs = {r.run_id: r for r in openhands.load(shared / "openhands" / "multi_swe_bench_ponyc.output.jsonl")}
    run = runs["ponylang__ponyc-4588"]
    assert run.outcome.stop_reason == "max-iterations"
    assert run.outcome.cut_by_limit
    assert (run.outcome.meter.name, run.outcome.meter.reached, run.outcome.meter.allowed) == (
        "max_iterations",
        50,
        50,
    )
    assert "Agent reached maximum iteration" in run.outcome.detail
    assert run.policy.max_turns == 50 and run.policy.rules == "openhands"
    assert run.policy.params["agent_class"] == "CodeActAgent"
    assert runs["ponylang__ponyc-4595"].outcome.stop_reason == "done"
    assert not runs["ponylang__ponyc-4595"].outcome.cut_by_limit
    assert all(r.outcome.label is None for r in runs.values())
    assert all(any("no resolved/unresolved label" in n for n in r.lossy) for r in runs.values())


def test_requests_and_tool_results(shared: Path) -> None:
    runs = {r.run_id: r for r in openhands.load(shared / "openhands" / "multi_swe_bench_ponyc.output.jsonl")}
    run = runs["ponylang__ponyc-4588"]
    assert [m.role for m in run.request(0)] == ["system", "user"]
    req = run.request(3)
    assert req[:2] == run.request(0)
    assert [m.role for m in req[2:]] == ["assistant", "tool"] * 3
    for t in run.turns:
        assert [r.call_id for r in t.tool_results] == [c.id for c in t.tool_calls][: len(t.tool_results)]
    # the edit observations mark mutations (recorded: no rule); other turns' fact is read from their calls
    assert any(t.mutated for t in run.turns)
    for t in run.turns:
        if t.mutated and t.mutated_rule is None:
            assert any(c.name == "str_replace_editor" for c in t.tool_calls)
        elif t.tool_calls:
            assert t.mutated_rule
    assert [e.kind for e in run.events] == ["error-observation"]


def test_label_when_test_result_says_resolved(tmp_path: Path) -> None:
    line = {
        "instance_id": "x-1",
        "metadata": {"agent_class": "CodeActAgent", "max_iterations": 30, "llm_config": {"model": "m"}},
        "history": [],
        "test_result": {"report": {"resolved": True}},
        "error": None,
    }
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (run,) = openhands.load(path)
    assert run.outcome.label == "resolved"
    assert run.policy.max_turns == 30


# -- requests carry observations as CodeActAgent sent them ----------------------------------------------------------

# The documented rule, written out here independently of the importer (OpenHands V0:
# openhands/events/serialization/event.py truncate_content; openhands/events/observation/commands.py
# CmdOutputObservation.to_agent_observation).
NOTICE = "\n[... Observation truncated due to length ...]\n"


def sent_command_output(event: dict, max_chars: int) -> str:
    meta = event["extras"]["metadata"]
    text = meta["prefix"] + event["content"] + meta["suffix"]
    if meta["working_dir"]:
        text += "\n[Current working directory: " + meta["working_dir"] + "]"
    if meta["py_interpreter_path"]:
        text += "\n[Python interpreter: " + meta["py_interpreter_path"] + "]"
    if meta["exit_code"] != -1:
        text += "\n[Command finished with exit code " + str(meta["exit_code"]) + "]"
    if len(text) <= max_chars:
        return text
    return text[: max_chars // 2] + NOTICE + text[len(text) - max_chars // 2 :]


def test_the_915k_observation_is_sent_cut_to_max_message_chars(shared: Path) -> None:
    path = shared / "openhands" / "fastjson2_gpt5.output.jsonl"
    raw = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    limit = raw["metadata"]["llm_config"]["max_message_chars"]
    big = max((e for e in raw["history"] if "observation" in e), key=lambda e: len(e["content"]))
    call_id = big["tool_call_metadata"]["tool_call_id"]
    assert (limit, big["observation"], len(big["content"])) == (30_000, "run", 915_640)

    (run,) = openhands.load(path)
    # the tool's own output (915,640 characters, 916,381 bytes) is kept whole on the turn that called it
    (result,) = [r for t in run.turns for r in t.tool_results if r.call_id == call_id]
    assert result.content == big["content"] and result.size == len(big["content"].encode()) == 916_381
    # every later request sends it cut, with OpenHands' notice between the kept halves
    later = [m for t in run.turns for m in run.request(t) if m.role == "tool" and m.tool_call_id == call_id]
    assert len(later) == 20 - 1 - next(i for i, t in enumerate(run.turns) if result in t.tool_results)
    expected = sent_command_output(big, limit)
    assert all(m.content == expected for m in later)
    assert len(expected) == 30_000 + len(NOTICE) == 30_047
    # the command timed out (exit code -1, no working directory): the tail is its timeout suffix, no more
    assert expected.count(NOTICE) == 1 and expected.endswith(
        "[The command timed out after 300 seconds. You may "
        "wait longer to see additional output by sending empty command '', send other commands to interact with the "
        "current process, or send keys to interrupt/kill the command.]"
    )
    assert later[0].name == "execute_bash"
    note = next(n for n in run.lossy if "max_message_chars=30,000" in n)
    assert "first and last 15,000 characters" in note and note.endswith("2 observation(s) cut")


def test_every_command_observation_is_sent_with_its_metadata_lines(shared: Path) -> None:
    for path in sorted((shared / "openhands").glob("*.jsonl")):
        lines = {json.loads(x)["instance_id"]: json.loads(x) for x in path.read_text().splitlines()}
        for run in openhands.load(path):
            raw = lines[run.run_id]
            limit = raw["metadata"]["llm_config"]["max_message_chars"]
            tool_msgs = {m.tool_call_id: m for m in run.messages if m.role == "tool"}
            for e in raw["history"]:
                if e.get("observation") == "run":
                    sent = tool_msgs[e["tool_call_metadata"]["tool_call_id"]].content
                    assert sent == sent_command_output(e, limit), run.run_id
                elif e.get("observation") == "read":  # file reads are sent whole
                    assert tool_msgs[e["tool_call_metadata"]["tool_call_id"]].content == e["content"]


def test_an_error_without_a_call_is_sent_with_its_suffix(shared: Path) -> None:
    runs = {r.run_id: r for r in openhands.load(shared / "openhands" / "multi_swe_bench_ponyc.output.jsonl")}
    (msg,) = [m for m in runs["ponylang__ponyc-4588"].messages if m.kind == "observation:error"]
    assert msg.role == "user"
    assert msg.content == (
        "Parameter 'command' is expected to be one of ['view', 'create', 'str_replace', 'insert', "
        "'undo_edit'].\n[Error occurred in processing last action]"
    )


def test_v035_runs_record_their_tool_schemas(shared: Path) -> None:
    for run in openhands.load(shared / "openhands" / "multi_swe_bench_ponyc.output.jsonl"):
        assert [s["function"]["name"] for s in run.tool_schemas or []] == [
            "execute_bash",
            "think",
            "finish",
            "str_replace_editor",
        ]
        assert run.request(0)[0].role == "system"
        assert not any("tool schemas are not recorded" in n for n in run.lossy)
    (gpt5,) = openhands.load(shared / "openhands" / "fastjson2_gpt5.output.jsonl")
    assert gpt5.tool_schemas is None
    assert any("tool schemas are not recorded" in n for n in gpt5.lossy)
    assert any("system prompt is not in the history" in n for n in gpt5.lossy)


def one_run(tmp_path: Path, observations: list[dict], llm: dict) -> openhands.Run:  # type: ignore[name-defined]
    """A one-call run whose call is answered by ``observations`` (each: observation, content, extras)."""
    resp = {
        "id": "r1",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": f"t{i}", "function": {"name": "f", "arguments": "{}"}}
                        for i in range(len(observations))
                    ],
                }
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1},
    }
    history: list[dict] = [{"source": "user", "action": "message", "args": {"content": "task"}}]
    for i, _ in enumerate(observations):
        history.append(
            {
                "source": "agent",
                "action": "run",
                "tool_call_metadata": {"tool_call_id": f"t{i}", "model_response": resp},
            }
        )
    for i, o in enumerate(observations):
        history.append(
            {"source": "agent", "tool_call_metadata": {"tool_call_id": f"t{i}", "function_name": "f"}, **o}
        )
    line = {"instance_id": "x", "metadata": {"llm_config": {"model": "m", **llm}}, "history": history}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (run,) = openhands.load(path)
    assert run.diagnostics == []
    return run


def test_reads_are_sent_whole_and_other_observations_cut(tmp_path: Path) -> None:
    text = "abcdefghij" * 5
    obs = [
        {"observation": "read", "content": text, "extras": {"impl_source": "oh_aci"}},
        {"observation": "edit", "content": text, "extras": {"impl_source": "oh_aci"}},
        {"observation": "think", "content": text, "extras": {}},
        {"observation": "run", "content": text, "extras": {"metadata": {"exit_code": -1}}},
    ]
    run = one_run(tmp_path, obs, {"max_message_chars": 10})
    sent = [m.content for m in run.messages if m.role == "tool"]
    assert sent == [text] + ["abcde" + NOTICE + "fghij"] * 3
    assert [r.content for r in run.turns[0].tool_results] == [text] * 4  # the tools' own output, kept whole
    assert any(n.endswith("3 observation(s) cut") for n in run.lossy)


def test_without_max_message_chars_nothing_is_cut_and_it_says_so(tmp_path: Path) -> None:
    obs = [{"observation": "browse", "content": "x" * 100, "extras": {}}]
    run = one_run(tmp_path, obs, {})
    assert [m.content for m in run.messages if m.role == "tool"] == ["x" * 100]
    assert any("max_message_chars is not recorded" in n for n in run.lossy)
    assert any("observation type(s) browse" in n for n in run.lossy)


def test_a_bad_max_message_chars_is_a_diagnostic(tmp_path: Path) -> None:
    line = {"instance_id": "x", "metadata": {"llm_config": {"max_message_chars": "lots"}}, "history": []}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (run,) = openhands.load(path)
    assert [(d.line, d.field) for d in run.diagnostics] == [(1, "metadata.llm_config.max_message_chars")]
