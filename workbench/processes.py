"""Local processes: how many cores this process may use, and the one way the workbench starts a helper process.

The workbench starts helpers with ``fork``: a helper begins as a copy of this process, so it shares what is already
in memory (a report's leaves) and nothing re-imports the caller's script (``spawn`` and ``forkserver`` run its top
level again, which breaks a script without a ``__main__`` guard). ``fork`` is the safe default only on Linux; on
macOS and Windows the workbench runs everything in this process. Used by a cold load's parsing
(``workbench.trace.indexed_load``), a report's sections computed aside (``workbench.report.aside``) and its PNGs
(``workbench.report.figures``)."""

from __future__ import annotations

import multiprocessing
import os
import sys
from multiprocessing.context import BaseContext


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


__all__ = ["cores", "fork_context"]
