"""The wire format on bad input: any body a server sends becomes a Reply or a classified ProviderError."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from workbench.loop.errors import (
    ContextLengthExceeded,
    MalformedResponse,
    ProviderError,
    RateLimited,
    RequestRefused,
    UpstreamError,
)
from workbench.loop.wire import Reply, classify, parse_reply, parse_usage

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**62), 2**62)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.binary(max_size=200) | json_values.map(orjson.dumps))
def test_any_200_body_is_a_reply_or_a_classified_error(body: bytes) -> None:
    try:
        reply = parse_reply(body)
    except (MalformedResponse, UpstreamError):
        return
    assert isinstance(reply, Reply)


@given(st.integers(min_value=400, max_value=599), st.binary(max_size=200) | json_values.map(orjson.dumps))
def test_any_error_answer_is_classified(status: int, body: bytes) -> None:
    error = classify(status, body, {})
    assert isinstance(error, ProviderError) and error.status == status
    if status >= 500:
        assert isinstance(error, UpstreamError)
    elif status == 429:
        assert isinstance(error, RateLimited | ContextLengthExceeded)
    else:
        assert isinstance(error, RequestRefused | ContextLengthExceeded | UpstreamError)


@given(json_values)
def test_usage_never_invents_or_negates(usage: object) -> None:
    parsed = parse_usage(usage if isinstance(usage, dict) else None)
    for value in (parsed.prompt, parsed.cached, parsed.completion, parsed.cache_write):
        assert value is None or value >= 0


def test_usage_spellings_and_anthropic_native() -> None:
    assert parse_usage({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 4}}).cached == 4
    assert parse_usage({"prompt_tokens": 10, "cache_read_input_tokens": 6}).cached == 6
    native = parse_usage({"input_tokens": 5, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 5})
    assert (native.prompt, native.cached, native.cache_write) == (100, 90, 5)
    assert (
        parse_usage({"completion_tokens": 7, "completion_tokens_details": {"reasoning_tokens": 3}}).reasoning
        == 3
    )


@given(json_values, json_values, json_values)
def test_odd_tool_calls_parse_or_are_classified(cid: object, name: object, arguments: object) -> None:
    body = {
        "choices": [
            {
                "message": {"tool_calls": [{"id": cid, "function": {"name": name, "arguments": arguments}}]},
                "finish_reason": "tool_calls",
            }
        ]
    }
    reply = parse_reply(orjson.dumps(body))
    assert len(reply.tool_calls) == 1 and isinstance(reply.tool_calls[0].arguments, str)
