"""The survival curve of tokens-to-finish, drawn as the share of runs finished by each grant."""

from __future__ import annotations

import math
from collections.abc import Mapping

from matplotlib.figure import Figure

from workbench.analysis.band import GrantBand
from workbench.analysis.survival import Survival
from workbench.charts.style import BAND_COLOUR, PALETTE, PERCENT, TOKENS, dress, figure


def survival_chart(
    surv: Survival | Mapping[str, Survival],
    *,
    share: float = 0.9,
    band: GrantBand | None = None,
    title: str = "",
) -> Figure:
    """Kaplan-Meier share finished (1 − S) against tokens with its confidence band and censored runs as
    ticks; for the first curve, the grant covering ``share`` of runs with its CI; the grant band shaded.

    ``surv`` may be one fit or several by label (e.g. all runs, then per source)."""
    fits = {"runs": surv} if isinstance(surv, Survival) else dict(surv)
    if not fits:
        raise ValueError("no survival fit to draw")
    fig = figure(12 if len(fits) > 1 else 10, 5.5)
    ax = fig.subplots()
    if band is not None and band.low is not None and band.high is not None:
        ax.axvspan(band.low, band.high, color=BAND_COLOUR, alpha=0.15, lw=0, label="grant band")
    first = next(iter(fits.values()))
    lows = []
    for k, (label, s) in enumerate(fits.items()):
        colour = PALETTE[k % len(PALETTE)]
        c = s.curve
        lows.append(float(s.observations["tokens"].min()))
        ax.step(
            c["tokens"],
            1 - c["survival"],
            where="post",
            color=colour,
            linewidth=2.2 if k == 0 else 1.4,
            label=f"{label}: {s.runs} runs, {s.censored} censored",
        )
        if k == 0:
            ax.fill_between(
                c["tokens"],
                1 - c["upper"],
                1 - c["lower"],
                step="post",
                color=colour,
                alpha=0.18,
                label=f"{1 - s.alpha:.0%} confidence band ({label})",
            )
        cens = s.observations[~s.observations["finished"]]
        if len(cens):
            ys = [1 - float(c[c["tokens"] <= t]["survival"].iloc[-1]) for t in cens["tokens"]]
            ax.plot(cens["tokens"], ys, "|", color=colour, ms=14, mew=2)
    cov = first.coverage(share)
    ax.axhline(share, color="#555555", linestyle=":", linewidth=1)
    if not math.isinf(cov.grant):
        ax.axvline(cov.grant, color="#555555", linestyle="--", linewidth=1.2, label=cov.words)
        lo = cov.lower if not math.isinf(cov.lower) else cov.grant
        hi = cov.upper if not math.isinf(cov.upper) else float(first.curve["tokens"].max())
        ax.hlines(share, lo, hi, color="#000000", linewidth=4, alpha=0.5)
    ax.set_xlabel(
        "tokens of billed work to finish (log scale)" if len(fits) > 1 else "tokens of billed work to finish"
    )
    ax.set_ylabel("share of runs finished")
    if len(fits) > 1 and max(lows) / max(1.0, min(lows)) > 20:
        ax.set_xscale("log")
    else:
        left = min(lows)
        if band is not None and band.low is not None:
            left = min(left, band.low)
        ax.set_xlim(left=max(0.0, left * 0.85))
    dress(ax, xfmt=TOKENS, yfmt=PERCENT, grid=True)
    ax.set_ylim(0, 1.04)
    if len(fits) > 1:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    else:
        ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    fig.suptitle(title or "Tokens to finish (Kaplan-Meier; censored runs as ticks)", fontsize=12)
    return fig
