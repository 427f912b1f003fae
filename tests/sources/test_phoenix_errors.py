"""A Phoenix that is down, slow, failing half-way or refusing the key: one line, a non-zero exit, how far the pull
got, and the credential nowhere. The server here is a stand-in on loopback that speaks Phoenix's span API
(``GET /v1/projects/{project}/spans`` with a cursor) and misbehaves on cue; the real server is in
test_phoenix_server.py."""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.cli import main
from workbench.sources import is_remote
from workbench.sources.phoenix import INSTALL_HINT, parse, source_url
from workbench.trace.errors import TraceError

KEY = "phx-key-0123456789abcdefghijklmnop"


def span(i: int, trace: str = "t1") -> dict:
    return {
        "name": "chat m",
        "context": {"trace_id": trace, "span_id": f"s{i:04x}"},
        "span_kind": "LLM",
        "parent_id": None,
        "start_time": f"2026-11-01T10:00:{i:02d}+00:00",
        "end_time": f"2026-11-01T10:00:{i:02d}.500000+00:00",
        "status_code": "OK",
        "attributes": {"gen_ai.usage.input_tokens": 100 + i, "gen_ai.usage.output_tokens": 5},
        "events": [],
    }


class Fake:
    """Pages of spans; ``fail_at`` (a page number) answers ``status`` with a body that echoes the key."""

    def __init__(
        self, pages: int = 3, fail_at: int | None = None, status: int = 500, hang: bool = False
    ) -> None:
        self.pages, self.fail_at, self.status, self.hang = pages, fail_at, status, hang
        self.release = threading.Event()
        self.auth: list[str | None] = []


@pytest.fixture
def fake() -> Iterator[tuple[Fake, str]]:
    state = Fake()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            state.auth.append(self.headers.get("authorization"))
            if state.hang:
                state.release.wait(10)
                return
            q = parse_qs(parts.query)
            page = int(q.get("cursor", ["0"])[0])
            if state.fail_at is not None and page == state.fail_at:
                body = json.dumps({"detail": f"boom, your header was Bearer {KEY}"}).encode()
                self.send_response(state.status)
            else:
                nxt = str(page + 1) if page + 1 < state.pages else None
                body = json.dumps(
                    {"data": [span(page * 2 + k) for k in range(2)], "next_cursor": nxt}
                ).encode()
                self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"127.0.0.1:{srv.server_address[1]}"
    finally:
        state.release.set()
        srv.shutdown()
        srv.server_close()


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def workbench(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """``workbench ARGS`` in this process (the Phoenix client is imported once, not per call), with the key set."""
    monkeypatch.setenv("PHOENIX_API_KEY", KEY)

    def call(*args: str) -> Done:
        capsys.readouterr()
        code = main(list(args))
        out = capsys.readouterr()
        return Done(code, out.out, out.err)

    return call


phoenix_client = pytest.importorskip("phoenix.client", reason="the phoenix extra is not installed")


def test_a_whole_pull_pages_through_with_the_key_as_a_bearer(fake: tuple[Fake, str]) -> None:
    from workbench.sources.phoenix import load_phoenix

    state, host = fake
    pages: list[int] = []
    (run,) = load_phoenix(f"phoenix://{host}/p1", progress=pages.append, environ={"PHOENIX_API_KEY": KEY})
    assert pages == [2, 2, 2] and len(run.turns) == 6
    assert [t.usage.prompt for t in run.turns] == [100, 101, 102, 103, 104, 105]
    assert state.auth == [f"Bearer {KEY}"] * 3


def test_a_failure_half_way_says_how_far_it_got_and_never_the_key(fake: tuple[Fake, str], workbench) -> None:
    state, host = fake
    state.fail_at = 2
    done = workbench("inspect", f"phoenix://{host}/p1")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Phoenix answered 500" in lines[0] and "after 4 span(s) in 2 page(s)" in lines[0]
    assert KEY not in done.stdout + done.stderr and "[redacted]" in lines[0]


def test_a_refused_key_names_the_variable(fake: tuple[Fake, str], workbench) -> None:
    state, host = fake
    state.fail_at, state.status = 0, 401
    done = workbench("inspect", f"phoenix://{host}/p1")
    assert done.returncode == 1
    assert "refused the request (401): set PHOENIX_API_KEY" in done.stderr
    assert "before the first page" in done.stderr and KEY not in done.stderr


def test_a_server_that_is_down(fake: tuple[Fake, str], workbench) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    done = workbench("replay", f"phoenix://127.0.0.1:{port}/p1")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "cannot reach Phoenix (is the server running?)" in line


def test_a_slow_server_times_out(fake: tuple[Fake, str]) -> None:
    from workbench.sources.phoenix import load_phoenix

    state, host = fake
    state.hang = True
    with pytest.raises(TraceError, match="did not answer in time, before the first page"):
        load_phoenix(f"phoenix://{host}/p1", timeout=1, environ={})


def test_flags_fold_into_a_source_and_misuse_stops_before_work(workbench) -> None:
    done = workbench("inspect", "--project", "p1")
    assert done.returncode == 2 and "give --phoenix URL" in done.stderr
    done = workbench("inspect", "--phoenix", "ftp://h:1", "--project", "p1")
    assert done.returncode == 2 and "http://HOST:PORT" in done.stderr
    done = workbench("replay")
    assert done.returncode == 2 and "give a trace file or folder" in done.stderr


def test_without_the_client_one_line_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.sources import phoenix

    monkeypatch.setitem(sys.modules, "phoenix.client", None)
    with pytest.raises(TraceError, match=r"pip install -e '\.\[phoenix\]'") as info:
        phoenix.load_phoenix("phoenix://127.0.0.1:9/p", environ={})
    assert INSTALL_HINT in str(info.value)


def test_urls() -> None:
    src = parse("phoenix://127.0.0.1:6006/my%20project?since=2026-11-01&label_from=correctness")
    assert (src.base_url, src.project, src.label_from) == (
        "http://127.0.0.1:6006",
        "my project",
        "correctness",
    )
    assert src.since is not None and src.since.isoformat() == "2026-11-01T00:00:00+00:00"
    assert parse(src.url) == src
    assert parse("phoenix:/127.0.0.1:6006/p") == parse("phoenix://127.0.0.1:6006/p")  # what Path() leaves
    tls = parse("phoenix+https://phoenix.example.org/prefix/p")
    assert (tls.base_url, tls.project) == ("https://phoenix.example.org/prefix", "p")
    assert source_url("http://h:1", "p", until="2026-11-02T00:00:00+00:00") == (
        "phoenix://h:1/p?until=2026-11-02T00%3A00%3A00%2B00%3A00"
    )
    assert (
        is_remote("phoenix://h:1/p") and is_remote("phoenix+https://h/p") and not is_remote("phoenix.jsonl")
    )
    for bad, why in (
        ("phoenix://h:1/", "no project"),
        ("phoenix://:1/p", "no host"),
        ("phoenix://h:x/p", "port"),
        ("phoenix://h:1/p?color=red", "unknown parameter"),
        ("phoenix://h:1/p?since=yesterday", "not an ISO date"),
    ):
        with pytest.raises(ValueError, match=why):
            parse(bad)


@given(st.text(max_size=60))
def test_any_text_after_the_scheme_parses_or_says_why(tail: str) -> None:
    try:
        src = parse("phoenix://" + tail)
    except ValueError as exc:
        assert str(exc)
    else:
        assert src.project and src.base_url.startswith("http")
