"""Live equals replay: the live loop in recorded mode under policy P makes exactly the decisions, at the same turns,
that the offline replay of the same recording under P makes — for every real run carrying OpenAI-style responses
(OpenHands, Codex CLI) and the seed scenarios, across three grants and the ``current`` and ``ink-s9`` rule sets.
The live loop's own trace, replayed offline, gives the same decisions again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.loop.chat_server import Answer, ChatServer
from tests.loop.conftest import RecordingSleep
from workbench import load
from workbench.govern import Decision, Policy
from workbench.loop.client import ChatClient
from workbench.loop.loop import LiveLoop, LoopResult
from workbench.loop.recorded import RecordedTools, completion_json
from workbench.loop.recorder import Recorder
from workbench.replay.engine import replay
from workbench.scenarios.seed import repeated_call, tool_timeouts, warm_runaway
from workbench.trace import Outcome, Run, ToolCall, ToolResult, Turn, Usage, read_run

GRANTS = (30_000, 100_000, 220_000)
RULES = ("current", "ink-s9")
POLICIES = [Policy.named(rules, grant=grant) for rules in RULES for grant in GRANTS]
OPENAI_STYLE = ("openhands", "codex-cli")


def signature(decisions: tuple[Decision, ...]) -> list[tuple[Any, ...]]:
    """Everything a decision says; the loop's own stops (phase ``loop``) are not the Governor's."""
    return [(d.turn, d.phase, d.action, d.kind, d.reason, d.numbers) for d in decisions if d.phase != "loop"]


def live_recorded(run: Run, policy: Policy, trace: Path | None = None) -> LoopResult:
    loop = LiveLoop.from_recording(run, policy)

    async def go() -> LoopResult:
        if trace is None:
            return await loop.run(run.task or "")
        with Recorder(trace, loop.header(run.task or "", recorded_from=run.run_id)) as rec:
            return await loop.run(run.task or "", rec)

    return asyncio.run(go())


def assert_same(run: Run, policy: Policy, trace: Path | None = None) -> LoopResult:
    offline = replay(run, policy)
    live = live_recorded(run, policy, trace)
    assert signature(live.decisions) == signature(offline.decisions), f"{run.run_id} under {policy.label}"
    if offline.decisions and offline.decisions[-1].action == "stop":
        outcome = live.outcome
        assert (outcome.stop_reason, outcome.verdict) == (offline.stop_reason, offline.verdict)
        assert live.turns - 1 == offline.stop_turn
        if offline.meter is not None:
            assert outcome.meter is not None
            assert (outcome.meter.name, outcome.meter.reached, outcome.meter.allowed) == (
                offline.meter.name,
                offline.meter.reached,
                offline.meter.allowed,
            )
    else:  # the recording ended before the policy stopped it
        assert live.outcome.stop_reason == "end-of-recording"
        assert live.turns == offline.turns_replayed == len(run.turns)
    assert live.spent == offline.spent
    return live


@pytest.fixture(scope="module")
def real_runs(shared: Path) -> list[Run]:
    runs = [r for r in load(*(shared / name for name in OPENAI_STYLE)).runs if r.source in OPENAI_STYLE]
    assert len(runs) >= 5
    return runs


@pytest.mark.real
@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy", POLICIES, ids=[p.label for p in POLICIES])
def test_real_runs_live_equals_replay(real_runs: list[Run], policy: Policy) -> None:
    stops = set()
    for run in real_runs:
        live = assert_same(run, policy)
        stops.add(live.outcome.stop_reason)
    assert "budget" in stops  # the grants are small enough that the landing path is exercised


SEEDS = {"warm-runaway": warm_runaway, "repeated-call": repeated_call, "tool-timeouts": tool_timeouts}
EXPECTED_STOP = {  # what the current rules make of each seed shape
    "warm-runaway": "budget",
    "repeated-call": "no-progress",
    "tool-timeouts": "tool-timeouts",
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy", POLICIES, ids=[p.label for p in POLICIES])
@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_scenarios_live_equals_replay(name: str, policy: Policy) -> None:
    live = assert_same(SEEDS[name](), policy)
    if policy.rules == "current":
        assert live.outcome.stop_reason == EXPECTED_STOP[name]


@pytest.mark.real
@pytest.mark.timeout(60)
def test_live_trace_replays_to_the_same_decisions(real_runs: list[Run], artifacts: Path) -> None:
    folder = artifacts / "recorded-mode"
    folder.mkdir(exist_ok=True)
    policy = Policy.named("current", grant=100_000)
    for i, run in enumerate([*real_runs, warm_runaway()]):
        trace = folder / f"run{i}.jsonl"
        live = assert_same(run, policy, trace)
        recorded = read_run(trace)
        assert recorded.diagnostics == []
        assert len(recorded.turns) == live.turns
        again = replay(recorded, Policy.recorded(recorded))
        assert signature(again.decisions) == signature(live.decisions)
        events = [
            (e.turn, e.kind) for e in recorded.events if "action" in e.data and e.data["phase"] != "loop"
        ]
        assert events == [(d.turn, d.kind) for d in live.decisions if d.phase != "loop"]


@pytest.mark.real
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "policy", [Policy.named("current", grant=100_000), Policy.named("ink-s9", grant=30_000)]
)
def test_real_responses_served_over_http_live_equals_replay(
    real_runs: list[Run], server: ChatServer, policy: Policy
) -> None:
    """The recorded responses go over the wire (chat-completions JSON from the loopback server) and back through
    the provider client's parsing; the decisions still match the offline replay."""
    for run in real_runs:
        server.requests.clear()
        served = iter(run.turns)
        server.responder = lambda body, served=served: next(
            (completion_json(t) for t in served), Answer(500, {"error": {"message": "recording ended"}})
        )

        async def go(run: Run = run) -> LoopResult:
            async with ChatClient(server.base_url, run.model or "recorded", sleep=RecordingSleep()) as client:
                loop = LiveLoop(policy, client, RecordedTools(run), window=run.context_length)
                return await loop.run(run.task or "")

        live = asyncio.run(go())
        offline = replay(run, policy)
        assert signature(live.decisions) == signature(offline.decisions), run.run_id
        assert live.spent == offline.spent
        if offline.decisions and offline.decisions[-1].action == "stop":
            assert (live.outcome.stop_reason, live.outcome.verdict) == (offline.stop_reason, offline.verdict)


