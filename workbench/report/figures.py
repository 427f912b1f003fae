"""Figures to PNG bytes (for files) and base64 (for the self-contained HTML), and inline SVG for the grant charts;
a report's figures drawn on local processes (``render``)."""

from __future__ import annotations

import base64
import io
import resource
from collections.abc import Mapping
from typing import Literal

from matplotlib.figure import Figure

from workbench.scale.executor import local

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


RENDER_PARALLEL_FROM = 6
"""Figures from which ``render`` draws them on local processes (a report has about 28; fewer are drawn here)."""
RENDER_FORK_BELOW = 2 << 30
"""Peak resident bytes (``ru_maxrss``: KiB on Linux, where it forks) from which ``render`` draws here: a drawing
worker copies the pages it touches (docs/scale.md, "The report")."""

Kind = Literal["png", "svg"]


def render(
    figures: Mapping[str, Figure], kinds: Mapping[str, tuple[Kind, ...]], workers: int | None = None
) -> dict[tuple[str, Kind], bytes | str]:
    """Every figure in each of its ``kinds``: PNG bytes (``png_bytes``) or SVG text (``svg_text``), the PNGs drawn on
    ``workers`` local processes from ``RENDER_PARALLEL_FROM`` figures, below ``RENDER_FORK_BELOW`` (same bytes)."""
    jobs = [(name, kind) for name, ks in kinds.items() for kind in ks]
    big = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10 >= RENDER_FORK_BELOW
    executor = local(1 if big or len(jobs) < RENDER_PARALLEL_FROM else workers)
    away = [job for job in jobs if job[1] == "png"] if executor.size > 1 else []
    drawn = executor.map(_draw_job, [(figures[name], kind) for name, kind in away])
    out: dict[tuple[str, Kind], bytes | str] = {away[i]: blob for i, blob in drawn}
    for name, kind in jobs:
        if (name, kind) not in out:
            out[name, kind] = draw(figures[name], kind)
    return out


def draw(fig: Figure, kind: Kind) -> bytes | str:
    return png_bytes(fig) if kind == "png" else svg_text(fig)


def _draw_job(job: tuple[Figure, Kind]) -> bytes | str:
    return draw(*job)
