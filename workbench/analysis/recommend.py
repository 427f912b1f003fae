"""Turning a band and a coverage into one recommended grant, with the reason in words."""

from __future__ import annotations

import math
from collections.abc import Sequence

from workbench.analysis.band import GrantBand
from workbench.analysis.survival import Coverage


def recommend(band: GrantBand, cov: Coverage | None, grants: Sequence[int]) -> tuple[int | None, str]:
    """The grant to recommend and why: inside the band, the smallest swept grant covering the coverage share
    of honest runs; the band's floor when less would do; its ceiling when the share needs more (those runs want
    splitting). ``None`` when no band was found."""
    if not band.found:
        return None, "no grant on the grid satisfies every invariant"
    assert band.low is not None and band.high is not None
    if cov is None or math.isinf(cov.grant) or math.isnan(cov.grant):
        return band.high, "the top of the band: coverage of honest runs could not be estimated"
    share = f"{cov.share:.0%}"
    if cov.grant < band.low:
        return (
            band.low,
            f"the band's floor; honest runs need only {cov.grant:,.0f} for {share}, the invariants need more",
        )
    if cov.grant > band.high:
        return band.high, (
            f"the band's ceiling; {share} of honest runs would need {cov.grant:,.0f}, above what the invariants "
            "allow: the runs beyond it want splitting, not a larger grant"
        )
    pick = min(g for g in grants if g >= cov.grant)
    return (
        pick,
        f"the smallest swept grant inside the band covering {share} of honest runs ({cov.grant:,.0f})",
    )
