"""The Meter record: the bound that landed a leaf, with its two numbers and unit (docs/governors.md §1.5).

``cost`` and ``deadline`` are live meters: written when the landing is ordered and read again at land.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.trace.schema import Meter

COST = "cost"
DEADLINE = "deadline"
TURNS = "turns"
NO_PROGRESS = "no-progress"
TOOL_TIMEOUTS = "tool-timeouts"
COST_UNIT = "tokens of billed work"
TURNS_UNIT = "turns"


def words(name: str, reached: int, allowed: int, unit: str) -> str:
    """``Meter.Words``: "" unnamed; the name alone when nothing is allowed; else "name: reached of allowed unit"."""
    if not name.strip():
        return ""
    if allowed <= 0:
        return name
    return f"{name}: {reached:,} of {allowed:,} {unit or 'tokens'}"


@dataclass(frozen=True, slots=True)
class MeterRecord:
    name: str
    reached: int = 0
    allowed: int = 0
    unit: str = "tokens"

    def words(self) -> str:
        return words(self.name, self.reached, self.allowed, self.unit)

    def reread(self, spent: int, elapsed_s: float | None) -> MeterRecord:
        """``land()``: the cost meter re-reads spent(); the deadline meter re-reads elapsed whole seconds."""
        if self.name == COST:
            return MeterRecord(self.name, spent, self.allowed, self.unit)
        if self.name == DEADLINE and elapsed_s is not None:
            return MeterRecord(self.name, int(elapsed_s), self.allowed, self.unit)
        return self

    def to_trace(self) -> Meter:
        return Meter(name=self.name, reached=self.reached, allowed=self.allowed, unit=self.unit)


def cost_meter(reached: int, grant: int) -> MeterRecord:
    return MeterRecord(COST, reached, grant, COST_UNIT)


def deadline_meter(elapsed_s: float, deadline_s: float) -> MeterRecord:
    return MeterRecord(DEADLINE, int(elapsed_s), int(deadline_s), "seconds")


def turns_meter(turns: int, max_turns: int) -> MeterRecord:
    return MeterRecord(TURNS, turns, max_turns, TURNS_UNIT)


def no_progress_meter(turns: int) -> MeterRecord:
    return MeterRecord(NO_PROGRESS, turns, 0, "")


def tool_timeouts_meter(count: int, cap: int) -> MeterRecord:
    return MeterRecord(TOOL_TIMEOUTS, count, cap, "timeouts of one command")
