"""Context pressure (Σ of each call's own prompt) and the reuse ceiling it was once bounded by (docs/governors.md
§5.3); the ceiling and its constants are the context law's (``workbench.estimate.ctxbudget.reuse_ceiling``).
"""

from __future__ import annotations

from workbench.estimate.ctxbudget import reuse_ceiling

__all__ = ["pressure_reached", "reuse_ceiling"]


def pressure_reached(pressure: int, ceiling: int) -> bool:
    """``pressureReached``: a known ceiling that Σ sent has reached."""
    return ceiling > 0 and pressure >= ceiling
