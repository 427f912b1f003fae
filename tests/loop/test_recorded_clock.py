"""Recorded mode's clock: the recording's turn timestamps, read as the offline replay reads them."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from workbench.loop.recorded import RecordedClock, RecordedProvider
from workbench.scenarios.seed import EPOCH, timed_turns, warm_runaway


def served(clock: RecordedClock, provider: RecordedProvider, deadline: float | None) -> str:
    """One call through the clock: 'served' or 'cut'."""
    try:
        asyncio.run(clock.call(provider.complete([], []), deadline))
    except TimeoutError:
        return "cut"
    return "served"


@pytest.mark.timeout(10)
def test_readings_follow_the_recorded_turns_and_a_cut_shifts_what_follows() -> None:
    provider = RecordedProvider(
        timed_turns(turns=3, seconds=30.0)
    )  # calls at 0-30, 30-60, 60-90, answer 90-120
    clock = RecordedClock(provider)
    assert clock.timed and clock.read() == 0.0
    assert clock.turn_start() == 0.0
    assert served(clock, provider, 100.0) == "served" and clock.read() == 30.0
    assert clock.turn_start() == 30.0
    # call 1 would end at 60 s, past a 45 s lease: cut at 45 s, nothing served
    assert served(clock, provider, 45.0) == "cut"
    assert (clock.read(), len(provider.requests)) == (45.0, 1)
    # the same recorded call is re-issued at the moment of expiry, and every later call shifts by 15 s
    assert clock.turn_start() == 45.0
    assert served(clock, provider, None) == "served" and clock.read() == 75.0
    assert clock.stamp() == EPOCH + timedelta(seconds=75)
    assert clock.turn_start() == 75.0
    assert (
        served(clock, provider, 105.0) == "served" and clock.read() == 105.0
    )  # ends exactly at the lease: not cut
    assert clock.turn_start() == 105.0 and served(clock, provider, None) == "served"
    # past the recording the time is unknown; the last reading stands
    assert clock.turn_start() is None and clock.read() == 135.0


@pytest.mark.timeout(10)
def test_a_recording_without_timestamps_gives_no_readings_and_cuts_nothing() -> None:
    provider = RecordedProvider(warm_runaway(turns=2))
    clock = RecordedClock(provider)
    assert not clock.timed
    assert (clock.read(), clock.turn_start(), clock.stamp()) == (None, None, None)
    assert served(clock, provider, 0.0) == "served" and clock.read() is None
