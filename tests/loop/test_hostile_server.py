"""A hostile or broken server meets a bounded client and a loop that always lands: keys it echoes back are masked
before any cut, out-of-range usage and over-deep arguments are provider faults, a reply too large or too slow is
refused by size and by the whole call's time, and a failure inside the loop ends with an ``error`` outcome."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.loop.chat_server import Answer, ChatServer, Stream, completion
from tests.loop.conftest import SUITE_KEY, SUITE_KEY_ENV, RecordingSleep
from workbench.govern import Policy
from workbench.loop.client import ChatClient, Timeouts
from workbench.loop.errors import CallFailed, MalformedResponse, RequestRefused, TransportError, UpstreamError
from workbench.loop.loop import LiveLoop, LoopResult
from workbench.loop.recorder import Recorder
from workbench.loop.secrets import Secret
from workbench.loop.tools import Batch, Toolbox
from workbench.loop.workspace import Workspace
from workbench.trace import read_run
from workbench.trace.schema import Message

HELLO = [Message(role="user", content="hello")]


def forms(key: str = SUITE_KEY) -> dict[str, str]:
    return {
        "key": key,
        "base64": base64.b64encode(key.encode()).decode().rstrip("="),
        "reversed": key[::-1],
        "prefix12": key[:12],
    }


def leaked(text: str) -> list[str]:
    return [name for name, form in forms().items() if form in text]


def complete(server: ChatServer, **kw: object):
    async def go():
        secret = Secret.from_env(SUITE_KEY_ENV)
        async with ChatClient(
            server.base_url,
            "m",
            api_key=secret,
            sleep=RecordingSleep(),
            **kw,  # type: ignore[arg-type]
        ) as client:
            return await client.complete(HELLO, [])

    return asyncio.run(go())


@pytest.mark.timeout(20)
@pytest.mark.parametrize("offset", [0, 150, 290, 295, 299])
def test_an_echoed_key_is_masked_before_the_error_text_is_cut(
    server: ChatServer, artifacts: Path, keep, offset: int
) -> None:
    server.push(
        Answer(400, {"error": {"message": "x" * offset + f"bad key {SUITE_KEY}"}}),
    )
    with pytest.raises(RequestRefused) as caught:
        complete(server)
    keep(caught.value)
    assert leaked(str(caught.value)) == []
    if offset == 0:
        assert str(caught.value) == "HTTP 400: bad key [redacted]"


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "body",
    [
        lambda k: ("y" * 290 + k).encode(),  # a plain-text error body
        lambda k: b"<html>" + base64.b64encode(f"Authorization: Bearer {k}".encode()) + b"</html>",
        lambda k: orjson.dumps({"error": {"message": "no", "metadata": {"raw": "z" * 295 + k[::-1]}}}),
    ],
)
def test_error_bodies_echoing_the_key_in_any_form_leave_no_trace_of_it(
    server: ChatServer, keep, body
) -> None:
    server.push(Answer(401, body(SUITE_KEY)))
    with pytest.raises(RequestRefused) as caught:
        complete(server)
    keep(caught.value)
    assert leaked(str(caught.value)) == []


@pytest.mark.timeout(20)
def test_a_non_json_200_quoting_the_key_is_masked_before_its_head_is_quoted(server: ChatServer, keep) -> None:
    server.push(*[Answer(200, ("w" * 100 + SUITE_KEY).encode())] * 3)
    with pytest.raises(CallFailed) as caught:
        complete(server)
    keep(caught.value)
    assert isinstance(caught.value.last, MalformedResponse) and leaked(str(caught.value)) == []


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("usage", "said"),
    [
        (
            {"prompt_tokens": 1e30, "completion_tokens": 1},
            "usage.prompt_tokens is 1e+30, outside 0..1,000,000,000",
        ),
        ({"prompt_tokens": 10, "completion_tokens": -5}, "usage.completion_tokens is -5, outside"),
        ({"prompt_tokens": 10, "completion_tokens": 1, "cost": 1e300}, "usage.cost is 1e+300, outside"),
    ],
)
def test_out_of_range_usage_is_a_provider_fault(server: ChatServer, usage: dict, said: str) -> None:
    body = completion("hi")
    body["usage"] = usage
    server.push(body, body, body)
    with pytest.raises(CallFailed) as caught:
        complete(server)
    assert isinstance(caught.value.last, MalformedResponse) and said in caught.value.last.message


@pytest.mark.timeout(20)
def test_object_arguments_nested_past_what_json_writers_take_are_a_provider_fault(server: ChatServer) -> None:
    nested = '{"a": ' * 300 + '"leaf"' + "}" * 300  # deeper than orjson writes (255), as a server may send
    message = (
        '{"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "function": '
    )
    message += '{"name": "sh", "arguments": ' + nested + "}}]}"
    body = Answer(
        200,
        (
            '{"id": "x", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": '
            + message
            + "}]}"
        ).encode(),
    )
    server.push(body, body, body)
    with pytest.raises(CallFailed) as caught:
        complete(server)
    assert "tool call arguments cannot be re-encoded" in caught.value.last.message


def endless() -> Iterator[bytes]:
    block = b'{"pad": "' + b"x" * 65536
    while True:
        yield block


@pytest.mark.timeout(30)
def test_a_reply_past_the_size_cap_is_refused_declared_or_streamed(server: ChatServer) -> None:
    cap = 1 << 20
    server.push(
        Stream(lambda: iter([b"x" * 1024] * 300_000), length=300 << 20),  # declares 300 MB
        Stream(endless),  # chunked, never ends
        completion("small enough"),
    )
    done = complete(server, max_response_bytes=cap)
    assert done.reply.text == "small enough"
    assert [a.message for a in done.failed] == [
        f"reply of {300 << 20:,} bytes refused (the cap is {cap:,} bytes)",
        f"reply larger than {cap:,} bytes refused (it is read no further)",
    ]


@pytest.mark.timeout(30)
def test_a_trickling_server_is_cut_by_the_whole_call_limit_not_the_chunk_timeout(server: ChatServer) -> None:
    trickle = Stream(lambda: iter([b" "] * 10_000), delay=0.1)
    server.push(trickle, trickle, trickle)
    started = time.monotonic()
    with pytest.raises(CallFailed) as caught:
        complete(server, timeouts=Timeouts(read=5.0, total=0.8))
    # the trickle would last 1,000 s per attempt: a bound against a hang, loose enough for a loaded machine
    assert time.monotonic() - started < 25
    assert isinstance(caught.value.last, TransportError)
    assert "no complete answer within 0.8s" in caught.value.last.message


# -- the loop lands every failure -----------------------------------------------------------------------------------


class Exploding:
    """A tool runner with a bug: the loop must still land, with an ``error`` outcome and a complete trace."""

    async def run_batch(self, calls, turn, *, budget_s=None) -> Batch:  # type: ignore[no-untyped-def]
        raise RuntimeError(f"tool runner bug holding {SUITE_KEY}")


def run_loop(server: ChatServer, tools, trace: Path, policy: Policy | None = None) -> LoopResult:
    async def go() -> LoopResult:
        secret = Secret.from_env(SUITE_KEY_ENV)
        async with ChatClient(server.base_url, "m", api_key=secret, sleep=RecordingSleep()) as client:
            loop = LiveLoop(policy or Policy.named("current"), client, tools, redact=secret.redact)
            with Recorder(trace, loop.header("t"), redact=secret.redact) as rec:
                return await loop.run("t", rec)

    return asyncio.run(go())


@pytest.mark.timeout(30)
def test_a_failure_inside_the_loop_lands_an_error_outcome(server: ChatServer, trace_path: Path) -> None:
    server.push(completion("", [("a", "write", {"path": "f", "content": "x"})]))
    result = run_loop(server, Exploding(), trace_path)
    assert (result.outcome.stop_reason, result.outcome.verdict) == ("loop-error", "error")
    assert result.error == "RuntimeError: tool runner bug holding [redacted]"
    run = read_run(trace_path)
    assert (
        run.diagnostics == [] and run.outcome.stop_reason == "loop-error" and run.outcome.verdict == "error"
    )
    assert run.outcome.detail == result.error
    assert [e.kind for e in run.events][-2:] == ["loop-error", "loop-error"]
    assert leaked(trace_path.read_text()) == []


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "fault",
    [
        Answer(200, b"not json at all"),
        Answer(500, {"error": {"message": "upstream down"}}),
        Stream(endless),
    ],
)
def test_every_provider_fault_ends_with_an_outcome_in_the_trace(
    server: ChatServer, tmp_path: Path, trace_path: Path, fault
) -> None:
    server.push(fault, fault, fault)
    result = run_loop(server, Toolbox(Workspace(tmp_path / "ws")), trace_path)
    run = read_run(trace_path)
    assert run.outcome.stop_reason == "error" and run.outcome.verdict == "provider_failure"
    assert result.error and run.outcome.detail == result.error


@pytest.mark.timeout(30)
def test_a_cancel_lands_cancelled_with_its_reason_and_kills_the_command(
    server: ChatServer, tmp_path: Path, trace_path: Path
) -> None:
    from tests.loop.conftest import processes_with

    ws = tmp_path / "ws"
    server.push(
        completion("", [("s", "sh", {"command": "touch started; sleep 981.27", "timeout_seconds": 120})])
    )

    async def go() -> None:
        secret = Secret.from_env(SUITE_KEY_ENV)
        async with ChatClient(server.base_url, "m", api_key=secret) as client:
            loop = LiveLoop(Policy.named("current"), client, Toolbox(Workspace(ws)))
            with Recorder(trace_path, loop.header("t"), redact=secret.redact) as rec:
                task = asyncio.create_task(loop.run("t", rec))
                while not (ws / "started").exists():
                    await asyncio.sleep(0.05)
                task.cancel("cancelled by SIGTERM")
                with pytest.raises(asyncio.CancelledError):
                    await task

    asyncio.run(go())
    run = read_run(trace_path)
    assert (run.outcome.stop_reason, run.outcome.detail) == ("cancelled", "cancelled by SIGTERM")
    assert processes_with("981.27") == []


def test_errors_never_name_an_unknown_kind() -> None:
    # the classes the client raises all carry a kind the trace records
    kinds = {
        cls.kind for cls in (MalformedResponse, TransportError, UpstreamError, RequestRefused, CallFailed)
    }
    assert kinds == {"malformed", "transport", "upstream", "refused", "call-failed"}


def test_the_python_api_refuses_a_trace_inside_the_workspace(server: ChatServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"

    async def go() -> None:
        async with ChatClient(server.base_url, "m") as client:
            loop = LiveLoop(Policy.named("current"), client, Toolbox(Workspace(ws)))
            with Recorder(ws / "sub" / "t.jsonl", loop.header("t")) as rec:
                await loop.run("t", rec)

    with pytest.raises(ValueError, match="lies inside the workspace"):
        asyncio.run(go())
    assert server.requests == []
