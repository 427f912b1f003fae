"""The provider client: one chat-completions call with tools, over httpx, retried the way the seed retries: up to
:data:`CALL_ATTEMPTS` attempts, ``BACKOFF_S × 2**attempt`` apart (or the server's longer ``Retry-After``); a refused
request and a context-length overflow are not retried, and an upstream lane an error names is avoided by the SAME
call's next attempt (OpenRouter's ``provider.ignore``). Cancelling stops at once, in the network or a backoff.

    client = ChatClient("http://127.0.0.1:8080/v1", "qwen3", api_key=Secret.from_env("MY_KEY"))
    completion = await client.complete(messages, TOOL_SCHEMAS)
    completion.reply.tool_calls, completion.retries
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from workbench.format import printable
from workbench.loop.decode import ACCEPT_ENCODING, Decoder, EncodingRefused, TooLarge
from workbench.loop.errors import CallFailed, MalformedResponse, ProviderError, RateLimited, TransportError
from workbench.loop.secrets import Secret
from workbench.loop.wire import Reply, classify, parse_reply, request_body
from workbench.trace.schema import Message

# seed 001 linear.go nodeCallAttempts: attempts per model call (retries inside a turn, not turns).
CALL_ATTEMPTS = 3
# seed 001 linear.go nodeCallBackoff: the first retry waits 500 ms, doubling per attempt.
BACKOFF_S = 0.5
# Longest Retry-After the client honours; a server asking for more gets this (the seed has no such rule).
RETRY_AFTER_CAP_S = 60.0
# Largest reply body read, counted on the decoded bytes as they are inflated. A chat completion is kilobytes; a
# server sending more is faulty or hostile, and the body is held in memory while it is parsed.
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
# Largest error body read (decoded): an error message is a few hundred bytes; the rest is discarded unread.
MAX_ERROR_BYTES = 64 * 1024
# Query parameters that carry credentials (a key in the URL would be recorded and sent in logs and errors).
_CREDENTIAL_PARAM = re.compile(r"key|token|secret|password|passwd|auth|signature|sig$", re.IGNORECASE)

log = logging.getLogger("workbench.loop")

Sleep = Callable[[float], Awaitable[None]]


class BadEndpoint(ValueError):
    """A base URL the client will not use (not http(s), no host, or credentials in it)."""


def check_base_url(url: str) -> str:
    """``url`` if it is a usable endpoint base. Credentials in it are refused, never echoed: a key in the URL would
    be recorded with the run and sent as Basic auth; it belongs in an environment variable (``--api-key-env``)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise BadEndpoint(f"the base URL is not a URL ({type(exc).__name__})") from None
    if parsed.userinfo:
        raise BadEndpoint(
            "the base URL carries credentials (user:password@host); remove them and put the key in an environment "
            "variable named with --api-key-env"
        )
    if any(_CREDENTIAL_PARAM.search(name) for name, _ in parsed.params.multi_items()):
        raise BadEndpoint(
            "the base URL carries a credential in its query string; put the key in an environment variable named "
            "with --api-key-env"
        )
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise BadEndpoint(
            f"the base URL must be http:// or https:// with a host (got scheme {parsed.scheme!r})"
        )
    return url


@dataclass(frozen=True)
class Timeouts:
    """Timeouts in seconds. ``read`` bounds the wait for each chunk of the reply; ``total`` bounds one attempt
    from sending to the last byte (a server trickling a byte a second never trips ``read``)."""

    connect: float = 10.0
    read: float = 600.0
    write: float = 60.0
    pool: float = 10.0
    total: float = 900.0

    def to_httpx(self) -> httpx.Timeout:
        return httpx.Timeout(connect=self.connect, read=self.read, write=self.write, pool=self.pool)


