"""Orphans of unconfined commands: a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``) adopts the ``setsid`` and
double-forked children that leave a command's process group, and kills them once no command runs (docs/sandbox.md;
on for ``workbench run --no-sandbox``, off in the Python API).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

# linux/prctl.h
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Mark this process a child subreaper; False where the platform cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children(parent: int | None = None) -> list[int]:
    """The live processes whose parent is ``parent`` (default: this process), read from /proc."""
    parent = os.getpid() if parent is None else parent
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # pid (comm) state ppid …; comm may hold spaces and parentheses: read after the last ')'
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(entry.name))
    return found


def reap_orphans(keep: set[int]) -> list[int]:
    """Kill and reap every child of this process not in ``keep`` (the commands still running); their pids."""
    killed = []
    for pid in children():
        if pid in keep:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    for pid in killed:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)
    return killed
