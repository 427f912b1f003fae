"""``workbench run`` attacked from the command line, as the issue's attacks were made: a hostile loopback server, a
model whose commands try to escape or exhaust, signals, a deadline, a bug. Each run is a real subprocess; memory is
checked under RLIMIT_AS; after each run no child is left and the trace ends with an outcome; nothing the loop wrote
holds the key in any form."""

from __future__ import annotations

import base64
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.loop.chat_server import Answer, ChatServer, Stream, completion
from tests.loop.conftest import SUITE_KEY, SUITE_KEY_ENV, processes_with
from workbench.loop.client import MAX_RESPONSE_BYTES
from workbench.loop.sandbox import find_bwrap
from workbench.loop.tools import MAX_CALLS_PER_REPLY
from workbench.paths import REPO_ROOT
from workbench.trace import read_run

# The address-space cap the runs below must live within. Importing the workbench reserves ~400 MB of address space;
# the attacks this file repeats peaked at 2.3-4.2 GB resident before the loop was bounded.
MEMORY_CAP = 1 << 30

needs_bwrap = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed here")


def key_forms(key: str = SUITE_KEY) -> dict[str, str]:
    return {
        "key": key,
        "base64": base64.b64encode(key.encode()).decode().rstrip("="),
        "reversed": key[::-1],
        "prefix12": key[:12],
    }


def holding_the_key(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        data = path.read_bytes()
        found += [f"{path.name}: {name}" for name, form in key_forms().items() if form.encode() in data]
    return found


def cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def start(
    *args: str, env: dict[str, str] | None = None, memory_cap: bool = True, key: str = SUITE_KEY
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "run", *args],
        cwd=REPO_ROOT,
        env=env or {**os.environ, SUITE_KEY_ENV: key},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=cap_memory if memory_cap else None,
    )


def finish(
    proc: subprocess.Popen[str], artifacts: Path, name: str, timeout: float = 120
) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    (artifacts / "cli").mkdir(exist_ok=True)
    (artifacts / "cli" / f"hardening-{name}.out").write_text(out + "\n--- stderr ---\n" + err)
    return proc.returncode, out, err


def run_cli(
    server: ChatServer, tmp_path: Path, artifacts: Path, name: str, *extra: str, timeout: float = 120
):
    trace = tmp_path / "out" / "run.jsonl"
    proc = start(
        "--base-url", server.base_url, "--model", "m", "--api-key-env", SUITE_KEY_ENV,
        "--workspace", str(tmp_path / "ws"), "--out", str(trace), *extra, "the task",
    )  # fmt: skip
    code, out, err = finish(proc, artifacts, name, timeout)
    return code, out, err, trace


def one_line_no_traceback(err: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err and SUITE_KEY not in err


# -- refused before anything runs --------------------------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("userinfo", "carries credentials"),
        ("invalid-url", "must be http:// or https://"),
        ("short-key", "keys shorter than 16 cannot be kept out of the trace safely"),
        ("trace-in-workspace", "lies inside the workspace"),
        ("no-bwrap", "bubblewrap (bwrap) is not installed"),
    ],
)
def test_unsafe_setups_are_refused_in_one_line(tmp_path: Path, artifacts: Path, case: str, said: str) -> None:
    url, out, key, env = "http://127.0.0.1:9/v1", tmp_path / "t.jsonl", SUITE_KEY, None
    if case == "userinfo":
        url = f"http://user:{SUITE_KEY}@127.0.0.1:9/v1"
    elif case == "invalid-url":
        url = "127.0.0.1:9/v1"
    elif case == "short-key":
        key = "e"
    elif case == "trace-in-workspace":
        out = tmp_path / "ws" / "t.jsonl"
    elif case == "no-bwrap":
        env = {"PATH": str(tmp_path / "empty-bin"), SUITE_KEY_ENV: SUITE_KEY, "HOME": str(tmp_path)}
    proc = start(
        "--base-url", url, "--model", "m", "--api-key-env", SUITE_KEY_ENV, "--workspace", str(tmp_path / "ws"),
        "--out", str(out), "t", env=env, key=key,
    )  # fmt: skip
    code, stdout, err = finish(proc, artifacts, f"refused-{case}")
    assert code == 2 and said in err and stdout == ""
    one_line_no_traceback(err)
    assert not out.exists()
    if case == "no-bwrap":
        assert "--no-sandbox" in err


@pytest.mark.timeout(60)
def test_no_sandbox_says_what_it_exposes_and_runs(
    server: ChatServer, tmp_path: Path, artifacts: Path
) -> None:
    command = (
        "echo unconfined > f.txt; setsid sleep 951.5 >/dev/null 2>&1 & (sleep 952.5 >/dev/null 2>&1 &); true"
    )
    server.push(completion("", [("s", "sh", {"command": command})]), completion("done"))
    code, _out, err, trace = run_cli(server, tmp_path, artifacts, "no-sandbox", "--no-sandbox")
    assert code == 0 and "sh runs unconfined, as this user" in err and "reach the network" in err
    assert (tmp_path / "ws" / "f.txt").read_text() == "unconfined\n"
    assert read_run(trace).metadata["sandbox"] == "off"
    # unconfined, the run still kills what left the command's session: it adopted the orphans as a subreaper
    assert processes_with("951.5") + processes_with("952.5") == []


