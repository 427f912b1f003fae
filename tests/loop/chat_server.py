"""A real chat-completions server on 127.0.0.1 for the loop's tests: scripted replies, recorded replies, faults.

Each request takes the next item of the script (or asks ``responder`` when the script is empty):

* a ``dict`` — answered 200 with it as JSON (a chat completion; see :func:`completion`);
* :class:`Answer` — any status, headers and raw body (429 with Retry-After, 5xx, a 400, malformed JSON);
* :class:`Hang` — no answer until the test ends (the client's read timeout fires);
* :class:`Cut` — headers promising a longer body, half of it, then the connection is closed;
* :class:`Stream` — a 200 whose body is generated chunk by chunk (huge, endless, or trickling a byte at a time).

Every request is kept (``requests``: parsed body and headers) so tests can assert what the client sent.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes | dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Hang:
    """Accept the request and never answer (until the server stops)."""


@dataclass(frozen=True)
class Cut:
    """Promise ``length`` bytes, send ``sent`` bytes of a JSON-looking body, close the connection."""

    length: int = 4000
    sent: int = 40


@dataclass(frozen=True)
class Stream:
    """A 200 body sent as ``chunks`` (an iterable of bytes, generated as it is sent: it may be endless), with a
    ``delay`` in seconds before each chunk. ``length``: the Content-Length to declare; None sends it chunked."""

    chunks: Callable[[], Iterable[bytes]]
    delay: float = 0.0
    length: int | None = None
    status: int = 200


Item = dict[str, Any] | Answer | Hang | Cut | Stream


def completion(
    text: str = "",
    tool_calls: Iterable[tuple[str, str, dict[str, Any] | str]] = (),
    *,
    finish: str | None = None,
    prompt: int = 100,
    completion_tokens: int = 10,
    cached: int | None = None,
    cached_spelling: str = "openai",
    provider: str | None = None,
    response_id: str = "chatcmpl-test",
) -> dict[str, Any]:
    """A chat completion body. ``tool_calls`` are (id, name, arguments)."""
    calls = [
        {
            "id": cid,
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else orjson.dumps(args).decode(),
            },
        }
        for cid, name, args in tool_calls
    ]
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }
    if cached is not None:
        if cached_spelling == "openai":
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        else:
            usage["cache_read_input_tokens"] = cached
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    body: dict[str, Any] = {
        "id": response_id,
        "object": "chat.completion",
        "model": "test-model",
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish or ("tool_calls" if calls else "stop")}
        ],
        "usage": usage,
    }
    if provider:
        body["provider"] = provider
    return body


def router_error(status: int, message: str, provider: str | None = None) -> Answer:
    """An error as OpenRouter relays an upstream's: ``error.metadata.provider_name`` names the lane."""
    error: dict[str, Any] = {"code": status, "message": message}
    if provider:
        error["metadata"] = {"provider_name": provider, "raw": message}
    return Answer(status, {"error": error})


class ChatServer:
    """The server; start with :meth:`start`, stop with :meth:`stop` (the pytest fixture does both)."""

    def __init__(self) -> None:
        self.script: deque[Item] = deque()
        self.responder: Callable[[dict[str, Any]], Item] | None = None
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.released = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="chat-server", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def push(self, *items: Item) -> ChatServer:
        self.script.extend(items)
        return self

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next(self, body: dict[str, Any]) -> Item:
        with self._lock:
            self.requests.append(body)
            if self.script:
                return self.script.popleft()
        if self.responder is not None:
            return self.responder(body)
        return Answer(500, {"error": {"message": "test server: script exhausted"}})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                item = server._next(body)
                if isinstance(item, Hang):
                    server.released.wait()
                    self.close_connection = True
                    return
                if isinstance(item, Cut):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(item.length))
                    self.end_headers()
                    self.wfile.write(b'{"id": "chatcmpl-cut", "choices": [{"mess'[: item.sent])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if isinstance(item, Stream):
                    self._stream(item)
                    return
                answer = item if isinstance(item, Answer) else Answer(200, item)
                payload = answer.body if isinstance(answer.body, bytes) else orjson.dumps(answer.body)
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in answer.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()

            def _stream(self, item: Stream) -> None:
                self.send_response(item.status)
                self.send_header("Content-Type", "application/json")
                if item.length is None:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(item.length))
                self.end_headers()
                self.close_connection = True
                try:
                    for chunk in item.chunks():
                        if server.released.wait(item.delay) if item.delay else server.released.is_set():
                            return
                        if item.length is None:
                            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        else:
                            self.wfile.write(chunk)
                        self.wfile.flush()
                    if item.length is None:
                        self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client hung up (as it should, past its cap or its time)
                    return

        return Handler
