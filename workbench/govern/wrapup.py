"""``budget_used`` and the once-only wrap-up warning (strictly above 0.7; docs/governors.md §5.4)."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.govern.pressure import reuse_ceiling
from workbench.govern.raw import raw_ceiling

WRAP_UP_AT = 0.7  # seed 001 linear.go wrapUpAt

READINGS = ("cost", "raw", "reuse")


def budget_used(
    spent: int,
    raw: int,
    pressure: int,
    grant: int,
    window: int | None,
    readings: Sequence[str] = READINGS,
    raw_multiple: int = 3,
) -> float:
    """How far into its allowance the leaf is (seed 001 linear.go ``budgetUsed``); 0 for a non-positive grant."""
    if grant <= 0:
        return 0.0
    used = spent / grant if "cost" in readings else 0.0
    if "raw" in readings:
        used = max(used, raw / raw_ceiling(grant, raw_multiple))
    if "reuse" in readings:
        ceiling = reuse_ceiling(window)
        if ceiling > 0:
            used = max(used, pressure / ceiling)
    return used


def wrapup_due(used: float, warned: bool, at: float = WRAP_UP_AT) -> bool:
    """The warning fires once, when ``used`` is strictly above ``at``."""
    return not warned and used > at
