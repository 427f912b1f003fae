"""SWE-agent .traj: steps, actions and observations; run totals only (per-call usage unknown, said so)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.govern import Policy
from workbench.importers import detect, swe_agent
from workbench.replay import replay
from workbench.trace import TraceError, read_run, write_run


def v0_traj() -> dict:
    """The 0.x shape: environment, trajectory (action/observation/response/state/thought/execution_time),
    history, info with APIStats (total_cost, instance_cost, tokens_sent, tokens_received, api_calls)."""
    history = [
        {"role": "system", "content": "SETTING: you are an autonomous programmer", "agent": "primary"},
        {"role": "user", "content": "demo", "agent": "primary", "is_demo": True},
        {
            "role": "user",
            "content": "We're currently solving the following issue: fix the bug",
            "agent": "primary",
        },
        {"role": "assistant", "content": "DISCUSSION\nfind it\n```\nfind_file x.py\n```", "agent": "primary"},
        {"role": "user", "content": "Found 1 matches", "agent": "primary"},
        {"role": "assistant", "content": "DISCUSSION\nsubmit\n```\nsubmit\n```", "agent": "primary"},
    ]
    return {
        "environment": "swe_main",
        "trajectory": [
            {
                "action": "find_file x.py\n",
                "observation": "Found 1 matches",
                "response": "DISCUSSION\nfind it\n```\nfind_file x.py\n```",
                "state": "{}",
                "thought": "DISCUSSION\nfind it\n",
                "execution_time": 0.25,
            },
            {
                "action": "submit\n",
                "observation": "diff --git a/x.py",
                "response": "DISCUSSION\nsubmit\n```\nsubmit\n```",
                "state": "{}",
                "thought": "DISCUSSION\nsubmit\n",
                "execution_time": 1.5,
            },
        ],
        "history": history,
        "info": {
            "exit_status": "submitted",
            "submission": "diff --git a/x.py",
            "model_stats": {
                "total_cost": 12.5,
                "instance_cost": 0.42,
                "tokens_sent": 12345,
                "tokens_received": 678,
                "api_calls": 3,
            },
        },
    }


def v1_step(i: int, action: str, obs: str, query: list[dict]) -> dict:
    return {
        "action": action,
        "observation": obs,
        "response": f"thinking {i}",
        "thought": f"thinking {i}",
        "execution_time": 0.5,
        "state": {"open_file": "n/a", "working_dir": "/testbed"},
        "query": query,
        "extra_info": {},
    }


def v1_traj() -> dict:
    """The 1.x shape: steps carry the ``query`` they sent; InstanceStats has no total_cost."""
    sys_msg = {
        "role": "system",
        "content": "You are a helpful assistant",
        "agent": "main",
        "message_type": "system_prompt",
    }
    user = {
        "role": "user",
        "content": "<pr_description>fix</pr_description>",
        "agent": "main",
        "message_type": "observation",
    }
    a1 = {
        "role": "assistant",
        "content": "thinking 0",
        "agent": "main",
        "message_type": "action",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "ls"}'},
            }
        ],
    }
    t1 = {
        "role": "tool",
        "content": "a.py",
        "agent": "main",
        "message_type": "observation",
        "tool_call_ids": ["call_1"],
    }
    q0 = [sys_msg, user]
    q1 = [sys_msg, user, a1, t1]
    return {
        "trajectory": [v1_step(0, "ls", "a.py", q0), v1_step(1, "submit", "diff", q1)],
        "history": [
            *q1,
            {"role": "assistant", "content": "thinking 1", "agent": "main", "message_type": "action"},
        ],
        "info": {
            "swe_agent_version": "1.1.0",
            "exit_status": "submitted (exit_cost)",
            "submission": "diff",
            "model_stats": {
                "instance_cost": 3.01,
                "tokens_sent": 900000,
                "tokens_received": 5000,
                "api_calls": 2,
            },
        },
        "replay_config": json.dumps({"agent": {"model": {"name": "claude-sonnet-4"}}}),
        "environment": "main",
    }


def write(tmp: Path, name: str, doc: dict) -> Path:
    path = tmp / name
    path.write_text(json.dumps(doc, indent=2))
    return path


def test_v0_steps_actions_and_observations(tmp_path: Path) -> None:
    path = write(tmp_path, "django__django-1.traj", v0_traj())
    assert detect(path).NAME == "swe-agent"
    (run,) = swe_agent.load(path)
    assert run.run_id == "django__django-1"
    assert [(t.tool_calls[0].name, t.tool_calls[0].arguments) for t in run.turns] == [
        ("find_file", "find_file x.py\n"),
        ("submit", "submit\n"),
    ]
    assert [(r.content, r.duration_s) for t in run.turns for r in t.tool_results] == [
        ("Found 1 matches", 0.25),
        ("diff --git a/x.py", 1.5),
    ]
    assert all(not t.usage.known for t in run.turns)
    assert run.recorded_cost_usd == 0.42
    assert run.metadata["run_totals"] == {
        "prompt_tokens": 12345,
        "completion_tokens": 678,
        "calls": 3,
        "cost_usd": 0.42,
    }
    assert swe_agent.PER_CALL_USAGE_UNKNOWN in run.lossy
    assert any("3 model calls were made but 2 steps recorded" in n for n in run.lossy)
    assert run.outcome.stop_reason == "done" and run.outcome.text == "diff --git a/x.py"
    assert run.task == "We're currently solving the following issue: fix the bug"
    # requests rebuilt from the history: step 0 sent the three messages before the first answer
    assert [m.content for m in run.request(0)][-1].startswith("We're currently")
    assert len(run.request(0)) == 3 and len(run.request(1)) == 5


def test_v1_queries_are_the_requests_and_autosubmission_is_a_cost_stop(tmp_path: Path) -> None:
    (run,) = swe_agent.load(write(tmp_path, "i.traj", v1_traj()))
    assert [len(run.request(t)) for t in run.turns] == [2, 4]
    assert run.request(1)[2].tool_calls[0].name == "bash"
    assert run.request(1)[3].tool_call_id == "call_1"
    # the first two messages are stored once and reused
    assert run.turns[1].sent[0] == (0, 2)
    assert run.model == "claude-sonnet-4"
    # function calling: the first step's call is the one the history recorded; the second has none
    c0, c1 = run.turns[0].tool_calls[0], run.turns[1].tool_calls[0]
    assert (c0.id, c0.name, c0.arguments) == ("call_1", "bash", '{"command": "ls"}')
    assert run.turns[0].tool_results[0].call_id == "call_1"
    assert (c1.id, c1.name) == ("i:1", "submit")
    assert any(n.startswith("1 action(s) are text commands with no recorded tool call") for n in run.lossy)
    assert run.outcome.stop_reason == "max-budget" and run.outcome.verdict == "submitted (exit_cost)"
    assert run.recorded_cost_usd == 3.01
    assert not any("rebuilt from the history" in n for n in run.lossy)
    again = read_run(write_run(run, tmp_path / "out.jsonl"))
    assert again.model_dump(exclude={"loaded_from"}) == run.model_dump(exclude={"loaded_from"})


def test_retry_attempts_are_runs_of_their_own(tmp_path: Path) -> None:
    a, b = v1_traj(), v0_traj()
    doc = {"attempts": [a, b], **b, "info": {**b["info"], "best_attempt_idx": 1}}
    runs = swe_agent.load(write(tmp_path, "r.traj", doc))
    assert [r.run_id for r in runs] == ["r#a0", "r#a1"]
    assert [r.metadata["chosen"] for r in runs] == [False, True]
    assert [len(r.turns) for r in runs] == [2, 2]


def test_cost_replay_of_a_run_without_per_call_usage_says_it_cannot_be_done(tmp_path: Path) -> None:
    (run,) = swe_agent.load(write(tmp_path, "i.traj", v0_traj()))
    result = replay(run, Policy.named("current", grant=100_000))
    assert any(n.startswith("cost cannot be replayed: per-call usage is not recorded") for n in result.notes)
    assert result.usage_known is False


def test_broken_documents_are_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "t.traj"
    text = json.dumps(v0_traj(), indent=2)
    path.write_text(text[: len(text) // 2])
    with pytest.raises(TraceError) as err:
        swe_agent.load(path)
    assert str(path) in str(err.value) and err.value.line is not None
    assert "truncated" in err.value.message


def test_bad_fields_are_diagnostics_naming_the_field(tmp_path: Path) -> None:
    doc = v0_traj()
    doc["trajectory"][0]["execution_time"] = "slow"
    doc["trajectory"].insert(1, "garbage")
    doc["info"]["model_stats"]["tokens_sent"] = -4
    (run,) = swe_agent.load(write(tmp_path, "t.traj", doc))
    assert {d.field for d in run.diagnostics} == {
        "trajectory[0].execution_time",
        "trajectory[1]",
        "info.model_stats.tokens_sent",
    }
    assert len(run.turns) == 2


def test_a_sweep_leaves_out_a_run_without_usage_and_names_it(tmp_path: Path) -> None:
    from workbench.replay import sweep

    (run,) = swe_agent.load(write(tmp_path, "i.traj", v0_traj()))
    with pytest.warns(UserWarning, match="1 run\\(s\\) left out of the sweep"):
        frame = sweep([run], {"grant": [100_000, 200_000]}, progress=False)
    assert len(frame) == 0
    assert frame.attrs["excluded"] == [{"run_id": "i", "reason": swe_agent.PER_CALL_USAGE_UNKNOWN}]


def test_cli_replay_says_cost_cannot_be_replayed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    path = write(tmp_path, "i.traj", v0_traj())
    assert main(["replay", str(path), "--grant", "100000"]) == 0
    out = capsys.readouterr().out
    assert "cost not replayable" in out and "cost cannot be replayed: per-call usage is not recorded" in out


def test_the_report_leaves_out_a_run_without_usage_and_counts_it(tmp_path: Path) -> None:
    from workbench.report.build import report_leaves
    from workbench.scale import load

    write(tmp_path, "i.traj", v0_traj())
    leaves, skipped = report_leaves(load(tmp_path))
    assert leaves == [] and skipped == {"with no per-call usage (cost cannot be replayed)": 1}
