"""Format errors and requeries are not endings, and shell commands give the workspace fact, in the other agents
whose edits run through a shell (SWE-agent, Aider's /run)."""

from __future__ import annotations

from pathlib import Path

from tests.importers import test_aider as ta
from tests.importers import test_swe_agent as ts
from workbench.govern import Policy
from workbench.importers import aider, swe_agent
from workbench.replay import replay

FORMAT_ERROR = (
    "Your output was not formatted correctly. You must always include one discussion and one command as part of "
    "your response. Make sure you do not have multiple discussion/command tags."
)


def _requeried() -> dict:
    """The 1.x shape with a requeried reply between the two steps: the failed step is in the trajectory (as
    SWE-agent's forward_with_handling adds it), and the next step's query closes with the format error."""
    doc = ts.v1_traj()
    first, last = doc["trajectory"]
    bad = ts.v1_step(9, "", "", last["query"])
    bad["response"] = bad["thought"] = "no command here"
    last["query"] = [
        *last["query"],
        {"role": "assistant", "content": "no command here", "agent": "main"},
        {"role": "user", "content": FORMAT_ERROR, "agent": "main"},
    ]
    doc["trajectory"] = [first, bad, last]
    return doc


def test_swe_agent_requery_is_a_non_final_turn(tmp_path: Path) -> None:
    (run,) = swe_agent.load(ts.write(tmp_path, "x.traj", _requeried()))
    assert [t.format_error is not None for t in run.turns] == [False, True, False]
    assert run.turns[1].format_error == FORMAT_ERROR.splitlines()[0][:200]
    assert run.turns[1].tool_calls == []
    res = replay(run, Policy.named("current", grant=10**9))
    assert res.stop_turn == 2  # replay goes on past the requeried reply


def test_swe_agent_blocklist_requery(tmp_path: Path) -> None:
    doc = _requeried()
    doc["trajectory"][2]["query"][-1]["content"] = (
        "Operation 'vim a.py' is not supported by this environment."
    )
    (run,) = swe_agent.load(ts.write(tmp_path, "x.traj", doc))
    assert run.turns[1].format_error == "Operation 'vim a.py' is not supported by this environment."


def test_swe_agent_workspace_fact_from_its_actions(tmp_path: Path) -> None:
    (run,) = swe_agent.load(ts.write(tmp_path, "x.traj", ts.v1_traj()))
    # step 0 is bash `ls` (read-only), step 1 the submit command (read-only)
    assert [t.mutated for t in run.turns] == [False, False]
    assert run.turns[0].mutated_rule == "bash: read-only: ls"
    doc = ts.v0_traj()
    (run,) = swe_agent.load(ts.write(tmp_path, "y.traj", doc))
    assert all(t.mutated_rule for t in run.turns if t.tool_calls)


def test_aider_run_commands_are_parsed(tmp_path: Path) -> None:
    text = ta.V046.replace("#### ", "#### /run sed -i 's/a/b/' foo.py\n#### ", 1)
    runs = aider.load(ta.write(tmp_path, text))
    runs_events = [e for r in runs for e in r.events if e.kind == "shell-run"]
    assert [(e.data["command"], e.data["effect"], e.reason) for e in runs_events] == [
        ("sed -i 's/a/b/' foo.py", "write", "sed -i")
    ]


def test_openhands_retry_message_is_not_an_ending(tmp_path: Path) -> None:
    """OpenHands' evaluation answers a reply without a tool call with its fake user's retry message
    (evaluation/utils/shared.py codeact_user_response): that reply is a non-final turn, and the shell command
    of the next call gives its workspace fact."""
    import json

    from workbench.importers import openhands

    resp = {
        "id": "r1",
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {
                            "id": "t0",
                            "function": {"name": "execute_bash", "arguments": '{"command": "rm a.py"}'},
                        }
                    ]
                }
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1},
    }
    retry = (
        "Please continue working on the task on whatever approach you think is suitable.\n"
        "IMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP.\n"
    )
    history = [
        {"source": "user", "action": "message", "args": {"content": "task"}},
        {"source": "agent", "action": "message", "args": {"content": "Shall I go on?"}},
        {"source": "user", "action": "message", "args": {"content": retry}},
        {
            "source": "agent",
            "action": "run",
            "args": {"command": "rm a.py"},
            "tool_call_metadata": {
                "tool_call_id": "t0",
                "function_name": "execute_bash",
                "model_response": resp,
            },
        },
        {
            "source": "agent",
            "observation": "run",
            "content": "",
            "extras": {"metadata": {"exit_code": 0}},
            "tool_call_metadata": {"tool_call_id": "t0", "function_name": "execute_bash"},
        },
    ]
    line = {"instance_id": "x", "metadata": {"llm_config": {"model": "m"}}, "history": history}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (run,) = openhands.load(path)
    assert len(run.turns) == 2
    assert run.turns[0].format_error == retry.splitlines()[0] and not run.turns[0].tool_calls
    assert (run.turns[1].mutated, run.turns[1].mutated_rule) == (True, "execute_bash: rm a.py")
    res = replay(run, Policy.named("current", grant=10**9))
    assert res.stop_turn == 1 and not any(d.kind == "steered" for d in res.decisions)
