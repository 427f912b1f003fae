"""Local processes: how many cores this process may use, and the one way the workbench starts a helper process.

The workbench starts helpers with ``fork``: a helper begins as a copy of this process, so it shares what is already
in memory (a report's leaves) and nothing re-imports the caller's script (``spawn`` and ``forkserver`` run its top
level again, which breaks a script without a ``__main__`` guard). ``fork`` is the safe default only on Linux; on
macOS and Windows the workbench runs everything in this process. Used by a cold load's parsing
(``workbench.scale.indexed``), a report's PNGs (``workbench.report.figures``), and a sweep's local workers (``workbench.scale.parallel``).

No helper outlives its command: every one asks Linux to kill it when the process that started it dies
(``PR_SET_PDEATHSIG``, :func:`die_with_parent`, a pool's ``initializer`` through :func:`pool_options`), so a
command killed with SIGKILL or SIGTERM mid-pool leaves no worker reparented to init and blocked forever."""

from __future__ import annotations

import multiprocessing
import os
import sys
from multiprocessing.context import BaseContext
from typing import Any


def cores() -> int:
    """The cores this process may run on (its affinity where the platform says, else the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def fork_context() -> BaseContext | None:
    """The ``fork`` start method where it is the platform's safe default (Linux), else ``None``: stay here."""
    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int | None = None) -> None:
    """In a helper process: be killed (SIGKILL) when the process that started it dies. ``parent``: that
    process's id, to catch a parent that died before the request took hold (the helper was then reparented — to
    init or to a subreaper — and ends at once). Best effort where ``prctl`` is missing (not Linux)."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != (parent if parent is not None else os.getppid()) or os.getppid() == 1:
        os._exit(0)


def pool_options() -> dict[str, Any]:
    """The ``initializer``/``initargs`` a ``ProcessPoolExecutor`` of the workbench passes, so that each of its
    workers dies with this process (:func:`die_with_parent`)."""
    return {"initializer": die_with_parent, "initargs": (os.getpid(),)}


__all__ = ["cores", "die_with_parent", "fork_context", "pool_options"]
