"""One chart per constant of the calibration table, drawn from the row's own evidence table.

``constant_chart(row)`` dispatches on ``row.chart``; every chart marks the value in use and the recommendation
(and shades the band) so the evidence behind the band is what is on the page.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.charts.style import BAND_COLOUR, PALETTE, PERCENT, TOKENS, dress, figure

if TYPE_CHECKING:
    from workbench.analysis.calibration.model import ConstantRow

IN_USE = ("#d62728", "--")
PICK = ("#2ca02c", "-")


def _marks(ax: Axes, row: ConstantRow, axis: str = "x") -> None:
    line = ax.axvline if axis == "x" else ax.axhline
    span = ax.axvspan if axis == "x" else ax.axhspan
    if row.band is not None and row.status == "recommended":
        lo, hi = row.band
        if lo is not None or hi is not None:
            lims = ax.get_xlim() if axis == "x" else ax.get_ylim()
            span(lo if lo is not None else lims[0], hi if hi is not None else lims[1], color=BAND_COLOUR, alpha=0.12,
                 label="band")  # fmt: skip
    if isinstance(row.in_use, int | float) and not isinstance(row.in_use, bool):
        line(row.in_use, color=IN_USE[0], linestyle=IN_USE[1], label=f"in use {row.in_use:,g}")
    if row.recommended is not None:
        line(row.recommended, color=PICK[0], linestyle=PICK[1], label=f"recommended {row.recommended:,g}")


def _empty(fig: Figure, why: str) -> None:
    ax = fig.add_subplot()
    ax.text(0.5, 0.5, why, ha="center", va="center", wrap=True, transform=ax.transAxes)
    ax.set_axis_off()


def _title(fig: Figure, row: ConstantRow) -> None:
    # wrapped: a long verdict ("not enough data: ...") stays inside the figure instead of running off its edges
    fig.suptitle(textwrap.fill(f"{row.name}: {row.recommendation_words}", 110), fontsize=11)


def _legend_below(fig: Figure) -> None:
    """Every axis's legend gathered into one legend under the plots, so no legend covers a bar or a line."""
    handles: dict[str, object] = {}
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
        legend.remove()
    if handles:
        widest = max(len(label) for label in handles)
        cols = max(1, min(4, len(handles), 120 // (widest + 8)))
        fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=cols, fontsize=8,
                   frameon=False)  # fmt: skip


def _grant(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    ax = fig.add_subplot()
    ax.plot(
        t["grant"], t["share_finished"], color=PALETTE[0], label="share of finished runs finishing inside"
    )
    dress(ax, y="share finishing inside", yfmt=PERCENT)
    ax2 = ax.twinx()
    ax2.plot(t["grant"], t["landed_mid_work"], color=PALETTE[1])
    ax2.set_ylabel("runs landed mid-work")
    dress(ax, "grant (tokens of billed work)", xfmt=TOKENS)
    _marks(ax, row)
    # an empty twin on the left axis, so the legend (gathered from it) names the right axis's line too
    ax.plot([], [], color=PALETTE[1], label="runs landed mid-work (right axis)")
    ax.legend(loc="center right", fontsize=8)


def _landing(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    col = "calls_after" if row.unit == "calls" else "share_after"
    left, right = fig.subplots(1, 2)
    at = t[t["at_policy_grant"]] if len(t) else t
    if len(at):
        for finished, colour, label in ((True, PALETTE[0], "positive"), (False, PALETTE[3], "censored")):
            v = np.sort(at[at["finished"] == finished][col].to_numpy())
            if len(v):
                left.step(
                    v, np.arange(1, len(v) + 1), where="post", color=colour, label=f"{label} ({len(v)})"
                )
        grant = int(at["grant"].iloc[0])
        left.set_title(f"runs crossing the grant of {grant:,}", fontsize=9)
    dress(left, f"{col.replace('_', ' ')} the crossing", "runs (cumulative)")
    _marks(left, row)
    left.legend(fontsize=8)
    if len(t):
        pos = t[t["finished"].astype(bool)]
        g = pos.groupby("grant")
        limit = row.in_use if isinstance(row.in_use, int | float) else 0
        right.plot(g[col].median().index, g[col].median().to_numpy(), color=PALETTE[0], label="median after")
        right2 = right.twinx()
        right2.bar(g.size().index, g.size().to_numpy(), width=8_000, alpha=0.25, color=PALETTE[2],
                   label="positive runs crossing")  # fmt: skip
        right2.plot(g.size().index, g[col].apply(lambda s: int((s <= limit).sum())).to_numpy(), color=PALETTE[1],
                    label=f"finish within {limit:g}")  # fmt: skip
        right2.set_ylabel("runs")
        right2.legend(fontsize=8, loc="upper right")
    dress(right, "grant", f"median {col.replace('_', ' ')}", xfmt=TOKENS)
    right.legend(fontsize=8, loc="upper left")


def _turns(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    ax = fig.add_subplot()
    bins = np.linspace(0, max(float(t["calls"].max()), float(row.in_use or 0)) + 10, 40) if len(t) else 10
    for finished, colour, label in ((True, PALETTE[0], "positive"), (False, PALETTE[3], "censored")):
        v = t[t["finished"] == finished]["calls"]
        if len(v):
            ax.hist(v, bins=bins, color=colour, alpha=0.6, label=f"{label} ({len(v)})")
    for cap in sorted(set(t["recorded_cap"].dropna().astype(int))) if len(t) else []:
        ax.axvline(cap, color="#7f7f7f", linestyle=":", label=f"recorded cap {cap}")
    _marks(ax, row)
    dress(ax, "calls per run", "runs")
    ax.legend(fontsize=8)


def _survival(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    ax = fig.add_subplot()
    if "survival" in t:
        ax.step(
            t["calls"], t["survival"], where="post", color=PALETTE[0], label="still unfinished (Kaplan-Meier)"
        )
        ax.fill_between(t["calls"], t["lower"], t["upper"], step="post", alpha=0.2, color=PALETTE[0])
    _marks(ax, row)
    dress(ax, "calls", "share of runs not yet finished", yfmt=PERCENT)
    ax.legend(fontsize=8)


def _guard(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    x = t["value"].to_numpy(dtype=float)
    stopped = t["false_positives"].sum() + t["negatives_stopped"].sum()
    if stopped == 0 and not t["spend_saved"].fillna(0).any():
        _empty(
            fig,
            f"no candidate from {x.min():g} to {x.max():g} stops any run, positive or negative, and none saves "
            "spend: nothing to draw",
        )
        return
    ax = fig.add_subplot()
    w = (np.min(np.diff(x)) if len(x) > 1 else 1.0) * 0.4
    for dx, col, colour, label in (
        (-w / 2, "false_positives", PALETTE[3], "positive runs stopped (false positives)"),
        (w / 2, "negatives_stopped", PALETTE[2], "negative runs stopped early"),
    ):
        ax.bar(x + dx, t[col], width=w, color=colour, label=label)
    dress(ax, f"{row.name} ({row.unit})", "runs")
    ax2 = ax.twinx()
    ax2.plot(x, t["spend_saved"], color=PALETTE[0], marker="o", label="spend saved")
    dress(ax2, y="spend saved (tokens of billed work)", yfmt=TOKENS)
    _marks(ax, row)
    ax.legend(fontsize=8, loc="upper left")
    ax2.legend(fontsize=8, loc="upper right")


def _recon(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    ax = fig.add_subplot()
    ax.plot(t["value"], t["positives_noticed"] / t["positive_runs"].clip(lower=1), marker="o", color=PALETTE[0],
            label="positive runs given a notice")  # fmt: skip
    ax.plot(t["value"], t["negatives_noticed"] / t["negative_runs"].clip(lower=1), marker="o", color=PALETTE[3],
            label="negative runs given a notice")  # fmt: skip
    dress(ax, f"{row.name} ({row.unit})", "share of runs", yfmt=PERCENT)
    _marks(ax, row)
    ax.legend(fontsize=8)


def _wrapup(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    ax = fig.add_subplot()
    ax.plot(
        t["value"], t["lead_median"], marker="o", color=PALETTE[0], label="median lead before the landing"
    )
    ax.plot(t["value"], t["lead_p25"], marker=".", color=PALETTE[4], label="25th percentile lead")
    if "cost_only_lead_median" in t:
        ax.plot(t["value"], t["cost_only_lead_median"], marker="o", linestyle=":", color=PALETTE[0],
                label="median lead, cost reading alone")  # fmt: skip
    dress(ax, "wrap-up threshold (share of the budget used)", "calls between the warning and the landing")
    ax2 = ax.twinx()
    ax2.bar(t["value"], t["warned"], width=0.02, alpha=0.25, color=PALETTE[1], label="runs warned")
    ax2.set_ylabel("runs warned")
    _marks(ax, row)
    ax.legend(fontsize=8, loc="upper left")
    ax2.legend(fontsize=8, loc="upper right")


def _emptyreply(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    if t.empty or int(t["empty_replies"].max()) == 0:
        _empty(fig, f"no empty reply in this corpus ({row.calls} found): nothing to place the share on")
        return
    ax = fig.add_subplot()
    for dx, col, colour, side in (
        (-0.15, "false_positives", PALETTE[3], "positive"),
        (0.15, "negatives_abandoned", PALETTE[2], "negative"),
    ):
        ax.bar(t["value"] + dx, t[col], width=0.3, color=colour, label=f"{side} runs abandoned")
    _marks(ax, row)
    dress(ax, "divisor (abandon when completion > remaining / divisor)", "runs")
    ax.legend(fontsize=8)


def _seed(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    if t.empty:
        _empty(fig, "no first send with a recorded request and reported usage")
        return
    ax = fig.add_subplot()
    groups = list(t.groupby(["source", "model"], sort=True))
    rng = np.random.default_rng(0)  # fixed jitter: the same figure every time
    for i, (_key, g) in enumerate(groups):
        x = i + rng.uniform(-0.2, 0.2, len(g))
        ax.scatter(x, g["ratio"], s=12, color=PALETTE[i % len(PALETTE)])
    # each group named once, under its column, with its count (no legend entry per group)
    ax.set_xticks(
        range(len(groups)), [f"{s}\n{m} ({len(g)})" for (s, m), g in groups], fontsize=7, rotation=20
    )
    ax.set_ylabel("reported / estimated prompt tokens, first send")
    _marks(ax, row, axis="y")
    ax.legend(fontsize=7, loc="upper left")


def _reserve(fig: Figure, row: ConstantRow) -> None:
    t = row.evidence
    col = "completion" if row.name == "reserve" else "growth"
    ax = fig.add_subplot()
    x = np.arange(len(t))
    ax.bar(x - 0.2, t[f"{col}_p99"].astype(float), width=0.4, color=PALETTE[0], label="99th percentile")
    ax.bar(x + 0.2, t[f"{col}_max"].astype(float), width=0.4, color=PALETTE[1], label="largest")
    # a source with nothing to measure (one call: no growth between sends) has no bar, and says so: not a zero
    none = ["" if known else "; nothing to measure" for known in t[f"{col}_max"].notna()]
    ax.set_xticks(
        x, [f"{s}\n({r} runs{n})" for s, r, n in zip(t["source"], t["runs"], none, strict=True)], fontsize=8
    )
    what = "completion tokens per call" if col == "completion" else "prompt growth between sends (tokens)"
    dress(ax, y=what, yfmt=TOKENS)
    if row.recommended is not None:
        ax.axhline(
            row.recommended, color=PICK[0], linestyle=PICK[1], label=f"recommended {row.recommended:,}"
        )
    ax.legend(fontsize=8)


CHARTS: dict[str, Callable[[Figure, ConstantRow], None]] = {
    "grant": _grant,
    "landing": _landing,
    "turns": _turns,
    "survival": _survival,
    "guard": _guard,
    "recon": _recon,
    "wrapup": _wrapup,
    "empty": _emptyreply,
    "seed": _seed,
    "reserve": _reserve,
}


def constant_chart(row: ConstantRow, width: float = 10.0, height: float = 4.5) -> Figure:
    """The evidence behind one row's band, as a Figure."""
    draw = CHARTS.get(row.chart)
    if draw is None:
        raise ValueError(f"no chart for kind {row.chart!r} (row {row.name!r}); known: {', '.join(CHARTS)}")
    fig = figure(width, height)
    if row.evidence.empty and row.chart not in ("empty", "seed"):
        _empty(fig, "no evidence rows")
    else:
        draw(fig, row)
    _legend_below(fig)
    _title(fig, row)
    return fig
