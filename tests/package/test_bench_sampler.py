"""The distinct-copy benchmark's memory sampler reads the cheap summed RSS at every tick and the costly PSS only as
often as its duty allows, and keeps the largest of each (benchmarks/distinct_bench.py, ``_sample_peak``)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.distinct_bench import Figure, _fmt, _sample_peak

MB = 2**20
READ_COST = 0.05
"""The fake clock's seconds per process PSS read (a 6 GB process's ``smaps_rollup`` takes tens of milliseconds)."""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Ticks:
    """A stop event that lets ``n`` ticks pass, each advancing the clock by the sampler's 0.2 s wait."""

    def __init__(self, clock: Clock, n: int) -> None:
        self.clock, self.n, self.i = clock, n, 0

    def is_set(self) -> bool:
        return self.i >= self.n

    def wait(self, seconds: float) -> bool:
        self.clock.now += seconds
        self.i += 1
        return self.is_set()


def fake_process(ticks: Ticks, rss: list[int], pss: list[int], read: list[int]) -> type:
    """A one-process tree whose RSS and PSS (MB) at tick ``i`` are ``rss[i]``/``pss[i]``; each PSS read is logged
    (its tick) and costs ``READ_COST`` on the clock."""

    class Process:
        def __init__(self, pid: int) -> None:
            self.pid = pid

        def children(self, recursive: bool = False) -> list[Process]:
            return []

        def memory_info(self) -> SimpleNamespace:
            return SimpleNamespace(rss=rss[ticks.i] * MB)

        def memory_full_info(self) -> SimpleNamespace:
            read.append(ticks.i)
            ticks.clock.now += READ_COST
            return SimpleNamespace(pss=pss[ticks.i] * MB)

    return Process


def sample(
    monkeypatch: pytest.MonkeyPatch, rss: list[int], pss: list[int], duty: float
) -> tuple[list[float], list[int]]:
    clock = Clock()
    ticks = Ticks(clock, len(rss))
    read: list[int] = []
    monkeypatch.setattr(psutil, "Process", fake_process(ticks, rss, pss, read))
    peak = [0.0, 0.0, 0.0, 0.0]
    _sample_peak(1, ticks, peak, duty=duty, clock=clock)  # type: ignore[arg-type]
    return peak, read


def test_pss_is_read_as_its_duty_allows_and_rss_at_every_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    # a read costs 0.05 s: at 5% the next waits 1 s (five 0.2 s ticks, and the reads' own time); at 25%, 0.2 s
    peak, read = sample(monkeypatch, [100 + i for i in range(20)], [50] * 20, 0.05)
    assert read == [0, 5, 10, 15]
    assert peak[:2] == [119, 50]
    assert peak[3] == 4
    peak, read = sample(monkeypatch, [100] * 20, [50] * 20, 0.25)
    assert read == list(range(20))
    assert peak[2] >= 0


def test_the_largest_reading_of_each_is_kept_and_a_briefer_pss_peak_can_be_missed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rss = [10, 400, 30, 20, 20, 20, 20, 20]
    pss = [5, 9, 300, 7, 7, 80, 7, 7]
    peak, read = sample(monkeypatch, rss, pss, 0.05)
    assert read == [0, 5]
    assert peak[:2] == [400, 80]  # the 300 at tick 2 fell between two reads, as the duty's docstring says
    peak, read = sample(monkeypatch, rss, pss, 1.0)
    assert peak[:2] == [400, 300]


def test_the_line_says_how_often_pss_was_read() -> None:
    read = Figure(100.0, 150.0, 900.0, 0.5, 1.0, 0, pss_mb=400.0, sampling_cpu=1.5, pss_reads=40)
    assert "(PSS     400 MB read every 2.5 s, sampling 1.5 cpu-s)" in _fmt(read)
    unread = Figure(100.0, 150.0, 900.0, 0.5, 1.0, 0)
    assert "(PSS       0 MB, sampling 0.0 cpu-s)" in _fmt(unread)
