"""The live loop against the loopback server: the Governor's decisions are carried out, faults end as specified."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.loop.chat_server import Answer, ChatServer, Hang, completion
from tests.loop.conftest import SUITE_KEY, SUITE_KEY_ENV, RecordingSleep
from workbench.context import ContextWindowManager
from workbench.govern import Policy
from workbench.govern import messages as msg
from workbench.loop.client import ChatClient
from workbench.loop.clock import SystemClock
from workbench.loop.loop import LiveLoop, LoopResult
from workbench.loop.mailbox import GUIDANCE_PREFIX, QueueMailbox
from workbench.loop.recorder import Recorder
from workbench.loop.secrets import Secret
from workbench.loop.tools import Toolbox
from workbench.loop.workspace import Workspace
from workbench.trace import read_run

T = TypeVar("T")


def live(
    server: ChatServer,
    policy: Policy,
    ws: Path,
    trace: Path,
    sleep: RecordingSleep | None = None,
    **kw: object,
) -> LoopResult:
    async def go() -> LoopResult:
        secret = Secret.from_env(SUITE_KEY_ENV)  # the suite's key: sent with every request, never written
        async with ChatClient(
            server.base_url, "test-model", api_key=secret, sleep=sleep or RecordingSleep()
        ) as client:
            loop = LiveLoop(policy, client, Toolbox(Workspace(ws)), model="test-model", **kw)  # type: ignore[arg-type]
            with Recorder(
                trace, loop.header("the task", api_key_env=SUITE_KEY_ENV), redact=secret.redact
            ) as rec:
                return await loop.run("the task", rec)

    return asyncio.run(go())


def write(cid: str, path: str, content: str = "x") -> tuple[str, str, dict]:
    return (cid, "write", {"path": path, "content": content})


@pytest.mark.timeout(30)
def test_a_plain_run_records_every_turn_and_ends_done(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    server.push(
        completion("", [write("a", "x.txt", "hi")], prompt=1_000, completion_tokens=50),
        completion(
            "", [("b", "sh", {"command": "cat x.txt"})], prompt=1_200, completion_tokens=50, cached=900
        ),
        completion("x.txt says hi", prompt=1_300, completion_tokens=20, cached=1_100),
    )
    result = live(server, Policy.named("current", grant=100_000), tmp_path / "ws", trace_path)
    assert (result.outcome.stop_reason, result.outcome.verdict) == ("done", "unverified_success")
    assert result.turns == 3
    # spent = (P - C) + floor(C * 10%) + O on the totals: P 3,500, C 2,000, O 120
    assert result.spent == 1_500 + 200 + 120
    run = read_run(trace_path)
    assert run.diagnostics == []
    assert [t.mutated for t in run.turns] == [True, False, None]
    assert run.request(2)[-1].content == "hi\n[exit code 0]"
    assert (
        run.policy is not None
        and run.policy.grant == 100_000
        and run.policy.params["policy"]["rules"] == "current"
    )
    assert [s["function"]["name"] for s in run.tool_schemas or []] == ["sh", "read", "write", "edit"]
    # the server saw the tool transcript it was sent, and the tool schemas
    assert server.requests[2]["messages"][-1] == {
        "role": "tool",
        "content": "hi\n[exit code 0]",
        "tool_call_id": "b",
    }
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["sh", "read", "write", "edit"]


@pytest.mark.timeout(30)
def test_length_stop_holding_tool_calls_runs_none_and_answers_each(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    server.push(
        completion("", [write("a", "one.txt"), write("b", "two.py", "def f(")], finish="length"),
        completion("gave up"),
    )
    result = live(server, Policy.named("current"), tmp_path / "ws", trace_path)
    assert not (tmp_path / "ws" / "one.txt").exists() and not (tmp_path / "ws" / "two.py").exists()
    second = server.requests[1]["messages"]
    assert [m["content"] for m in second[-2:]] == [msg.LENGTH_BATCH_TEXT, msg.LENGTH_BATCH_TEXT]
    assert [m["tool_call_id"] for m in second[-2:]] == ["a", "b"]
    assert [(d.turn, d.action, d.kind) for d in result.decisions] == [
        (0, "skip-tools", "length-batch"),
        (1, "stop", "done"),
    ]


@pytest.mark.timeout(30)
def test_empty_reply_with_large_completion_count_is_abandoned(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    server.push(completion("", completion_tokens=80_000, prompt=500), completion("never asked"))
    result = live(server, Policy.named("current", grant=100_000), tmp_path / "ws", trace_path)
    assert (result.outcome.stop_reason, result.outcome.verdict, result.turns) == (
        "empty",
        "empty_response",
        1,
    )
    assert len(server.requests) == 1


@pytest.mark.timeout(30)
def test_small_empty_reply_is_nudged(server: ChatServer, tmp_path: Path, trace_path: Path) -> None:
    server.push(completion("", completion_tokens=50), completion("the answer"))
    result = live(server, Policy.named("current", grant=100_000), tmp_path / "ws", trace_path)
    assert result.outcome.stop_reason == "done"
    nudge = server.requests[1]["messages"][-2:]
    assert nudge == [{"role": "assistant", "content": ""}, {"role": "user", "content": msg.NUDGE_EMPTY_TEXT}]
    run = read_run(trace_path)
    assert run.request(1)[-1].kind == msg.NUDGE_EMPTY


@pytest.mark.timeout(30)
def test_context_length_400_ends_the_run_as_a_provider_failure(
    server: ChatServer, tmp_path: Path, trace_path: Path, keep
) -> None:
    server.push(
        completion("", [write("a", "x")]),
        Answer(
            400,
            {
                "error": {
                    "message": "maximum context length is 8192 tokens",
                    "code": "context_length_exceeded",
                }
            },
        ),
    )
    result = live(server, Policy.named("current"), tmp_path / "ws", trace_path)
    keep(result.error)
    assert (result.outcome.stop_reason, result.outcome.verdict) == ("error", "provider_failure")
    assert result.error is not None and result.error.startswith("context-length:")
    assert len(server.requests) == 2  # not retried
    run = read_run(trace_path)
    failed = [e for e in run.events if e.kind == "call-failed"]
    assert failed[0].data["error"] == "context-length" and failed[0].turn == 1
    assert run.outcome.stop_reason == "error" and len(run.turns) == 1


@pytest.mark.timeout(30)
def test_retries_are_counted_on_the_turn(server: ChatServer, tmp_path: Path, trace_path: Path) -> None:
    sleep = RecordingSleep()
    server.push(
        Answer(429, {"error": {"message": "slow"}}, {"Retry-After": "2"}),
        Answer(502, {"error": {"message": "bad gateway"}}),
        completion("fine"),
    )
    result = live(server, Policy.named("current"), tmp_path / "ws", trace_path, sleep=sleep)
    assert result.retries == 2 and sleep.delays == [2.0, 1.0]
    run = read_run(trace_path)
    assert run.turns[0].retries == 2
    retried = [e for e in run.events if e.kind == "retries"]
    assert [a["status"] for a in retried[0].data["attempts"]] == [429, 502]


@pytest.mark.timeout(30)
def test_budget_landing_is_injected_and_ends_with_the_meter_reread(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    # grant 40,000, 10,000-token turns: crossing after 4 calls, 1 landing call, final spent 50,000 (docs/governors.md §5.5)
    for i in range(6):
        server.push(completion("", [write(f"c{i}", f"f{i}.txt")], prompt=9_000, completion_tokens=1_000))
    result = live(server, Policy.named("current", grant=40_000), tmp_path / "ws", trace_path)
    assert (result.outcome.stop_reason, result.outcome.verdict, result.turns) == ("budget", "budget_stop", 5)
    assert result.outcome.meter is not None
    assert (result.outcome.meter.name, result.outcome.meter.reached, result.outcome.meter.allowed) == (
        "cost",
        50_000,
        40_000,
    )
    fifth = server.requests[4]["messages"]
    assert fifth[-1] == {"role": "user", "content": msg.BUDGET_LANDING_TEXT}
    wrapup = [m for m in server.requests[3]["messages"] if m["content"] == msg.WRAPUP_TEXT]
    assert len(wrapup) == 1  # used 30,000/40,000 > 0.7 after the third call


@pytest.mark.timeout(30)
def test_repeated_call_is_concluded_then_terminated(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "same.txt").write_text("the same bytes\n" * 40)
    for i in range(8):
        server.push(completion("", [(f"r{i}", "read", {"path": "same.txt"})]))
    result = live(server, Policy.named("current"), tmp_path / "ws", trace_path)
    assert (result.outcome.stop_reason, result.outcome.verdict, result.turns) == (
        "no-progress",
        "budget_stop",
        5,
    )
    conclude = [d for d in result.decisions if d.kind == msg.CONCLUDE]
    assert [d.turn for d in conclude] == [3]
    assert server.requests[4]["messages"][-1]["content"] == msg.CONCLUDE_TEXT
    # the observation memo carries the repeated bytes once; later copies point at the first
    assert server.requests[1]["messages"][-1]["content"] == "the same bytes\n" * 40
    assert server.requests[2]["messages"][-1]["content"] == (
        '[identical to the result of read {"path":"same.txt"} at turn 1 — read it above, or from observations/r0.txt]'
    )


@pytest.mark.timeout(30)
def test_three_timeouts_of_one_command_stop_the_run(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    slow = {"command": "sleep 20", "timeout_seconds": 1}
    for i in range(4):
        server.push(completion("", [(f"t{i}", "sh", slow)]))
    result = live(server, Policy.named("current"), tmp_path / "ws", trace_path)
    assert (result.outcome.stop_reason, result.outcome.verdict, result.turns) == (
        "tool-timeouts",
        "budget_stop",
        3,
    )
    run = read_run(trace_path)
    assert all(t.tool_results[0].timed_out for t in run.turns)


@pytest.mark.timeout(30)
def test_turn_cap_ends_the_run(server: ChatServer, tmp_path: Path, trace_path: Path) -> None:
    for i in range(3):
        server.push(completion("", [write(f"w{i}", f"f{i}")]))
    result = live(server, Policy.named("current", max_turns=3), tmp_path / "ws", trace_path)
    assert (result.outcome.stop_reason, result.outcome.verdict, result.turns) == ("turn-cap", "turn_cap", 3)
    assert result.outcome.meter is not None and result.outcome.meter.words() == "turns: 3 of 3 turns"


class ServerHasIt(SystemClock):
    """A :class:`SystemClock` whose cut starts once the server holds the request (its readiness signal): a loaded
    machine may otherwise cut the call before the server reads it, and the next request would take its item."""

    def __init__(self, server: ChatServer, reading: Callable[[], float]) -> None:
        super().__init__(reading)
        object.__setattr__(self, "server", server)

    async def call(self, request: Coroutine[Any, Any, T], deadline: float | None) -> T:
        task, held = asyncio.ensure_future(request), len(self.server.requests)
        while len(self.server.requests) == held and not task.done():
            await asyncio.sleep(0.01)

        async def rest() -> T:
            return await task

        return await super().call(rest(), deadline)


@pytest.mark.timeout(30)
def test_a_call_cut_by_the_lease_starts_the_deadline_landing(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    server.push(Hang(), completion("landed safely"))
    # The clock is an input: the first call is sent 0.5 s before a 100 s lease ends, so the hanging call is cut by
    # the lease (a real 0.5 s wait); the landing then has its whole 10 s reserve for the next call.
    readings = iter([0.0, 0.0, 99.5, 99.6, 99.6, 99.6])
    clock = ServerHasIt(server, lambda: next(readings, 99.7))
    result = live(server, Policy.named("current", deadline_s=100.0), tmp_path / "ws", trace_path, clock=clock)
    assert result.outcome.stop_reason == "done" and result.outcome.exhausted == "deadline"
    assert result.outcome.verdict == "unverified_success"  # a deadline is a clock fact, not ability evidence
    landing = server.requests[1]["messages"][-1]
    assert landing == {"role": "user", "content": msg.DEADLINE_LANDING_TEXT}
    assert [(d.action, d.kind) for d in result.decisions][:2] == [
        ("start-landing", "deadline"),
        ("inject", msg.DEADLINE_LANDING),
    ]
    assert result.decisions[0].phase == "error" and result.decisions[0].data["elapsed_s"] == 99.6
    assert result.outcome.meter is not None and result.outcome.meter.words() == "deadline: 99 of 100 seconds"


@pytest.mark.timeout(30)
def test_cancellation_lands_and_records_the_outcome(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    server.push(completion("", [write("a", "x")]), Hang())

    async def go() -> None:
        async with ChatClient(server.base_url, "m") as client:
            loop = LiveLoop(Policy.named("current"), client, Toolbox(Workspace(tmp_path / "ws")))
            with Recorder(trace_path, loop.header("t")) as rec:
                task = asyncio.create_task(loop.run("t", rec))
                while len(server.requests) < 2:
                    await asyncio.sleep(0.01)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

    asyncio.run(go())
    run = read_run(trace_path)
    assert (run.outcome.stop_reason, run.outcome.verdict) == ("cancelled", "unverified_success")
    assert len(run.turns) == 1


@pytest.mark.timeout(30)
def test_a_key_echoed_by_the_server_is_redacted_everywhere(
    server: ChatServer, tmp_path: Path, trace_path: Path, keep
) -> None:
    server.push(completion("", [write("a", "x")]))
    server.responder = lambda body: Answer(
        403, {"error": {"message": f"key {server.headers[-1]['authorization']} may not use this model"}}
    )
    result = live(server, Policy.named("current"), tmp_path / "ws", trace_path)
    keep(result.error)
    keep(result.outcome)
    assert server.headers[1]["authorization"] == f"Bearer {SUITE_KEY}"
    assert (result.outcome.stop_reason, result.outcome.verdict) == ("error", "provider_failure")
    assert result.error is not None and "[redacted]" in result.error and SUITE_KEY not in result.error
    text = trace_path.read_text()
    assert "[redacted]" in text and SUITE_KEY not in text


@pytest.mark.timeout(30)
def test_old_observations_decay_once_the_window_is_exceeded(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    # each turn writes a file (acting on what it read) and prints 9,000 new bytes; at the unknown window's
    # 32,768-byte observation budget the spent results are stubbed (docs/governors.md §5.14)
    for i in range(6):
        calls = [
            write(f"w{i}", f"f{i}.txt"),
            (f"s{i}", "sh", {"command": f"yes {i}{'x' * 99} | head -c 9000"}),
        ]
        server.push(completion("", calls))
    server.push(completion("done"))
    result = live(server, Policy.named("current"), tmp_path / "ws", trace_path)
    assert result.outcome.stop_reason == "done"
    run = read_run(trace_path)
    rewrites = [e for e in run.events if e.kind == "prefix-rewritten"]
    assert rewrites and rewrites[0].turn == 4 and rewrites[0].data["working"] == 32_768
    sent = server.requests[4]["messages"]
    stubs = [m["content"] for m in sent if m["role"] == "tool" and m["content"].startswith("[sh ")]
    assert stubs and all("bytes, superseded]" in s or "spilled to" in s for s in stubs)
    assert sum(len(m["content"].encode()) for m in sent if m["role"] == "tool") <= 32_768
    # the trace keeps what was actually sent: the stubbed messages are in turn 4's request
    assert any((m.content or "").startswith("[sh ") for m in run.request(4))


@pytest.mark.timeout(30)
def test_with_a_context_length_the_manager_bounds_every_send(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    for i in range(8):
        server.push(
            completion(
                "", [(f"s{i}", "sh", {"command": f"yes {i}{'x' * 99} | head -c 3000"})], prompt=800 * (i + 1)
            )
        )
    server.push(completion("done"))
    policy = Policy.named("current", context_length=6_000)
    manager = ContextWindowManager(6_000)
    result = live(server, policy, tmp_path / "ws", trace_path, manager=manager, window=6_000)
    assert result.outcome.stop_reason == "done"
    run = read_run(trace_path)
    prunes = [e for e in run.events if e.kind == "prune"]
    assert [e.turn for e in prunes] == [7, 8]
    assert all(e.data["tokens_after"] <= e.data["budget"] < e.data["tokens_before"] for e in prunes)
    # what was sent is what the trace says was sent: fewer messages than the whole transcript
    assert len(server.requests[7]["messages"]) == len(run.request(7)) < len(server.requests[6]["messages"])
    assert run.context_length == 6_000 and run.policy is not None and run.policy.context_length == 6_000


@pytest.mark.timeout(30)
def test_a_transcript_that_cannot_fit_ends_context_truncated_without_a_call(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    server.push(completion("never asked"))
    policy = Policy.named("current", context_length=200)
    result = live(
        server, policy, tmp_path / "ws", trace_path, window=200
    )  # the manager comes from the policy
    assert (result.outcome.stop_reason, result.outcome.verdict, result.turns) == (
        "context-truncated",
        "context_truncated",
        0,
    )
    assert server.requests == []
    run = read_run(trace_path)
    assert [e.kind for e in run.events] == [
        "context-truncated",
        "context-truncated",
    ]  # the manager's, the stop


@pytest.mark.timeout(30)
def test_guidance_in_the_mailbox_reopens_a_final_answer(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    mailbox = QueueMailbox()
    replies = iter([completion("a poem about mountains"), completion("a poem about the sea")])

    def answer(body):  # the guidance arrives while the first call is in flight (read at the top of a turn, it
        if len(server.requests) == 1:  # would simply be delivered before the call: step D)
            mailbox.put("make it about the sea")
        return next(replies)

    server.responder = answer
    result = live(server, Policy.named("current"), tmp_path / "ws", trace_path, mailbox=mailbox)
    assert (result.outcome.stop_reason, result.outcome.text, result.turns) == (
        "done",
        "a poem about the sea",
        2,
    )
    assert server.requests[1]["messages"][-2:] == [
        {"role": "assistant", "content": "a poem about mountains"},
        {"role": "user", "content": GUIDANCE_PREFIX + "make it about the sea"},
    ]
    assert not mailbox.pending()


@pytest.mark.timeout(30)
def test_tools_cannot_leak_the_key_into_the_trace(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text(f"someone pasted {SUITE_KEY} here")
    server.push(
        completion(
            "",
            [
                ("e", "sh", {"command": f"env | grep {SUITE_KEY_ENV} || echo withheld"}),
                ("r", "read", {"path": "notes.txt"}),
            ],
        ),
        completion("done"),
    )

    async def go() -> None:
        secret = Secret.from_env(SUITE_KEY_ENV)
        async with ChatClient(server.base_url, "m", api_key=secret) as client:
            loop = LiveLoop(
                Policy.named("current"), client, Toolbox(Workspace(ws), hidden_env=(SUITE_KEY_ENV,))
            )
            with Recorder(trace_path, loop.header("t"), redact=secret.redact) as rec:
                await loop.run("t", rec)

    asyncio.run(go())
    run = read_run(trace_path)
    env_result, read_result = run.turns[0].tool_results
    assert env_result.content == "withheld\n[exit code 0]"
    assert read_result.content == "someone pasted [redacted] here"
    assert SUITE_KEY not in trace_path.read_text()


class Ticking:
    """A provider whose every call takes ``seconds`` on an injected clock (time is an input)."""

    def __init__(self, inner: ChatClient, seconds: float) -> None:
        self.inner, self.seconds, self.now = inner, seconds, 0.0

    def clock(self) -> float:
        return self.now

    async def complete(self, messages, tools):  # type: ignore[no-untyped-def]
        self.now += self.seconds
        return await self.inner.complete(messages, tools)


@pytest.mark.timeout(30)
def test_wall_pace_deadline_landing_and_a_cut_inside_the_landing(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    for i in range(8):
        server.push(completion("", [write(f"w{i}", f"f{i}.txt")]))

    async def go() -> LoopResult:
        async with ChatClient(server.base_url, "m") as client:
            ticking = Ticking(client, 20.0)
            policy = Policy.named("current", deadline_s=100.0)  # reserve min(100/10, 2 min) = 10 s
            loop = LiveLoop(policy, ticking, Toolbox(Workspace(tmp_path / "ws")), clock=ticking.clock)
            with Recorder(trace_path, loop.header("t")) as rec:
                return await loop.run("t", rec)

    result = asyncio.run(go())
    said = [(d.turn, d.phase, d.action, d.kind) for d in result.decisions if d.action != "note"]
    assert said == [
        (3, "start", "inject", msg.WALL_PACE),  # 60 s gone > 0.5 x 100 s
        (5, "start", "start-landing", "deadline"),  # 0 s left <= the 10 s reserve
        (5, "start", "inject", msg.DEADLINE_LANDING),
        (5, "error", "stop", "deadline"),  # the next call's landing clock (110 s) had run out at 120 s
    ]
    assert (result.outcome.stop_reason, result.outcome.verdict) == ("deadline", "provider_failure")
    assert result.outcome.meter is not None and (result.outcome.meter.name, result.outcome.meter.reached) == (
        "deadline",
        120,
    )
    assert server.requests[3]["messages"][-1]["content"].startswith(
        "The clock for this task now reads 1m gone and 40s left."
    )
    assert len(server.requests) == 6