# -- the key leaks nowhere -----------------------------------------------------------------------------------------


@needs_bwrap
@pytest.mark.timeout(120)
def test_a_server_echoing_the_key_in_every_form_leaks_it_into_nothing_the_loop_wrote(
    server: ChatServer, tmp_path: Path, artifacts: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "planted.txt").write_text(
        f"a key left in the repository: {SUITE_KEY}\n"
    )  # the test's, not the loop's
    seen: list[str] = []

    def echo(body: dict[str, Any]):
        key = server.headers[-1]["authorization"].removeprefix("Bearer ")
        seen.append(key)
        b64, rev = base64.b64encode(key.encode()).decode(), key[::-1]
        turn = len(seen)
        if turn <= 2:
            return completion(
                f"thinking about {b64} and {rev} and {key[:12]}",
                [
                    (f"w{turn}", "write", {"path": f"out{turn}.txt", "content": f"{key}\n{rev}\n{b64}"}),
                    (f"r{turn}", "read", {"path": "planted.txt"}),
                    (
                        f"s{turn}",
                        "sh",
                        {"command": f"echo {rev}; cat planted.txt | base64; cat planted.txt | rev"},
                    ),
                ],
            )
        return Answer(500, ("e" * 295 + key).encode())

    server.responder = echo
    code, out, err, trace = run_cli(server, tmp_path, artifacts, "echo")
    assert code == 1 and seen and all(k == SUITE_KEY for k in seen)  # the server did receive the key
    run = read_run(trace)
    assert run.outcome.stop_reason == "error" and len(run.turns) == 2
    spilled = sorted(p for d in trace.parent.glob(f"{trace.name}.observations-*") for p in d.iterdir())
    assert not (ws / ".observations").exists()  # the loop's own files live outside the workspace
    assert spilled  # the second identical read became a pointer to a spill file
    written = [trace, *spilled, *(p for p in ws.rglob("*") if p.is_file() and p.name != "planted.txt")]
    assert holding_the_key(written) == []
    assert [name for name, form in key_forms().items() if form in out + err] == []
    assert (ws / "out1.txt").read_text().startswith("[redacted]")


# -- memory stays bounded ------------------------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_the_memory_cap_is_real() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "b = bytearray(1100 << 20)"],
        preexec_fn=cap_memory,
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "MemoryError" in done.stderr


def endless() -> Iterator[bytes]:
    block = b"x" * 65536
    while True:
        yield block


SERVER_ATTACKS: dict[str, Callable[[], Any]] = {
    "300MB-declared": lambda: Stream(lambda: iter([b"x" * 65536] * 4800), length=4800 * 65536),
    "300MB-chunked": lambda: Stream(lambda: iter([b"x" * 65536] * 4800)),
    "endless-chunked": lambda: Stream(endless),
}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("attack", sorted(SERVER_ATTACKS))
def test_huge_or_endless_replies_stay_under_the_memory_cap(
    server: ChatServer, tmp_path: Path, artifacts: Path, attack: str
) -> None:
    server.push(*(SERVER_ATTACKS[attack]() for _ in range(3)))
    code, _out, err, trace = run_cli(server, tmp_path, artifacts, f"memory-{attack}", "--no-sandbox")
    assert code == 1 and "MemoryError" not in err and "Traceback" not in err
    run = read_run(trace)
    assert run.outcome.stop_reason == "error" and run.outcome.verdict == "provider_failure"
    assert f"refused (the cap is {MAX_RESPONSE_BYTES:,} bytes)" in (run.outcome.detail or "") or (
        f"reply larger than {MAX_RESPONSE_BYTES:,} bytes refused" in (run.outcome.detail or "")
    )


