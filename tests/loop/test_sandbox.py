"""Escape attempts from ``sh`` fail: it runs in bubblewrap as an unprivileged user with the system read-only, no
view of the host's files, processes, environment or network, and nothing it starts outlives the call.

Each attempt runs through the real toolbox with the redactor OFF, so what is asserted is what the command could
see, not what a later redaction hid."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

import orjson
import pytest

from tests.loop.chat_server import ChatServer
from tests.loop.conftest import processes_with
from workbench.loop.sandbox import (
    ENV,
    HOST_GID,
    HOST_UID,
    MAX_PROCESSES,
    SANDBOX_UID,
    Sandbox,
    find_bwrap,
    probe,
)
from workbench.loop.tools import MAX_RESULT_BYTES, Toolbox
from workbench.loop.workspace import Workspace
from workbench.trace.schema import ToolCall

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap (bwrap) is not installed here")

HOST_KEY = "sk-hostenv-0f1e2d3c4b5a69788796a5b4c3d2e1f0"


def sh(box: Toolbox, command: str, timeout: int = 20) -> str:
    call = ToolCall(
        id="s", name="sh", arguments=orjson.dumps({"command": command, "timeout_seconds": timeout}).decode()
    )
    result = asyncio.run(box.run_batch([call])).results[0]
    return result.content or ""


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Toolbox:
    monkeypatch.setenv(
        "WB_SANDBOX_TEST_KEY", HOST_KEY
    )  # in the loop's own environment, as an API key would be
    return Toolbox(Workspace(tmp_path / "ws"), sandbox=Sandbox())


def test_the_probe_passes_here(tmp_path: Path) -> None:
    probe(Sandbox(), tmp_path)


@pytest.mark.timeout(30)
def test_runs_as_an_unprivileged_user_with_its_own_hostname(box: Toolbox) -> None:
    out = sh(box, "id -u; id -g; hostname; cat /etc/hostname; pwd")
    lines = out.splitlines()
    expected = [str(HOST_UID), str(HOST_GID)] if os.geteuid() == 0 else [str(SANDBOX_UID)] * 2
    assert lines[:2] == expected and lines[2:4] == ["sandbox", "sandbox"]
    assert lines[4] == str(box.workspace.root) and socket.gethostname() not in out.replace("sandbox", "")


@pytest.mark.timeout(30)
def test_host_files_outside_the_workspace_are_not_there(box: Toolbox, tmp_path: Path) -> None:
    private = tmp_path / "private.txt"
    private.write_text("host secret 4242")
    out = sh(box, f"cat {private}; cat /etc/shadow; ls /root /home /work; cat /etc/hostname; ls /etc")
    assert "host secret 4242" not in out and "No such file" in out
    assert sorted(out.split("sandbox\n", 1)[1].split("[exit")[0].split()) <= sorted(
        ["alternatives", "ca-certificates", "ca-certificates.conf", "group", "hostname", "hosts", "ld.so.cache",
         "ld.so.conf", "ld.so.conf.d", "localtime", "mime.types", "nsswitch.conf", "passwd", "ssl", "timezone"]
    )  # fmt: skip


@pytest.mark.timeout(30)
def test_writes_outside_the_workspace_do_not_land(box: Toolbox, tmp_path: Path) -> None:
    outside = tmp_path / "escaped.txt"
    out = sh(
        box, f"echo x > {outside}; echo y > /usr/escaped.txt; echo z > /etc/escaped; echo ok > inside.txt"
    )
    assert (
        not outside.exists() and not Path("/usr/escaped.txt").exists() and not Path("/etc/escaped").exists()
    )
    assert "Read-only file system" in out or "Permission denied" in out or "No such file" in out
    assert (box.workspace.root / "inside.txt").read_text() == "ok\n"


@pytest.mark.timeout(30)
def test_no_process_or_environment_of_the_host_is_visible(box: Toolbox) -> None:
    out = sh(
        box,
        "env; cat /proc/$PPID/environ; cat /proc/1/environ; for f in /proc/[0-9]*/environ; do cat $f; done;"
        " cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; ls /proc | grep -c '^[0-9]'",
    )
    assert HOST_KEY not in out and "WB_SANDBOX_TEST_KEY" not in out
    assert "pyenv" not in out and "-m pytest" not in out and str(os.getpid()) not in out.split()
    env_lines = {
        line.split("=", 1)[0] for line in out.splitlines() if "=" in line and " " not in line.split("=")[0]
    }
    assert env_lines <= set(ENV) | {"PWD", "SHLVL", "OLDPWD", "_"}


@pytest.mark.timeout(30)
def test_the_network_is_off_unless_allowed(tmp_path: Path, server: ChatServer) -> None:
    if not Path("/usr/bin/python3").exists():
        pytest.skip("no /usr/bin/python3 to open a socket inside the sandbox")
    port = int(server.base_url.split(":")[2].split("/")[0])
    probe_cmd = f"/usr/bin/python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3); print('connected')\""
    offline = Toolbox(Workspace(tmp_path / "a"), sandbox=Sandbox())
    online = Toolbox(Workspace(tmp_path / "b"), sandbox=Sandbox(network=True))
    refused = sh(offline, probe_cmd)
    assert "connected" not in refused and "ConnectionRefusedError" in refused
    assert "connected" in sh(online, probe_cmd)


@pytest.mark.timeout(40)
def test_nothing_the_command_started_outlives_the_call(box: Toolbox) -> None:
    out = sh(
        box,
        "setsid sleep 987.61 > /dev/null 2>&1 & (sleep 986.52 > /dev/null 2>&1 &); nohup sleep 985.43 >/dev/null 2>&1 & echo started",
    )
    assert out.startswith("started")
    deadline = time.monotonic() + 30  # a bound against a hang: the wait ends as soon as they are gone
    while (
        left := processes_with("987.61") + processes_with("986.52") + processes_with("985.43")
    ) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == []


@pytest.mark.timeout(40)
def test_a_command_stopped_by_its_timeout_leaves_nothing(box: Toolbox) -> None:
    out = sh(box, "setsid sleep 984.34 & sleep 983.25", timeout=1)
    assert "timed out after 1s" in out
    deadline = (
        time.monotonic() + 30
    )  # a bound against a hang, not a window: they go as soon as they are reaped
    while (left := processes_with("984.34") + processes_with("983.25")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == []


@pytest.mark.timeout(60)
def test_huge_output_is_kept_head_and_tail_with_its_full_size(box: Toolbox) -> None:
    out = sh(box, "echo FIRST; head -c 100000000 /dev/zero | tr '\\0' a; echo; echo LAST")
    assert out.startswith("FIRST\n") and out.endswith("LAST\n[exit code 0]")
    assert (
        "[output was 100,000,012 bytes: the first 3,072 and the last 9,216 are kept, 99,987,724 cut between them]"
        in out
    )
    assert len(out.encode()) < MAX_RESULT_BYTES + 200


@pytest.mark.timeout(30)
def test_extra_read_only_paths_are_visible_and_read_only(tmp_path: Path) -> None:
    tools = tmp_path / "toolchain"
    tools.mkdir()
    (tools / "VERSION").write_text("9.9")
    box = Toolbox(Workspace(tmp_path / "ws"), sandbox=Sandbox(read_only=(tools,)))
    out = sh(box, f"cat {tools}/VERSION; echo no > {tools}/VERSION")
    assert out.startswith("9.9") and (tools / "VERSION").read_text() == "9.9"


@pytest.mark.timeout(30)
def test_without_bubblewrap_sh_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    box = Toolbox(Workspace(tmp_path / "ws"), sandbox=Sandbox(program=str(tmp_path / "no-bwrap")))
    call = ToolCall(id="s", name="sh", arguments='{"command": "touch ran.txt"}')
    result = asyncio.run(box.run_batch([call])).results[0]
    assert result.is_error and "sh refused: bubblewrap (bwrap) is not installed" in (result.content or "")
    assert not (box.workspace.root / "ran.txt").exists()


def _old_bwrap(folder: Path, command: str) -> str:
    """The sandbox as it was before: bwrap's own user namespace with uid 1000 mapped to the caller, no process
    limit (the control: what a fix must change)."""
    import subprocess

    argv = [find_bwrap() or "bwrap", "--unshare-all", "--die-with-parent", "--uid", "1000", "--gid", "1000"]
    for name in ("usr", "bin", "sbin", "lib", "lib64"):
        host = Path("/") / name
        if host.is_symlink():
            argv += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            argv += ["--ro-bind", str(host), str(host)]
    argv += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--ro-bind",
        str(folder),
        str(folder),
        "--",
        "/bin/sh",
        "-c",
        command,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False).stdout


@pytest.mark.timeout(60)
@pytest.mark.skipif(os.geteuid() != 0, reason="the root-owned file needs root to plant")
def test_a_root_owned_private_file_under_a_bound_path_is_unreadable(tmp_path: Path) -> None:
    bound = tmp_path / "toolchain"
    bound.mkdir()
    (bound / "private.key").write_text("ROOT-ONLY-4242")
    (bound / "private.key").chmod(0o600)
    (bound / "public.txt").write_text("PUBLIC-4343")
    box = Toolbox(Workspace(tmp_path / "ws"), sandbox=Sandbox(read_only=(bound,)))
    out = sh(box, f"cat {bound}/public.txt; cat {bound}/private.key; id -u")
    assert "PUBLIC-4343" in out and "ROOT-ONLY-4242" not in out and "Permission denied" in out
    assert str(HOST_UID) in out.split()
    # /etc/ssl is bound by default: its root-only files stay closed too
    private = [p for p in Path("/etc/ssl").rglob("*") if p.is_file() and p.stat().st_mode & 0o077 == 0]
    for path in private[:3]:
        assert "[exit code 0]" not in sh(box, f"cat {path} > /dev/null")
    # control: the old sandbox (uid 1000 mapped to host root) reads it
    assert "ROOT-ONLY-4242" in _old_bwrap(bound, f"cat {bound}/private.key")


FORKS = r"""/usr/bin/python3 -c "
import os, time
n = 0
for i in range({count}):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    n += 1
print('forked', n)
" """


@pytest.mark.timeout(90)
def test_a_fork_bomb_is_bounded_by_the_process_limit(box: Toolbox) -> None:
    if not Path("/usr/bin/python3").exists():
        pytest.skip("no /usr/bin/python3 to fork inside the sandbox")
    out = sh(box, FORKS.format(count=3000), timeout=60)
    forked = int(out.split("forked ", 1)[1].split()[0])
    assert 0 < forked < MAX_PROCESSES
    # control: the old sandbox lets them all run
    old = _old_bwrap(box.workspace.root, FORKS.format(count=2 * MAX_PROCESSES))
    assert f"forked {2 * MAX_PROCESSES}" in old
