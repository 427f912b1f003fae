"""Estimator error distributions: reported prompt ÷ estimate per call, by source and strategy, before and
after ADR-107's calibration; and, per content class, how far ADR's divisors over-count against an exact
tokenizer where one exists. Reads ``workbench.estimate.study``'s frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from workbench.charts.style import dress, figure

BEFORE, AFTER = "#1f77b4", "#ff7f0e"


def estimator_chart(
    turns: pd.DataFrame, classes: pd.DataFrame | None = None, *, strategy: str = "adr", title: str = ""
) -> Figure:
    """``turns``: the study's per-call frame (source, strategy, prompt, estimate, calibrated).
    Above 1 the estimate under-counts (risk of overflowing the window); below 1 it over-counts (prunes early)."""
    for col in ("source", "strategy", "prompt", "estimate", "calibrated"):
        if col not in turns.columns:
            raise ValueError(f"estimator chart needs column {col!r}")
    t = turns[(turns["strategy"] == strategy) & (turns["estimate"] > 0) & turns["prompt"].notna()]
    if t.empty:
        raise ValueError(f"no calls estimated with strategy {strategy!r}")
    have_classes = (
        classes is not None and "adr_over_exact" in classes and classes["adr_over_exact"].notna().any()
    )
    fig = figure(10, 8.5 if have_classes else 5.2)
    axes = fig.subplots(2, 1, height_ratios=(3, 2)) if have_classes else [fig.subplots()]
    ax = axes[0]
    sources = sorted(t["source"].unique())
    before = [(t[t["source"] == s]["prompt"] / t[t["source"] == s]["estimate"]).to_numpy() for s in sources]
    after = [(t[t["source"] == s]["prompt"] / t[t["source"] == s]["calibrated"]).to_numpy() for s in sources]
    pos = np.arange(len(sources))
    for data, offset, colour in ((before, -0.2, BEFORE), (after, 0.2, AFTER)):
        bp = ax.boxplot(
            data,
            positions=pos + offset,
            widths=0.35,
            patch_artist=True,
            showfliers=True,
            flierprops={"markersize": 2, "alpha": 0.4},
        )
        for box in bp["boxes"]:
            box.set_facecolor(colour)
            box.set_alpha(0.6)
        for med in bp["medians"]:
            med.set_color("black")
    ax.axhline(1.0, color="#d62728", linewidth=1.2, linestyle="--")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _p=None: f"{y:g}×"))
    ax.yaxis.set_minor_formatter(
        FuncFormatter(lambda y, _p=None: f"{y:g}×" if round(y * 10) % 2 == 0 and y < 2 else "")
    )
    counts = [len(d) for d in before]
    ax.set_xticks(pos, [f"{s}\n({n:,} calls)" for s, n in zip(sources, counts, strict=True)], fontsize=9)
    dress(ax, "source", "reported prompt ÷ estimate (ratio, log scale)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(
        [Patch(color=BEFORE, alpha=0.6), Patch(color=AFTER, alpha=0.6)],
        [f"{strategy} before calibration", f"{strategy} after calibration"],
        loc="upper right",
        fontsize=8,
    )
    ax.set_title("per call: above the dashed line the estimate under-counts", fontsize=10)
    if have_classes:
        assert classes is not None
        c = classes[classes["adr_over_exact"].notna()]
        labels = [f"{r.source}\n{r.model}" for r in c.drop_duplicates(["source", "model"]).itertuples()]
        kinds = sorted(c["class"].unique())
        width = 0.8 / max(1, len(kinds))
        ax2 = axes[1]
        groups = c.drop_duplicates(["source", "model"])[["source", "model"]].to_records(index=False)
        for k, kind in enumerate(kinds):
            vals = [
                float(
                    c[(c["source"] == s) & (c["model"] == m) & (c["class"] == kind)]["adr_over_exact"].sum()
                    or np.nan
                )
                for s, m in groups
            ]
            ax2.bar(np.arange(len(groups)) + (k - (len(kinds) - 1) / 2) * width, vals, width, label=kind)
        ax2.axhline(1.0, color="#d62728", linewidth=1.2, linestyle="--")
        ax2.set_ylim(0, float(np.nanmax(c["adr_over_exact"])) * 1.35)
        ax2.set_xticks(np.arange(len(groups)), labels, fontsize=8)
        dress(ax2, "source and model (exact offline tokenizer available)", "ADR tokens ÷ exact tokens")
        ax2.set_title("per content class: above 1 ADR over-counts (by design)", fontsize=10)
        ax2.legend(fontsize=8, loc="upper right", title="content class", title_fontsize=8)
        ax2.grid(alpha=0.3, axis="y")
    fig.suptitle(title or f"Estimator error ({strategy}) before and after calibration", fontsize=12)
    return fig
