"""Invariants the analyst sets: the TOML file, the flags, and the grant they pick on a hand-made curve."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from workbench.analysis.frontier import share_interval
from workbench.analysis.recommendation import recommend, seed_verdicts
from workbench.analysis.targets import AnalystInvariants


def curve(kept: list[int], resolved: int = 60, saved_usd: list[float] | None = None) -> pd.DataFrame:
    rows = []
    for i, k in enumerate(kept):
        share, low, _ = share_interval(k, resolved)
        rows.append(
            {
                "group": "g",
                "rules": "current",
                "grant": 100_000 + 10_000 * i,
                "context_length": None,
                "basis": "resolved",
                "runs": resolved,
                "resolved": resolved,
                "resolved_kept": k,
                "resolved_kept_share": share,
                "resolved_kept_low": low,
                "resolved_lost": resolved - k,
                "max_raw": 500_000 + 100_000 * i,
                "spend_saved_usd": (saved_usd or [10.0 - i for i in range(len(kept))])[i],
                "spend_saved_tokens": 1_000_000 - 100_000 * i,
            }
        )
    return pd.DataFrame(rows)


def test_the_smallest_grant_where_all_hold() -> None:
    c = curve([50, 55, 57, 58, 60])
    assert recommend(c, AnalystInvariants(keep_resolved=0.95)).grant == 120_000  # 57/60 is exactly 95%
    # the Wilson lower end of 60/60 is 0.9398: on 60 runs it never reaches 95%, so nothing is picked
    assert recommend(c, AnalystInvariants(keep_resolved=0.95, keep_bound="lower")).grant is None
    assert recommend(c, AnalystInvariants(keep_resolved=None, max_lost=2)).grant == 130_000
    none = recommend(c, AnalystInvariants(keep_resolved=0.95, max_raw=600_000))
    assert none.grant is None and "keep_resolved fails at 2 of 5" in none.why and "max_raw" in none.why
    usd = recommend(c, AnalystInvariants(keep_resolved=0.9, min_saved_usd=8.0))
    assert usd.grant == 110_000
    seed = {100_000: (), 110_000: ("raw ceiling",), 120_000: ("raw ceiling",), 130_000: (), 140_000: ()}
    assert recommend(c, "seed", seed).grant == 100_000  # the seed's per-grant verdicts, the first that holds
    assert recommend(c, "seed", {**seed, 100_000: ("floor",)}).grant == 130_000


def test_lower_bound_on_sixty_runs() -> None:
    c = curve([50, 55, 57, 58, 60])
    assert round(share_interval(60, 60)[1], 4) == 0.9398
    assert recommend(c, AnalystInvariants(keep_resolved=0.93, keep_bound="lower")).grant == 140_000
    assert recommend(c, AnalystInvariants(keep_resolved=0.88, keep_bound="lower")).grant == 130_000


def test_toml_file(tmp_path: Path) -> None:
    f = tmp_path / "inv.toml"
    f.write_text("[invariants]\nkeep_resolved = 0.9\nmax_raw = 1_400_000\nmin_saved_usd = 2.5\n")
    inv = AnalystInvariants.from_toml(f)
    assert (inv.keep_resolved, inv.max_raw, inv.min_saved_usd, inv.max_lost) == (0.9, 1_400_000, 2.5, None)
    f.write_text("[invariants]\nmax_lost = 3\n")
    assert AnalystInvariants.from_toml(f).keep_resolved is None  # a file states every invariant it wants
    f.write_text("[invariants]\nkeep_everything = 1\n")
    with pytest.raises(ValueError, match=r"inv.toml: unknown invariant\(s\) \['keep_everything'\]"):
        AnalystInvariants.from_toml(f)
    f.write_text("[invariants]\nkeep_resolved = 1.5\n")
    with pytest.raises(ValueError, match=r"inv\.toml: keep_resolved must be a share"):
        AnalystInvariants.from_toml(f)
    f.write_text("[invariants\n")
    with pytest.raises(ValueError, match=r"inv\.toml: not valid TOML"):
        AnalystInvariants.from_toml(f)
    with pytest.raises(ValueError, match="cannot read"):
        AnalystInvariants.from_toml(tmp_path / "missing.toml")


def test_bad_values() -> None:
    for kw in ({"max_raw": -1}, {"max_lost": 1.5}, {"keep_bound": "median"}, {"min_saved_usd": -2.0}):
        with pytest.raises(ValueError):
            AnalystInvariants(**kw)


def test_seed_probe_band() -> None:
    """The seed's runaway probe: the raw ceiling (1.4M) and the 85-turn floor hold on a band around 220,000 and
    fail far outside it."""
    holds = {g: not fails for g, fails in seed_verdicts([], "current", [150_000, 220_000, 400_000]).items()}
    assert holds == {150_000: False, 220_000: True, 400_000: False}


def test_a_failed_pick_says_how_close_it_came() -> None:
    c = curve([50, 55, 56]).assign(resolved=60, resolved_kept=[50, 55, 56])
    why = recommend(c, AnalystInvariants(keep_resolved=0.95)).why
    assert why.endswith(
        "the best swept grant is 120,000: it keeps 56 of 60 resolved runs (93.3%), loses 4, saves $8.00"
    )
    none = c.assign(resolved=0, resolved_kept=0, resolved_kept_share=float("nan"))
    assert "g has no successful run (0 of 60 runs resolved)" in recommend(none, AnalystInvariants()).why
