"""Charts of a frontier (``workbench.analysis.frontier``): what each grant keeps and saves, the frontier of kept
against dollars, and the share kept split by outcome. Every grant chart marks the recommended grant and names it
in its legend ("recommended grant 328,000"), so a reader never has to guess which line is the answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from workbench.analysis.frontier import ALL_GROUP, Frontier, share_interval
from workbench.charts.style import BAND_COLOUR, PALETTE, PERCENT, TOKENS, dress, figure, usd_axis

RECOMMENDED_COLOUR = "#111111"


def recommended_label(grant: int) -> str:
    """The legend entry every grant chart carries for the recommended grant."""
    return f"recommended grant {grant:,}"


def mark_recommended(ax: Axes, grant: int | None, *, label: bool = True) -> None:
    if grant is None:
        return
    ax.axvline(
        grant,
        color=RECOMMENDED_COLOUR,
        linestyle="--",
        linewidth=1.4,
        label=recommended_label(grant) if label else None,
        zorder=5,
    )


def _word(curve: pd.DataFrame) -> str:
    return "finished" if curve["basis"].iloc[0] == "finished" else "resolved"


def kept_chart(
    fr: Frontier,
    *,
    group: str | None = None,
    rules: str | None = None,
    recommended: int | None = None,
    band: tuple[int, int] | None = None,
    title: str = "",
) -> Figure:
    """Three panels over the grants of one group: the share of resolved runs kept with its interval; resolved
    runs at risk and lost, unresolved runs cut; the spend and the saving in tokens (left) and dollars (right).
    ``band``: a (low, high) of grants to shade (the seed probe's band)."""
    c = fr.curve(group, rules)
    word = _word(c)
    fig = figure(10, 8.8)
    a, b, s = fig.subplots(3, 1, sharex=True)
    for ax in (a, b, s):
        if band is not None:
            ax.axvspan(
                *band, color=BAND_COLOUR, alpha=0.12, lw=0, label="seed probe band" if ax is a else None
            )
    a.fill_between(
        c["grant"],
        c["resolved_kept_low"],
        c["resolved_kept_high"],
        step="post",
        color=PALETTE[0],
        alpha=0.18,
        label=f"{fr.confidence:.0%} Wilson interval",
    )
    a.step(
        c["grant"],
        c["resolved_kept_share"],
        where="post",
        color=PALETTE[0],
        linewidth=2,
        label=f"{word} runs kept (finish as recorded, no landing)",
    )
    a.step(
        c["grant"],
        (c["resolved_kept"] + c["resolved_at_risk"]) / c["resolved"].where(c["resolved"] > 0),
        where="post",
        color=PALETTE[0],
        linestyle=":",
        linewidth=1.2,
        label=f"{word} runs kept or at risk (end as recorded)",
    )
    mark_recommended(a, recommended)
    dress(a, y=f"share of {word} runs", yfmt=PERCENT)
    a.set_ylim(max(0.0, float(c["resolved_kept_low"].min()) - 0.05), 1.02)
    a.legend(loc="lower right", fontsize=8)

    b.step(c["grant"], c["resolved_at_risk"], where="post", color="#e69500", label=f"{word} at risk")
    b.step(c["grant"], c["resolved_lost"], where="post", color="#d62728", label=f"{word} lost (cut)")
    b.step(c["grant"], c["unresolved_cut"], where="post", color="#7f7f7f", label=f"not {word}, cut")
    mark_recommended(b, recommended)
    b.set_ylabel("runs")
    b.yaxis.get_major_locator().set_params(integer=True)
    b.legend(loc="upper right", fontsize=8)

    s.plot(c["grant"], c["spend_tokens"], color="#ff7f0e", label="spend under the grant (tokens)")
    s.plot(c["grant"], c["spend_saved_tokens"], color="#2ca02c", label="saved against the recording (tokens)")
    mark_recommended(s, recommended)
    dress(s, y="cost-meter tokens", yfmt=TOKENS)
    handles, labels = s.get_legend_handles_labels()
    if c["usd_runs"].max() > 0:
        d = s.twinx()
        d.plot(
            c["grant"], c["spend_saved_usd"], color="#2ca02c", linestyle="--", label="saved (USD, right axis)"
        )
        d.set_ylabel("USD saved")
        usd_axis(d.yaxis)
        d.set_ylim(bottom=0)
        h2, l2 = d.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    s.legend(handles, labels, loc="center right", fontsize=8)
    dress(s, "grant (cost-meter tokens at which the landing starts)", xfmt=TOKENS)
    for ax in (a, b, s):
        ax.grid(alpha=0.3)
    name = c["group"].iloc[0]
    fig.suptitle(
        title or f"What each grant keeps and saves — {name}, rules {c['rules'].iloc[0]}", fontsize=12
    )
    return fig


@dataclass(frozen=True)
class FrontierLayout:
    """What :func:`frontier_chart` draws, decided once so a caption can say exactly that: the spend axis
    (``usd`` or ``tokens``), the groups drawn (with the share of their runs priced when not all are), the groups
    left out and why, and whether the top axis shows the one drawn group's spend in cost-meter tokens."""

    axis: str
    drawn: tuple[str, ...]
    priced: tuple[tuple[str, int, int], ...]
    """(group, runs priced, runs) for each drawn group whose dollars cover only part of its runs."""
    left_out: tuple[tuple[str, str], ...]
    top_axis: bool

    @property
    def words(self) -> str:
        """The caption: what the chart shows, nothing it does not."""
        if self.axis == "usd":
            x = "the corpus's spend under it in USD"
            if self.top_axis:
                x += f" (top axis: the same spend in cost-meter tokens, {self.drawn[0]})"
        else:
            x = "the corpus's spend under it in cost-meter tokens (no group has a dollar figure for most of its runs)"
        out = (
            f"Each point is a grant: {x}, against the share of successful runs it keeps (bars: Wilson interval). "
            "Left is cheaper, up keeps more. Labelled points: each curve's first and last grant, the recommended "
            "grant (◆) and its band's edges."
        )
        if self.priced:
            out += (
                " Dollars cover part of a group's runs: "
                + "; ".join(f"{g}, {k} of {n} runs" for g, k, n in self.priced)
                + "."
            )
        if self.left_out:
            out += " Not drawn: " + "; ".join(f"{g} ({why})" for g, why in self.left_out) + "."
        return out


def frontier_layout(
    fr: Frontier, groups: Sequence[str] | None = None, rules: str | None = None
) -> FrontierLayout:
    """Which groups the frontier chart draws, against which spend. A group with no successful run has no share
    to draw; on the dollar axis a group with fewer than half its runs priced is left out (its dollars would be
    the spend of a few runs), and the axis is tokens when no group has dollars for half its runs."""
    groups = list(groups) if groups is not None else list(fr.groups)
    curves = {g: fr.curve(g, rules) for g in groups}
    live = [g for g in groups if int(curves[g]["resolved"].max()) > 0]
    left = [(g, f"no {_word(curves[g])} run: no share to draw") for g in groups if g not in live]
    share = {g: int(curves[g]["usd_runs"].max()) for g in live}
    runs = {g: int(curves[g]["runs"].max()) for g in live}
    usd_ok = [g for g in live if share[g] * 2 >= runs[g] and share[g] > 0]
    if usd_ok:
        left += [(g, f"dollars for {share[g]} of its {runs[g]} runs only") for g in live if g not in usd_ok]
        drawn = usd_ok
        axis = "usd"
        priced = tuple((g, share[g], runs[g]) for g in drawn if share[g] < runs[g])
    else:
        drawn, axis, priced = live, "tokens", ()
    top = axis == "usd" and len(drawn) == 1 and share[drawn[0]] == runs[drawn[0]]
    return FrontierLayout(axis, tuple(drawn), priced, tuple(left), top)


def _place_labels(fig: Figure, ax: Axes, labels: list[tuple[str, float, float, str]]) -> None:
    """Annotate each (text, x, y, colour), trying a few offsets until the label overlaps no label already placed
    (greedy, in drawing order); a label that finds no free place is left out rather than drawn over another."""
    renderer = RendererAgg(int(fig.bbox.width), int(fig.bbox.height), fig.dpi)  # measures text, draws nothing
    placed: list = []
    offsets = ((4, -11), (4, 5), (-34, 5), (-34, -11), (4, -22), (4, 16), (-34, 16), (-34, -22))
    for text, x, y, colour in labels:
        for dx, dy in offsets:
            ann = ax.annotate(
                text, (x, y), textcoords="offset points", xytext=(dx, dy), fontsize=7, color=colour
            )
            box = ann.get_window_extent(renderer).expanded(1.05, 1.1)
            if not any(box.overlaps(b) for b in placed):
                placed.append(box)
                break
            ann.remove()


def frontier_chart(
    fr: Frontier,
    *,
    groups: Sequence[str] | None = None,
    rules: str | None = None,
    recommended: dict[str, int | None] | None = None,
    bands: dict[str, tuple[int, int] | None] | None = None,
    title: str = "",
) -> Figure:
    """Resolved runs kept against the spend, one curve per group (:func:`frontier_layout` says which groups and
    which spend axis), each point a grant, the recommended grant marked per group. Labelled: each curve's first
    and last grant, the recommended grant and the edges of its band (``bands``, per group), never overlapping."""
    layout = frontier_layout(fr, groups, rules)
    recommended = recommended or {}
    bands = bands or {}
    usd = layout.axis == "usd"
    spend = "spend_usd" if usd else "spend_tokens"
    fig = figure(10, 6)
    ax = fig.subplots()
    labels: list[tuple[str, float, float, str]] = []
    for k, g in enumerate(layout.drawn):
        c = fr.curve(g, rules)
        x = c[spend]
        colour = PALETTE[k % len(PALETTE)]
        err = np.vstack(
            [
                c["resolved_kept_share"] - c["resolved_kept_low"],
                c["resolved_kept_high"] - c["resolved_kept_share"],
            ]
        )
        every = max(1, len(c) // 25)  # a readable number of interval bars
        ax.errorbar(
            x[::every],
            c["resolved_kept_share"][::every],
            yerr=err[:, ::every],
            color=colour,
            alpha=0.3,
            fmt="none",
            lw=1,
            label=f"{fr.confidence:.0%} Wilson interval (each group's colour)" if k == 0 else None,
        )
        priced = next((f" (USD of {p} of {n} runs)" for h, p, n in layout.priced if h == g), "")
        ax.plot(
            x,
            c["resolved_kept_share"],
            "-o",
            ms=2.5,
            color=colour,
            label=f"{g}: {_word(c)} runs kept{priced}",
        )
        rec = recommended.get(g)
        if rec is not None and (c["grant"] == rec).any():
            row = c[c["grant"] == rec].iloc[0]
            ax.plot(
                row[spend],
                row["resolved_kept_share"],
                marker="D",
                ms=9,
                color=RECOMMENDED_COLOUR,
                linestyle="none",
                label=f"{g}: {recommended_label(rec)}",
                zorder=6,
            )
        band = bands.get(g) or ()
        wanted = [rec, *band, int(c["grant"].iloc[0]), int(c["grant"].iloc[-1])]
        for grant in dict.fromkeys(w for w in wanted if w is not None):
            hit = c[c["grant"] == grant]
            if hit.empty:
                continue
            r = hit.iloc[0]
            labels.append((f"{grant / 1000:,.0f}k", float(r[spend]), float(r["resolved_kept_share"]), colour))
    if usd:
        ax.set_xlabel("spend of the corpus under the policy (USD; labels: the grant)")
        usd_axis(ax.xaxis)
        if layout.top_axis:
            first = fr.curve(layout.drawn[0], rules)
            xs, ts = first["spend_usd"].to_numpy(float), first["spend_tokens"].to_numpy(float)
            if len(xs) > 1 and np.all(np.diff(xs) >= 0) and xs[-1] > xs[0]:
                order = np.argsort(xs, kind="stable")
                top = ax.secondary_xaxis(
                    "top",
                    functions=(
                        lambda v: np.interp(v, xs[order], ts[order]),
                        lambda v: np.interp(v, ts[order], xs[order]),
                    ),
                )
                # ticks only inside the tokens this curve spans (the mapping is flat beyond its ends)
                ticks = MaxNLocator(6).tick_values(ts.min(), ts.max())
                top.set_xticks([t for t in ticks if ts.min() <= t <= ts.max()])
                dress(top, f"the same spend in cost-meter tokens ({layout.drawn[0]})", xfmt=TOKENS)
    else:
        dress(ax, "spend under the policy (cost-meter tokens; labels: the grant)", xfmt=TOKENS)
    dress(ax, y="share of successful runs kept", yfmt=PERCENT, grid=True)
    if ax.get_legend_handles_labels()[0]:  # every group left out: no empty legend (the axis title says why)
        ax.legend(loc="lower right", fontsize=8)
    if layout.left_out:  # under the axis title, never over a curve
        ax.set_xlabel(
            ax.get_xlabel() + "\nnot drawn: " + "; ".join(f"{g} ({why})" for g, why in layout.left_out)
        )
    fig.suptitle(title or "The frontier: runs kept against what they cost (each point a grant)", fontsize=12)
    fig.draw_without_rendering()  # the layout settles before the labels are placed by their drawn extents
    _place_labels(fig, ax, labels)
    return fig


def outcome_survival_chart(
    fr: Frontier,
    *,
    group: str | None = None,
    rules: str | None = None,
    recommended: int | None = None,
    title: str = "",
) -> Figure:
    """The share of runs kept (finish as recorded, no landing started) by grant, split by outcome — the same
    coverage the frontier counts — each with its Wilson interval; the recommended grant marked."""
    group = group if group is not None else fr.groups[0]
    c = fr.curve(group, rules)
    rows = fr.rows
    sel = rows if group == ALL_GROUP else rows[rows[fr.by].astype(str) == group]
    sel = sel[(sel["rules"] == c["rules"].iloc[0]) & sel["context_length"].isna()]
    word = _word(c)
    fig = figure(10, 5.5)
    ax = fig.subplots()
    for k, (ok, name) in enumerate(((True, word), (False, f"not {word}"))):
        part = sel[sel["success"] == ok]
        if part.empty:
            continue
        by = part.groupby("grant")["fate"]
        kept = by.apply(lambda f: int((f == "kept").sum()))
        n = by.size()
        grants = kept.index.to_numpy()
        shares = [share_interval(int(kept[g]), int(n[g]), fr.confidence) for g in grants]
        y = [s[0] for s in shares]
        colour = PALETTE[k]
        ax.fill_between(
            grants, [s[1] for s in shares], [s[2] for s in shares], step="post", color=colour, alpha=0.15
        )
        ax.step(grants, y, where="post", color=colour, linewidth=2, label=f"{name}: {int(n.iloc[0])} runs")
    mark_recommended(ax, recommended)
    dress(ax, "grant (cost-meter tokens)", xfmt=TOKENS)
    dress(ax, y="share of runs kept (bands: Wilson interval)", yfmt=PERCENT, grid=True)
    ax.set_ylim(0, 1.03)
    ax.legend(loc="lower right", fontsize=8)
    fig.suptitle(
        title or f"Runs kept by grant, split by outcome — {group} (a run is kept once no landing starts)",
        fontsize=12,
    )
    return fig
