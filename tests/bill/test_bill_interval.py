"""Bills with intervals from the fitted cache model, their break-even points, and cache-aware block masking
(docs/counterfactual-bills.md, "Uncertainty"; the real-data tests skip where ../shared/traces is absent)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import workbench as wb
from tests.bill._runs import tool_loop
from workbench.cli import main
from workbench.context.cache_routes import route_params, route_rules
from workbench.replay.bill import RunPricer, counterfactual_bill, mask, observations, replay_with_bill
from workbench.replay.bill_interval import (
    Draws,
    _draw,
    bill_interval,
    crossing,
    read_price_break_even,
    spread,
)
from workbench.replay.bill_sweep import bill_grid, break_even, grid_totals
from workbench.trace.schema import Usage


def _masked_count(run, keep: int, block: int | None, upto: int) -> int:
    from workbench.context.request_tokens import anchor

    counts = anchor(run)
    ids = counts.ids[upto]
    pieces = mask([(i, None) for i in ids], run, keep, counts, {}, block)
    return sum(rep is not None for _, rep in pieces)


@given(st.integers(1, 4), st.integers(6, 14))
def test_a_block_mask_moves_only_in_whole_blocks(keep: int, turns: int) -> None:
    run = tool_loop([400] * turns)
    counts = [_masked_count(run, keep, keep, k) for k in range(turns)]
    sliding = [_masked_count(run, keep, None, k) for k in range(turns)]
    assert all(c % keep == 0 for c in counts)  # the oldest `keep` observations at once
    assert all(c <= s for c, s in zip(counts, sliding, strict=True))  # never more than the sliding mask
    assert all(b - a in (0, keep) for a, b in itertools.pairwise(counts))


def test_observations_are_tool_results() -> None:
    run = tool_loop([100, 100])
    assert observations(run.messages)[:2] == [-1, -1]


def test_read_price_break_even_is_where_the_saving_is_zero() -> None:
    # saving(rho) = (10 - 16) + rho x (50 - 20) = 0 at rho = 0.2
    assert read_price_break_even(20.0, 16.0, 50.0, 10.0) == pytest.approx(0.2)
    assert read_price_break_even(20.0, 16.0, 20.0, 10.0) is None


def test_crossing_interpolates_the_sign_change() -> None:
    assert crossing([5.0, 10.0, 20.0], [1.0, -1.0, -3.0]) == pytest.approx(7.5)
    assert crossing([5.0, 10.0], [-1.0, -2.0]) is None


def test_the_no_policy_bill_has_no_spread() -> None:
    run = tool_loop([800] * 8)
    rules = route_rules(run)
    prices = RunPricer(run, rules)
    bill = counterfactual_bill(run, prices=prices, rules=rules)
    sp = spread(bill, run, prices, route_params(run), Draws.make(50))
    if sp.usd is not None:
        assert np.all(sp.usd == pytest.approx(bill.recorded()["usd"]))


# -- the shared recordings ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def swe(shared: Path):
    return wb.load(shared / "mini-swe-agent").runs


@pytest.fixture(scope="module")
def totals(swe):
    frame = bill_grid(swe, masks=(None, 10), block_masks=(10,), governed=False)
    return grid_totals(frame)


def test_each_row_s_draws_are_one_read_only_array_and_a_copy_draws_as_its_original(swe) -> None:
    """200 draws in one read-only float64 array a row (a tuple of floats took four times the memory); the draws
    are seeded by content, so a renamed copy's rows draw as its original's."""
    from workbench.replay.bill_interval import DRAWS

    runs = list(swe[:3])
    copies = [*runs, *(r.model_copy(update={"run_id": f"{r.run_id}~2"}) for r in runs)]
    frame = bill_grid(copies, context_lengths=[None, 32_768], masks=(None, 10), governed=False)
    cells = len(frame) // len(copies)
    for col in ("cf_usd_draws", "cf_cached_in_draws", "cf_rest_draws"):
        values = frame[col].tolist()
        assert all(v is not None for v in values)
        for v in values:
            assert isinstance(v, np.ndarray) and v.dtype == np.float64 and v.shape == (DRAWS,)
            assert not v.flags.writeable
        half = len(copies) // 2 * cells
        for a, b in zip(values[:half], values[half:], strict=True):
            np.testing.assert_array_equal(a, b)
    alone = bill_grid(runs, context_lengths=[None, 32_768], masks=(None, 10), governed=False)
    for a, b in zip(frame["cf_usd_draws"][: len(alone)], alone["cf_usd_draws"], strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_run_s_rows_whose_bill_changes_no_call_share_one_set_of_draws(swe) -> None:
    """A bill that changes no call is the recording's first calls: the rows of a run whose bills change no call
    and bill as many calls hold the very same read-only arrays (one copy in memory, and in a pickle sent from a
    worker), and a row whose bill changes a call holds its own."""
    runs = list(swe[:6])
    frame = bill_grid(runs, context_lengths=[None, 4_096, 131_072], masks=(None, 10), governed=False)
    shared = changed = 0
    for _, rows in frame.groupby("run_id", sort=False):
        other = rows[rows["diverges_at"].notna()]
        for _, same in rows[rows["diverges_at"].isna()].groupby("calls"):
            for col in ("cf_usd_draws", "cf_cached_in_draws", "cf_rest_draws"):
                ids = {id(v) for v in same[col]}
                assert len(ids) == 1  # one array for every unchanged row billing as many calls
                assert ids.isdisjoint(id(v) for v in other[col])
            shared += len(same) - 1
        changed += len(other)
    assert shared > 0 and changed > 0
    back = pickle.loads(pickle.dumps(frame))
    for _, same in back[back["diverges_at"].isna()].groupby(["run_id", "calls"]):
        assert len({id(v) for v in same["cf_usd_draws"]}) == 1


@pytest.mark.parametrize("governed", [False, True])
def test_every_row_s_interval_is_its_cell_s_spread_computed_alone(swe, governed: bool) -> None:
    """A grid computes an unchanged bill's spread once per run (its rows are the recording's under every context
    length); each row still equals the spread of its own cell, billed from a fresh read of the run."""
    runs = list(swe[:6])
    lengths, grants = [None, 4_096, 32_768, 131_072], ([None, 300_000] if governed else [None])
    frame = bill_grid(runs, context_lengths=lengths, grants=grants, masks=(None, 10), governed=governed)
    assert frame["diverges_at"].isna().sum() > len(
        runs
    )  # some cells change nothing, beyond the no-manager ones
    rows = iter(frame.to_dict("records"))
    for run in runs:
        for length, grant, mask_ in itertools.product(lengths, grants if governed else [None], (None, 10)):
            row = next(rows)
            p = wb.Policy.named("current", grant=grant or 10**15, context_length=length)
            if governed:
                res, bill = replay_with_bill(run, p, mask_observations=mask_)
                calls = min(res.turns_replayed, res.turns)
            else:
                bill, calls = counterfactual_bill(run, p, mask_observations=mask_), None
            rules = route_rules(run)
            alone = spread(bill, run, RunPricer(run, rules), route_params(run), Draws.make(), calls)
            assert row["cf_usd_draws"].tobytes() == alone.usd.tobytes()
            assert (row["cf_cached_in"], row["cf_rest"], row["rec_cached_in"]) == (
                alone.cf_cached_in,
                alone.cf_rest,
                alone.rec_cached_in,
            )
            assert row["cf_rest_draws"].tobytes() == alone.cf_rest_draws.tobytes()
    assert next(rows, None) is None


def test_masking_bills_with_intervals_on_mini_swe_agent(totals) -> None:
    t = totals.set_index(["mask", "mask_block"])
    base = t.loc[("none", "none")]
    assert round(base["recorded_usd"], 2) == 48.87
    cents = {round(base[k], 2) for k in ("cf_usd", "recorded_usd", "cf_usd_low", "cf_usd_high")}
    assert cents == {48.87}  # the no-policy bill is the recording, to the cent, with no spread
    sliding = t.loc[(10, "none")]
    assert (
        round(sliding["cf_usd"], 2) == 63.99
    )  # the model's point bill (no misses; 60.97 with one cache per run)
    assert sliding["cf_usd_low"] <= sliding["cf_usd_median"] <= sliding["cf_usd_high"]
    assert sliding["saved_usd_share_high"] < 0  # costs more in every draw: the sign is robust
    assert 0.25 < sliding["read_price_break_even"] < 0.35
    assert sliding["saved_uncached_share"] > 0.25  # with no cache the mask saves, as published
    block = t.loc[(10, 10)]
    assert block["cf_usd_median"] < sliding["cf_usd_median"] - 10  # the block mask keeps the prefix cached
    # with a cache per endpoint each move of the mask is paid on each endpoint: mask 10 in blocks costs a little
    assert -0.05 < block["saved_usd_share_low"] <= block["saved_usd_share_high"] < 0


def test_break_even_keeps_one_sign_over_the_masks(totals) -> None:
    assert break_even(totals)["mask"] is None


def test_the_draws_on_the_recorded_requests_cover_the_recorded_bill(swe) -> None:
    """The model run on the recorded requests with its misses drawn reproduces what was paid: the recorded bill
    inside the 90% interval, the median within 2% ($49.01 against $48.87, 0.3% over, with each run drawing its
    own miss share from the runs' spread; $49.61 when every run drew the corpus's); the point model, no misses,
    is $2.65 cheap ($7.91 before the cache was kept per endpoint)."""
    draws = Draws.make()
    total, point, recorded = np.zeros(len(draws.block)), 0.0, 0.0
    for run in swe:
        rules = route_rules(run)
        prices = RunPricer(run, rules)
        bill = counterfactual_bill(run, prices=prices, rules=rules)
        index = {t.index: k for k, t in enumerate(run.turns)}
        rows = tuple(
            dataclasses.replace(
                r,
                cached=r.modelled_recorded_cached,
                cache_write=0,
                usd=prices.usd(
                    index[r.turn],
                    Usage(prompt=r.prompt, cached=r.modelled_recorded_cached, completion=r.completion),
                ),
            )
            for r in bill.rows
        )
        modelled = dataclasses.replace(bill, rows=rows, first_change=0)
        total += spread(modelled, run, prices, route_params(run), draws).usd
        point += sum(r.usd for r in rows)
        recorded += bill.recorded()["usd"]
    lo, med, hi = np.quantile(total, (0.05, 0.5, 0.95))
    assert lo <= recorded <= hi
    assert abs(med - recorded) / recorded < 0.02
    assert round(float(med), 2) == 49.01  # seeded by each run's content: the same draws on every machine
    assert round(recorded - point, 2) == 2.65


def test_bills_prints_each_bill_with_its_interval(shared: Path, capsys) -> None:
    path = shared / "mini-swe-agent" / "trajs" / "astropy__astropy-13453"
    assert main(["bills", str(path), "--masks", "none,5,10", "--block-masks", "10", "--ungoverned"]) == 0
    out = capsys.readouterr().out
    # the row with no window and no mask is named for what it is: every recorded call re-billed, the recording
    line = (
        "every recorded call, no window, no mask: $0.30 (no request changes: the recorded bill, no interval"
    )
    assert line in out and "no policy" not in out
    assert "every recorded call, mask 10: $" in out and "every recorded call, mask 10 in blocks: $" in out
    assert re.search(r"break-even at a cache-read price of 0\.\d\dx input \[0\.\d\d-0\.\d\d\]", out)
    assert "Break-even mask size over the sweep (as billed)" in out
    assert "Break-even mask size over the sweep (billed with no cache)" in out


def test_a_governed_bill_is_named_as_the_governed_replay(shared: Path, capsys) -> None:
    path = shared / "mini-swe-agent" / "trajs" / "astropy__astropy-13453"
    assert main(["bills", str(path), "--masks", "none,10"]) == 0
    out = capsys.readouterr().out
    assert "governed replay (current" in out and "mask 10: $" in out
    assert "the recorded calls up to where the governors stop: no request changes" in out
    assert "every recorded call" not in out.split("Bills with their 90% interval")[1]


def test_the_read_price_break_even_has_its_interval(totals) -> None:
    """The break-even quoted is the draws' median with their 90% interval; the point bill's (no miss) lies below
    it on a mask: a drawn miss sends its lost read fresh, so the mask breaks even only at a dearer read price."""
    t = totals.set_index(["mask", "mask_block"])
    for key in ((10, "none"), (10, 10)):
        row = t.loc[key]
        lo, v, hi = (
            row["read_price_break_even_low"],
            row["read_price_break_even"],
            row["read_price_break_even_high"],
        )
        assert lo <= v <= hi and hi - lo < 0.1
        assert row["read_price_saving_rises"]  # a mask reads less than the recording: dearer reads favour it
    assert t.loc[(10, "none")]["read_price_break_even_point"] < t.loc[(10, "none")]["read_price_break_even"]
    assert pd.isna(t.loc[("none", "none")]["read_price_break_even"])  # nothing changes: no break-even


def test_a_single_run_bill_has_its_interval_and_draws_as_its_copy(swe, shared: Path, capsys) -> None:
    run = next(r for r in swe if r.run_id == "astropy__astropy-13453")
    bill = counterfactual_bill(run, mask_observations=10)
    got = bill_interval(bill, run)
    u, even = got["usd"], got["read_price_break_even"]
    assert got["draws"] == 200 and u["low"] <= u["median"] <= u["high"]
    assert u["point"] == pytest.approx(bill.counterfactual()["usd"])
    assert even["low"] <= even["median"] <= even["high"] and even["point"] < even["median"]
    copy = run.model_copy(update={"run_id": run.run_id + "~2"})
    assert bill_interval(counterfactual_bill(copy, mask_observations=10), copy) == got  # seeded by content
    path = shared / "mini-swe-agent" / "trajs" / "astropy__astropy-13453"
    assert main(["replay", str(path), "--json", "--mask-observations", "10"]) == 0
    out = json.loads(capsys.readouterr().out.splitlines()[0])
    interval = out["bill"]["interval"]
    assert interval["usd"]["low"] <= out["counterfactual"]["usd"] <= interval["usd"]["high"] + 1e-9
    assert set(interval) == {
        "draws",
        "usd",
        "read_price_break_even",
        "saved_uncached_share",
        "saved_usd_share",
    }


def test_the_interval_chart_draws_one_bar_per_policy_with_error_bars(totals) -> None:
    from workbench.charts import bill_interval_chart

    fig = bill_interval_chart(totals)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["mask 10 sliding", "mask 10 in blocks"]
    bars = next(c for c in ax.containers if hasattr(c, "patches"))
    assert len(bars.patches) == 2 and bars.errorbar is not None


@given(
    values=st.lists(st.floats(0.0, 2.0), min_size=1, max_size=4),
    n=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_miss_share_draw_is_numpys_and_leaves_the_stream_where_numpy_does(
    values: list[float], n: int, seed: int
) -> None:
    """``spread`` draws a missed read's share from one value without asking the generator; numpy's draw of an
    index from one value takes nothing from the stream, so every later draw is the one a draw by index gives."""
    ours, numpys = np.random.default_rng(seed), np.random.default_rng(seed)
    v = np.array(values)
    assert _draw(ours, v, n).tobytes() == v[numpys.integers(0, len(v), n)].tobytes()
    assert ours.random(3).tobytes() == numpys.random(3).tobytes()
