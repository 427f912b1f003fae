"""Against a real Arize Phoenix server on loopback: ``workbench run`` exports its run as OTel GenAI spans, the
workbench reads the project back (``phoenix://``), and the run read back equals its native trace call by call and
replays to the same decisions; a report is written from Phoenix; annotations label runs. Skipped, with the reason,
where the ``arize-phoenix`` server is not installed (``.ci/run`` installs it with the test extra)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip(
    "phoenix.server.main", reason="the arize-phoenix server is not installed (pip install -e '.[test]')"
)
pytest.importorskip(
    "phoenix.client", reason="the phoenix extra is not installed (pip install -e '.[phoenix]')"
)

from tests.loop.chat_server import ChatServer, completion
from tests.loop.conftest import SUITE_KEY, SUITE_KEY_ENV
from workbench.govern import Policy
from workbench.paths import REPO_ROOT
from workbench.replay import replay
from workbench.sources.phoenix import load_phoenix
from workbench.trace import read_run

START_LIMIT_S = (
    300  # a bound on the wait, not a sleep: the fixture polls the health endpoint until it answers
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server of its own (SQLite in a temporary folder, loopback ports), its base URL once healthy."""
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = free_port(), free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (work / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_LIMIT_S
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"phoenix exited with {proc.returncode}: {(work / 'server.log').read_text()[-2000:]}"
                )
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"phoenix did not become healthy within {START_LIMIT_S} s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def workbench(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        cwd=REPO_ROOT,
        env={**os.environ, SUITE_KEY_ENV: SUITE_KEY, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``workbench ARGS`` run in this process (``workbench.cli.main``), its exit code and what it printed.

    In-process, because a fresh interpreter per read-back pays the whole import stack again (30-60 s each on a
    loaded 2-core machine); the live ``workbench run`` above stays a subprocess of its own."""
    from workbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["workbench", *args], code, out.getvalue(), err.getvalue())


def wait_for_spans(url: str, project: str, count: int) -> None:
    """Phoenix ingests what it is sent on a queue: wait until the project holds ``count`` spans."""
    from phoenix.client import Client

    client = Client(base_url=url)
    deadline = time.monotonic() + 120
    while True:
        try:
            got = len(client.spans.get_spans(project_identifier=project, limit=10_000))
        except httpx.HTTPStatusError:
            got = 0  # the project appears with its first span
        if got >= count:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"phoenix holds {got} of {count} spans of {project}")
        time.sleep(0.3)


def live_run(
    server: ChatServer, url: str, project: str, out: Path, ws: Path
) -> subprocess.CompletedProcess[str]:
    for i in range(4):
        server.push(
            completion(
                "",
                [(f"c{i}", "write", {"path": f"f{i}.txt", "content": "x" * (i + 1)})],
                prompt=9_000 + 500 * i,
                completion_tokens=800,
                cached=2_000 * i,
            )
        )
    server.push(completion("all four files are written", prompt=11_500, completion_tokens=40, cached=9_000))
    return workbench(
        "run",
        "--base-url", server.base_url,
        "--model", "test-model",
        "--api-key-env", SUITE_KEY_ENV,
        "--rules", "current",
        "--grant", "200000",
        "--workspace", str(ws),
        "--otlp-endpoint", url,
        "--otlp-project", project,
        "--out", str(out),
        "write four files",
    )  # fmt: skip


@pytest.fixture(scope="module")
def exported(phoenix: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    """One live run recorded natively and exported to a project of its own."""
    tmp = tmp_path_factory.mktemp("live")
    server = ChatServer().start()
    try:
        project = f"wb-{uuid.uuid4().hex[:8]}"
        done = live_run(server, phoenix, project, tmp / "run.jsonl", tmp / "ws")
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    native = read_run(tmp / "run.jsonl")
    spans = 1 + len(native.turns) + sum(len(t.tool_calls) for t in native.turns)
    assert f"otlp: {spans} spans sent to {phoenix}" in done.stderr
    assert SUITE_KEY not in done.stdout + done.stderr
    wait_for_spans(phoenix, project, spans)
    return phoenix, project, tmp / "run.jsonl"


def test_a_run_read_back_from_phoenix_equals_its_native_trace(exported: tuple[str, str, Path]) -> None:
    url, project, trace = exported
    native = read_run(trace)
    (back,) = load_phoenix(url, project)
    assert back.run_id == native.run_id and back.source == "otel-genai"
    assert back.source_file == f"phoenix://127.0.0.1:{url.rsplit(':', 1)[1]}/{project}"
    assert len(back.turns) == len(native.turns) == 5
    for a, b in zip(native.turns, back.turns, strict=True):  # call by call
        assert b.usage.model_dump() == a.usage.model_dump()
        assert (b.started_at, b.ended_at, b.finish_reason, b.mutated, b.response_id) == (
            a.started_at,
            a.ended_at,
            a.finish_reason,
            a.mutated,
            a.response_id,
        )
        assert [(c.id, c.name) for c in b.tool_calls] == [(c.id, c.name) for c in a.tool_calls]
        assert [(r.digest(), r.is_error, r.timed_out) for r in b.tool_results] == [
            (r.digest(), r.is_error, r.timed_out) for r in a.tool_results
        ]
    assert back.outcome.stop_reason == native.outcome.stop_reason == "done"
    assert [(e.turn, e.kind) for e in back.events] == [(e.turn, e.kind) for e in native.events]
    for policy in (Policy.named("current"), Policy.named("current", grant=30_000), Policy.named("older")):
        want, got = replay(native, policy), replay(back, policy)
        assert (got.stop_reason, got.stop_turn, got.verdict, got.spent) == (
            want.stop_reason,
            want.stop_turn,
            want.verdict,
            want.spent,
        )
        assert [(d.kind, d.turn, getattr(d, "verdict", None)) for d in got.decisions] == [
            (d.kind, d.turn, getattr(d, "verdict", None)) for d in want.decisions
        ]


def test_the_cli_reads_phoenix_as_it_reads_a_file(exported: tuple[str, str, Path]) -> None:
    url, project, trace = exported
    port = url.rsplit(":", 1)[1]
    source = f"phoenix://127.0.0.1:{port}/{project}"
    inspected = cli("inspect", source, "--json")
    assert inspected.returncode == 0, inspected.stderr
    (row,) = json.loads(inspected.stdout)["runs"]
    native = json.loads(cli("inspect", str(trace), "--json").stdout)["runs"][0]
    for key in ("run_id", "calls", "prompt_tokens", "completion_tokens", "cached_tokens", "tool_calls"):
        if key in native:
            assert row[key] == native[key], key
    # the flag form names the same source
    flags = cli("inspect", "--phoenix", url, "--project", project, "--json")
    assert flags.returncode == 0, flags.stderr
    assert json.loads(flags.stdout)["runs"] == json.loads(inspected.stdout)["runs"]
    from_spans = cli("replay", source, "--rules", "current", "--grant", "30000", "--json")
    from_file = cli("replay", str(trace), "--rules", "current", "--grant", "30000", "--json")
    assert from_spans.returncode == from_file.returncode == 0, from_spans.stderr
    a, b = (json.loads(x.stdout.splitlines()[0]) for x in (from_file, from_spans))
    for key in ("stop_reason", "stop_turn", "verdict", "spent", "raw", "cut_turns"):
        assert b[key] == a[key], key


def test_a_report_from_phoenix(exported: tuple[str, str, Path], tmp_path: Path) -> None:
    url, project, _ = exported
    port = url.rsplit(":", 1)[1]
    done = cli("report", f"phoenix://127.0.0.1:{port}/{project}", "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "r" / "report.html").read_text()
    assert "otel-genai" in html and (tmp_path / "r" / "report.md").exists()


def test_annotations_label_runs(exported: tuple[str, str, Path]) -> None:
    from phoenix.client import Client

    url, project, _ = exported
    client = Client(base_url=url)
    root = next(
        s for s in client.spans.get_spans(project_identifier=project, limit=100) if not s.get("parent_id")
    )
    client.spans.add_span_annotation(
        span_id=root["context"]["span_id"],
        annotation_name="swe-grade",
        label="resolved",
        score=1.0,
        sync=True,
    )
    deadline = time.monotonic() + 60
    while True:
        (run,) = load_phoenix(url, project, label_from="swe-grade")
        if run.outcome.label is not None or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert (run.outcome.label, run.outcome.score) == ("resolved", 1.0)
    assert run.outcome.label_source == "phoenix annotation 'swe-grade'"
    (unlabelled,) = load_phoenix(url, project, label_from="another-grader")
    assert unlabelled.outcome.label is None
    assert any("no 'another-grader' annotation" in note for note in unlabelled.lossy)


def test_a_missing_project_is_one_line(phoenix: str) -> None:
    port = phoenix.rsplit(":", 1)[1]
    done = cli("inspect", f"phoenix://127.0.0.1:{port}/no-such-project-{uuid.uuid4().hex[:6]}")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no project" in lines[0] and "Traceback" not in done.stderr