@dataclass(frozen=True)
class Attempt:
    """One failed attempt: what went wrong and how long the client then waited."""

    number: int
    kind: str
    status: int | None
    lane: str | None
    message: str
    waited_s: float = 0.0
    avoided: tuple[str, ...] = ()
    """The lanes this attempt's body asked to avoid."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.number,
            "kind": self.kind,
            "status": self.status,
            "lane": self.lane,
            "message": self.message,
            "waited_s": self.waited_s,
            "avoided": list(self.avoided),
        }


@dataclass(frozen=True)
class Completion:
    """A successful call: the reply and the attempts that failed before it."""

    reply: Reply
    failed: tuple[Attempt, ...] = ()

    @property
    def retries(self) -> int:
        return len(self.failed)


def note_failed_lane(lanes: tuple[str, ...], lane: str) -> tuple[str, ...]:
    """One more lane this call failed on, once (two spellings differing in case are one lane). Seed: noteFailedLane."""
    if any(held.casefold() == lane.casefold() for held in lanes):
        return lanes
    return (*lanes, lane)


def backoff_delay(attempt: int, error: ProviderError, base_s: float = BACKOFF_S) -> float:
    """The wait after failed attempt ``attempt`` (0-based): ``base × 2**attempt``, or longer if the server asked."""
    delay = base_s * (2**attempt)
    if isinstance(error, RateLimited) and error.retry_after is not None:
        delay = max(delay, min(error.retry_after, RETRY_AFTER_CAP_S))
    return delay


@dataclass
class ChatClient:
    """An OpenAI-compatible chat-completions endpoint (``base_url`` ends before ``/chat/completions``)."""

    base_url: str
    model: str
    api_key: Secret = field(default_factory=lambda: Secret(env=None))
    timeouts: Timeouts = field(default_factory=Timeouts)
    attempts: int = CALL_ATTEMPTS
    backoff_s: float = BACKOFF_S
    sleep: Sleep = asyncio.sleep
    extra_body: Mapping[str, Any] | None = None
    """Extra request fields (``temperature``, ``max_tokens`` …) sent with every call."""
    transport: httpx.AsyncBaseTransport | None = None
    max_response_bytes: int = MAX_RESPONSE_BYTES
    _http: httpx.AsyncClient | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        check_base_url(self.base_url)

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.timeouts.to_httpx(), transport=self.transport)
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _attempt(self, body: dict[str, Any]) -> Reply:
        try:
            async with asyncio.timeout(self.timeouts.total):
                status, content, headers = await self._exchange(body)
        except TimeoutError:
            raise TransportError(
                f"no complete answer within {self.timeouts.total:g}s from {self.url} (the whole call's limit)"
            ) from None
        except httpx.TimeoutException as exc:
            raise TransportError(
                f"{type(exc).__name__}: no answer within the timeout from {self.url}"
            ) from None
        except httpx.HTTPError as exc:
            raise TransportError(f"{type(exc).__name__}: {exc} ({self.url})") from None
        redact = self.api_key.redact
        if status != 200:
            raise classify(status, self.api_key.redact_bytes(content), headers, redact=redact)
        return parse_reply(content, redact=redact)

    async def _exchange(self, body: dict[str, Any]) -> tuple[int, bytes, httpx.Headers]:
        """Send one attempt and read the answer, streaming, never more than the cap counted on the decoded bytes
        (an error body: far less; why and how: docs/loop.md, "Bounded resources")."""
        headers = {
            "Content-Type": "application/json",
            "Accept-Encoding": ACCEPT_ENCODING,
            **self.api_key.header(),
        }
        request = self._client().build_request("POST", self.url, content=orjson.dumps(body), headers=headers)
        response = await self._client().send(request, stream=True)
        try:
            ok = response.status_code == 200
            cap = self.max_response_bytes if ok else MAX_ERROR_BYTES
            declared = response.headers.get("content-length", "")
            if ok and declared.isdigit() and int(declared) > cap:
                raise MalformedResponse(
                    f"reply of {int(declared):,} bytes refused (the cap is {cap:,} bytes)", status=200
                )
            chunks: list[bytes] = []
            try:
                decoder = Decoder(response.headers.get("content-encoding"), cap)  # a refused encoding: unread
                async for raw in response.aiter_raw():
                    chunks.append(decoder.feed(raw))
            except TooLarge as exc:
                if ok:
                    raise MalformedResponse(str(exc), status=200) from None
                # an error body: its head says enough
                kept = b"".join(chunks)
                return response.status_code, kept[:cap], response.headers
            except EncodingRefused as exc:
                if ok:
                    raise MalformedResponse(str(exc), status=200) from None
                return response.status_code, f"[error body not read: {exc}]".encode(), response.headers
            return response.status_code, b"".join(chunks), response.headers
        finally:
            await response.aclose()

    async def complete(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> Completion:
        """One model call. Raises a non-retryable :class:`ProviderError` at once, or :class:`CallFailed`."""
        failed: list[Attempt] = []
        avoid: tuple[str, ...] = ()
        last: ProviderError | None = None
        for attempt in range(self.attempts):
            body = request_body(self.model, messages, tools, avoid_lanes=avoid, extra=self.extra_body)
            try:
                reply = await self._attempt(body)
            except ProviderError as exc:
                error = exc.redacted(self.api_key.redact)
            else:
                return Completion(reply=reply, failed=tuple(failed))
            last = error
            sent_avoiding = avoid
            if error.lane:
                avoid = note_failed_lane(avoid, error.lane)
            final = not error.retryable or attempt == self.attempts - 1
            waited = 0.0 if final else backoff_delay(attempt, error, self.backoff_s)
            failed.append(
                Attempt(attempt, error.kind, error.status, error.lane, error.message, waited, sent_avoiding)
            )
            log.warning(
                "model call attempt %d failed (%s): %s", attempt + 1, error.kind, printable(error.message)
            )
            if not error.retryable:
                error.failed_attempts = tuple(failed)
                raise error
            if not final:
                await self.sleep(waited)
        assert last is not None
        lanes = f" (providers tried and avoided: {' and '.join(avoid)})" if avoid else ""
        failure = CallFailed(
            self.api_key.redact(f"after {self.attempts} model call attempts{lanes}: {last.message}"),
            last=last,
            attempts=self.attempts,
            lanes=avoid,
        )
        failure.failed_attempts = tuple(failed)
        raise failure
