"""The bill against context length: counterfactual dollars (and tokens written to the cache) per window, beside
the recorded bill, for each observation mask."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure


def bill_chart(frame: pd.DataFrame, *, title: str = "What a window costs") -> Figure:
    """``frame``: :func:`workbench.replay.bill_sweep.bill_grid` rows (one grant). Left: total USD per context
    length, one line per mask, the recorded bill dashed. Right: tokens written to the cache."""
    f = frame.copy()
    f["mask"] = [("none" if pd.isna(x) else int(x)) for x in f["mask"]]
    lengths = sorted({x for x in f["context_length"] if pd.notna(x)})
    order = ["none", *lengths]
    f["window"] = f["context_length"].apply(lambda x: "none" if pd.isna(x) else x)
    fig = Figure(figsize=(10, 4))
    ax_usd, ax_write = fig.subplots(1, 2)
    for mask, g in f.groupby("mask", sort=False):
        tot = g.groupby("window")[["cf_usd", "cf_cache_write_tokens"]].sum(min_count=1).reindex(order)
        xs = [str(o) if o == "none" else f"{int(o) // 1024}k" for o in order]
        label = "no mask" if mask == "none" else f"mask {int(mask)}"
        ax_usd.plot(xs, tot["cf_usd"].to_numpy(dtype=float), marker="o", label=label)
        ax_write.plot(xs, tot["cf_cache_write_tokens"].to_numpy(dtype=float), marker="o", label=label)
    recorded = f.drop_duplicates("run_id")["recorded_usd"].sum(min_count=1)
    if pd.notna(recorded):
        ax_usd.axhline(recorded, linestyle="--", color="grey", label="recorded")
    ax_usd.set_xlabel("context length (none: unbounded)")
    ax_usd.set_ylabel("USD, all runs")
    ax_write.set_xlabel("context length (none: unbounded)")
    ax_write.set_ylabel("tokens written to the cache")
    ax_usd.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig
