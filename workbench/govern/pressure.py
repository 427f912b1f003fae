"""Context pressure (Σ of each call's own prompt) and the reuse ceiling it was once bounded by.

The ceiling itself is the context law's (``workbench.estimate.ctxbudget.reuse_ceiling``: min(W, working set) x fill%
x reuse%, integer arithmetic; 0 — inert — when the window W is unknown); its constants live there, once. Current
rules: wrap-up pressure only. ink-s9 era: reaching it started the budget landing.
"""

from __future__ import annotations

from workbench.estimate.ctxbudget import reuse_ceiling

__all__ = ["pressure_reached", "reuse_ceiling"]


def pressure_reached(pressure: int, ceiling: int) -> bool:
    """``pressureReached``: a known ceiling that Σ sent has reached."""
    return ceiling > 0 and pressure >= ceiling
