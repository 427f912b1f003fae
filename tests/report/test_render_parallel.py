"""A report's figures drawn on local processes are the figures drawn here, byte for byte, one pickle cannot write
among them (the workers are forked: nothing is pickled to them)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from workbench.report.figures import RENDER_PARALLEL_FROM, render


def _figures(n: int) -> dict[str, Figure]:
    out = {}
    rng = np.random.default_rng(1)
    for i in range(n):
        fig = Figure(figsize=(6, 3), layout="constrained")
        ax = fig.add_subplot()
        ax.plot(rng.random(50).cumsum(), label=f"run {i}")
        ax.set_title(f"figure {i}: 220,000 tokens")
        ax.legend()
        out[f"f{i}"] = fig
    # a lambda formatter: pickle cannot write this figure
    out["f0"].axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f} tok"))
    return out


def test_figures_drawn_on_workers_are_the_figures_drawn_here() -> None:
    figures = _figures(RENDER_PARALLEL_FROM + 1)
    kinds = {name: ("png", "svg") if name in ("f1", "f2") else ("png",) for name in figures}
    here = render(figures, kinds, workers=1)
    there = render(figures, kinds, workers=2)
    assert set(here) == set(there) == {(n, k) for n, ks in kinds.items() for k in ks}
    for job in here:
        if job[1] == "png":
            assert here[job] == there[job], job
        else:  # drawn here both times; a second drawing of a figure moves its layout in the last digit
            assert str(there[job]).startswith("<svg") and "figure" in str(there[job]), job
    assert here["f0", "png"][:8] == b"\x89PNG\r\n\x1a\n" and there["f1", "svg"].startswith("<svg")
