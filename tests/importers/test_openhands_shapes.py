"""OpenHands beyond V0 ``output.jsonl``: V1 output lines and conversation folders, completion logs, trajectory
arrays, resolver output, 2024 pair and flat histories, ``metadata.llm`` and labels with their source.

Fixtures are written by ``openhands_shapes`` in each documented shape; expected figures are read from those
fixtures with plain ``json`` (response ids and their metrics entries), not from the importer.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.importers import openhands_shapes as shapes
from workbench.govern import Policy
from workbench.importers import (
    detect,
    openhands,
    openhands_completions,
    openhands_conversation,
    openhands_trajectory,
)
from workbench.replay import replay
from workbench.scale import load
from workbench.trace import Run, read_run, runs_df, write_run


def write_jsonl(path: Path, *lines: dict) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return path


def plain_v1(history: list[dict], metrics: dict | None) -> dict:
    """Calls (distinct llm_response_id of agent actions and messages) and token sums over the calls that have a
    token_usages entry, from the plain dicts."""
    rids: list[str] = []
    for e in history:
        agent = e.get("kind") in ("ActionEvent", "MessageEvent") and e.get("source") == "agent"
        if agent and e["llm_response_id"] not in rids:
            rids.append(e["llm_response_id"])
    usages = {u["response_id"]: u for u in (metrics or {}).get("token_usages", [])}
    known = [usages[r] for r in rids if r in usages]
    return {
        "calls": len(rids),
        "prompt": sum(u["prompt_tokens"] for u in known),
        "completion": sum(u["completion_tokens"] for u in known),
        "cached": sum(u["cache_read_tokens"] for u in known),
        "cache_write": sum(u["cache_write_tokens"] for u in known),
        "unknown": len(rids) - len(known),
    }


def totals(run: Run) -> dict:
    known = [t for t in run.turns if t.usage.known]
    return {
        "calls": len(run.turns),
        "prompt": sum(t.usage.prompt or 0 for t in known),
        "completion": sum(t.usage.completion or 0 for t in known),
        "cached": sum(t.usage.cached or 0 for t in known),
        "cache_write": sum(t.usage.cache_write or 0 for t in known),
        "unknown": len(run.turns) - len(known),
    }


# -- V1 output.jsonl -----------------------------------------------------------------------------------------


def test_v1_output_calls_tokens_and_label_match_the_plain_reading(tmp_path: Path) -> None:
    line = shapes.v1_output_line()
    path = write_jsonl(tmp_path / "output.jsonl", line, shapes.v1_output_line("repo__proj-2", resolved=False))
    assert detect(path) is openhands
    run, second = openhands.load(path)
    expected = plain_v1(line["history"], line["metrics"])
    assert expected == {
        "calls": 4,
        "prompt": 3800,
        "completion": 92,
        "cached": 2300,
        "cache_write": 1200,
        "unknown": 1,
    }
    assert totals(run) == expected
    assert [t.response_id for t in run.turns] == ["r1", "r2", "r3", "r4"]
    # The two actions of r1 are one call with two tool calls, each with its result.
    assert [[c.id for c in t.tool_calls] for t in run.turns] == [["c1", "c2"], ["c3"], [], ["c4"]]
    assert [[r.content for r in t.tool_results] for t in run.turns[:2]] == [
        ["x.py", "print(1)"],
        ["1 failed"],
    ]
    assert run.turns[1].tool_results[0].is_error is True
    assert run.turns[0].usage.reasoning == 20 and run.turns[0].text == "Look around"
    assert run.turns[2].text == "I will fix it now." and not run.turns[2].usage.known
    # Latency by response id puts the call's start before its event.
    assert (run.turns[0].ended_at - run.turns[0].started_at).total_seconds() == 2.5
    assert run.model == "litellm_proxy/claude-sonnet-4" and run.context_length == 200000
    assert run.policy.max_turns == 100 and run.output_cap == 64000
    assert "api_key" not in json.dumps(run.policy.params)
    assert (run.outcome.stop_reason, run.outcome.text) == ("done", "Fixed x.py")
    assert (run.outcome.label, run.outcome.label_source) == (
        "resolved",
        "openhands test_result.report.resolved",
    )
    assert second.outcome.label == "unresolved"
    assert run.task == "Fix the bug in x.py" and run.tool_schemas[0]["name"] == "terminal"
    assert [m.role for m in run.request(1)] == ["system", "user", "assistant", "tool", "tool"]
    assert any("1 of 4 call(s) have no token usage" in n for n in run.lossy)
    assert any("metrics.costs has 2 entries for 4 calls" in n for n in run.lossy)
    assert run.metadata["skipped"] == {"TokenEvent": 1}
    assert not run.diagnostics


def test_v1_output_without_metrics_still_counts_its_calls(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "output.jsonl", shapes.v1_output_line(metrics=False))
    (run,) = openhands.load(path)
    assert len(run.turns) == 4 and not any(t.usage.known for t in run.turns)
    assert any("no metrics recorded: 4 call(s) counted" in n for n in run.lossy)
    result = replay(run, Policy())
    assert result.verdict != "empty_response"


def test_v1_max_iterations_error_is_a_max_iterations_stop(tmp_path: Path) -> None:
    line = shapes.v1_output_line()
    line["history"] = [e for e in line["history"] if e["kind"] != "ConversationStateUpdateEvent"][:-2]
    line["history"].append(
        {
            "kind": "ConversationErrorEvent",
            "id": "err",
            "timestamp": "2025-10-01T12:01:00",
            "source": "environment",
            "code": "MaxIterationsReached",
            "detail": "Agent reached maximum iterations limit (100).",
        }
    )
    (run,) = openhands.load(write_jsonl(tmp_path / "output.jsonl", line))
    assert run.outcome.stop_reason == "max-iterations"
    assert (run.outcome.meter.allowed, run.outcome.meter.reached) == (100, 3)


# -- conversation folders -------------------------------------------------------------------------------------


def test_a_conversation_folder_is_one_run(tmp_path: Path) -> None:
    folder = shapes.write_conversation(tmp_path / "conversations" / "3f2c9a5e")
    assert detect(folder) is openhands_conversation
    corpus = load(tmp_path)
    assert corpus.files == (folder,) and not corpus.skipped and not corpus.problems
    (run,) = corpus.runs
    assert run.run_id == "3f2c9a5e-0000-4000-8000-000000000001"
    assert totals(run) == plain_v1(shapes.v1_events(), shapes.v1_metrics())
    assert run.model == "anthropic/claude-sonnet-4" and run.policy.max_turns == 500
    assert run.outcome.stop_reason == "done" and run.outcome.label is None
    assert len(runs_df(corpus.runs)) == 1


def test_completion_logs_in_a_conversation_join_by_response_id(tmp_path: Path) -> None:
    folder = shapes.write_conversation(tmp_path / "conv")
    logs = folder / "completions"
    logs.mkdir()
    (logs / "claude-sonnet-4-1759320001.500-ab12.json").write_text(
        json.dumps(shapes.completion_log("r3", 1400, 9, 0.0042))
    )
    (logs / "claude-sonnet-4-1759320001.600-cd34.json").write_text(
        json.dumps(shapes.completion_log("r1", 1000, 50, 0.0031))
    )
    (logs / "claude-sonnet-4-1759320009.000-ef56-error.json").write_text(
        json.dumps({"context_window": 1, "messages": [], "error": {"type": "Timeout"}, "cost": 0.0})
    )
    (run,) = openhands_conversation.load(folder)
    r1, _, r3, _ = run.turns
    # r3 had no metrics entry: its usage now comes from its log; r1 keeps the metrics' figures, gains the cost.
    assert (r3.usage.prompt, r3.usage.completion, r3.usage.cached, r3.usage.cost) == (1400, 9, 700, 0.0042)
    assert (r1.usage.prompt, r1.usage.cache_write, r1.usage.cost) == (1000, 900, 0.0031)
    assert (r3.ended_at - r3.started_at).total_seconds() == 4.25
    assert not any("have no token usage" in n for n in run.lossy)
    assert not run.diagnostics


def test_a_bad_event_file_is_reported_with_its_file_and_the_rest_loads(tmp_path: Path) -> None:
    folder = shapes.write_conversation(tmp_path / "conv")
    bad = sorted((folder / "events").iterdir())[7]  # the r2 action
    bad.write_text('{"kind": "ActionEvent", "id": ')
    (run,) = openhands_conversation.load(folder)
    assert [(d.file, d.line) for d in run.diagnostics][:1] == [(str(bad), 1)]
    assert [t.response_id for t in run.turns] == ["r1", "r3", "r4"]


# -- completion logs beside output.jsonl -----------------------------------------------------------------------


def test_v0_completion_logs_beside_the_output_join_and_are_not_runs_themselves(tmp_path: Path) -> None:
    from tests.samples.lines import openhands_lines

    out = tmp_path / "output.jsonl"
    out.write_bytes(openhands_lines()[0])  # instance i1, responses r1 and r2
    logs = tmp_path / "llm_completions" / "i1"
    logs.mkdir(parents=True)
    (logs / "m-1738397940.1.json").write_text(json.dumps(shapes.completion_log("r1", 100, 5, 0.25, v1=False)))
    (run,) = openhands.load(out)
    assert [t.usage.cost for t in run.turns] == [0.25, None]
    assert run.turns[0].usage.prompt == 100  # the response's own usage stays
    assert any("joined to the completion logs" in n for n in run.lossy)
    corpus = load(tmp_path)
    assert [r.run_id for r in corpus.runs] == ["i1"] and not corpus.skipped
    assert openhands_completions.load(logs / "m-1738397940.1.json") == []


def test_a_completion_log_on_its_own_is_one_call(tmp_path: Path) -> None:
    logs = tmp_path / "llm_completions" / "x"
    logs.mkdir(parents=True)
    path = logs / "m-1.json"
    path.write_text(json.dumps(shapes.completion_log("r9", 300, 7, 0.5)))
    assert detect(path) is openhands_completions
    (run,) = openhands_completions.load(path)
    (t,) = run.turns
    assert (t.usage.prompt, t.usage.completion, t.usage.cached, t.usage.cost, t.response_id) == (
        300,
        7,
        150,
        0.5,
        "r9",
    )


# -- trajectory arrays ---------------------------------------------------------------------------------------


def test_a_v0_trajectory_array_reads_like_a_history(tmp_path: Path) -> None:
    path = tmp_path / "session-1.json"
    path.write_text(json.dumps(shapes.v0_trajectory(), indent=4))
    assert detect(path) is openhands_trajectory
    (run,) = openhands_trajectory.load(path)
    assert run.run_id == "session-1"
    assert [(t.response_id, t.usage.prompt) for t in run.turns] == [("chatcmpl-1", 900), ("chatcmpl-2", 1000)]
    assert run.turns[0].tool_results[0].content == "a.py"
    assert run.outcome.stop_reason == "done" and run.task == "list files"
    assert not any("label" in n for n in run.lossy)


def test_trajectory_diagnostics_name_the_line_of_their_event(tmp_path: Path) -> None:
    events = shapes.v0_trajectory()
    events[2]["timestamp"] = "not-a-time"
    text = json.dumps(events, indent=4)
    path = tmp_path / "t.json"
    path.write_text(text)
    (run,) = openhands_trajectory.load(path)
    # The third element opens on the line of the third top-level "{" (indent 4).
    starts = [i + 1 for i, ln in enumerate(text.splitlines()) if ln == "    {"]
    assert [(d.line, d.field) for d in run.diagnostics] == [(starts[2], "[2].timestamp")]


def test_a_v1_trajectory_array_reads_its_events(tmp_path: Path) -> None:
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(shapes.v1_events()))
    assert detect(path) is openhands_trajectory
    (run,) = openhands_trajectory.load(path)
    assert len(run.turns) == 4 and any("no metrics recorded" in n for n in run.lossy)


def test_a_truncated_trajectory_keeps_the_events_before_the_cut(tmp_path: Path) -> None:
    text = json.dumps(shapes.v0_trajectory(), indent=2)
    path = tmp_path / "t.json"
    path.write_text(text[: text.index('"id": 3') - 10])
    (run,) = openhands_trajectory.load(path)
    assert len(run.turns) == 1
    assert [(d.line, d.message) for d in run.diagnostics] == [
        (len(path.read_text().splitlines()), "truncated document (the array is not closed)")
    ]


# -- 2024 shapes and the resolver ----------------------------------------------------------------------------


def test_pair_histories_count_one_call_per_agent_action(tmp_path: Path) -> None:
    line = shapes.pair_output_line()
    (run,) = openhands.load(write_jsonl(tmp_path / "output.jsonl", line))
    agent_actions = [a for a, _ in line["history"] if a.get("source") == "agent"]
    assert len(run.turns) == len(agent_actions) == 3
    assert not any(t.usage.known for t in run.turns)
    assert [t.usage.cost for t in run.turns] == line["metrics"]["costs"]
    assert [[c.name for c in t.tool_calls] for t in run.turns] == [["run"], ["run"], []]
    assert json.loads(run.turns[0].tool_calls[0].arguments) == {"command": "ls"}
    assert [[(r.content, r.is_error) for r in t.tool_results] for t in run.turns[:2]] == [
        [("a.py", False)],
        [("1 failed", True)],
    ]
    assert run.outcome.stop_reason == "done" and run.turns[2].text == "Done"
    assert (run.outcome.label, run.outcome.label_source) == ("unresolved", "openhands test_result.resolved")
    assert run.metadata["history_shape"] == "[action, observation] pairs"
    assert any(
        "each of the 3 agent action(s) counted as one call, usage unknown for 3" in n for n in run.lossy
    )


def test_resolver_output_is_keyed_by_its_issue(tmp_path: Path) -> None:
    line = shapes.resolver_line()
    path = write_jsonl(tmp_path / "output.jsonl", line)
    assert detect(path) is openhands
    (run,) = openhands.load(path)
    assert run.run_id == "octo/demo#5" and run.task == "Fix issue 5"
    assert len(run.turns) == 3 and [t.usage.cost for t in run.turns] == [0.01, 0.01, 0.01]
    assert [c.name for t in run.turns for c in t.tool_calls] == ["run", "run_ipython"]
    assert run.turns[1].tool_results[0].content == "MIT"
    assert run.outcome.label == "resolved" and "resolver" in run.outcome.label_source
    assert run.metadata["issue"]["number"] == 5 and run.metadata["history_shape"] == "flat events"


def test_metadata_llm_is_read_like_llm_config(tmp_path: Path) -> None:
    line = shapes.pair_output_line()
    line["metadata"]["llm"] = line["metadata"].pop("llm_config") | {"max_input_tokens": 128000}
    (run,) = openhands.load(write_jsonl(tmp_path / "output.jsonl", line))
    assert (run.model, run.context_length) == ("gpt-4o-2024-05-13", 128000)


@pytest.mark.parametrize(
    ("test_result", "expected"),
    [
        ({"resolved": True}, ("resolved", "openhands test_result.resolved")),
        ({"report": {"resolved": False}}, ("unresolved", "openhands test_result.report.resolved")),
        (
            {"report": {"django__django-1": {"resolved": True}}},
            ("resolved", "openhands test_result.report.django__django-1.resolved"),
        ),
        ({"result": {"resolved": True}}, ("resolved", "openhands test_result.result.resolved")),
        ({"score": True, "model_answer": "4"}, ("resolved", "openhands test_result.score")),
        (
            {"eval_result": {"passed": 0.75, "num_tests": 4}},
            ("unresolved", "openhands test_result.eval_result.passed"),
        ),
        ({"eval_result": {"passed": 1.0}}, ("resolved", "openhands test_result.eval_result.passed")),
        ({"git_patch": "x"}, (None, None)),
    ],
)
def test_labels_name_their_source(test_result: dict, expected: tuple, tmp_path: Path) -> None:
    line = shapes.pair_output_line() | {"test_result": test_result}
    (run,) = openhands.load(write_jsonl(tmp_path / "output.jsonl", line))
    assert (run.outcome.label, run.outcome.label_source) == expected
    passed = test_result.get("eval_result", {}).get("passed")
    assert run.outcome.score == passed


def test_every_new_shape_round_trips(tmp_path: Path) -> None:
    folder = shapes.write_conversation(tmp_path / "conv")
    traj = tmp_path / "t.json"
    traj.write_text(json.dumps(shapes.v0_trajectory()))
    out = write_jsonl(
        tmp_path / "output.jsonl", shapes.v1_output_line(), shapes.pair_output_line(), shapes.resolver_line()
    )
    runs = [*openhands_conversation.load(folder), *openhands_trajectory.load(traj), *openhands.load(out)]
    for i, run in enumerate(runs):
        back = read_run(write_run(run, tmp_path / f"n{i}.jsonl"))
        assert back.model_dump(exclude={"loaded_from"}) == run.model_dump(exclude={"loaded_from"})


def test_actions_without_response_ids_group_by_thought(tmp_path: Path) -> None:
    events = shapes.v1_events()
    for e in events:  # an SDK from before llm_response_id
        e.pop("llm_response_id", None)
    events[2]["thinking_blocks"] = [{"type": "thinking", "thinking": "plan", "signature": "s"}]
    del events[2]["reasoning_content"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(events))
    (run,) = openhands_trajectory.load(path)
    # c1 has a thought and c2 none (its parallel sibling): one call; r2, the message and the finish: three more.
    assert [[c.id for c in t.tool_calls] for t in run.turns] == [["c1", "c2"], ["c3"], [], ["c4"]]
    assert run.messages[2].reasoning == "plan"
    assert any("carry no llm_response_id" in n for n in run.lossy)


def test_a_branched_conversation_keeps_every_call_and_says_so(tmp_path: Path) -> None:
    events = shapes.v1_events()
    for prev, e in itertools.pairwise(events):
        e["parent_id"] = prev["id"]
    events[9]["parent_id"] = events[1]["id"]  # the agent message answers the task again: a second branch
    (run,) = openhands_conversation.load(shapes.write_conversation(tmp_path / "conv", events))
    assert len(run.turns) == 4
    assert any("the conversation branched" in n for n in run.lossy)


def test_completions_inside_a_2024_line_give_each_action_its_usage(tmp_path: Path) -> None:
    """Sept-Oct 2024 evaluation lines kept ``llm_completions`` inline: one record per call, in call order."""
    line = shapes.pair_output_line()
    line["llm_completions"] = [
        shapes.completion_log(f"chatcmpl-{i}", 100 * (i + 1), 10 + i, 0.001 * (i + 1), v1=False)
        for i in range(3)
    ]
    (run,) = openhands.load(write_jsonl(tmp_path / "output.jsonl", line))
    assert [(t.usage.prompt, t.usage.completion, t.usage.cached) for t in run.turns] == [
        (100, 10, 50),
        (200, 11, 100),
        (300, 12, 150),
    ]
    assert [t.usage.cost for t in run.turns] == [0.001, 0.002, 0.003]
    assert any("joined to the line's llm_completions by order" in n for n in run.lossy)
    line["llm_completions"] = line["llm_completions"][:2]
    (run,) = openhands.load(write_jsonl(tmp_path / "output.jsonl", line))
    assert not any(t.usage.known for t in run.turns)
    assert any("llm_completions has 2 records for 3" in n for n in run.lossy)


def _with_a_text_only_response(line: dict[str, Any]) -> None:
    """A message action with no tool_call_metadata between calls r1 and r2, and a metrics.token_usages entry (rX)
    that no action claims."""
    line["history"].insert(
        3,
        {
            "id": 9,
            "timestamp": "2025-01-01T00:00:02.500",
            "source": "agent",
            "message": "Should I go on?",
            "action": "message",
            "args": {"content": "Should I go on?", "wait_for_response": True},
        },
    )
    line["metrics"] = {
        "token_usages": [
            {"response_id": "r1", "prompt_tokens": 100, "completion_tokens": 5},
            {"response_id": "rX", "prompt_tokens": 150, "completion_tokens": 7, "cache_read_tokens": 90},
            {"response_id": "r2", "prompt_tokens": 200, "completion_tokens": 5},
        ]
    }


def test_a_text_only_response_is_a_call_with_its_unclaimed_usage(tmp_path: Path) -> None:
    """V0 function calling: a response without a tool call is a message action with no tool_call_metadata."""
    from tests.samples.lines import openhands_lines

    line = json.loads(openhands_lines()[0])  # calls r1, r2 (each with tool_call_metadata)
    _with_a_text_only_response(line)
    (run,) = openhands.load(write_jsonl(tmp_path / "output.jsonl", line))
    assert [(t.response_id, t.usage.prompt, t.usage.cached, t.text) for t in run.turns] == [
        ("r1", 100, None, None),
        ("rX", 150, 90, "Should I go on?"),
        ("r2", 200, None, None),
    ]
    assert any("1 text-only response(s)" in n for n in run.lossy)


def test_a_text_only_response_keeps_its_usage_when_naive_times_are_shifted(tmp_path: Path) -> None:
    """Naive event times two hours ahead of ``model_response.created`` (UTC) are shifted to UTC, and the shift
    must not drop the usage a text-only response took from ``metrics.token_usages`` (it once replaced the turns
    by copies, and the usage was written to the originals)."""
    from tests.samples.lines import openhands_lines

    line = json.loads(openhands_lines()[0])
    utc_midnight = 1735689600  # 2025-01-01T00:00:00Z; the events' naive clock reads two hours later
    for e in line["history"]:
        response = (e.get("tool_call_metadata") or {}).get("model_response")
        if isinstance(response, dict):
            response["created"] = utc_midnight - 2 * 3600
    _with_a_text_only_response(line)
    (run,) = openhands.load(write_jsonl(tmp_path / "output.jsonl", line))
    assert any("run +2 h from model_response.created" in n for n in run.lossy)
    assert [(t.response_id, t.usage.prompt, t.usage.cached) for t in run.turns] == [
        ("r1", 100, None),
        ("rX", 150, 90),
        ("r2", 200, None),
    ]
    ended = [t.ended_at for t in run.turns if t.response_id == "r1"]
    assert ended and ended[0] is not None and ended[0].hour == 22  # 00:00:01 local is 22:00:01 UTC


def test_recorded_cost_is_accumulated_cost_unless_openhands_could_not_price(
    shared: Path, tmp_path: Path
) -> None:
    expected = {}
    for f in sorted((shared / "openhands").glob("*.jsonl")):
        for raw in f.read_text().splitlines():
            d = json.loads(raw)
            cost = d["metrics"]["accumulated_cost"]
            expected[d["instance_id"]] = cost if cost else None  # 0.0 over real calls: LiteLLM had no price
        for run in openhands.load(f):
            assert run.recorded_cost_usd == expected[run.run_id]
            assert (run.recorded_cost_usd is None) == any("accumulated_cost is 0.0" in n for n in run.lossy)
    assert sorted(expected.values(), key=str) == [0.5808695, None, None, None]
    (v1,) = openhands.load(write_jsonl(tmp_path / "o.jsonl", shapes.v1_output_line()))
    assert v1.recorded_cost_usd == 0.0123


def test_without_a_test_result_label_the_harness_report_beside_the_output_is_read(tmp_path: Path) -> None:
    """The V1 harness grades in a second step and writes a SWE-bench report beside ``output.jsonl``."""
    lines = [shapes.v1_output_line("a__b-1", resolved=None), shapes.v1_output_line("a__b-2", resolved=None)]
    path = write_jsonl(tmp_path / "output.jsonl", *lines)
    report = {"resolved_ids": ["a__b-1"], "unresolved_ids": ["a__b-2"], "submitted_instances": 2}
    (tmp_path / "output.report.json").write_text(json.dumps(report))
    one, two = openhands.load(path)
    assert (one.outcome.label, two.outcome.label) == ("resolved", "unresolved")
    assert "output.report.json" in one.outcome.label_source
    assert not any("no resolved/unresolved label" in n for n in one.lossy)


def test_a_fifo_among_the_events_is_reported_not_waited_on(tmp_path: Path) -> None:
    import os

    folder = shapes.write_conversation(tmp_path / "conv")
    fifo = folder / "events" / "event-99999-fifo.json"
    os.mkfifo(fifo)
    (run,) = openhands_conversation.load(folder)
    assert len(run.turns) == 4
    assert [(d.file, d.field) for d in run.diagnostics] == [(str(fifo), "file")]
    assert "FIFO" in run.diagnostics[0].message


def test_the_cli_reads_every_shape_of_a_folder(tmp_path: Path) -> None:
    import subprocess
    import sys

    shapes.write_conversation(tmp_path / "conversations" / "c1")
    (tmp_path / "out").mkdir()
    write_jsonl(tmp_path / "out" / "output.jsonl", shapes.v1_output_line(), shapes.resolver_line())
    (tmp_path / "traj.json").write_text(json.dumps(shapes.v0_trajectory(), indent=4))
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "inspect", str(tmp_path), "--json"],
        capture_output=True,
        check=True,
    )
    doc = json.loads(done.stdout)
    assert sorted((r["run_id"], r["calls"]) for r in doc["runs"]) == [
        ("3f2c9a5e-0000-4000-8000-000000000001", 4),
        ("octo/demo#5", 3),
        ("repo__proj-1", 4),
        ("traj", 2),
    ]
    assert doc["skipped"] == [] and doc["problems"] == []
