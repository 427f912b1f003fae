"""The live loop's time. Time is an input: the loop reads no clock of its own, it asks a :class:`Clock` for readings
in seconds, the reading at the top of a turn, and to run a model call under a deadline (``TimeoutError`` when it
passes first). :class:`SystemClock` is a live run's; ``workbench.loop.recorded.RecordedClock`` replays a recording's
turn timestamps as the offline replay reads them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

T = TypeVar("T")


@runtime_checkable
class Clock(Protocol):
    @property
    def timed(self) -> bool:
        """False when the clock cannot tell time (a recording without timestamps): no deadline rules apply."""
        ...

    def read(self) -> float | None:
        """The current reading in seconds (None: unknown)."""
        ...

    def turn_start(self) -> float | None:
        """The reading at the top of a turn (None: unknown — the deadline rules are skipped for that turn)."""
        ...

    async def call(self, request: Coroutine[Any, Any, T], deadline: float | None) -> T:
        """Await ``request``; raise ``TimeoutError`` (the request closed or cancelled) when the reading passes
        ``deadline`` first. ``deadline`` None: no limit."""
        ...


@dataclass(frozen=True)
class SystemClock:
    """A live run's clock: ``reading`` (default ``time.monotonic``) and the event loop's timer for the cut."""

    reading: Callable[[], float] = time.monotonic

    @property
    def timed(self) -> bool:
        return True

    def read(self) -> float:
        return self.reading()

    def turn_start(self) -> float:
        return self.reading()

    async def call(self, request: Coroutine[Any, Any, T], deadline: float | None) -> T:
        if deadline is None:
            return await request
        left = deadline - self.reading()
        if left <= 0:
            request.close()
            raise TimeoutError
        return await asyncio.wait_for(request, timeout=left)


def as_clock(clock: Clock | Callable[[], float]) -> Clock:
    """A :class:`Clock` as given, or a bare reading function (seconds) wrapped as a :class:`SystemClock`."""
    if isinstance(clock, Clock):
        return clock
    return SystemClock(clock)
