"""Heat map of stop reasons over a grant × context-length grid: one panel per stop reason; each cell counts the
runs that policy ended that way (the number printed in the cell) and is coloured by that count as a share of the
runs at that policy (the colour bar). The recommended grant's column is outlined and named in the legend."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from workbench.charts.style import _tokens, dress, figure


def _context_label(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "none"
    return _tokens(float(v))  # type: ignore[arg-type]


def stop_heatmap(
    frame: pd.DataFrame, *, title: str = "", max_panels: int = 9, recommended: int | None = None
) -> Figure:
    """``frame``: sweep rows with ``grant``, ``context_length``, ``stop_reason``, ``censored``. A row that
    ends as recorded (nothing cut, no landing) counts as ``as recorded`` (whatever the recording's own ending
    was), not as the recording's stop reason."""
    for col in ("grant", "context_length", "stop_reason"):
        if col not in frame.columns:
            raise ValueError(f"heat map needs column {col!r}")
    reason = frame["stop_reason"].astype(object)
    if "cut_turns" in frame.columns and "landing_started_at" in frame.columns:
        untouched = (frame["cut_turns"].fillna(0).astype(int) == 0) & frame["landing_started_at"].isna()
        reason = reason.where(~untouched, "as recorded")
    f = frame.assign(
        outcome=reason.where(~frame.get("censored", False).astype(bool), "censored").fillna("none"),
        ctx=frame["context_length"].map(_context_label),
    )
    order_ctx = (
        f.drop_duplicates("ctx")
        .assign(_k=lambda d: d["context_length"].fillna(float("inf")))
        .sort_values("_k")["ctx"]
        .tolist()
    )
    grants = sorted(int(g) for g in f["grant"].unique())
    reasons = f["outcome"].value_counts().index.tolist()[:max_panels]
    total = f.groupby(["ctx", "grant"]).size()
    cols = min(3, len(reasons))
    rows = math.ceil(len(reasons) / cols)
    fig = figure(4.2 * cols + 1, 0.45 * len(order_ctx) * rows + 1.6 * rows + 0.6)
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    image = None
    for ax, reason in zip(axes, reasons, strict=False):
        counts = f[f["outcome"] == reason].groupby(["ctx", "grant"]).size()
        grid = np.zeros((len(order_ctx), len(grants)))
        n = np.zeros_like(grid, dtype=int)
        for i, c in enumerate(order_ctx):
            for j, g in enumerate(grants):
                k = int(counts.get((c, g), 0))
                n[i, j] = k
                t = int(total.get((c, g), 0))
                grid[i, j] = k / t if t else np.nan
        image = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=0, vmax=1, origin="lower")
        if len(grants) * len(order_ctx) <= 120:
            for i, j in zip(*np.nonzero(n), strict=True):  # row by row, as the cells are laid out
                ink = "white" if grid[i, j] < 0.6 else "black"
                ax.text(j, i, str(n[i, j]), ha="center", va="center", fontsize=7, color=ink)
        step = max(1, len(grants) // 6)
        ax.set_xticks(range(0, len(grants), step), [_tokens(g) for g in grants[::step]], fontsize=8)
        ax.set_yticks(range(len(order_ctx)), order_ctx, fontsize=8)
        if recommended is not None and recommended in grants:
            j = grants.index(recommended)
            ax.axvspan(j - 0.5, j + 0.5, fill=False, edgecolor="#ff2020", linewidth=2, linestyle="--")
        ax.set_title(f"stop: {reason}", fontsize=10)
        dress(ax, "grant (tokens)", "context length (tokens)")
    for ax in axes[len(reasons) :]:
        ax.set_visible(False)
    if image is not None:
        bar = fig.colorbar(image, ax=axes[: len(reasons)].tolist(), shrink=0.8)
        bar.set_label("colour: share of the runs at that policy")
    if recommended is not None and recommended in grants:
        from matplotlib.patches import Patch

        label = f"recommended grant {recommended:,}"
        outline = Patch(fill=False, edgecolor="#ff2020", linestyle="--", linewidth=2, label=label)
        fig.legend(handles=[outline], loc="outside lower left", fontsize=9)
    n_runs = int(total.max()) if len(total) else 0
    fig.suptitle(
        (title or "Runs per stop reason over grant × context length")
        + f"\ncell: number of runs (of {n_runs}) that ended that way; colour: that number as a share",
        fontsize=11,
    )
    return fig
