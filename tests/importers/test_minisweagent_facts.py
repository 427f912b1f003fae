"""mini-swe-agent's facts beyond tokens: the workspace fact inferred from its bash commands, format-error replies
read as non-final turns, and what the no-progress guard makes of both on the 100 real runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.importers import minisweagent_fixtures as fx
from workbench.govern.policy import Policy
from workbench.importers import minisweagent
from workbench.replay.engine import replay
from workbench.scale import load

FORMAT_ERROR = (
    "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.\n\n"
    "Please format your action in triple backticks as shown in <response_example>."
)


def _with_format_error(doc: dict, at: int = 2) -> dict:
    """Insert, before model message ``at``, a reply with two bash blocks and the agent's format-error answer."""
    msgs = doc["messages"]
    model_positions = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
    pos = model_positions[at]
    bad = {
        "role": "assistant",
        "content": "THOUGHT: two at once\n\n```bash\nls\n```\n\n```bash\ncat x\n```",
        "extra": {"response": fx.chat_response(99, 1500, 40, 0, 0.01)},
    }
    msgs[pos:pos] = [bad, {"role": "user", "content": FORMAT_ERROR}]
    return doc


def _write(tmp: Path, doc: dict) -> Path:
    p = tmp / "demo__demo-1.traj.json"
    p.write_text(json.dumps(doc, indent=2))
    return p


def test_format_error_reply_is_a_non_final_turn_without_calls(tmp_path: Path) -> None:
    (run,) = minisweagent.load(_write(tmp_path, _with_format_error(fx.v1(4))))
    assert [t.format_error is not None for t in run.turns] == [False, False, True, False, False]
    bad = run.turns[2]
    assert bad.tool_calls == [] and bad.tool_results == []
    assert bad.format_error == FORMAT_ERROR.splitlines()[0]
    # the calls around it are untouched: the next call's results are its own
    assert json.loads(run.turns[3].tool_calls[0].arguments)["command"] == "ls dir2"
    res = replay(run, Policy.named("current", grant=10**9))
    assert (res.stop_reason, res.stop_turn) == ("done", 4)
    assert not any(d.kind == "steered" for d in res.decisions)


def test_format_error_inside_a_landing_is_not_the_answer(tmp_path: Path) -> None:
    """A grant crossed on the first call starts the landing; the malformed reply two turns later does not end
    the run as its final answer — the landing ends it, graded as a budget stop."""
    (run,) = minisweagent.load(_write(tmp_path, _with_format_error(fx.v1(4))))
    res = replay(run, Policy.named("current", grant=1_000))
    assert res.landing_started_at == 0
    assert res.stop_reason != "done" or res.stop_turn != 2
    assert res.stop_turn != 2


def test_the_run_template_is_read_first(tmp_path: Path) -> None:
    doc = fx.v1(3)
    doc["info"]["config"]["agent"]["format_error_template"] = "Say it again, in ONE block please: {{actions}}"
    msgs = doc["messages"]
    msgs[4:4] = [
        {
            "role": "assistant",
            "content": "no block",
            "extra": {"response": fx.chat_response(9, 10, 1, 0, 0.0)},
        },
        {"role": "user", "content": "Say it again, in ONE block please: []"},
    ]
    (run,) = minisweagent.load(_write(tmp_path, doc))
    assert [t.format_error is not None for t in run.turns] == [False, True, False, False]


def test_v2_interrupt_type_marks_the_format_error(tmp_path: Path) -> None:
    doc = fx.v1(3)
    doc["messages"][4:4] = [
        {"role": "assistant", "content": "", "extra": {"response": fx.chat_response(9, 10, 1, 0, 0.0)}},
        {"role": "user", "content": "anything", "extra": {"interrupt_type": "FormatError"}},
    ]
    (run,) = minisweagent.load(_write(tmp_path, doc))
    assert run.turns[1].format_error == "anything" and run.turns[1].tool_calls == []


def test_workspace_fact_from_the_commands(tmp_path: Path) -> None:
    (run,) = minisweagent.load(_write(tmp_path, fx.v1(3)))
    assert [t.mutated for t in run.turns] == [False, False, False]  # ls, ls, echo && git diff
    assert [t.mutated_rule for t in run.turns] == ["bash: read-only: ls"] * 2 + [
        "bash: read-only: echo, git diff"
    ]


# -- the 100 real runs -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_runs(shared: Path) -> list:
    root = shared / "mini-swe-agent"
    if not root.is_dir():
        pytest.skip("../shared/traces/mini-swe-agent is absent")
    return list(load(root).runs)


@pytest.mark.real
def test_real_format_errors_and_workspace_facts(real_runs: list) -> None:
    errors = [(r.run_id, t.index) for r in real_runs for t in r.turns if t.format_error]
    assert len(errors) == 154 and len({r for r, _ in errors}) == 57
    facts = [t.mutated for r in real_runs for t in r.turns if t.tool_calls]
    assert (facts.count(True), facts.count(False), facts.count(None)) == (1047, 1701, 999)
    assert all(t.mutated_rule for r in real_runs for t in r.turns if t.tool_calls)


@pytest.mark.real
@pytest.mark.parametrize("grant", [100_000, 330_000, 600_000])
def test_real_no_resolved_run_is_stopped_but_on_a_repeat(real_runs: list, grant: int) -> None:
    """No resolved run is stopped by the no-progress guard unless it repeats an identical call with an identical
    result: sympy-15976's four identical no-op sed still stops, on the repeat signal."""
    policy = Policy.named("current", grant=grant)
    stopped = {}
    for r in real_runs:
        res = replay(r, policy)
        if res.stop_reason == "no-progress" and r.outcome.label == "resolved":
            stop = res.decisions[-1]
            concluded = next(d for d in res.decisions if d.kind == "conclude")
            stopped[r.run_id] = (
                res.stop_turn,
                dict(concluded.numbers)["signal"],
                res.stop_basis,
                stop.reason,
            )
    if grant >= 330_000:
        assert set(stopped) == {"sympy__sympy-15976"}
    # every such stop concluded on the repeat signal, read from recorded facts
    assert all(v[1] == "repeat" and v[2] == "recorded" for v in stopped.values())
    if "sympy__sympy-15976" in stopped:
        turn, _, _, reason = stopped["sympy__sympy-15976"]
        assert turn == 27 and "ran past 60" not in reason
        assert reason.startswith(
            "no-progress guard: the same tool call repeated 3 times with identical results"
        )
