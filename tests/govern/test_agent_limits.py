"""Other agents' own limits (workbench.govern.agent_limits): each limit of each rule set stops a run at the exact call
the agent's own code stops at — before or after the call, counting the crossing call or not — with its exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.importers.minisweagent_fixtures import v1
from workbench.govern import Policy
from workbench.govern.dollars import call_dollars
from workbench.importers import minisweagent
from workbench.pricing import price_usage
from workbench.replay import replay
from workbench.scenarios.seed import CallSpec, TurnSpec, build_run
from workbench.trace.schema import Outcome, Run


def tool_run(n: int, costs: list[float | None] | None = None, *, seconds: float | None = None, **kw) -> Run:
    """``n`` tool calls (call i: prompt 1000*(i+1), completion 100), each with its recorded cost."""
    specs = [
        TurnSpec(
            prompt=1000 * (i + 1),
            completion=100,
            calls=(CallSpec("bash", {"command": f"ls {i}"}),),
            seconds=seconds,
        )
        for i in range(n)
    ]
    run = build_run("r", specs, generator="limits", params={}, **kw)
    for t, c in zip(run.turns, costs or [None] * n, strict=True):
        t.usage.cost = c
        t.model = "gpt-4.1"
    return run


def stop_of(res) -> tuple[str, int, int, str]:
    stop = res.decisions[-1]
    return res.stop_reason, res.stop_turn, res.turns_replayed, dict(stop.numbers).get("exit_status", "")


# -- mini-swe-agent: before the call, reaching the limit stops, LimitsExceeded ----------------------------------------


def write_traj(tmp: Path, calls: int, *, cost_limit: float, step_limit: int, status: str) -> Run:
    doc = v1(calls, status=status, step_limit=step_limit)
    doc["info"]["config"]["agent"]["cost_limit"] = cost_limit
    if status != "Submitted":
        doc["info"]["submission"] = ""
    path = tmp / "demo__demo-1.traj.json"
    path.write_text(json.dumps(doc))
    (run,) = minisweagent.load(path)
    return run


def test_mini_cost_limit_stops_before_the_call_after_the_crossing_one(tmp_path: Path) -> None:
    # recorded costs 0.01, 0.02, 0.03, ...: cumulative 0.01, 0.03, 0.06 — the 3rd call reaches $0.06
    run = write_traj(tmp_path, 6, cost_limit=0.0, step_limit=0, status="Submitted")
    res = replay(run, Policy.named("mini-swe-agent", cost_limit_usd=0.06))
    assert stop_of(res) == ("max-budget", 2, 3, "LimitsExceeded")
    assert res.cut_turns == 3 and res.verdict == "budget_stop"
    assert "dollar meter: recorded (the rule set reads recorded)" in res.notes
    # just above the cumulative: the 4th call is made too (0.10 >= 0.0600001)
    assert stop_of(replay(run, Policy.named("mini-swe-agent", cost_limit_usd=0.0600001)))[:3] == (
        "max-budget",
        3,
        4,
    )


def test_mini_step_limit_allows_exactly_step_limit_calls(tmp_path: Path) -> None:
    run = write_traj(tmp_path, 6, cost_limit=0.0, step_limit=0, status="Submitted")
    res = replay(run, Policy.named("mini-swe-agent", step_limit=4, cost_limit_usd=None))
    assert stop_of(res) == ("turn-cap", 3, 4, "LimitsExceeded")
    assert res.decisions[-1].text == ""  # LimitsExceeded submits nothing
    # 0 means no limit, as mini-swe-agent reads it
    assert replay(run, Policy.named("mini-swe-agent", step_limit=0, cost_limit_usd=0)).stop_reason == "done"


def test_a_run_that_stopped_on_its_cost_limit_replays_to_the_same_call(tmp_path: Path) -> None:
    # mini-swe-agent stopped before call 3: its cost after 3 calls ($0.06) reached cost_limit $0.05
    run = write_traj(tmp_path, 3, cost_limit=0.05, step_limit=250, status="LimitsExceeded")
    assert run.outcome.stop_reason == "max-budget"
    rec = Policy.recorded(run)
    assert (rec.rules, rec.step_limit, rec.cost_limit_usd) == ("mini-swe-agent", 250, 0.05)
    res = replay(run, rec)
    assert stop_of(res) == ("max-budget", 2, 3, "LimitsExceeded")
    assert res.cut_turns == 0 and not res.censored


def test_a_run_that_stopped_on_its_step_limit_replays_to_the_same_call(tmp_path: Path) -> None:
    run = write_traj(tmp_path, 3, cost_limit=3.0, step_limit=3, status="LimitsExceeded")
    assert run.outcome.stop_reason == "turn-cap"
    res = replay(run, Policy.recorded(run))
    assert stop_of(res) == ("turn-cap", 2, 3, "LimitsExceeded") and res.cut_turns == 0


def test_a_run_priced_neither_way_cannot_be_replayed_in_dollars() -> None:
    run = tool_run(4, [0.5, None, 0.5, 0.5])
    for t in run.turns:
        t.model = "no-such-model-anywhere"
    res = replay(run, Policy.named("mini-swe-agent", cost_limit_usd=0.75))
    assert res.stop_reason == "done" and res.cut_turns == 0  # no dollar stop can be found past call 1
    assert any(n.startswith("cannot be replayed in dollars from call 1 on") for n in res.notes)
    assert call_dollars(run, "recorded").basis == "unknown"
    # before the unpriced call the meter still counts: a limit reached by call 0 stops there
    assert stop_of(replay(run, Policy.named("mini-swe-agent", cost_limit_usd=0.5)))[:3] == (
        "max-budget",
        0,
        1,
    )


@settings(max_examples=60, deadline=None)
@given(
    costs=st.lists(st.integers(1, 50).map(lambda c: c / 100), min_size=1, max_size=12),
    limit=st.integers(1, 300).map(lambda c: c / 100),
    step=st.integers(0, 14),
)
def test_mini_matches_its_own_query_loop(costs: list[float], limit: float, step: int) -> None:
    # mini-swe-agent's loop, transcribed: check, then call (n_calls += 1, cost += call's cost)
    n_calls, cost, expect = 0, 0.0, None
    for _ in costs:
        if 0 < step <= n_calls or 0 < limit <= cost:
            expect = "turn-cap" if 0 < step <= n_calls else "max-budget"
            break
        cost += costs[n_calls]
        n_calls += 1
    res = replay(
        tool_run(len(costs), costs), Policy.named("mini-swe-agent", cost_limit_usd=limit, step_limit=step)
    )
    if expect is None and 0 < step <= n_calls:  # the recording ended exactly where the limit stands
        expect = "turn-cap"
    if expect is None and 0 < limit <= cost:
        expect = "max-budget"
    assert res.turns_replayed == n_calls
    assert res.stop_reason == (expect or "done")


# -- SWE-agent: after the call, only above the limit, exit_cost with autosubmit ------------------------------------


def test_swe_agent_cost_limit_discards_the_crossing_call_and_autosubmits() -> None:
    run = tool_run(6)
    usd = call_dollars(run, "genai-prices").usd
    assert all(u is not None for u in usd)
    cum = [sum(usd[: k + 1]) for k in range(6)]
    limit = cum[2]  # reached exactly by call 2: SWE-agent needs *more* (limit < instance_cost)
    res = replay(run, Policy.named("swe-agent", cost_limit_usd=limit))
    assert stop_of(res) == ("max-budget", 3, 4, "exit_cost")
    assert dict(res.decisions[-1].numbers)["autosubmit"] is True
    assert "autosubmitted" in res.decisions[-1].reason
    assert res.decisions[-1].phase == "response"  # its answer discarded: the tools of call 3 never ran
    assert "dollar meter: genai-prices (the rule set reads genai-prices)" in res.notes
    assert usd[0] == price_usage("gpt-4.1", run.turns[0].usage, run.turns[0].started_at).usd


def test_swe_agent_call_limit_allows_n_actions_and_bills_call_n_plus_1() -> None:
    res = replay(tool_run(6), Policy.named("swe-agent", cost_limit_usd=0, call_limit=2))
    assert stop_of(res) == ("max-budget", 2, 3, "exit_cost")


def test_swe_agent_without_per_call_usage_cannot_replay_dollars() -> None:
    run = tool_run(3)
    for t in run.turns:
        t.usage.prompt = t.usage.completion = t.usage.cached = None
    res = replay(run, Policy.named("swe-agent"))
    assert res.stop_reason == "done"
    assert any("cannot be replayed in dollars from call 0 on" in n for n in res.notes)


# -- OpenHands max_budget_per_task: before the step, reaching stops, budget error ---------------------------------


def test_openhands_budget_stops_before_the_next_step() -> None:
    run = tool_run(6, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    run.source = "openhands"
    res = replay(run, Policy.named("openhands", cost_limit_usd=0.6))
    reason, turn, made, status = stop_of(res)
    assert (reason, turn, made) == ("max-budget", 2, 3)  # 0.1 + 0.2 + 0.3 reaches 0.6 after call 2
    assert status.startswith("RuntimeError: Agent reached maximum budget")
    # the iteration flag runs first: max_iterations 3 allows 2 calls, so it stops before the budget does
    res = replay(run, Policy.named("openhands", cost_limit_usd=0.6, max_turns=3))
    assert (res.stop_reason, res.turns_replayed) == ("turn-cap", 2)


def test_openhands_recorded_budget_is_read() -> None:
    run = tool_run(2, [0.1, 0.1])
    run.source = "openhands"
    from workbench.trace.schema import RecordedPolicy

    run.policy = RecordedPolicy(rules="openhands", max_turns=50, params={"max_budget_per_task": 0.15})
    p = Policy.recorded(run)
    assert (p.max_turns, p.cost_limit_usd) == (50, 0.15)
    assert stop_of(replay(run, p))[:3] == ("max-budget", 1, 2)


# -- Claude Code: max_turns and max_budget_usd between calls --------------------------------------------------------


def test_claude_code_max_turns_runs_the_last_calls_tools_then_stops() -> None:
    res = replay(tool_run(5), Policy.named("claude-code", step_limit=3))
    assert stop_of(res) == ("turn-cap", 2, 3, "error_max_turns")
    assert res.decisions[-1].phase == "start"


def test_claude_code_max_turns_not_reached_by_a_final_answer() -> None:
    run = tool_run(2)
    run.turns[1].tool_calls = []
    run.turns[1].tool_results = []
    run.turns[1].text = "done"
    assert replay(run, Policy.named("claude-code", step_limit=2)).stop_reason == "done"


def test_claude_code_budget_is_priced_by_genai_prices() -> None:
    run = tool_run(5, [9.0] * 5)  # a recorded cost Claude Code never wrote: not what its meter reads
    usd = call_dollars(run, "genai-prices").usd
    res = replay(run, Policy.named("claude-code", cost_limit_usd=usd[0] + usd[1]))
    assert stop_of(res) == ("max-budget", 1, 2, "error_max_budget_usd")


# -- Inspect: message limit before, token and cost limits after (strict), time limit --------------------------------


def test_inspect_message_limit_refuses_the_call_that_would_send_the_limit() -> None:
    run = tool_run(5)  # call i sends 2 + 2*i messages: 2, 4, 6, 8, 10
    assert [len(run.request(i)) for i in range(5)] == [2, 4, 6, 8, 10]
    res = replay(run, Policy.named("inspect", message_limit=6))
    assert stop_of(res) == ("turn-cap", 1, 2, "LimitExceededError (message)")
    assert replay(run, Policy.named("inspect", message_limit=7)).turns_replayed == 3


def test_inspect_token_limit_is_strict_and_checked_after_the_call() -> None:
    run = tool_run(5)  # tokens per call 1100, 2100, 3100: cumulative 1100, 3200, 6300
    res = replay(run, Policy.named("inspect", token_limit=3200))
    assert stop_of(res) == ("max-tokens", 2, 3, "LimitExceededError (token)")
    assert res.decisions[-1].phase == "response"
    assert replay(run, Policy.named("inspect", token_limit=3199)).turns_replayed == 2


def test_inspect_cost_limit_is_strict() -> None:
    run = tool_run(4, [0.25, 0.25, 0.25, 0.25])
    assert stop_of(replay(run, Policy.named("inspect", cost_limit_usd=0.5)))[:3] == ("max-budget", 2, 3)


def test_inspect_time_limit_cancels_the_call_in_flight() -> None:
    run = tool_run(5, seconds=10.0)  # call i runs from 10*i to 10*(i+1) s
    res = replay(run, Policy.named("inspect", time_limit_s=25.0))
    assert stop_of(res) == ("deadline", 2, 3, "LimitExceededError (time)")
    # at exactly 30 s call 2 has ended in time and call 3 may not start
    res = replay(run, Policy.named("inspect", time_limit_s=30.0))
    assert stop_of(res)[:3] == ("deadline", 2, 3) and res.decisions[-1].phase == "start"


def test_untimed_runs_get_no_time_limit() -> None:
    res = replay(tool_run(3), Policy.named("inspect", time_limit_s=1.0))
    assert res.stop_reason == "done" and "no turn timestamps: the time limit was not applied" in res.notes


def test_limits_refuse_bad_values() -> None:
    with pytest.raises(ValueError, match="cost_limit_usd must be None or a number >= 0"):
        Policy.named("mini-swe-agent", cost_limit_usd=-1.0)


def test_the_seed_rule_sets_ignore_agent_limits() -> None:
    run = tool_run(3, [1.0, 1.0, 1.0], outcome=Outcome(stop_reason="done"))
    assert replay(run, Policy.named("current", cost_limit_usd=0.5, no_progress=False)).stop_reason == "done"


# -- the shared mini-swe-agent runs: no run reached step_limit 250 or cost_limit $3 -----------------------------------


def test_real_mini_runs_replayed_under_their_recorded_limits_finish_as_recorded(shared: Path) -> None:
    import workbench as wb

    runs = list(wb.load(shared / "mini-swe-agent"))
    assert len(runs) == 100
    for run in runs:
        p = Policy.recorded(run)
        assert (p.rules, p.step_limit, p.cost_limit_usd) == ("mini-swe-agent", 250, 3.0)
        res = replay(run, p)
        assert (res.stop_reason, res.cut_turns, res.censored) == (run.outcome.stop_reason, 0, False)
        assert res.turns_replayed == len(run.turns) < 250
        assert call_dollars(run, "recorded").basis == "recorded"
        spent = sum(call_dollars(run, "recorded").usd)
        assert spent == pytest.approx(run.recorded_cost_usd, abs=1e-9)
        assert spent < 3.0


def test_a_swe_agent_exit_cost_run_records_its_limits_but_cannot_be_replayed_in_dollars(
    tmp_path: Path,
) -> None:
    from tests.importers.test_swe_agent import v1_traj
    from workbench.importers import swe_agent

    doc = v1_traj()
    doc["replay_config"] = json.dumps(
        {
            "agent": {
                "model": {
                    "name": "claude-sonnet-4",
                    "per_instance_cost_limit": 3.0,
                    "per_instance_call_limit": 0,
                }
            }
        }
    )
    path = tmp_path / "i.traj"
    path.write_text(json.dumps(doc))
    (run,) = swe_agent.load(path)
    p = Policy.recorded(run)
    assert (p.rules, p.cost_limit_usd, p.call_limit) == ("swe-agent", 3.0, None)
    res = replay(run, p)
    # SWE-agent logs no per-call usage: no dollar stop can be found, and the recording was cut by its limit
    assert (res.stop_reason, res.censored) == ("end-of-recording", True)
    assert any(n.startswith("cannot be replayed in dollars from call 0 on") for n in res.notes)
