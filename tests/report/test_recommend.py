"""One recommended grant from a band and a coverage, and the reason."""

from __future__ import annotations

import pandas as pd

from workbench.analysis.band import GrantBand
from workbench.analysis.recommend import recommend
from workbench.analysis.survival import Coverage

GRANTS = list(range(190_000, 250_001, 1_000))
BAND = GrantBand(pd.DataFrame(), (), 193_000, 241_000)


def cov(grant: float) -> Coverage:
    return Coverage(0.9, grant, grant - 5_000, grant + 5_000, 0.05)


def test_inside_the_band_the_smallest_grant_that_covers() -> None:
    assert recommend(BAND, cov(203_067.4), GRANTS)[0] == 204_000


def test_floor_when_less_would_do() -> None:
    grant, why = recommend(BAND, cov(150_000), GRANTS)
    assert grant == 193_000 and "floor" in why


def test_ceiling_when_the_share_needs_more() -> None:
    grant, why = recommend(BAND, cov(1_293_295), GRANTS)
    assert grant == 241_000 and "want splitting" in why


def test_no_band_no_recommendation() -> None:
    assert recommend(GrantBand(pd.DataFrame(), (), None, None), cov(200_000), GRANTS)[0] is None
    assert recommend(BAND, cov(float("inf")), GRANTS)[0] == 241_000