def two_prompt_session() -> Run:
    """A recording that went on past a final answer (a second prompt arrived): write, answer, write, answer."""
    turns = [
        Turn(index=0, usage=Usage(prompt=4_000, completion=100), tool_calls=[ToolCall(id="a", name="write", arguments="{}")],
             tool_results=[ToolResult.of("wrote a", call_id="a")], mutated=True),
        Turn(index=1, usage=Usage(prompt=4_200, completion=50), text="first answer", finish_reason="stop"),
        Turn(index=2, usage=Usage(prompt=4_400, completion=100), tool_calls=[ToolCall(id="b", name="write", arguments="{}")],
             tool_results=[ToolResult.of("wrote b", call_id="b")], mutated=True),
        Turn(index=3, usage=Usage(prompt=4_600, completion=50), text="second answer", finish_reason="stop"),
    ]  # fmt: skip
    return Run(run_id="two-prompts", source="synthetic", turns=turns, outcome=Outcome(stop_reason="done"))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("max_turns", [400, 2])
def test_a_reopened_final_answer_matches_replay(max_turns: int) -> None:
    policy = Policy.named("current", max_turns=max_turns)
    live = assert_same(two_prompt_session(), policy)
    steered = [d.turn for d in live.decisions if d.kind == "steered"]
    if max_turns == 400:
        assert steered == [1] and (live.outcome.stop_reason, live.turns) == ("done", 4)
        assert live.outcome.text == "second answer"
    else:  # the last iteration never reopens (governors.md §4.1 K.5)
        assert steered == [] and (live.outcome.stop_reason, live.turns) == ("done", 2)
