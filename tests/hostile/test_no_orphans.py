"""Red team, no orphans (issue 25): every pool — a sweep's workers, a cold load's parsers, a report's PNG
renderers — dies with its command. Each command is run in a child whose pool's work is replaced by a worker that
says it started and then blocks forever (the worst case: before the fix such a worker was reparented to init and
blocked for ever); once a worker has started, the command is killed (SIGKILL, SIGTERM) and every process it had
started must be gone. The wait for them is bounded only so that a regression fails instead of hanging."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from workbench.scale.executor import cores
from workbench.scenarios.seed import constant_turns
from workbench.trace import write_run

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or cores() < 2, reason="the pools run on Linux with 2 cores or more"
)

DRIVER = """
import importlib, os, sys, threading
target = importlib.import_module({module!r})  # (``import a.b.c as t`` would give workbench.replay's sweep function)

def blocked(*args, **kwargs):
    fd = os.open({fifo!r}, os.O_WRONLY)
    os.write(fd, f"{{os.getpid()}}\\n".encode())
    os.close(fd)
    threading.Event().wait()  # never returns: only the command's death may end this worker

target.{name} = blocked
{setup}
from workbench.cli import main
sys.exit(main({argv!r}))
"""


def _files(folder: Path, n: int) -> Path:
    folder.mkdir()
    for i in range(n):
        write_run(
            constant_turns(3 + i % 4, 1_000 + i).model_copy(update={"run_id": f"r{i}"}), folder / f"{i}.jsonl"
        )
    return folder


def _kill_mid_pool(
    tmp_path: Path,
    module: str,
    name: str,
    argv: list[str],
    sig: signal.Signals,
    cache: str = "on",
    setup: str = "",
) -> None:
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    env = {**os.environ, "WORKBENCH_CACHE_DIR": str(tmp_path / "cache"), "WORKBENCH_CACHE": cache}
    driver = DRIVER.format(module=module, name=name, fifo=str(fifo), argv=argv, setup=setup)
    command = subprocess.Popen(
        [sys.executable, "-c", driver], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    helpers: list[psutil.Process] = []
    try:
        # wait for a worker to say it started (the command is mid-pool) — or for the command to end without one
        reader = os.open(fifo, os.O_RDWR)  # read-write: never blocks on open, never sees end-of-file
        ended = os.pidfd_open(command.pid)
        try:
            ready, _, _ = select.select([reader, ended], [], [])
            assert reader in ready, f"the command ended before its pool started: {command.stderr.read()!r}"
            first = int(os.read(reader, 64).split()[0])
        finally:
            os.close(ended)
            os.close(reader)
        helpers = psutil.Process(command.pid).children(recursive=True)
        assert first in {p.pid for p in helpers}  # the control: a worker of this command is blocked for ever
        command.send_signal(sig)
        command.wait(timeout=120)
        _, alive = psutil.wait_procs(helpers, timeout=60)
        assert alive == [], f"survivors after {sig.name}: {[p.pid for p in alive]}"
    finally:
        if command.poll() is None:
            command.kill()
        for p in helpers:
            with contextlib.suppress(psutil.Error):
                p.kill()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_sweep_leaves_no_worker(tmp_path: Path, sig: signal.Signals) -> None:
    folder = _files(tmp_path / "in", 4)
    argv = ["sweep", str(folder), "--grants", "100000:200000:100000", "--workers", "2"]
    argv += ["--out", str(tmp_path / "s.csv"), "--quiet"]
    # without the cache: a corpus loaded through the index is swept from its sheet in this process, at any size
    _kill_mid_pool(tmp_path, "workbench.scale.sweep", "_work", argv, sig, cache="off")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_cold_load_killed_mid_parse_leaves_no_parser(tmp_path: Path, sig: signal.Signals) -> None:
    from workbench.scale.indexed import PARALLEL_FROM

    folder = _files(tmp_path / "in", PARALLEL_FROM)  # enough unknown files for the load to parse on workers
    large = (
        "import workbench.scale.loading as ld; ld.load.__kwdefaults__['retain'] = 1"  # more files than held
    )
    _kill_mid_pool(
        tmp_path, "workbench.scale.indexed", "_parse_one", ["inspect", str(folder)], sig, setup=large
    )


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_report_killed_while_rendering_leaves_no_renderer(tmp_path: Path, sig: signal.Signals) -> None:
    from workbench.paths import bundled_traces

    argv = ["report", str(bundled_traces()), "--out", str(tmp_path / "report")]
    _kill_mid_pool(tmp_path, "workbench.report.figures", "_draw_job", argv, sig)
