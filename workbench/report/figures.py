"""Figures to PNG bytes (for files) and base64 (for the self-contained HTML), and inline SVG for the grant charts;
a report's figures drawn on local processes (``render``)."""

from __future__ import annotations

import base64
import io
import pickle
from collections.abc import Mapping
from typing import Literal

from matplotlib.figure import Figure

from workbench.scale.processes import cores, fork_context, pool_options

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

Kind = Literal["png", "svg"]


def render(
    figures: Mapping[str, Figure], kinds: Mapping[str, tuple[Kind, ...]], workers: int | None = None
) -> dict[tuple[str, Kind], bytes | str]:
    """Every figure in each of its ``kinds``: PNG bytes (``png_bytes``) or SVG text (``svg_text``). Drawing is most
    of writing a report (about 0.4 s a figure), and figures are independent, so from ``RENDER_PARALLEL_FROM``
    figures their PNGs are drawn on one process per core (``workers``; 1: all here) while this process draws the
    SVGs: each worker gets the figure pickled and returns the PNG it drew, byte for byte what drawing it here
    gives. SVGs are drawn here because their clip-path ids are hashed from the drawing objects, which another
    process does not share. A figure pickle cannot write, or a pool that cannot run, is drawn here."""
    jobs = [(name, kind) for name, ks in kinds.items() for kind in ks]
    out: dict[tuple[str, Kind], bytes | str] = {}
    n = workers if workers is not None else cores()
    pngs = [job for job in jobs if job[1] == "png"]
    ctx = fork_context() if n > 1 and len(jobs) >= RENDER_PARALLEL_FROM else None
    if ctx is not None:
        from concurrent.futures import ProcessPoolExecutor

        blobs = {name: blob for name, _ in pngs if (blob := _pickled(figures[name])) is not None}
        try:
            with ProcessPoolExecutor(max_workers=n, mp_context=ctx, **pool_options()) as pool:
                futures = {
                    job: pool.submit(_draw_pickled, blobs[job[0]], job[1]) for job in pngs if job[0] in blobs
                }
                for job in jobs:  # meanwhile, what the workers do not draw
                    if job not in futures:
                        out[job] = _draw(figures[job[0]], job[1])
                for job, fut in futures.items():
                    try:
                        out[job] = fut.result()
                    except Exception:
                        continue  # drawn here below
        except Exception:
            pass  # the pool could not run: what is missing is drawn here below
    for name, kind in jobs:
        if (name, kind) not in out:
            out[name, kind] = _draw(figures[name], kind)
    return out


def _draw(fig: Figure, kind: Kind) -> bytes | str:
    return png_bytes(fig) if kind == "png" else svg_text(fig)


def _pickled(fig: Figure) -> bytes | None:
    try:
        return pickle.dumps(fig, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a figure holding something pickle cannot write (a lambda formatter): drawn here
        return None


def _draw_pickled(data: bytes, kind: Kind) -> bytes | str:
    return _draw(pickle.loads(data), kind)
