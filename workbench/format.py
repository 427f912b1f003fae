"""How one value reads in a table, the same in the terminal, the report's HTML and its Markdown."""

from __future__ import annotations

import math
from typing import Any


def cell(value: Any) -> str:
    """Integers with thousands separators, floats to three significant figures (whole numbers as integers),
    ``None``/NaN as ``—``, infinity as "not reached" (a quantile a survival curve never reaches)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return "not reached"
        if value.is_integer() and abs(value) >= 1:
            return f"{int(value):,}"
        return f"{value:,.3g}" if abs(value) < 10 else f"{value:,.0f}"
    return str(value)
