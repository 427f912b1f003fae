"""Charts display as images in IPython whatever the matplotlib backend.

The charts build ``matplotlib.figure.Figure`` objects directly (never pyplot, so nothing is shown or leaked), and
IPython renders a Figure as a PNG only once pyplot's inline backend is active; a notebook that never imports
pyplot saved ``<Figure size 1000x400 with 2 Axes>`` instead of the chart. Importing :mod:`workbench.charts`
registers a PNG formatter for Figures with the running IPython (a no-op outside IPython).
"""

from __future__ import annotations

from typing import Any


def _png(fig: Any) -> bytes | None:
    from IPython.core.pylabtools import print_figure

    return print_figure(fig, "png", bbox_inches="tight")


def register() -> bool:
    """Register the formatter with the running IPython; ``False`` when there is none."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    from matplotlib.figure import Figure

    formatter = shell.display_formatter.formatters["image/png"]
    if not _known(formatter, Figure):  # the inline backend's own formatter, when active, is kept
        formatter.for_type(Figure, _png)
    return True


def _known(formatter: Any, kind: type) -> bool:
    try:
        formatter.lookup_by_type(kind)
    except KeyError:
        return False
    return True
