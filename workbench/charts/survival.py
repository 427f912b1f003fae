"""The survival curve of tokens-to-finish, drawn as the share of runs finished by each grant."""

from __future__ import annotations

import math

from matplotlib.figure import Figure

from workbench.analysis.band import GrantBand
from workbench.analysis.survival import Survival
from workbench.charts.style import BAND_COLOUR, PERCENT, TOKENS, figure


def survival_chart(
    surv: Survival, *, share: float = 0.9, band: GrantBand | None = None, title: str = ""
) -> Figure:
    """Kaplan-Meier share finished (1 − S) against tokens, its confidence band, censored runs as ticks,
    the grant covering ``share`` of runs with its CI, and the grant band shaded when given."""
    fig = figure(10, 5.5)
    ax = fig.subplots()
    c = surv.curve
    if band is not None and band.found:
        ax.axvspan(band.low, band.high, color=BAND_COLOUR, alpha=0.15, lw=0, label="grant band")
    ax.step(
        c["tokens"],
        1 - c["survival"],
        where="post",
        color="#1f77b4",
        linewidth=2,
        label="share finished (Kaplan-Meier)",
    )
    ax.fill_between(
        c["tokens"],
        1 - c["upper"],
        1 - c["lower"],
        step="post",
        color="#1f77b4",
        alpha=0.18,
        label=f"{1 - surv.alpha:.0%} confidence band",
    )
    cens = surv.observations[~surv.observations["finished"]]
    if len(cens):
        ys = [1 - float(c[c["tokens"] <= t]["survival"].iloc[-1]) for t in cens["tokens"]]
        ax.plot(cens["tokens"], ys, "|", color="#d62728", ms=14, mew=2, label=f"censored runs ({len(cens)})")
    cov = surv.coverage(share)
    ax.axhline(share, color="#555555", linestyle=":", linewidth=1)
    if not math.isinf(cov.grant):
        ax.axvline(cov.grant, color="#555555", linestyle="--", linewidth=1.2, label=cov.words)
        lo = cov.lower if not math.isinf(cov.lower) else cov.grant
        hi = cov.upper if not math.isinf(cov.upper) else float(c["tokens"].max())
        ax.hlines(share, lo, hi, color="#000000", linewidth=4, alpha=0.5)
    ax.set_xlabel("tokens of billed work to finish")
    ax.set_ylabel("share of runs finished")
    ax.xaxis.set_major_formatter(TOKENS)
    ax.yaxis.set_major_formatter(PERCENT)
    ax.set_ylim(0, 1.04)
    # Zoom on the observed bills (the curve is flat at 0% below the cheapest run).
    lo = float(surv.observations["tokens"].min())
    left = min(lo, band.low) if band is not None and band.low is not None else lo
    ax.set_xlim(left=max(0.0, left * 0.85))
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    fig.suptitle(title or f"Tokens to finish: {surv.runs} runs, {surv.censored} censored", fontsize=12)
    return fig
