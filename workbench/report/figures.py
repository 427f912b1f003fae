"""Figures to PNG bytes (for files) and base64 (for the self-contained HTML)."""

from __future__ import annotations

import base64
import io

from matplotlib.figure import Figure

DPI = 110


def png_bytes(fig: Figure, dpi: int = DPI) -> bytes:
    buf = io.BytesIO()
    # A fixed Software tag and no timestamps, so the same figure gives the same bytes.
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "budget-workbench"})
    return buf.getvalue()


def png_base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


GRANT_CHARTS = ("sweep", "frontier", "survival", "heatmap")
"""The charts drawn over grants: inlined as SVG in the HTML report, so their text (the legend naming the
recommended grant) is text a reader can search and select, and a test can read."""


def svg_text(fig: Figure) -> str:
    """The figure as an inline ``<svg>`` element, its text kept as text (``svg.fonttype: none``)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "budget-workbench"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "budget-workbench"})
    text = buf.getvalue()
    return text[text.index("<svg") :]
