"""A part of the report computed beside the rest: in a forked process while this one computes the others.

A report's sections are independent once its leaves are read, and the bills and the calibration are about half of
its time, so on a machine with two cores or more ``build_report`` computes them in a child process started with
``fork`` (the child shares the leaves already in memory; nothing is pickled on the way in, and nothing re-imports
the caller's script) and takes back their pickled result. The answer is the same object either way: the child runs
the same code on the same leaves, and a pickle round trip keeps frames and figures exactly. If the child cannot
start, fails, or its result cannot be pickled, this process computes the part itself — so an error is raised here,
as without the child.

Call signature::

    later = Aside(lambda: compute(...))   # starts the child (or not: ``enabled=False``, one core, not Linux)
    ...                                    # the rest of the work
    value = later.result()                 # the child's answer, or computed here
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from workbench.processes import cores, fork_context

T = TypeVar("T")


class Aside(Generic[T]):
    """``work()`` computed in a forked child (see the module docstring)."""

    def __init__(self, work: Callable[[], T], enabled: bool = True) -> None:
        self._work = work
        self._process: Any = None
        self._conn: Any = None
        ctx = fork_context() if enabled and cores() >= 2 else None
        if ctx is None:
            return
        try:
            here, there = ctx.Pipe(duplex=False)
            process = ctx.Process(target=_child, args=(there, work), daemon=True)
            process.start()
            there.close()
        except (OSError, ValueError):
            return  # no child: computed here
        self._process, self._conn = process, here

    @property
    def forked(self) -> bool:
        return self._process is not None

    def cancel(self) -> None:
        """Stop the child without its answer (the caller failed before asking for it)."""
        if self._process is not None:
            self._process.kill()
            self._process.join()
            self._conn.close()
            self._process = None

    def __del__(self) -> None:
        # a report that raised before asking for the answer: no child left computing (or blocked writing) for nobody
        with contextlib.suppress(Exception):
            self.cancel()

    def result(self) -> T:
        if self._process is not None:
            try:
                data = self._conn.recv_bytes()
            except (EOFError, OSError):
                data = b"\x00"  # the child died (killed, out of memory)
            finally:
                self._conn.close()
                self._process.join()
                self._process = None
            if data[:1] == b"\x01":
                try:
                    return pickle.loads(data[1:])  # our own child's pickle, through our own pipe
                except Exception:
                    pass
        return self._work()


def _child(conn: Any, work: Callable[[], Any]) -> None:
    _die_with_parent()
    try:
        payload = b"\x01" + pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:  # computed again in the parent, which raises what it raises
        payload = b"\x00"
    try:
        conn.send_bytes(payload)
    finally:
        conn.close()


def _die_with_parent() -> None:
    """Ask Linux to kill this child when its parent dies (``workbench.processes.die_with_parent``): a report killed
    outright leaves no section computing for nobody. Best effort: without it the child ends when it finds the pipe
    closed."""
    from workbench.processes import die_with_parent

    die_with_parent()
