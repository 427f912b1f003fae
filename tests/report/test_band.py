"""The grant band on hand-made sweep frames: exact edges, the bindings, and what is never claimed."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.analysis.band import grant_band
from workbench.analysis.invariants import Invariant, seed_invariants

# The seed's runaway shape, by closed form (docs/governors.md §5.1, §5.5), independent of any workbench code:
# every call 12,192 prompt, 11,948 cached after the first, 800 completion; the landing ends 4 calls after
# the crossing (its 20% token allowance is never reached at ~2.2k a call).
PROMPT, CACHED, OUT = 12_192, 11_948, 800


def runaway_spent(n: int) -> int:
    cached = CACHED * (n - 1)
    return (PROMPT * n - cached) + cached // 10 + OUT * n


def runaway_row(grant: int) -> dict:
    n = 1
    while runaway_spent(n) < grant:
        n += 1
    calls = n + 4
    return {
        "run_id": "warm-runaway",
        "generator": "warm_runaway",
        "grant": grant,
        "stop_reason": "budget",
        "spent": runaway_spent(calls),
        "raw": (PROMPT + OUT) * calls,
        "turns_replayed": calls,
        "turns": 140,
        "landing_started_at": n - 1,
        "censored": False,
        "cut_turns": 10,
        "cut_tool_calls": 10,
        "cut_mutations": 10,
        "recorded_finished": False,
        "recorded_spent": runaway_spent(200),
    }


def honest_row(run_id: str, need: int, grant: int) -> dict:
    done = need <= grant
    return {
        "run_id": run_id,
        "generator": "honest_leaf",
        "grant": grant,
        "stop_reason": "done" if done else "budget",
        "spent": need if done else grant + 5_000,
        "raw": need * 2,
        "turns_replayed": 20 if done else 15,
        "turns": 20,
        "landing_started_at": None if done else 12,
        "censored": False,
        "cut_turns": 0 if done else 5,
        "cut_tool_calls": 0 if done else 5,
        "cut_mutations": 0 if done else 2,
        "recorded_finished": True,
        "recorded_spent": need,
    }


def frame(grants: list[int], honest: dict[str, int]) -> pd.DataFrame:
    rows = [runaway_row(g) for g in grants]
    rows += [honest_row(k, v, g) for g in grants for k, v in honest.items()]
    return pd.DataFrame(rows)


def test_seed_band_edges_to_the_thousand() -> None:
    grants = list(range(180_000, 260_001, 1_000))
    band = grant_band(frame(grants, {"a": 184_411, "b": 190_524}))
    # 85 landed calls up to spent(81) = 192,096 -> first grant above is 193,000;
    # 107 calls (raw 1,390,144) up to spent(103) = 241,349 -> last grant below is 241,000.
    assert runaway_spent(81) == 192_096 and runaway_spent(103) == 241_349
    assert (band.low, band.high) == (193_000, 241_000)
    floor, ceiling = band.bindings
    assert (floor.edge, floor.grant, floor.invariant, floor.value) == (
        "floor",
        192_000,
        "cost still separates from turn count",
        85,
    )
    assert (ceiling.edge, ceiling.grant, ceiling.invariant, ceiling.value) == (
        "ceiling",
        242_000,
        "runaway lands on its money",
        1_403_136,
    )
    assert band.row(250_000)["raw of warm_runaway"] == 1_442_112  # the seed's own figure at 250,000


def test_effects_count_finished_landed_and_saved() -> None:
    band = grant_band(frame([150_000, 185_000, 200_000], {"a": 184_411, "b": 190_524}))
    t = band.table.set_index("grant")
    assert t.loc[150_000, "finished_inside"] == 0 and t.loc[150_000, "landed_mid_work"] == 3
    assert t.loc[185_000, "finished_inside"] == 1 and t.loc[185_000, "share_finished"] == 0.5
    assert t.loc[200_000, "finished_inside"] == 2 and t.loc[200_000, "landed_mid_work"] == 1
    # b at 185,000 spent 190,000 of its recorded 190,524: 524 saved, plus the runaway's saving.
    saved_runaway = runaway_spent(200) - runaway_row(185_000)["spent"]
    assert t.loc[185_000, "spend_saved"] == 524 + saved_runaway


def test_no_runaway_means_no_band_not_a_band() -> None:
    f = frame([200_000, 220_000], {"a": 184_411})
    band = grant_band(f[f["run_id"] != "warm-runaway"])
    assert not band.found
    assert band.unevaluated == ("runaway lands on its money", "cost still separates from turn count")
    assert "unevaluated" in band.words


def test_censored_runaway_proves_nothing() -> None:
    f = frame([220_000], {"a": 184_411})
    f.loc[f["run_id"] == "warm-runaway", "censored"] = True
    band = grant_band(f)
    assert not band.found
    assert not band.table["ok: runaway lands on its money"].iloc[0]


def test_band_at_grid_edge_says_so() -> None:
    band = grant_band(frame([200_000, 210_000], {"a": 184_411}))
    assert (band.low, band.high) == (200_000, 210_000)
    assert any("edge of the swept grid" in n for n in band.notes)


def test_duplicate_policy_rows_are_refused() -> None:
    f = frame([200_000], {"a": 184_411})
    with pytest.raises(ValueError, match="more than once"):
        grant_band(pd.concat([f, f]))


def test_missing_columns_are_named() -> None:
    with pytest.raises(ValueError, match="recorded_spent"):
        grant_band(frame([200_000], {"a": 1}).drop(columns=["recorded_spent"]))


def test_invariant_rejects_unknown_operator() -> None:
    with pytest.raises(ValueError, match="op must be one of"):
        Invariant("x", "r", "raw", "!=", 1, "why", "here")  # type: ignore[arg-type]


def test_custom_invariant_as_data() -> None:
    f = frame(list(range(200_000, 230_001, 10_000)), {"a": 184_411})
    tight = (
        *seed_invariants(),
        Invariant("runaway under 1.3M raw", "warm_runaway", "raw", "<", 1_300_000, "w", "p"),
    )
    band = grant_band(f, tight)
    assert (band.low, band.high) == (200_000, 220_000)
    assert band.bindings[-1].invariant == "runaway under 1.3M raw"


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(100_000, 300_000), min_size=1, max_size=8),
    st.lists(st.integers(150_000, 300_000), min_size=1, max_size=5, unique=True),
)
def test_effects_are_consistent(needs: list[int], grants: list[int]) -> None:
    band = grant_band(frame(sorted(grants), {f"h{i}": n for i, n in enumerate(needs)}))
    t = band.table
    assert (t["finished_inside"] <= t["finished_runs"]).all()
    assert t["share_finished"].between(0, 1).all()
    assert t["finished_inside"].is_monotonic_increasing
    if band.found:
        assert band.table.set_index("grant").loc[band.low, "all_hold"]


def test_no_band_says_where_each_invariant_holds() -> None:
    band = grant_band(frame([180_000, 185_000, 250_000], {"a": 184_411}))
    assert not band.found
    assert band.notes == (
        "'runaway lands on its money' holds from 180,000 to 185,000 (2 of 3 grants)",
        "'cost still separates from turn count' holds from 250,000 to 250,000 (1 of 3 grants)",
    )


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 5_000), st.booleans())
def test_bisect_edge_finds_the_exact_threshold(threshold: int, width: int, upward: bool) -> None:
    from workbench.analysis.band import bisect_edge

    if upward:  # holds below the threshold (a ceiling)
        good, bad = threshold - width + 1, threshold + 1
        assert bisect_edge(min(good, threshold), bad, lambda g: g <= threshold) == threshold
    else:  # holds above it (a floor)
        good, bad = threshold + width - 1, threshold - 1
        assert bisect_edge(max(good, threshold), bad, lambda g: g >= threshold) == threshold


def test_bisect_recovers_the_runaway_edges_by_closed_form() -> None:
    from workbench.analysis.band import bisect_edge

    def calls(grant: int) -> int:
        return runaway_row(grant)["turns_replayed"]

    assert bisect_edge(241_000, 242_000, lambda g: (PROMPT + OUT) * calls(g) < 1_400_000) == 241_349
    assert bisect_edge(193_000, 192_000, lambda g: calls(g) > 85) == 192_097


def test_probe_rows_serve_invariants_but_not_effects() -> None:
    f = frame([200_000, 220_000], {"a": 184_411})
    corpus, probe = f[f["run_id"] != "warm-runaway"], f[f["run_id"] == "warm-runaway"]
    band = grant_band(corpus, probes=probe)
    assert (band.low, band.high) == (200_000, 220_000)
    assert band.table["finished_runs"].tolist() == [1, 1] and band.table["landed_mid_work"].tolist() == [0, 0]


def test_seed_invariants_build_their_probe() -> None:
    run = seed_invariants()[0].build_probe()
    assert run.metadata["generator"]["name"] == "warm_runaway" and run.source == "synthetic"
    with pytest.raises(ValueError, match="no probe"):
        Invariant("x", "r", "raw", "<", 1, "w", "p").build_probe()
