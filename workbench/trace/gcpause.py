"""Reading a file with the cyclic garbage collector paused.

An importer builds thousands of small objects per file (every message, call, result and usage is a pydantic
model with its own dict and set). With the collector running, each few hundred new objects start a collection
that walks the young ones, and full collections walk everything still alive: reading the 1,000 synthetic native
runs one after another and keeping them took 2.25 s of CPU with the collector and 0.86 s paused per file (the
same code, measured in one process). The objects a reader makes hold no cycles that need collecting (reference
counts free them), so the collector is paused for one file's read and resumed after. ``workbench.load`` pauses it
for a whole corpus already; this covers every other reader of a file (``read_file``, ``read_run``, the cache's
misses, a sweep worker, the benchmarks). A reader that finds the collector paused leaves it so; it is always
resumed by the one that paused it.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def collector_paused(read: Callable[P, R]) -> Callable[P, R]:
    """``read`` run with the cyclic garbage collector paused (as it was left if it was already off)."""

    @functools.wraps(read)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():
            return read(*args, **kwargs)
        gc.disable()
        try:
            return read(*args, **kwargs)
        finally:
            gc.enable()

    return paused
