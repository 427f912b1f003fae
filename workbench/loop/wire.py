"""The OpenAI chat-completions wire format, pure functions with no I/O: request bodies out, :func:`parse_reply`,
:func:`parse_usage` (both cached-token spellings) and :func:`classify` (an error answer as a ProviderError) in."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from workbench.loop.errors import (
    ContextLengthExceeded,
    MalformedResponse,
    ProviderError,
    RateLimited,
    RequestRefused,
    UpstreamError,
)
from workbench.trace.schema import Message, ToolCall, Usage

# 4xx statuses that are about timing or load, not about the request body: another attempt may succeed.
_RETRYABLE_4XX = frozenset({408, 409, 425, 429})

# How servers say "the prompt does not fit": OpenAI's error code, OpenAI/vLLM's "maximum context length",
# llama.cpp's exceed_context_size_error, Anthropic's "prompt is too long", and the generic phrasings routers relay.
_CONTEXT_LENGTH = re.compile(
    r"context_length_exceeded|maximum context length|context length exceeded|exceeds? (the )?(available |maximum )?"
    r"context (size|length|window)|exceed_context_size|prompt is too long|context window|too many tokens"
    r"|reduce the length of the messages",
    re.IGNORECASE,
)


# The largest token count one call may report. The longest context windows are ~10M tokens; a count past this is
# a faulty server, not a call (1e30 would overflow every meter and the trace's 64-bit integers).
MAX_USAGE_TOKENS = 1_000_000_000
# The most one call may say it cost, in USD (a usage.cost past this is a faulty server).
MAX_CALL_COST_USD = 1_000_000.0

Redact = Callable[[str], str]


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class Reply:
    """One parsed chat completion."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    usage: Usage
    response_id: str | None = None
    model: str | None = None
    lane: str | None = None
    """The upstream that served it, when a router says (OpenRouter's top-level ``provider``)."""


def message_to_wire(message: Message) -> dict[str, Any]:
    """One transcript message as the chat-completions API wants it."""
    out: dict[str, Any] = {"role": message.role, "content": message.content or ""}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
        if not message.content:
            out["content"] = None
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None and message.role != "tool":
        out["name"] = message.name
    return out


def request_body(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]],
    *,
    avoid_lanes: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON body of one attempt. ``avoid_lanes`` becomes OpenRouter's ``provider.ignore`` for this body only."""
    body: dict[str, Any] = {"model": model, "messages": [message_to_wire(m) for m in messages]}
    if tools:
        body["tools"] = list(tools)
    if extra:
        body.update(extra)
    if avoid_lanes:
        provider = dict(body.get("provider") or {})
        provider["ignore"] = [*provider.get("ignore", []), *avoid_lanes]
        body["provider"] = provider
    return body


