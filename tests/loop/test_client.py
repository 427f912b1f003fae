"""The provider client against the loopback server: one test per fault, each bounded by a timeout."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from tests.loop.chat_server import Answer, ChatServer, Cut, Hang, completion, router_error
from tests.loop.conftest import RecordingSleep
from workbench.loop.client import ChatClient, Timeouts, backoff_delay, note_failed_lane
from workbench.loop.errors import (
    CallFailed,
    ContextLengthExceeded,
    MalformedResponse,
    RateLimited,
    RequestRefused,
    UpstreamError,
)
from workbench.loop.secrets import Secret
from workbench.trace.schema import Message

HELLO = [Message(role="user", content="hello")]


def client_for(server: ChatServer, sleep: RecordingSleep, **kw: object) -> ChatClient:
    return ChatClient(server.base_url, "test-model", sleep=sleep, **kw)  # type: ignore[arg-type]


def call(client: ChatClient):
    async def go():
        async with client:
            return await client.complete(HELLO, [])

    return asyncio.run(go())


@pytest.mark.timeout(20)
def test_429_waits_retry_after_then_succeeds(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(Answer(429, {"error": {"message": "slow down"}}, {"Retry-After": "3"}), completion("hi"))
    done = call(client_for(server, sleep))
    assert done.reply.text == "hi"
    assert done.retries == 1
    assert sleep.delays == [3.0]  # the server asked for longer than the 0.5 s backoff
    assert done.failed[0].kind == "rate-limited" and done.failed[0].status == 429


@pytest.mark.timeout(20)
@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_retried_with_doubling_backoff(server: ChatServer, sleep: RecordingSleep, status: int) -> None:
    server.push(
        Answer(status, {"error": {"message": "boom"}}), Answer(status, b"upstream sad"), completion("ok")
    )
    done = call(client_for(server, sleep))
    assert done.reply.text == "ok"
    assert done.retries == 2
    assert sleep.delays == [0.5, 1.0]
    assert [a.status for a in done.failed] == [status, status]
    assert len(server.requests) == 3


@pytest.mark.timeout(20)
def test_three_failures_raise_call_failed(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(*[Answer(503, {"error": {"message": "down"}})] * 3)
    with pytest.raises(CallFailed) as info:
        call(client_for(server, sleep))
    assert info.value.attempts == 3
    assert isinstance(info.value.last, UpstreamError)
    assert len(info.value.failed_attempts) == 3
    assert sleep.delays == [0.5, 1.0]  # no wait after the last attempt
    assert len(server.requests) == 3


@pytest.mark.timeout(20)
def test_read_timeout_is_a_transport_error_and_retried(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(Hang(), completion("after the timeout"))
    done = call(client_for(server, sleep, timeouts=Timeouts(read=0.3)))
    assert done.reply.text == "after the timeout"
    assert [a.kind for a in done.failed] == ["transport"]
    assert "timeout" in done.failed[0].message.lower()


@pytest.mark.timeout(20)
def test_connection_cut_mid_body_is_retried(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(Cut(), completion("whole"))
    done = call(client_for(server, sleep))
    assert done.reply.text == "whole"
    assert [a.kind for a in done.failed] == ["transport"]


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "body",
    [
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, you requested 9100 tokens.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size",
                "type": "exceed_context_size_error",
            }
        },
        {
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 210000 tokens > 200000 maximum",
            }
        },
    ],
)
def test_context_length_400_is_its_own_error_and_not_retried(
    server: ChatServer, sleep: RecordingSleep, body: dict
) -> None:
    server.push(Answer(400, body), completion("never reached"))
    with pytest.raises(ContextLengthExceeded) as info:
        call(client_for(server, sleep))
    assert not isinstance(info.value, RequestRefused)
    assert info.value.status == 400
    assert len(server.requests) == 1 and sleep.delays == []


@pytest.mark.timeout(20)
def test_refusal_400_is_not_retried(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(
        Answer(
            400, {"error": {"message": "Invalid value for 'tool_choice'", "type": "invalid_request_error"}}
        ),
        completion("never reached"),
    )
    with pytest.raises(RequestRefused) as info:
        call(client_for(server, sleep))
    assert "tool_choice" in str(info.value)
    assert len(server.requests) == 1 and sleep.delays == []


@pytest.mark.timeout(20)
def test_malformed_json_is_classified_and_retried(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(Answer(200, b'{"choices": [ {"message": '), completion("fine"))
    done = call(client_for(server, sleep))
    assert done.reply.text == "fine"
    assert [a.kind for a in done.failed] == ["malformed"]


@pytest.mark.timeout(20)
def test_malformed_three_times_fails(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(*[Answer(200, b"<html>gateway</html>")] * 3)
    with pytest.raises(CallFailed) as info:
        call(client_for(server, sleep))
    assert isinstance(info.value.last, MalformedResponse)


@pytest.mark.timeout(20)
def test_length_stop_holding_tool_calls_is_parsed_whole(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(completion("", [("c1", "write", '{"path": "a.py", "content": "def f(')], finish="length"))
    done = call(client_for(server, sleep))
    assert done.reply.finish_reason == "length"
    assert [c.name for c in done.reply.tool_calls] == ["write"]


@pytest.mark.timeout(20)
def test_empty_reply_with_large_completion_count_is_parsed(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(completion("", completion_tokens=80_000))
    done = call(client_for(server, sleep))
    assert done.reply.text == "" and done.reply.tool_calls == ()
    assert done.reply.usage.completion == 80_000


@pytest.mark.timeout(20)
def test_named_lane_is_avoided_on_the_next_attempt_of_that_call_only(
    server: ChatServer, sleep: RecordingSleep
) -> None:
    server.push(
        router_error(502, "upstream failed", provider="Together"),
        router_error(503, "also failed", provider="together"),  # same lane, other spelling
        completion("third time"),
        completion("next call"),
    )

    async def go():
        async with client_for(server, sleep) as client:
            first = await client.complete(HELLO, [])
            second = await client.complete(HELLO, [])
            return first, second

    first, second = asyncio.run(go())
    assert first.reply.text == "third time" and second.reply.text == "next call"
    bodies = server.requests
    assert "provider" not in bodies[0]
    assert bodies[1]["provider"] == {"ignore": ["Together"]}
    assert bodies[2]["provider"] == {"ignore": ["Together"]}
    assert "provider" not in bodies[3]  # the list lived only for that call
    assert [a.lane for a in first.failed] == ["Together", "together"]


@pytest.mark.timeout(20)
def test_lane_named_by_finish_reason_error_in_a_200(server: ChatServer, sleep: RecordingSleep) -> None:
    bad = completion("", finish="error", provider="Fireworks")
    server.push(bad, completion("ok"))
    done = call(client_for(server, sleep))
    assert done.failed[0].lane == "Fireworks"
    assert server.requests[1]["provider"] == {"ignore": ["Fireworks"]}


@pytest.mark.timeout(20)
def test_cancellation_stops_waiting_on_the_network_at_once(server: ChatServer, sleep: RecordingSleep) -> None:
    server.push(Hang())

    async def go():
        async with client_for(server, sleep) as client:
            task = asyncio.create_task(client.complete(HELLO, []))
            while not server.requests:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(go())  # the server never answers; only cancellation can end this
    assert len(server.requests) == 1


@pytest.mark.timeout(20)
def test_cancellation_stops_a_backoff_wait_at_once(server: ChatServer) -> None:
    server.push(Answer(503, b"busy"), completion("never"))
    forever = asyncio.Event()
    entered = asyncio.Event()

    async def stuck_sleep(seconds: float) -> None:
        entered.set()
        await forever.wait()

    async def go():
        async with ChatClient(server.base_url, "m", sleep=stuck_sleep) as client:
            task = asyncio.create_task(client.complete(HELLO, []))
            await entered.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(go())
    assert len(server.requests) == 1


@pytest.mark.timeout(20)
@pytest.mark.parametrize("spelling", ["openai", "anthropic"])
def test_usage_reads_both_cached_spellings(server: ChatServer, sleep: RecordingSleep, spelling: str) -> None:
    server.push(
        completion("x", prompt=12_192, completion_tokens=800, cached=11_948, cached_spelling=spelling)
    )
    usage = call(client_for(server, sleep)).reply.usage
    assert (usage.prompt, usage.cached, usage.completion) == (12_192, 11_948, 800)


@pytest.mark.timeout(20)
def test_api_key_is_sent_but_never_echoed_into_an_error(server: ChatServer, sleep: RecordingSleep) -> None:
    key = "sk-echo-test-7f3a9c2e51"
    server.responder = lambda body: Answer(
        401, {"error": {"message": f"bad key {server.headers[-1]['authorization']}"}}
    )
    secret = Secret.from_env("ECHO_KEY", {"ECHO_KEY": key})
    with pytest.raises(RequestRefused) as info:
        call(client_for(server, sleep, api_key=secret))
    assert server.headers[0]["authorization"] == f"Bearer {key}"
    assert key not in str(info.value) and key not in repr(info.value)
    assert "[redacted]" in str(info.value)
    assert key not in repr(secret) and "ECHO_KEY" in repr(secret)


def test_backoff_and_lane_notes() -> None:
    assert [backoff_delay(a, UpstreamError("x")) for a in range(3)] == [0.5, 1.0, 2.0]
    assert backoff_delay(0, RateLimited("x", retry_after=10_000)) == 60.0
    assert note_failed_lane(("A",), "a") == ("A",)
    assert note_failed_lane(("A",), "B") == ("A", "B")


def test_missing_key_variable_is_named() -> None:
    with pytest.raises(KeyError, match="NOPE_KEY"):
        Secret.from_env("NOPE_KEY", {})


def test_request_body_sends_tool_transcript() -> None:
    from workbench.loop.wire import request_body
    from workbench.trace.schema import ToolCall

    call_ = ToolCall(id="c1", name="sh", arguments='{"command": "ls"}')
    body = request_body(
        "m",
        [Message(role="assistant", tool_calls=[call_]), Message(role="tool", tool_call_id="c1", content="a")],
        [],
    )
    assert body["messages"][0] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": '{"command": "ls"}'}}
        ],
    }
    assert body["messages"][1] == {"role": "tool", "content": "a", "tool_call_id": "c1"}
    assert orjson.loads(orjson.dumps(body))
