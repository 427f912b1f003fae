"""The sandbox ``sh`` runs in: bubblewrap (``bwrap``), the tool Claude Code's Linux sandbox is built on.

What a command inside it meets (docs/sandbox.md says why each holds):

* the system (``/usr`` and the ``/bin``-style links beside it) read-only; from ``/etc`` only the loader cache,
  ``alternatives``, the time zone and certificates, plus a generated ``passwd``/``group``/``hosts``; home folders,
  ``/root``, ``/work``, the host's ``/tmp`` and every other path are absent;
* the workspace read-write, at its own path, as the working directory;
* its own user (uid :data:`SANDBOX_UID`, no capabilities), PID namespace with its own ``/proc`` (the loop's process
  and its environment are not there), ``/dev``, ``/tmp``, hostname and IPC;
* no network (only a loopback of its own) unless the run allows it;
* an environment built from :data:`ENV` alone — the loop's own environment, the API key in it, never enters: bwrap
  itself is started with that environment, so even the namespace's init process holds nothing else;
* when the command ends or is stopped, the namespace's init dies and the kernel kills every process left in it
  (``setsid`` and double-forked ones too); ``--die-with-parent`` does the same if the loop itself dies.

:func:`probe` runs ``true`` in the sandbox once, so a machine where bwrap cannot make its namespaces says so before
the run starts instead of failing every command.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# The user id commands run as inside the sandbox (any unprivileged id; files it creates belong to the caller).
SANDBOX_UID = 1000
SANDBOX_HOSTNAME = "sandbox"
# The whole environment a sandboxed command gets (nothing is inherited).
ENV: dict[str, str] = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "USER": "agent",
    "LOGNAME": "agent",
}
# Top-level system folders bound read-only (or re-created as the symlinks they are on a merged-/usr system).
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
# The /etc entries a command needs to run programs (loader, alternatives links, time zone, certificates).
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone", "ssl",
               "ca-certificates", "ca-certificates.conf", "nsswitch.conf", "mime.types")  # fmt: skip
# With the network allowed, name resolution needs these too.
NET_ETC_ENTRIES = ("resolv.conf", "hosts", "gai.conf", "host.conf")


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot build its namespaces here."""


def find_bwrap() -> str | None:
    """The bwrap program on PATH, or None."""
    return shutil.which("bwrap")


@dataclass(frozen=True)
class Sandbox:
    """How ``sh`` is confined. ``network``: share the host's network (off by default). ``read_only``: extra host
    paths made visible read-only (a toolchain under /opt, a virtualenv)."""

    network: bool = False
    read_only: tuple[Path, ...] = ()
    program: str | None = None
    """The bwrap binary (default: found on PATH when a command runs)."""

    def bwrap(self) -> str:
        program = self.program or find_bwrap()
        if program is None or not os.access(program, os.X_OK):
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed, so sh cannot be confined (Debian: apt-get install bubblewrap)"
            )
        return program

    def files(self) -> dict[str, bytes]:
        """The generated /etc files: a passwd and group naming the sandbox user, and (offline) a hosts file."""
        files = {
            "/etc/passwd": f"root:x:0:0::/root:/bin/sh\nagent:x:{SANDBOX_UID}:{SANDBOX_UID}::/tmp:/bin/sh\n".encode(),
            "/etc/group": f"root:x:0:\nagent:x:{SANDBOX_UID}:\n".encode(),
            "/etc/hostname": f"{SANDBOX_HOSTNAME}\n".encode(),
        }
        if not self.network:
            files["/etc/hosts"] = f"127.0.0.1 localhost {SANDBOX_HOSTNAME}\n::1 localhost\n".encode()
        return files

    def argv(self, workspace: Path, command: Sequence[str], data_fds: dict[str, int]) -> list[str]:
        """The bwrap command line running ``command`` with ``workspace`` read-write. ``data_fds`` maps each path
        of :meth:`files` to a readable descriptor holding its bytes (``--ro-bind-data``)."""
        args = [self.bwrap(), "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if self.network:
            args.append("--share-net")
        args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", SANDBOX_HOSTNAME]
        for name in SYSTEM_DIRS:
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                args += ["--ro-bind", str(host), str(host)]
        args += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
            "--tmpfs",
            "/var/tmp",
            "--dir",
            "/etc",
        ]
        entries = ETC_ENTRIES + (NET_ETC_ENTRIES if self.network else ())
        for name in entries:
            host = Path("/etc") / name
            if host.exists() and str(host) not in data_fds:
                args += ["--ro-bind", str(host), str(host)]
        for path, fd in sorted(data_fds.items()):
            args += ["--ro-bind-data", str(fd), path]
        for extra in self.read_only:
            resolved = Path(extra).resolve()
            args += ["--ro-bind", str(resolved), str(resolved)]
        root = str(Path(workspace).resolve())
        args += ["--bind", root, root, "--chdir", root, "--clearenv"]
        for key, value in ENV.items():
            args += ["--setenv", key, value]
        return [*args, "--", *command]


class DataFiles:
    """Pipes holding the generated files for one bwrap start (each file is far below a pipe's buffer).

    Use as a context manager around the start; ``fds`` goes to ``argv`` and to the child's ``pass_fds``."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.fds: dict[str, int] = {}
        self._mine: list[int] = []
        try:
            for path, data in files.items():
                read, write = os.pipe()
                self._mine.append(read)
                os.write(write, data)
                os.close(write)
                self.fds[path] = read
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for fd in self._mine:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._mine = []

    def __enter__(self) -> DataFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def probe(sandbox: Sandbox, workspace: Path, timeout_s: float = 20.0) -> None:
    """Run ``true`` in the sandbox; raise :class:`SandboxUnavailable` saying why when it cannot start."""
    with DataFiles(sandbox.files()) as data:
        try:
            done = subprocess.run(
                sandbox.argv(workspace, ["/bin/sh", "-c", "true"], data.fds),
                env=dict(ENV),
                capture_output=True,
                timeout=timeout_s,
                pass_fds=tuple(data.fds.values()),
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailable(f"bubblewrap could not start: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SandboxUnavailable(
            f"bubblewrap cannot build its sandbox here: {said[-1] if said else f'exit code {done.returncode}'}"
        )