def _int(value: Any, where: str = "usage") -> int | None:
    """A token count, or None when absent/not a number. Out of range (negative, past MAX_USAGE_TOKENS, not finite)
    is a provider fault: :class:`MalformedResponse`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if (isinstance(value, float) and not math.isfinite(value)) or not 0 <= value <= MAX_USAGE_TOKENS:
        raise MalformedResponse(
            f"{where} is {value!r}, outside 0..{MAX_USAGE_TOKENS:,}: the server's usage cannot be metered",
            status=200,
        )
    return int(value)


def parse_usage(usage: Mapping[str, Any] | None) -> Usage:
    """Usage in OpenAI spelling, with cache reads from ``prompt_tokens_details.cached_tokens`` or, as
    Anthropic-style proxies report them, ``cache_read_input_tokens``. Anthropic's native ``input_tokens`` (which
    excludes cache traffic) is turned into a whole-prompt count. A count out of range raises
    :class:`MalformedResponse` (a provider fault, retried like one)."""
    if not isinstance(usage, Mapping):
        return Usage()

    def count(key: str, within: str | None = None) -> int | None:  # usage[key], or usage[within][key]
        part = usage if within is None else usage.get(within)
        where = f"usage.{key}" if within is None else f"usage.{within}.{key}"
        return _int(part.get(key), where) if isinstance(part, Mapping) else None

    cached = count("cached_tokens", "prompt_tokens_details")
    if cached is None:
        cached = count("cache_read_input_tokens")
    cache_write = count("cache_creation_input_tokens")
    if cache_write is None:
        cache_write = count("cache_write_tokens", "prompt_tokens_details")
    prompt, input_tokens = count("prompt_tokens"), count("input_tokens")
    if prompt is None and input_tokens is not None:
        prompt = input_tokens + (cached or 0) + (cache_write or 0)
    completion = count("completion_tokens")
    if completion is None:
        completion = count("output_tokens")
    reasoning = count("reasoning_tokens", "completion_tokens_details")
    cost = usage.get("cost")
    priced = isinstance(cost, int | float) and not isinstance(cost, bool)
    if priced and not (math.isfinite(cost) and 0 <= cost <= MAX_CALL_COST_USD):
        raise MalformedResponse(
            f"usage.cost is {cost!r}, outside 0..{MAX_CALL_COST_USD:,.0f} USD", status=200
        )
    return Usage(
        prompt=prompt,
        cached=cached,
        cache_write=cache_write,
        completion=completion,
        reasoning=reasoning,
        cost=float(cost) if priced else None,
    )


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return ""


def _tool_calls_of(raw: Any) -> tuple[ToolCall, ...]:
    if not isinstance(raw, list):
        return ()
    calls = []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        function = item.get("function") if isinstance(item.get("function"), Mapping) else {}
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):  # Ollama sends an object
            try:
                arguments = orjson.dumps(arguments).decode()
            except orjson.JSONEncodeError as exc:  # nested past what JSON writers accept
                raise MalformedResponse(
                    f"tool call arguments cannot be re-encoded ({exc})", status=200
                ) from None
        cid = item.get("id")
        calls.append(
            ToolCall(
                id=cid if isinstance(cid, str) and cid else None,
                name=str(function.get("name") or ""),
                arguments=arguments,
            )
        )
    return tuple(calls)


def _lane_of(error: Any) -> str | None:
    if not isinstance(error, Mapping):
        return None
    metadata = error.get("metadata")
    if isinstance(metadata, Mapping):
        name = metadata.get("provider_name") or metadata.get("provider")
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


# The longest error text kept from a server's answer (after redaction: a cut never splits a key it could not see).
ERROR_TEXT_CHARS = 300


def _error_message(error: Any, redact: Redact = _same) -> str:
    if isinstance(error, Mapping):
        message = redact(str(error.get("message") or ""))[:ERROR_TEXT_CHARS]
        metadata = error.get("metadata")
        if isinstance(metadata, Mapping) and isinstance(metadata.get("raw"), str):
            message = f"{message} ({redact(metadata['raw'])[:ERROR_TEXT_CHARS]})"
        return message
    return redact(str(error))[:ERROR_TEXT_CHARS]


def _upstream(what: str, error: Any, lane: str | None, redact: Redact) -> UpstreamError:
    """A router's error inside a 200 reply, naming the lane its error names, else the reply's."""
    return UpstreamError(f"{what}: {_error_message(error, redact)}", status=200, lane=_lane_of(error) or lane)


def parse_reply(body: bytes, redact: Redact = _same) -> Reply:
    """A 200 body as a :class:`Reply`. A body that is not a chat completion raises :class:`MalformedResponse`;
    a router's 200 carrying an error (or a choice that ended ``finish_reason: error``) raises
    :class:`UpstreamError` naming the lane. Every text quoted in an error passes ``redact`` before it is cut."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        head = redact(body[:4096].decode("utf-8", "replace"))[:120]
        raise MalformedResponse(f"reply is not JSON ({exc}); first bytes: {head!r}", status=200) from None
    if not isinstance(data, Mapping):
        raise MalformedResponse("reply is not a JSON object", status=200)
    lane = data.get("provider") if isinstance(data.get("provider"), str) else None
    if "error" in data and not data.get("choices"):
        raise _upstream("provider error in a 200 reply", data["error"], lane, redact)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise MalformedResponse("reply has no choices[0]", status=200)
    choice = choices[0]
    finish = choice.get("finish_reason")
    if finish == "error":
        raise _upstream(
            "reply ended finish_reason=error", choice.get("error") or data.get("error"), lane, redact
        )
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise MalformedResponse("reply has no choices[0].message", status=200)
    return Reply(
        text=_text_of(message.get("content")),
        tool_calls=_tool_calls_of(message.get("tool_calls")),
        finish_reason=str(finish) if finish is not None else None,
        usage=parse_usage(data.get("usage")),
        response_id=data.get("id") if isinstance(data.get("id"), str) else None,
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        lane=lane,
    )


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` in its delay-seconds form; the HTTP-date form is ignored (the backoff applies)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def classify(status: int, body: bytes, headers: Mapping[str, str], redact: Redact = _same) -> ProviderError:
    """An HTTP error answer as the right :class:`ProviderError`; quoted text is redacted, then cut."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    error = data.get("error") if isinstance(data, Mapping) else None
    text = (
        _error_message(error, redact)
        if error is not None
        else redact(body.decode("utf-8", "replace"))[:ERROR_TEXT_CHARS]
    )
    code = str(error.get("code") or "") if isinstance(error, Mapping) else ""
    kind = str(error.get("type") or "") if isinstance(error, Mapping) else ""
    lane = _lane_of(error)
    message = f"HTTP {status}: {text}".strip()
    if 400 <= status < 500 and _CONTEXT_LENGTH.search(f"{code} {kind} {text}"):
        return ContextLengthExceeded(message, status=status, lane=lane)
    if status == 429:
        return RateLimited(
            message, status=status, lane=lane, retry_after=retry_after_seconds(headers.get("retry-after"))
        )
    if 400 <= status < 500 and status not in _RETRYABLE_4XX:
        return RequestRefused(message, status=status, lane=lane)
    return UpstreamError(message, status=status, lane=lane)