@needs_bwrap
@pytest.mark.timeout(300)
@pytest.mark.parametrize("attack", ["sh-100MB", "read-1GB", "sh-x1000"])
def test_huge_tool_output_and_a_thousand_calls_stay_under_the_memory_cap(
    server: ChatServer, tmp_path: Path, artifacts: Path, attack: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    if attack == "sh-100MB":
        calls = [("s", "sh", {"command": "head -c 100000000 /dev/urandom | base64 -w 0; echo; echo END"})]
    elif attack == "read-1GB":
        with open(ws / "big.bin", "wb") as fh:
            fh.truncate(1 << 30)
        calls = [("r", "read", {"path": "big.bin"})]
    else:
        calls = [(f"s{i}", "sh", {"command": f"echo {i}"}) for i in range(1000)]
    server.push(completion("", calls), completion("done"))
    code, _out, err, trace = run_cli(server, tmp_path, artifacts, f"memory-{attack}", timeout=280)
    assert code == 0, err
    assert "MemoryError" not in err and "Traceback" not in err
    run = read_run(trace)
    assert run.outcome.stop_reason == "done" and len(run.turns[0].tool_results) == len(calls)
    results = run.turns[0].tool_results
    if attack == "sh-100MB":
        assert "[output was 133,333,341 bytes" in (results[0].content or "")
        assert (results[0].content or "").endswith("END\n[exit code 0]")
    elif attack == "read-1GB":
        assert "[the file is 1,073,741,824 bytes" in (results[0].content or "")
    else:
        ran = MAX_CALLS_PER_REPLY  # the rest are answered unrun (docs/loop.md "calls per reply")
        assert [r.content for r in results[:ran]] == [f"{i}\n[exit code 0]" for i in range(ran)]
        refused = "not run: the reply has 1,000 tool calls; at most 64 run per reply"
        assert all(r.content == refused and r.is_error for r in results[ran:])


# -- nothing outlives the run; signals and the deadline land an outcome --------------------------------------------


@needs_bwrap
@pytest.mark.timeout(90)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_records_cancelled_and_kills_every_child(
    server: ChatServer, tmp_path: Path, artifacts: Path, sig: signal.Signals
) -> None:
    token = f"97{sig.value}.5"
    ws = tmp_path / "ws"
    server.push(
        completion(
            "",
            [
                (
                    "s",
                    "sh",
                    {
                        "command": f"setsid sleep {token}1 & touch started; sleep {token}2",
                        "timeout_seconds": 120,
                    },
                )
            ],
        )
    )
    trace = tmp_path / "out" / "run.jsonl"
    proc = start(
        "--base-url", server.base_url, "--model", "m", "--api-key-env", SUITE_KEY_ENV, "--workspace", str(ws),
        "--out", str(trace), "t",
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (ws / "started").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(sig)
    code, _out, err = finish(proc, artifacts, f"signal-{sig.name}", timeout=30)
    assert code == 128 + sig.value
    one_line_no_traceback(err)
    assert err.strip() == f"workbench run: cancelled by {sig.name}; the outcome is recorded in {trace}"
    run = read_run(trace)
    assert (run.outcome.stop_reason, run.outcome.detail) == ("cancelled", f"cancelled by {sig.name}")
    deadline = time.monotonic() + 30  # a bound against a hang, not a window: the wait ends when they are gone
    while (left := processes_with(f"{token}1") + processes_with(f"{token}2")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == []


@needs_bwrap
@pytest.mark.timeout(90)
def test_the_deadline_bounds_tool_time_and_kills_the_tool(
    server: ChatServer, tmp_path: Path, artifacts: Path
) -> None:
    server.push(
        completion("", [("s", "sh", {"command": "sleep 963.31", "timeout_seconds": 120})]), completion("late")
    )
    started = time.monotonic()
    _code, _out, _err, trace = run_cli(server, tmp_path, artifacts, "deadline", "--deadline", "3")
    # far below the 963 s the tool would sleep (a CLI start-up under load takes seconds): a bound against a hang
    assert time.monotonic() - started < 80
    run = read_run(trace)
    # the tool is killed at the lease; the Governor then lands the run on the deadline's landing call (the seed's
    # rule: one last call to report, then the stop)
    assert [(e.kind, e.data.get("action")) for e in run.events][:2] == [
        ("deadline", "start-landing"),
        ("deadline-landing", "inject"),
    ]
    assert (run.outcome.stop_reason, run.outcome.exhausted, run.outcome.text) == ("done", "deadline", "late")
    result = run.turns[0].tool_results[0]
    assert result.timed_out and result.content == "[sh stopped: the run's time ran out while it ran]"
    assert (result.duration_s or 0) < 4
    assert processes_with("963.31") == []


@pytest.mark.timeout(90)
def test_a_bug_inside_the_loop_ends_with_an_error_outcome_and_one_line(
    tmp_path: Path, artifacts: Path, server: ChatServer
) -> None:
    server.push(completion("", [("w", "write", {"path": "f", "content": "x"})]))
    trace = tmp_path / "out" / "run.jsonl"
    inject = (
        "import sys\n"
        "from workbench.loop.tools import Toolbox\n"
        "async def broken(self, calls, turn=0, *, budget_s=None):\n"
        "    raise ZeroDivisionError('injected fault')\n"
        "Toolbox.run_batch = broken\n"
        "from workbench.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", inject, "run", "--base-url", server.base_url, "--model", "m", "--api-key-env",
         SUITE_KEY_ENV, "--workspace", str(tmp_path / "ws"), "--out", str(trace), "--no-sandbox", "t"],
        cwd=REPO_ROOT, env={**os.environ, SUITE_KEY_ENV: SUITE_KEY}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    code, out, err = finish(proc, artifacts, "loop-bug")
    assert code == 1
    err_lines = [line for line in err.splitlines() if not line.startswith("workbench run: --no-sandbox")]
    assert err_lines == ["error: ZeroDivisionError: injected fault"]
    assert "stop loop-error  verdict error" in out
    run = read_run(trace)
    assert (run.outcome.stop_reason, run.outcome.verdict) == ("loop-error", "error")
    assert run.outcome.detail == "ZeroDivisionError: injected fault" and run.diagnostics == []
