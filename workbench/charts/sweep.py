"""Grant sweep curves (finished inside, landed, censored, spend) with the recommended band shaded."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.analysis.band import GrantBand
from workbench.charts.style import BAND_COLOUR, PERCENT, TOKENS, dress, figure


def _shade(ax: Axes, band: GrantBand, *, label: bool = False) -> None:
    if band.low is not None and band.high is not None:
        ax.axvspan(
            band.low,
            band.high,
            color=BAND_COLOUR,
            alpha=0.15,
            lw=0,
            label="band (all invariants hold)" if label else None,
        )


def sweep_chart(band: GrantBand, *, title: str = "") -> Figure:
    """Three panels over the candidate grants: share of finished runs finishing inside; runs landed
    mid-work and censored; total spend and spend saved. The band is shaded on all three."""
    t = band.table
    fig = figure(10, 8.5)
    a, b, c = fig.subplots(3, 1, sharex=True)
    _shade(a, band, label=True)
    a.plot(
        t["grant"], t["share_finished"], marker="o", ms=3, color="#1f77b4", label="finish inside the grant"
    )
    dress(a, y="share of finished runs", yfmt=PERCENT)
    a.set_ylim(-0.03, 1.05)
    a.legend(loc="lower right", fontsize=8)

    _shade(b, band)
    b.plot(t["grant"], t["landed_mid_work"], marker="o", ms=3, color="#d62728", label="landed mid-work")
    b.plot(
        t["grant"], t["censored"], marker="s", ms=3, color="#7f7f7f", label="censored (recording ended first)"
    )
    b.set_ylabel("runs")
    b.yaxis.get_major_locator().set_params(integer=True)
    b.legend(loc="upper right", fontsize=8)

    _shade(c, band)
    c.plot(t["grant"], t["spend"], marker="o", ms=3, color="#ff7f0e", label="corpus spend under the grant")
    c.plot(t["grant"], t["spend_saved"], marker="o", ms=3, color="#2ca02c", label="spend saved vs recording")
    dress(c, "grant (tokens of billed work)", "tokens of billed work", xfmt=TOKENS, yfmt=TOKENS)
    c.legend(loc="upper left", fontsize=8)
    for ax in (a, b, c):
        ax.grid(alpha=0.3)
    fig.suptitle(title or f"Grant sweep — band {band.words}", fontsize=12)
    return fig
