"""Red team: a folder swapped for a link while the loop reads or writes through it.

A second process exchanges a real folder ``d`` of the workspace with a symbolic link to a host folder
(``renameat2(RENAME_EXCHANGE)``), as fast as it can, while the loop's ``read``/``write``/``edit`` go through
``d``. Over at least 2,000 attempts each, no read returns the host file and no write lands in the host folder —
both through the kernel's ``openat2`` and through the component walk used where the kernel lacks it. The control
does what the loop did before (open the path from the root, only its last component without following a link)
under the same swap loop and must win: it proves the swap loop really races."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from workbench.loop import beneath
from workbench.loop.tools import Toolbox
from workbench.loop.workspace import Workspace
from workbench.trace.schema import ToolCall

ATTEMPTS = 2_000
BATCH = 40
HOST_TEXT = "HOST-SECRET-contents-of-a-root-file"

# The attacker: exchange ws/d and ws/e (a link to the host folder) until killed.
SWAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
sys.stdout.write("go\n"); sys.stdout.flush()
while True:
    libc.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE
"""


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[Toolbox, Path]]:
    ws = Workspace(tmp_path / "ws")
    host = tmp_path / "host"
    host.mkdir()
    (host / "f").write_text(HOST_TEXT)
    (ws.root / "d").mkdir()
    (ws.root / "d" / "f").write_text("inside")
    os.symlink(host, ws.root / "e")
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(ws.root / "d"), str(ws.root / "e")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert swapper.stdout is not None and swapper.stdout.readline() == "go\n"
    try:
        yield Toolbox(ws, sandbox=None), host
    finally:
        swapper.kill()
        swapper.wait()


def _calls(name: str, start: int, **args: str) -> list[ToolCall]:
    out = []
    for i in range(start, start + BATCH):
        filled = {k: v.format(i=i) for k, v in args.items()}
        out.append(ToolCall(id=f"c{i}", name=name, arguments=orjson.dumps(filled).decode()))
    return out


def _attack(box: Toolbox, name: str, **args: str) -> list[str]:
    texts: list[str] = []
    for start in range(0, ATTEMPTS, BATCH):
        batch = asyncio.run(box.run_batch(_calls(name, start, **args)))
        texts += [r.content or "" for r in batch.results]
    return texts


@pytest.fixture(params=["openat2", "walk"])
def resolution(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "openat2" and not beneath.kernel_resolves():
        pytest.skip("this kernel has no openat2")
    monkeypatch.setattr(beneath, "kernel_resolves", lambda: request.param == "openat2")
    return str(request.param)


@pytest.mark.timeout(300)
def test_reads_through_a_swapped_folder_never_return_a_host_file(
    arena: tuple[Toolbox, Path], resolution: str
) -> None:
    box, _ = arena
    texts = _attack(box, "read", path="d/f")
    assert len(texts) == ATTEMPTS
    assert sum(HOST_TEXT in t for t in texts) == 0
    assert sum(t == "inside" for t in texts) > 0  # some reads met the real folder


@pytest.mark.timeout(300)
def test_writes_and_edits_through_a_swapped_folder_never_land_in_the_host_folder(
    arena: tuple[Toolbox, Path], resolution: str
) -> None:
    box, host = arena
    texts = _attack(box, "write", path="d/new-{i}.txt", content="model text {i}")
    texts += _attack(box, "edit", path="d/f", old="inside", new="inside")
    assert sorted(p.name for p in host.iterdir()) == ["f"] and (host / "f").read_text() == HOST_TEXT
    assert sum(t.startswith("wrote") for t in texts) > 0


@pytest.mark.timeout(300)
def test_the_trace_folder_cannot_be_reached_by_a_swap(tmp_path: Path) -> None:
    """The forged-trace attack: the link points at the trace's folder; no write replaces the trace."""
    ws = Workspace(tmp_path / "ws")
    (ws.root / "d").mkdir()
    trace = tmp_path / "run.jsonl"
    trace.write_text("the real record\n")
    os.symlink(tmp_path, ws.root / "e")
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(ws.root / "d"), str(ws.root / "e")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert swapper.stdout is not None and swapper.stdout.readline() == "go\n"
    try:
        _attack(
            Toolbox(ws, sandbox=None), "write", path="d/run.jsonl", content='{{"verdict":"verified_success"}}'
        )
    finally:
        swapper.kill()
        swapper.wait()
    assert trace.read_text() == "the real record\n"


@pytest.mark.timeout(300)
def test_control_the_old_open_loses_the_race(arena: tuple[Toolbox, Path]) -> None:
    """Without the fix (a path opened from the root, only its last component not followed), the same swap loop
    sends the host file's contents: the harness races for real."""
    box, _ = arena
    wins = 0
    for _ in range(20 * ATTEMPTS):
        try:
            fd = os.open(box.workspace.root / "d" / "f", os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            wins += os.read(fd, 100).decode() == HOST_TEXT
        finally:
            os.close(fd)
        if wins:
            break
    assert wins > 0
