"""Honest calibration rows on the shared mini-swe-agent runs: reserve and safety from the 99th percentile with the
outliers listed (not the one runaway reply's maximum), and a wrap-up threshold at its grid's top marked
extrapolated. Expected figures come from the trajectory files read with plain json and numpy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="module")
def usage(msa: Path) -> tuple[list[tuple[str, int, int]], list[tuple[str, int, int]]]:
    """(run, call, completion) and (run, call, prompt growth since the previous call), plain json."""
    done, grow = [], []
    for f in sorted((msa / "trajs").glob("*/*.traj.json")):
        doc = json.loads(f.read_text())
        calls = [m["extra"]["response"]["usage"] for m in doc["messages"] if m["role"] == "assistant"]
        for i, u in enumerate(calls):
            done.append((doc["instance_id"], i, u["completion_tokens"]))
            if i:
                grow.append((doc["instance_id"], i, u["prompt_tokens"] - calls[i - 1]["prompt_tokens"]))
    return done, grow


def test_reserve_and_safety_are_robust_percentiles_with_the_outliers_listed(cal_msa, usage) -> None:
    for name, values in zip(("reserve", "safety"), usage, strict=True):
        row = cal_msa.row(name)
        v = np.array([x for _, _, x in values], dtype=float)
        p99, p95 = int(np.ceil(np.quantile(v, 0.99))), int(np.ceil(np.quantile(v, 0.95)))
        assert row.recommended == p99 and row.band == (p95, p99), name
        assert row.recommended < v.max() / 10  # one runaway reply no longer drives it
        top_run, top_call, top = max(values, key=lambda x: x[2])
        outliers = next(n for n in row.notes if "left out as outliers" in n)
        assert outliers.startswith(f"{int((v > p99).sum())} call(s) above the recommendation")
        assert f"{top_run} call {top_call}: {top:,}" in outliers


def test_a_wrapup_threshold_at_the_grid_top_widens_the_grid_then_says_at_grid_edge(cal_msa) -> None:
    from workbench.analysis.calibration.wrapup import CANDIDATES, WIDEN

    row = cal_msa.row("wrap-up threshold")
    # 0.95, the grid's top, held; the grid widened to 0.97 then 0.99, and the pick sits at its new top
    assert sorted(row.evidence["value"]) == sorted({*CANDIDATES, *WIDEN, 0.7})
    assert row.status == "recommended" and row.recommended == 0.99 and row.band == (0.99, 0.99)
    assert row.at_grid_edge and row.extrapolated
    assert row.recommendation_words == "0.99 (band 0.99 to 0.99) — at grid edge, extrapolated"
    assert any("widened at its top to 0.97, 0.99" in n for n in row.notes)
    assert any("cannot widen further" in n for n in row.notes)
