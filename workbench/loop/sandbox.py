"""The sandbox ``sh`` runs in: bubblewrap (``bwrap``), the tool Claude Code's Linux sandbox is built on. What a
command inside it meets, and why each holds: docs/sandbox.md. :func:`probe` runs ``true`` in it once, so a machine
where bwrap cannot make its namespaces says so before the run starts."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# The user id commands run as inside the sandbox when the loop is not root (bwrap's own user namespace maps it to
# the caller; files it creates belong to the caller).
SANDBOX_UID = 1000
# The host user commands run as when the loop is root: nobody (65534 on Debian/Ubuntu/Fedora, the kernel's overflow
# uid), which owns no file on a normal system; the workspace is handed to it (Workspace.hand_to).
HOST_UID = 65534
HOST_GID = 65534
# Processes one command may have at once inside the sandbox (RLIMIT_NPROC); builds run a few dozen.
MAX_PROCESSES = 256
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


def _program(name: str, without: str) -> str:
    program = shutil.which(name)
    if program is None:
        raise SandboxUnavailable(f"{name} (util-linux) is not installed, so {without}")
    return program


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

    def host_user(self) -> tuple[int, int] | None:
        """The host (uid, gid) bwrap is started as: nobody when this process is root, else None (it runs as the
        caller, who is not root)."""
        return (HOST_UID, HOST_GID) if os.geteuid() == 0 else None

    def setpriv(self) -> str:
        return _program("setpriv", "sh cannot be dropped from root to an unprivileged user")

    def prlimit(self) -> str:
        return _program("prlimit", "sh's process count cannot be bounded")

    def visible(self, path: Path, workspace: Path) -> bool:
        """Whether ``path`` (resolved) lies under something the sandbox binds: the workspace, a read-only extra,
        a system folder or a bound /etc entry."""
        target = Path(path).resolve()
        bound = [Path(workspace).resolve(), *(Path(p).resolve() for p in self.read_only)]
        bound += [(Path("/") / name).resolve() for name in SYSTEM_DIRS]
        bound += [(Path("/etc") / name).resolve() for name in ETC_ENTRIES + NET_ETC_ENTRIES]
        return any(target == b or b in target.parents for b in bound)

    def files(self) -> dict[str, bytes]:
        """The generated /etc files: a passwd and group naming the sandbox user, and (offline) a hosts file."""
        user = self.host_user()
        uid, gid, name = (SANDBOX_UID, SANDBOX_UID, "agent") if user is None else (*user, "nobody")
        files = {
            "/etc/passwd": f"root:x:0:0::/root:/bin/sh\n{name}:x:{uid}:{gid}::/tmp:/bin/sh\n".encode(),
            "/etc/group": f"root:x:0:\n{name}:x:{gid}:\n".encode(),
            "/etc/hostname": f"{SANDBOX_HOSTNAME}\n".encode(),
        }
        if not self.network:
            files["/etc/hosts"] = f"127.0.0.1 localhost {SANDBOX_HOSTNAME}\n::1 localhost\n".encode()
        return files

    def argv(self, workspace: Path, command: Sequence[str], data: DataFiles) -> list[str]:
        """The bwrap command line running ``command`` with ``workspace`` read-write. ``data`` holds a readable
        descriptor for each generated file (``--ro-bind-data``) and a held descriptor of the workspace and of each
        read-only extra (``--bind-fd``/``--ro-bind-fd``: the folder this process opened is what is bound)."""
        user = self.host_user()
        args = [self.bwrap(), "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if user is None:  # bwrap's own user namespace maps SANDBOX_UID to the caller
            args += ["--unshare-all", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
            if self.network:
                args.append("--share-net")
        else:  # root: no user namespace (its only mapping would be host root); setpriv drops to nobody
            args += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
            if not self.network:
                args.append("--unshare-net")
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # for setpriv, which drops them
        args += ["--hostname", SANDBOX_HOSTNAME]
        for name in SYSTEM_DIRS:
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                args += ["--ro-bind", str(host), str(host)]
        args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
        args += ["--perms", "1777", "--tmpfs", "/var/tmp", "--dir", "/etc"]
        entries = ETC_ENTRIES + (NET_ETC_ENTRIES if self.network else ())
        for name in entries:
            host = Path("/etc") / name
            if host.exists() and str(host) not in data.fds:
                args += ["--ro-bind", str(host), str(host)]
        for path, fd in sorted(data.fds.items()):
            args += ["--perms", "0644", "--ro-bind-data", str(fd), path]  # readable by nobody too
        root, fd = data.workspace
        made: set[str] = set()
        for dest in [d for d, _ in data.read_only] + [root]:
            # the folders above a bound path are made traversable (bwrap would copy a host parent's 0700)
            for parent in reversed(Path(dest).parents[:-1]):
                if str(parent) not in made and str(parent) not in ("/tmp", "/var/tmp", "/var"):
                    made.add(str(parent))
                    args += ["--perms", "0755", "--dir", str(parent)]
        for dest, extra in data.read_only:
            args += ["--ro-bind-fd", str(extra), dest]
        args += ["--bind-fd", str(fd), root, "--chdir", root, "--clearenv"]
        for key, value in ENV.items():
            args += ["--setenv", key, value]
        if user is not None:
            args += ["--setenv", "USER", "nobody", "--setenv", "LOGNAME", "nobody"]
        drop = [] if user is None else [
            self.setpriv(), f"--reuid={user[0]}", f"--regid={user[1]}", "--clear-groups", "--no-new-privs",
            "--inh-caps=-all", "--",
        ]  # fmt: skip
        limit = [self.prlimit(), f"--nproc={MAX_PROCESSES}:{MAX_PROCESSES}", "--"]
        return [*args, "--", *drop, *limit, *command]

    def data(self, workspace: Path) -> DataFiles:
        """The descriptors one bwrap start needs (close after the start; the child holds its own copies)."""
        return DataFiles(self.files(), workspace, self.read_only)


class DataFiles:
    """Descriptors for one bwrap start: pipes holding the generated files (each far below a pipe's buffer), and
    ``O_PATH`` descriptors of the workspace and of the read-only extras.

    Use as a context manager around the start; ``passed`` goes to the child's ``pass_fds``."""

    def __init__(self, files: dict[str, bytes], workspace: Path, read_only: Sequence[Path] = ()) -> None:
        self.fds: dict[str, int] = {}
        self.read_only: list[tuple[str, int]] = []
        self._mine: list[int] = []
        try:
            for path, data in files.items():
                read, write = os.pipe()
                self._mine.append(read)
                os.write(write, data)
                os.close(write)
                self.fds[path] = read
            root = Path(workspace).resolve()
            fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            self._mine.append(fd)
            self.workspace = (str(root), fd)
            for extra in read_only:
                resolved = Path(extra).resolve()
                fd = os.open(resolved, os.O_PATH | os.O_CLOEXEC)
                self._mine.append(fd)
                self.read_only.append((str(resolved), fd))
        except BaseException:
            self.close()
            raise

    @property
    def passed(self) -> tuple[int, ...]:
        return tuple(self._mine)

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
    with sandbox.data(workspace) as data:
        try:
            done = subprocess.run(
                sandbox.argv(workspace, ["/bin/sh", "-c", "true"], data),
                env=dict(ENV),
                capture_output=True,
                timeout=timeout_s,
                pass_fds=data.passed,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailable(f"bubblewrap could not start: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SandboxUnavailable(
            f"bubblewrap cannot build its sandbox here: {said[-1] if said else f'exit code {done.returncode}'}"
        )
