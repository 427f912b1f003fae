"""A report's figures drawn on local processes are the figures drawn here, byte for byte, one pickle cannot write
among them (the workers are forked: nothing is pickled to them); a process that has held ``RENDER_FORK_BELOW``
draws them here."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from workbench.report import figures as fig_module
from workbench.report.figures import RENDER_PARALLEL_FROM, render
from workbench.scale.executor import Executor


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


def _asked(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The worker counts ``render`` asks ``local`` for."""
    asked: list[int | None] = []

    def spy(workers: int | None) -> Executor:
        asked.append(workers)
        return local(workers)

    local = fig_module.local
    monkeypatch.setattr(fig_module, "local", spy)
    return asked


def test_figures_drawn_on_workers_are_the_figures_drawn_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        fig_module, "RENDER_FORK_BELOW", 1 << 62
    )  # forks, however much this test process held
    asked = _asked(monkeypatch)
    figures = _figures(RENDER_PARALLEL_FROM + 1)
    kinds = {name: ("png", "svg") if name in ("f1", "f2") else ("png",) for name in figures}
    here = render(figures, kinds, workers=1)
    there = render(figures, kinds, workers=2)
    assert asked == [1, 2]
    assert set(here) == set(there) == {(n, k) for n, ks in kinds.items() for k in ks}
    for job in here:
        if job[1] == "png":
            assert here[job] == there[job], job
        else:  # drawn here both times; a second drawing of a figure moves its layout in the last digit
            assert str(there[job]).startswith("<svg") and "figure" in str(there[job]), job
    assert here["f0", "png"][:8] == b"\x89PNG\r\n\x1a\n" and there["f1", "svg"].startswith("<svg")


def test_a_process_that_held_the_bound_draws_here_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    figures = _figures(RENDER_PARALLEL_FROM + 1)
    kinds = {name: ("png",) for name in figures}
    monkeypatch.setattr(fig_module, "RENDER_FORK_BELOW", 1 << 62)
    forked = render(figures, kinds, workers=2)
    asked = _asked(monkeypatch)
    monkeypatch.setattr(fig_module, "RENDER_FORK_BELOW", 0)  # every process has held 0 bytes: draws here
    assert render(figures, kinds, workers=2) == forked
    assert asked == [1]
