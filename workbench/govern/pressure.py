"""Context pressure (Σ of each call's own prompt) and the reuse ceiling it was once bounded by.

``reuse_ceiling(W)`` = min(W, working set) x fill% x reuse% (integer arithmetic), 0 — inert — when the model's window
W is unknown. Current rules: wrap-up pressure only. ink-s9 era: reaching it started the budget landing.
"""

from __future__ import annotations

# governors.md §2/§3 (CodeAF internal/ctxbudget): the three numbers the reuse ceiling is derived from.
DEFAULT_FILL_PERCENT = 60  # ctxbudget DefaultFillPercent (governors.md §2)
DEFAULT_WORKING_SET_TOKENS = 160_000  # ctxbudget DefaultWorkingSetTokens (governors.md §2)
DEFAULT_REUSE_PERCENT = 250  # ctxbudget DefaultReusePercent (governors.md §2)


def reuse_ceiling(window: int | None) -> int:
    """``ReuseCeiling(W)``: 240,000 for any W >= 160,000; 0 when W is unknown (never fires)."""
    if window is None or window <= 0:
        return 0
    return (
        min(window, DEFAULT_WORKING_SET_TOKENS) * DEFAULT_FILL_PERCENT // 100 * DEFAULT_REUSE_PERCENT // 100
    )


def pressure_reached(pressure: int, ceiling: int) -> bool:
    """``pressureReached``: a known ceiling that Σ sent has reached."""
    return ceiling > 0 and pressure >= ceiling
