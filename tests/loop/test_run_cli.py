"""``workbench run`` from the command line against the loopback server, as a person would use it; its trace
replays through ``workbench replay`` to the same outcome."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.loop.chat_server import Answer, ChatServer, completion
from tests.loop.conftest import SUITE_KEY, SUITE_KEY_ENV
from workbench.paths import REPO_ROOT
from workbench.trace import read_run


def workbench(*args: str, artifacts: Path, name: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        cwd=REPO_ROOT,
        env={**os.environ, SUITE_KEY_ENV: SUITE_KEY},
        capture_output=True,
        text=True,
        timeout=60,
    )
    (artifacts / "cli").mkdir(exist_ok=True)
    (artifacts / "cli" / f"{name}.out").write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
    return done


@pytest.mark.timeout(90)
def test_run_from_the_command_line_then_replay(server: ChatServer, tmp_path: Path, artifacts: Path) -> None:
    server.push(Answer(503, {"error": {"message": "warming up"}}))  # one retry on the first call
    for i in range(6):
        server.push(
            completion(
                "",
                [(f"c{i}", "write", {"path": f"f{i}.txt", "content": "x"})],
                prompt=9_000,
                completion_tokens=1_000,
            )
        )
    out = artifacts / "cli" / "run.jsonl"
    done = workbench(
        "run",
        "--base-url", server.base_url,
        "--model", "test-model",
        "--api-key-env", SUITE_KEY_ENV,
        "--rules", "current",
        "--grant", "40000",
        "--workspace", str(tmp_path / "ws"),
        "--out", str(out),
        "write five files",
        artifacts=artifacts,
        name="run",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    turns = [line for line in lines if line.startswith("turn")]
    assert len(turns) == 5
    assert "retries 1" in turns[0]
    assert "start-landing budget" in turns[3] and "inject landing" in turns[3]
    assert "spent 50,000 of 40,000" in turns[4] and "stop budget" in turns[4]
    assert "stop budget  verdict budget_stop  5 turns  spent 50,000 of 40,000" in done.stdout
    assert "(cost: 50,000 of 40,000 tokens of billed work)" in done.stdout
    assert server.headers[0]["authorization"] == f"Bearer {SUITE_KEY}"
    assert sorted(p.name for p in (tmp_path / "ws").iterdir()) == [f"f{i}.txt" for i in range(5)]

    run = read_run(out)
    assert run.diagnostics == [] and run.outcome.stop_reason == "budget"
    assert run.metadata["api_key_env"] == SUITE_KEY_ENV and run.turns[0].retries == 1

    again = workbench(
        "replay",
        str(out),
        "--rules",
        "current",
        "--grant",
        "40000",
        "--json",
        artifacts=artifacts,
        name="replay",
    )
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout.splitlines()[0])
    assert (result["stop_reason"], result["verdict"], result["stop_turn"], result["spent"]) == (
        "budget",
        "budget_stop",
        4,
        50_000,
    )
    assert result["landing_started_at"] == 3 and result["diverges_at"] is None


@pytest.mark.timeout(60)
def test_run_names_a_missing_key_variable_without_running(tmp_path: Path, artifacts: Path) -> None:
    done = workbench(
        "run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", "WB_UNSET_KEY_VAR",
        "--out", str(tmp_path / "t.jsonl"), "task", artifacts=artifacts, name="missing-key",
    )  # fmt: skip
    assert done.returncode == 2
    assert "WB_UNSET_KEY_VAR is not set" in done.stderr
    assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.timeout(90)
def test_reflex_swarm_and_check_from_the_command_line(
    server: ChatServer, tmp_path: Path, artifacts: Path
) -> None:
    # a reflex: its own small budget and promote
    server.push(completion("", [("p", "promote", {"partial": "needs a real job"})]))
    out = artifacts / "cli" / "reflex.jsonl"
    done = workbench(
        "run", "--base-url", server.base_url, "--model", "m", "--reflex", "--swarm", "--workspace",
        str(tmp_path / "ws1"), "--out", str(out), "rename x", artifacts=artifacts, name="reflex",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "stop promote  verdict unverified_success  1 turns  spent 110 of 22,000" in done.stdout
    tools = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert tools[-1] == "promote" and "request_split" not in tools
    policy = read_run(out).policy
    assert policy is not None and (policy.grant, policy.max_turns) == (22_000, 12)

    # the swarm: a split with its parts
    server.push(completion("two jobs", [("s", "request_split", {"parts": ["a", "b"]})]))
    done = workbench(
        "run", "--base-url", server.base_url, "--model", "m", "--swarm", "--workspace", str(tmp_path / "ws2"),
        "--out", str(artifacts / "cli" / "swarm.jsonl"), "do a and b", artifacts=artifacts, name="swarm",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "stop split" in done.stdout and "part 1: a\npart 2: b" in done.stdout

    # --check: the leaf's own landing is read; a red check is put back once
    server.push(
        completion("done"),
        completion("", [("w", "write", {"path": "ok.txt", "content": "ok"})]),
        completion("done, and the check passes"),
    )
    out = artifacts / "cli" / "check.jsonl"
    done = workbench(
        "run", "--base-url", server.base_url, "--model", "m", "--check", "test -f ok.txt", "--no-sandbox",
        "--workspace", str(tmp_path / "ws3"), "--out", str(out), "make ok.txt", artifacts=artifacts, name="check",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "stop done  verdict unverified_success  3 turns" in done.stdout
    assert "inject self-close" in done.stdout.splitlines()[0]
    assert [e.kind for e in read_run(out).events if e.kind == "self-close"] == ["self-close"]
