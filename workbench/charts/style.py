"""Shared chart conventions: figure construction, token formatting, marker colours.

Figures are built with ``matplotlib.figure.Figure`` (not pyplot), so nothing is registered globally, nothing
is shown, and a notebook displays the returned Figure through its inline backend.
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

MARKER_STYLE: dict[str, tuple[str, str]] = {
    # kind: (colour, line style)
    "wrap-up": ("#b8860b", ":"),
    "landing": ("#d62728", "--"),
    "prune": ("#9467bd", "-."),
    "conclude": ("#8c564b", ":"),
    "stop": ("#000000", "-"),
    "diverges": ("#7f7f7f", (0, (1, 3))),  # type: ignore[dict-item]
    "context-truncated": ("#e377c2", "-"),
}
BAND_COLOUR = "#2ca02c"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


class WorkbenchFigure(Figure):
    """A matplotlib Figure that a notebook displays as PNG by itself (``_repr_png_``), whether or not pyplot
    and its inline backend were ever imported. Everything else is plain ``Figure``."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=100)
        return buf.getvalue()


def figure(width: float = 10.0, height: float = 6.0, **kw: object) -> Figure:
    """A constrained-layout Figure (labels never overlap the axes they belong to)."""
    return WorkbenchFigure(figsize=(width, height), layout="constrained", **kw)  # type: ignore[arg-type]


def _tokens(x: float, _pos: int | None = None) -> str:
    ax = abs(x)
    if ax >= 1_000_000:
        return f"{x / 1_000_000:.2f}M".replace(".00M", "M")
    if ax >= 1_000:
        return f"{x / 1_000:.0f}k"
    return f"{x:.0f}"


TOKENS = FuncFormatter(_tokens)
"""Tick formatter: 241,000 → '241k', 1,400,000 → '1.40M'."""

PERCENT = FuncFormatter(lambda x, _pos=None: f"{x:.0%}")
