"""Live equals replay: the live loop in recorded mode under policy P makes exactly the decisions, at the same turns,
that the offline replay of the same recording under P makes — for every real run carrying OpenAI-style responses
(OpenHands, Codex CLI) and the seed scenarios, across three grants and the ``current`` and ``ink-s9`` rule sets, and
across four deadlines (recorded mode's clock replays the recorded turn timestamps: the wall pace, a deadline landing
started mid-run and a call cut by the lease all happen as the replay reads them). The live loop's own trace, replayed
offline, gives the same decisions again."""

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
from workbench.paths import bundled_traces
from workbench.replay.engine import replay
from workbench.scenarios.seed import repeated_call, timed_turns, tool_timeouts, warm_runaway
from workbench.trace import Outcome, Run, ToolCall, ToolResult, Turn, Usage, read_run

GRANTS = (30_000, 100_000, 220_000)
RULES = ("current", "ink-s9")
POLICIES = [Policy.named(rules, grant=grant) for rules in RULES for grant in GRANTS]
OPENAI_STYLE = ("openhands", "codex-cli")
DEADLINES = (110.0, 300.0, 600.0, 1_200.0)
TIMED_POLICIES = [Policy.named(rules, deadline_s=deadline) for rules in RULES for deadline in DEADLINES]


def signature(decisions: tuple[Decision, ...]) -> list[tuple[Any, ...]]:
    """Everything a decision says; the loop's own stops (phase ``loop``) are not the Governor's."""
    return [(d.turn, d.phase, d.action, d.kind, d.reason, d.numbers) for d in decisions if d.phase != "loop"]


def deadline_paths(decisions: tuple[Decision, ...]) -> set[str]:
    """Which deadline rules a run met: the wall pace, a landing started at the top of a turn (the time left fell
    within the reserve), a landing started by a call the lease cut."""
    seen = {(d.phase, d.action, d.kind) for d in decisions}
    paths = set()
    if ("start", "inject", "wall-pace") in seen:
        paths.add("pace")
    if ("start", "start-landing", "deadline") in seen:
        paths.add("landing")
    if ("error", "start-landing", "deadline") in seen:
        paths.add("cut")
    return paths


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
    else:  # the last iteration never reopens (docs/governors.md §4.1 K.5)
        assert steered == [] and (live.outcome.stop_reason, live.turns) == ("done", 2)


# What the deadlines make of the five real runs (fastjson2's GPT-5 run, 1,550 s; the Codex session, 359 s; the three
# ponyc runs, whose zone-less event times the importer puts on model_response.created's UTC clock), per rule set:
# every path is met at least once.
EXPECTED_REAL_PATHS = {
    ("current", 110.0): {"pace", "cut", "landing"},
    ("current", 300.0): {"pace", "cut", "landing"},
    ("current", 600.0): {"pace", "landing"},
    ("current", 1_200.0): {"pace", "landing"},
    ("ink-s9", 110.0): {"pace", "cut"},
    ("ink-s9", 300.0): {"landing"},
    ("ink-s9", 600.0): {"pace", "landing"},
    ("ink-s9", 1_200.0): {"pace", "landing"},
}


@pytest.mark.real
@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy", TIMED_POLICIES, ids=[p.label for p in TIMED_POLICIES])
def test_real_runs_under_a_deadline_live_equals_replay(real_runs: list[Run], policy: Policy) -> None:
    paths: set[str] = set()
    for run in real_runs:
        live = assert_same(run, policy)
        paths |= deadline_paths(live.decisions)
    assert EXPECTED_REAL_PATHS[(policy.rules, policy.deadline_s)] <= paths


