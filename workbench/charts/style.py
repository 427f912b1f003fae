"""Shared chart conventions: figure construction, token formatting, marker colours.

Figures are built with ``matplotlib.figure.Figure`` (not pyplot), so nothing is registered globally, nothing
is shown, and a notebook displays the returned Figure through its inline backend.
"""

from __future__ import annotations

import io

from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import Formatter, FuncFormatter, MaxNLocator, MultipleLocator

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


def dress(
    ax: Axes,
    x: str | None = None,
    y: str | None = None,
    *,
    xfmt: Formatter | None = None,
    yfmt: Formatter | None = None,
    grid: bool = False,
) -> None:
    """An axes' labels, tick formatters (``TOKENS``, ``PERCENT``) and light grid, as every chart sets them."""
    if x is not None:
        ax.set_xlabel(x)
    if y is not None:
        ax.set_ylabel(y)
    if xfmt is not None:
        ax.xaxis.set_major_formatter(xfmt)
    if yfmt is not None:
        ax.yaxis.set_major_formatter(yfmt)
    if grid:
        ax.grid(alpha=0.3)


def _tokens(x: float, _pos: int | None = None) -> str:
    ax = abs(x)
    if ax >= 1_000_000:
        return f"{x / 1_000_000:.2f}M".replace(".00M", "M")
    if ax >= 1_000:
        return f"{x / 1_000:.0f}k"
    if ax < 1e-9:
        return "0"  # never "-0"
    # below 1,000 the ticks may be fractions (an axis over a small range): each reads distinctly, "0.5" not "0"
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.3g}"


TOKENS = FuncFormatter(_tokens)
"""Tick formatter: 241,000 → '241k', 1,400,000 → '1.40M', 0.5 → '0.5', -0.0 → '0'."""

PERCENT = FuncFormatter(lambda x, _pos=None: f"{x:.0%}")


def _usd_tick(x: float, _pos: int | None = None) -> str:
    if abs(x) < 0.005:
        return "$0.00"
    return f"-${-x:,.2f}" if x < 0 else f"${x:,.2f}"


class _CentLocator(MaxNLocator):
    """Round ticks that are never closer than a cent, so no two money ticks read the same."""

    def tick_values(self, vmin: float, vmax: float):  # type: ignore[no-untyped-def]
        ticks = super().tick_values(vmin, vmax)
        if len(ticks) > 1 and ticks[1] - ticks[0] < 0.01:
            return MultipleLocator(0.01).tick_values(vmin, vmax)
        return ticks


def usd_axis(axis: Axis) -> None:
    """Money on an axis as everywhere else: ``$1,234.56``, ticks a cent apart at the least."""
    axis.set_major_locator(_CentLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
    axis.set_major_formatter(FuncFormatter(_usd_tick))


def window_label(tokens: int) -> str:
    """A context length as a tick: 32,768 → '32k' (a power-of-two window), 16,000 → '16,000'."""
    return f"{tokens // 1024}k" if tokens % 1024 == 0 else f"{tokens:,}"
