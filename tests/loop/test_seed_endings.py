"""The rest of the seed's loop, live against the loopback server — reflex promotion, the cooperative split, the job
board, cancel and pause from the caller, reading its own landing (the closer), tool-side model spend — and each trace
the loop writes replays to the same decisions (offline replay and recorded mode)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.loop.chat_server import ChatServer, completion
from tests.loop.conftest import RecordingSleep
from tests.loop.test_live_equals_replay import assert_same
from workbench.govern import Policy
from workbench.govern.cost import ledger_total
from workbench.govern.endings import DEFAULT_PROMOTION_TEXT, REFLEX_SYSTEM_PROMPT
from workbench.loop.client import ChatClient
from workbench.loop.closer import CheckCloser
from workbench.loop.loop import SYSTEM_PROMPT, LiveLoop, LoopResult
from workbench.loop.mailbox import BOARD_PREFIX, GUIDANCE_PREFIX, QueueMailbox
from workbench.loop.recorder import Recorder
from workbench.loop.tools import Batch, Toolbox
from workbench.loop.workspace import Workspace
from workbench.trace import read_run
from workbench.trace.schema import ToolCall, Usage


def live(server: ChatServer, policy: Policy, ws: Path, trace: Path, **kw: Any) -> LoopResult:
    async def go() -> LoopResult:
        async with ChatClient(server.base_url, "m", sleep=RecordingSleep()) as client:
            tools = kw.pop("tools", None) or Toolbox(Workspace(ws))
            closer = kw.pop("closer", None)
            loop = LiveLoop(policy, client, tools, closer=closer(tools) if closer else None, **kw)
            with Recorder(trace, loop.header("the task")) as rec:
                return await loop.run("the task", rec)

    return asyncio.run(go())


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def sh(cid: str, command: str) -> tuple[str, str, dict[str, Any]]:
    return (cid, "sh", {"command": command})


@pytest.mark.timeout(30)
def test_a_reflex_gets_the_seed_paragraph_and_promote_and_a_promote_ends_it(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    policy = Policy.named("current", reflex=True, swarm=True, grant=22_000, max_turns=12)
    server.push(
        completion("", [sh("a", "ls")]),
        completion(
            "", [sh("b", "touch dropped.txt"), ("p", "promote", {"partial": "three files need changes"})]
        ),
    )
    result = live(server, policy, tmp_path / "ws", trace_path)
    first = server.requests[0]
    assert first["messages"][0]["content"] == SYSTEM_PROMPT + REFLEX_SYSTEM_PROMPT
    assert tool_names(first) == [
        "sh",
        "read",
        "write",
        "edit",
        "promote",
    ]  # a reflex never holds request_split
    outcome = result.outcome
    assert (outcome.stop_reason, outcome.verdict, outcome.text) == (
        "promote",
        "unverified_success",
        "three files need changes",
    )
    assert not (tmp_path / "ws" / "dropped.txt").exists()  # the other call of the turn was dropped
    run = read_run(trace_path)
    assert run.turns[1].tool_results == [] and len(run.turns[1].tool_calls) == 2
    assert_same(run, policy)


@pytest.mark.timeout(30)
def test_a_promote_without_words_takes_the_seed_sentence(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    policy = Policy.named("current", reflex=True)
    server.push(completion("", [("p", "promote", {})]))
    assert live(server, policy, tmp_path / "ws", trace_path).outcome.text == DEFAULT_PROMOTION_TEXT


@pytest.mark.timeout(30)
def test_a_split_records_its_parts_drops_the_turns_calls_and_replays(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    policy = Policy.named("current", swarm=True)
    server.push(
        completion("I looked around", [sh("a", "ls")]),
        completion(
            "",
            [("s", "request_split", {"parts": ["port the parser", "port the writer"]}), sh("b", "touch x")],
        ),
    )
    result = live(server, policy, tmp_path / "ws", trace_path)
    assert tool_names(server.requests[0]) == ["sh", "read", "write", "edit", "request_split"]
    outcome = result.outcome
    assert (outcome.stop_reason, outcome.text, outcome.parts) == (
        "split", "I looked around", ["port the parser", "port the writer"],
    )  # fmt: skip
    assert outcome.detail == "asked to divide into 2 parts" and not (tmp_path / "ws" / "x").exists()
    run = read_run(trace_path)
    assert run.outcome.parts == ["port the parser", "port the writer"]
    assert_same(run, policy)


@pytest.mark.timeout(30)
def test_with_the_swarm_off_request_split_is_absent_and_is_just_an_unknown_tool(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    policy = Policy.named("current")
    server.push(completion("", [("s", "request_split", {"parts": []})]), completion("carried on"))
    result = live(server, policy, tmp_path / "ws", trace_path)
    assert "request_split" not in tool_names(server.requests[0])
    assert result.outcome.stop_reason == "done" and result.turns == 2
    assert "unknown tool 'request_split'" in (read_run(trace_path).turns[0].tool_results[0].content or "")


@pytest.mark.timeout(30)
def test_board_notes_are_read_before_the_persons_guidance_and_both_are_recorded(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    mailbox = QueueMailbox()
    mailbox.put("use the v2 API")
    mailbox.post("the schema file moved to docs/schema.json")
    server.push(completion("", [sh("a", "true")]), completion("done"))
    policy = Policy.named("current")
    live(server, policy, tmp_path / "ws", trace_path, mailbox=mailbox)
    sent = server.requests[0]["messages"]
    assert [m["content"] for m in sent[2:]] == [
        BOARD_PREFIX + "the schema file moved to docs/schema.json",
        GUIDANCE_PREFIX + "use the v2 API",
    ]
    run = read_run(trace_path)
    assert [(e.turn, e.kind, e.reason) for e in run.events if e.kind in ("board", "guidance")] == [
        (0, "board", "the schema file moved to docs/schema.json"),
        (0, "guidance", "use the v2 API"),
    ]
    assert [m.kind for m in run.messages[2:4]] == ["board", "guidance"]
    # recorded mode delivers them again at the same turn
    loop = LiveLoop.from_recording(run, policy)
    assert loop.mailbox is not None
    assert loop.mailbox.board(0) == ["the schema file moved to docs/schema.json"]
    assert loop.mailbox.guidance(0) == ["use the v2 API"] and loop.mailbox.board(1) == []
    assert_same(run, policy)


@pytest.mark.timeout(30)
def test_cancel_from_the_caller_lands_cancelled_at_the_turn_boundary(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    mailbox = QueueMailbox()

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        mailbox.cancel()  # the caller cancels while the first call is in flight
        return completion("", [sh("a", "echo ran > ran.txt")])

    server.responder = answer
    result = live(server, Policy.named("current"), tmp_path / "ws", trace_path, mailbox=mailbox)
    assert (
        len(server.requests) == 1 and (tmp_path / "ws" / "ran.txt").exists()
    )  # the turn finished, then it stopped
    assert (result.outcome.stop_reason, result.outcome.verdict, result.outcome.detail) == (
        "cancelled", "unverified_success", "cancel requested — stopping at turn boundary",
    )  # fmt: skip
    run = read_run(trace_path)
    assert run.outcome.stop_reason == "cancelled"
    assert_same(run, Policy.named("current"))  # the Governor's decisions up to the cancel replay as they were


async def held(trace_path: Path) -> None:
    """Until the loop holds at the turn boundary: it flushes its ``paused`` event to the trace before it waits. The
    bound only guards against a hang (the test's own timeout is the same)."""
    deadline = time.monotonic() + 30
    while '"paused"' not in (trace_path.read_text(errors="replace") if trace_path.exists() else ""):
        assert time.monotonic() < deadline, "the loop never paused"
        await asyncio.sleep(0.01)


@pytest.mark.timeout(30)
def test_pause_holds_between_turns_and_resume_continues(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    mailbox = QueueMailbox()
    replies = iter([completion("", [sh("a", "true")]), completion("finished")])

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if len(server.requests) == 1:
            mailbox.pause()
        return next(replies)

    async def go() -> tuple[LoopResult, float]:
        async with ChatClient(server.base_url, "m") as client:
            loop = LiveLoop(
                Policy.named("current"), client, Toolbox(Workspace(tmp_path / "ws")), mailbox=mailbox
            )
            with Recorder(trace_path, loop.header("t")) as rec:
                task = asyncio.create_task(loop.run("t", rec))
                await held(trace_path)
                await asyncio.sleep(
                    0.4
                )  # held for a while: no request goes out (a negative, not a readiness wait)
                requests_while_paused = len(server.requests)
                started = time.monotonic()
                mailbox.resume()
                result = await task
                assert requests_while_paused == 1
                return result, time.monotonic() - started

    server.responder = answer
    result, _ = asyncio.run(go())
    assert (result.outcome.stop_reason, result.turns, result.outcome.text) == ("done", 2, "finished")
    run = read_run(trace_path)
    assert [(e.turn, e.kind) for e in run.events if e.kind in ("paused", "resumed")] == [
        (1, "paused"),
        (1, "resumed"),
    ]
    assert_same(run, Policy.named("current"))


@pytest.mark.timeout(30)
def test_cancel_while_paused_lands_cancelled(server: ChatServer, tmp_path: Path, trace_path: Path) -> None:
    mailbox = QueueMailbox()

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        mailbox.pause()
        return completion("", [sh("a", "true")])

    async def go() -> LoopResult:
        async with ChatClient(server.base_url, "m") as client:
            loop = LiveLoop(
                Policy.named("current"), client, Toolbox(Workspace(tmp_path / "ws")), mailbox=mailbox
            )
            with Recorder(trace_path, loop.header("t")) as rec:
                task = asyncio.create_task(loop.run("t", rec))
                await held(trace_path)
                mailbox.cancel()
                return await task

    server.responder = answer
    result = asyncio.run(go())
    assert result.outcome.stop_reason == "cancelled" and len(server.requests) == 1
    assert [e.kind for e in read_run(trace_path).events if e.kind in ("paused", "resumed")] == ["paused"]


def check(command: str):  # type: ignore[no-untyped-def]
    return lambda tools: CheckCloser(command, tools, timeout_s=20)


@pytest.mark.timeout(60)
def test_the_closer_puts_a_red_check_back_once_and_the_leaf_fixes_it(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    server.push(
        completion("all done"),
        completion("", [("w", "write", {"path": "fixed.txt", "content": "ok"})]),
        completion("fixed and checked"),
    )
    policy = Policy.named("current")
    result = live(server, policy, tmp_path / "ws", trace_path, closer=check("test -f fixed.txt"))
    assert (result.outcome.stop_reason, result.outcome.verdict, result.outcome.text) == (
        "done", "unverified_success", "fixed and checked",
    )  # fmt: skip
    sent = server.requests[1]["messages"]
    assert sent[-2] == {"role": "assistant", "content": "all done"}  # the answer went in as a draft
    assert sent[-1]["content"].startswith("Before your answer is delivered, the project's check was run")
    assert "[exit code 1]" in sent[-1]["content"]
    run = read_run(trace_path)
    assert [(e.turn, e.kind, e.data.get("finding")) for e in run.events if e.kind == "self-close"] == [
        (0, "self-close", "check-red")
    ]
    assert run.outcome.findings is None
    assert_same(run, policy)


@pytest.mark.timeout(60)
def test_the_closer_asks_once_per_kind_then_lands_with_the_finding_standing(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    server.push(completion("done"), completion("still done"))
    policy = Policy.named("current")
    result = live(server, policy, tmp_path / "ws", trace_path, closer=check("exit 3"))
    assert (result.outcome.stop_reason, result.turns, result.outcome.text) == ("done", 2, "still done")
    assert result.outcome.findings is not None and "exit code 3" in result.outcome.findings[0]
    run = read_run(trace_path)
    assert [e.kind for e in run.events if e.kind in ("self-close", "standing-finding")] == [
        "self-close",
        "standing-finding",
    ]
    assert_same(run, policy)


@pytest.mark.timeout(60)
def test_with_no_room_left_the_closer_does_not_reopen(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    server.push(completion("done", prompt=900, completion_tokens=200))
    policy = Policy.named("current", grant=1_000)
    result = live(server, policy, tmp_path / "ws", trace_path, closer=check("exit 1"))
    assert result.turns == 1 and result.outcome.findings is not None and len(server.requests) == 1


class SpendingTools:
    """A toolbox whose `ask` tool calls a model itself: its usage rides on the result."""

    def __init__(self, inner: Toolbox) -> None:
        self.inner = inner

    async def run_batch(
        self, calls: Sequence[ToolCall], turn: int, *, budget_s: float | None = None
    ) -> Batch:
        batch = await self.inner.run_batch(calls, turn, budget_s=budget_s)
        results = tuple(
            r.model_copy(update={"usage": Usage(prompt=7, completion=3)}) if c.name == "sh" else r
            for c, r in zip(calls, batch.results, strict=True)
        )
        return Batch(results, batch.mutated)


@pytest.mark.timeout(30)
def test_tool_side_spend_is_billed_to_the_node_not_the_sends_and_replays(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    for i in range(3):
        server.push(completion("", [sh(f"c{i}", f"echo {i}")], prompt=1_000 * (i + 1), completion_tokens=50))
    server.push(completion("done", prompt=4_000, completion_tokens=10))
    policy = Policy.named("current")
    tools = SpendingTools(Toolbox(Workspace(tmp_path / "ws")))
    result = live(
        server,
        policy,
        tmp_path / "ws",
        trace_path,
        tools=tools,
        spend_before=(Usage(prompt=40, cached=10, completion=6),),
    )
    sends = 1_000 + 2_000 + 3_000 + 4_000
    node_prompt = sends + 3 * 7 + 40
    node_completion = 3 * 50 + 10 + 3 * 3 + 6
    assert result.spent == (node_prompt - 10) + 10 * 10 // 100 + node_completion
    run = read_run(trace_path)
    assert [r.usage for t in run.turns for r in t.tool_results] == [Usage(prompt=7, completion=3)] * 3
    assert [(e.turn, e.kind, e.data) for e in run.events if e.kind == "tool-spend"] == [
        (None, "tool-spend", {"prompt": 40, "cached": 10, "completion": 6, "calls": 1})
    ]
    assert sum(t.usage.prompt or 0 for t in run.turns) == sends  # Σsent excludes the tool spend
    offline = assert_same(run, policy)
    assert offline.spent == result.spent


def test_the_ledger_of_a_replayed_trace_sums_to_its_node_row(tmp_path: Path) -> None:
    from workbench.govern import Governor, Reply

    gov = Governor(Policy.named("current"))
    gov.tool_spend(5, 0, 1)
    gov.begin_turn(0.0)
    gov.after_response(Reply(100, 20, 10, "stop", "x"), 0.0)
    assert ledger_total(gov.ledger) == gov.totals and gov.totals.sent == 100


def test_the_sweep_fast_path_leaves_the_new_mechanisms_to_the_engine(tmp_path: Path) -> None:
    from workbench.replay.fast import policy_eligible, run_eligible
    from workbench.trace.schema import Event, Outcome, Run, ToolResult, Turn

    assert not policy_eligible(Policy.named("current", reflex=True))
    assert not policy_eligible(Policy.named("current", swarm=True))
    plain = Run(
        run_id="r", source="workbench", turns=[Turn(index=0, usage=Usage(prompt=10))], outcome=Outcome()
    )
    assert run_eligible(plain, Policy.named("current"))
    spend = plain.model_copy(update={"events": [Event(turn=None, kind="tool-spend", data={"prompt": 5})]})
    assert not run_eligible(spend, Policy.named("current"))
    on_result = plain.model_copy(
        update={
            "turns": [Turn(index=0, usage=Usage(prompt=10), tool_results=[ToolResult(usage=Usage(prompt=3))])]
        }
    )
    assert not run_eligible(on_result, Policy.named("current"))