# The timed seed (40 writing calls of 30 s back to back, then a final answer): (stop, stop turn, meter, paths).
EXPECTED_TIMED_SEED = {
    # paced at 60 s; call 3 (90-120 s) is cut at the 110 s lease; re-issued on the 11 s landing clock, cut again
    110.0: ("deadline", 2, "deadline: 121 of 110 seconds", {"pace", "cut"}),
    # paced at 180 s; 30 s left at 270 s is within the reserve: the landing starts at call 9; call 10 is cut at 300
    300.0: ("deadline", 9, "deadline: 300 of 300 seconds", {"pace", "landing"}),
    600.0: ("deadline", 19, "deadline: 600 of 600 seconds", {"pace", "landing"}),
    # a 120 s reserve holds the landing's four calls (36-39): it ends on its countdown
    1_200.0: ("deadline", 39, "deadline: 1,200 of 1,200 seconds", {"pace", "landing"}),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy", TIMED_POLICIES, ids=[p.label for p in TIMED_POLICIES])
def test_the_timed_seed_under_a_deadline_live_equals_replay(policy: Policy) -> None:
    live = assert_same(timed_turns(), policy)
    stop, turn, meter, paths = EXPECTED_TIMED_SEED[policy.deadline_s]  # type: ignore[index]
    assert (live.outcome.stop_reason, live.turns - 1, live.outcome.verdict) == (
        stop,
        turn,
        "provider_failure",
    )
    assert live.outcome.meter is not None and live.outcome.meter.words() == meter
    assert deadline_paths(live.decisions) == paths
    landing = next((d for d in live.decisions if d.action == "start-landing"), None)
    assert landing is not None and landing.kind == "deadline"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("policy", TIMED_POLICIES[:: len(DEADLINES)], ids=lambda p: p.label)
@pytest.mark.parametrize("name", sorted(SEEDS))
def test_untimed_seeds_under_a_deadline_get_no_deadline_rules_live_or_replayed(
    name: str, policy: Policy
) -> None:
    live = assert_same(SEEDS[name](), policy)
    assert deadline_paths(live.decisions) == set()
    assert "no turn timestamps: no deadline rules were applied" in replay(SEEDS[name](), policy).notes


@pytest.mark.timeout(60)
@pytest.mark.parametrize("deadline", [1_200.0, 2_000.0])
def test_a_timed_live_trace_carries_the_replayed_times(artifacts: Path, deadline: float) -> None:
    """Recorded mode stamps each turn with the replayed reading, so its own trace replays to the same decisions."""
    folder = artifacts / "recorded-mode"
    folder.mkdir(exist_ok=True)
    trace = folder / f"timed-{deadline:.0f}.jsonl"
    run = timed_turns()
    live = assert_same(run, Policy.named("current", deadline_s=deadline), trace)
    recorded = read_run(trace)
    assert [(t.started_at, t.ended_at) for t in recorded.turns] == [
        (t.started_at, t.ended_at) for t in run.turns[: live.turns]
    ]
    again = replay(recorded, Policy.recorded(recorded))
    assert again.policy.deadline_s == deadline
    assert signature(again.decisions) == signature(live.decisions)


OUTGROWS = bundled_traces() / "synthetic" / "outgrows-window.jsonl"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize(
    ("context_length", "overrides", "stop_turn", "meter"),
    [
        (20_000, {}, -1, None),  # the opening alone does not fit: no call is made at all
        (24_000, {}, 0, None),  # the second send does not fit
        (24_000, {"grant": 10_000}, 0, "cost: 12,684 of 10,000 tokens of billed work"),  # stopped mid-landing
        (24_000, {"deadline_s": 60.0}, 0, None),  # timed; no deadline rule is due at the truncated turn
        # A deadline rule due on the very turn the send does not fit: the top of the turn (wall pace, deadline
        # landing) runs first, then the manager refuses the send — the seed's order, live and replayed alike.
        (24_000, {"deadline_s": 40.0}, 0, None),  # the wall pace is read, then truncated
        (
            24_000,
            {"deadline_s": 25.0},
            0,
            "deadline: 23 of 25 seconds",
        ),  # the landing is ordered, then truncated
    ],
)
def test_a_context_truncated_run_stops_the_same_live_and_replayed(
    rules: str, context_length: int, overrides: dict[str, Any], stop_turn: int, meter: str | None
) -> None:
    """The bundled run whose transcript outgrows its window, under a small context length: the live loop's
    manager refuses the send, the Governor ends the run (the rule lives there), and stop, turn, verdict and meter
    are the offline replay's."""
    run = read_run(OUTGROWS)
    policy = Policy.named(rules, context_length=context_length, **overrides)
    live = assert_same(run, policy)
    outcome = live.outcome
    assert (outcome.stop_reason, outcome.verdict, live.turns - 1) == (
        "context-truncated",
        "context_truncated",
        stop_turn,
    )
    assert (outcome.meter.words() if outcome.meter else None) == meter
    stop = live.decisions[-1]
    assert (stop.action, stop.phase, stop.kind) == (
        "stop",
        "start",
        "context-truncated",
    )  # the Governor's own
    assert not [d for d in live.decisions if d.phase == "loop"]
    # Which deadline rule the top of the truncated turn met (none without a deadline, or with a roomy one).
    expected_paths = {40.0: {"pace"}, 25.0: {"landing"}}.get(overrides.get("deadline_s"), set())
    assert deadline_paths(live.decisions) == expected_paths
