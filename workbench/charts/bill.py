"""The bill against context length: counterfactual dollars (and tokens written to the cache) per window, beside
the recorded bill, for each observation mask."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from workbench.charts.style import TOKENS, dress, usd_axis, window_label


def bill_panels(frame: pd.DataFrame) -> tuple[str, ...]:
    """The panels :func:`bill_chart` draws for ``frame``: ``usd`` when any run could be priced, else ``tokens``
    (the cost-meter tokens: a bill with no dollar figure still has a size); ``writes`` only when some policy writes
    to the prompt cache (a panel of zeros says nothing: the caption says so instead)."""
    panels = ["usd" if frame["cf_usd"].notna().any() else "tokens"]
    if frame["cf_cache_write_tokens"].fillna(0).abs().sum() > 0:
        panels.append("writes")
    return tuple(panels)


def bill_chart(frame: pd.DataFrame, *, title: str = "What a window costs") -> Figure:
    """``frame``: :func:`workbench.replay.bill_sweep.bill_grid` rows (one grant). One line per mask over every
    context length it was billed at. Left: total USD per context length, the recorded bill dashed; where the rows
    carry the cache model's draws, each point is their median with its 90% interval as an error bar (no run
    priced: the cost-meter tokens instead). Right, when any policy writes to the cache: tokens written to it
    (:func:`bill_panels` says which panels are drawn)."""
    f = frame.copy()
    f["mask"] = [("none" if pd.isna(x) else int(x)) for x in f["mask"]]
    lengths = sorted({x for x in f["context_length"] if pd.notna(x)})
    order = ["none", *lengths]
    f["window"] = f["context_length"].apply(lambda x: "none" if pd.isna(x) else x)
    panels = bill_panels(frame)
    fig = Figure(figsize=(10 if len(panels) == 2 else 6.5, 4))
    axes = fig.subplots(1, len(panels))
    axes = list(axes) if len(panels) > 1 else [axes]
    ax_bill = axes[0]
    ax_write = axes[1] if "writes" in panels else None
    usd = panels[0] == "usd"
    for mask, g in sorted(f.groupby("mask", sort=False), key=lambda kv: (kv[0] != "none", str(kv[0]))):
        have = [w for w in order if (g["window"] == w).any()]
        tot = (
            g.groupby("window")[["cf_usd", "cf_spent", "cf_cache_write_tokens"]]
            .sum(min_count=1)
            .reindex(have)
        )
        xs = [order.index(w) for w in have]
        label = "no mask" if mask == "none" else f"mask {int(mask)}"
        bars = _bars(g, have) if usd and "cf_usd_draws" in g else None
        if bars is not None:
            med, lo, hi = bars
            ax_bill.errorbar(
                xs, med, yerr=[med - lo, hi - med], marker="o", capsize=3, label=f"{label} (90%)"
            )
        else:
            ax_bill.plot(
                xs, tot["cf_usd" if usd else "cf_spent"].to_numpy(dtype=float), marker="o", label=label
            )
        if ax_write is not None:
            ax_write.plot(xs, tot["cf_cache_write_tokens"].to_numpy(dtype=float), marker="o", label=label)
    ticks = [str(o) if o == "none" else window_label(int(o)) for o in order]
    recorded = f.drop_duplicates("run_id")["recorded_usd" if usd else "recorded_spent"].sum(min_count=1)
    if pd.notna(recorded):
        ax_bill.axhline(recorded, linestyle="--", color="grey", label="recorded")
    if usd:
        ax_bill.set_ylabel("USD, all runs")
        usd_axis(ax_bill.yaxis)
    else:
        dress(ax_bill, y="cost-meter tokens, all runs (no run priced)", yfmt=TOKENS)
    for ax in axes:
        ax.set_xticks(range(len(order)), ticks)
        dress(ax, "context length (none: unbounded)", grid=True)
    if ax_write is not None:
        dress(ax_write, y="tokens written to the cache", yfmt=TOKENS)
    ax_bill.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _bars(g: pd.DataFrame, order: list) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per window in ``order``: the median, low and high of the summed draws (``None`` if any run is unpriced)."""
    from workbench.replay.bill_interval import QUANTILES

    med, lo, hi = [], [], []
    for w in order:
        cell = g[g["window"] == w]["cf_usd_draws"].tolist()
        if not cell or any(d is None for d in cell):
            return None
        total = np.sum(np.array(cell, dtype=float), axis=0)
        q = np.quantile(total, (QUANTILES[0], 0.5, QUANTILES[1]))
        lo.append(q[0]), med.append(q[1]), hi.append(q[2])
    return np.array(med), np.array(lo), np.array(hi)


def bill_interval_chart(
    totals: pd.DataFrame, *, title: str = "What each policy saves, with its interval"
) -> Figure:
    """``totals``: :func:`workbench.replay.bill_sweep.grid_totals` with intervals. One row per policy: the share
    of the recorded bill it saves (median of the cache model's draws, 90% interval as an error bar; a bar that
    crosses zero is a sign that is not robust), and the same policy billed with no cache (hollow marker, the
    figure published numbers compare with)."""
    t = totals[totals["saved_usd_share_median"].notna()].copy()
    t = t[(t["context_length"] != "none") | (t["mask"] != "none")]
    labels = []
    for _, r in t.iterrows():
        parts = []
        if r["context_length"] != "none":
            parts.append(f"window {int(r['context_length']) // 1024}k")
        if r["mask"] != "none":
            block = r.get("mask_block", "none")
            parts.append(f"mask {r['mask']}" + (" in blocks" if block != "none" else " sliding"))
        labels.append(", ".join(parts))
    y = np.arange(len(t))
    med, lo, hi = (t[f"saved_usd_share_{q}"].to_numpy(float) * 100 for q in ("median", "low", "high"))
    fig = Figure(figsize=(9, 0.45 * len(t) + 1.6))
    ax = fig.subplots()
    colors = [
        "tab:red" if h < 0 else "tab:green" if lw > 0 else "tab:orange" for lw, h in zip(lo, hi, strict=True)
    ]
    ax.barh(
        y, med, xerr=[med - lo, hi - med], color=colors, alpha=0.7, capsize=3, label="saved (90% interval)"
    )
    if "saved_uncached_share" in t:
        ax.scatter(t["saved_uncached_share"].to_numpy(float) * 100, y, facecolors="none", edgecolors="black",
                   label="saved, billed with no cache", zorder=3)  # fmt: skip
    ax.axvline(0, color="grey", linewidth=1)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("% of the recorded bill saved (negative: costs more)")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title)
    fig.tight_layout()
    return fig
