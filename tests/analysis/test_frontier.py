"""The frontier on runs of known shape: exact fates, spends, dollars and intervals, by closed form."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from workbench.analysis.frontier import (
    ALL_GROUP,
    COLUMNS,
    LEDGER,
    TABLE,
    Fate,
    frontier,
    ledger,
    share_interval,
    success_of,
)
from workbench.pricing import Price
from workbench.scenarios.seed import constant_turns
from workbench.trace.columns import dtypes, names
from workbench.trace.schema import Outcome, Run

X = 10_000  # fresh tokens per call of constant_turns (no cache, no completion): the meter after call i is (i+1)X


def stub_price(model, usage, when=None, provider=None):
    """One micro-dollar per prompt token: the dollars are the meter / 1e6, checkable by hand."""
    return Price(usd=usage.prompt * 1e-6, model=model or "m", provider="stub")


def shaped(run_id: str, turns: int, label: str | None, *, source: str = "synthetic", model: str = "m") -> Run:
    run = constant_turns(turns, X)  # `turns` writing calls, then a final answer: turns + 1 calls
    outcome = run.outcome.model_copy(update={"label": label, "label_source": "test" if label else None})
    return run.model_copy(update={"run_id": run_id, "outcome": outcome, "source": source, "model": model})


def fate(turns: int, grant: int) -> str:
    """The seed's landing by closed form: crossing at the first writing call with (i+1)X >= grant; then at most 4
    more calls, ending at the first whose meter reaches the crossing's + int(0.2 grant) or at the final answer."""
    crossing = next((i for i in range(turns) if (i + 1) * X >= grant), None)
    if crossing is None:
        return "kept"
    ceiling = (crossing + 1) * X + int(grant * 0.2)
    end = crossing + 4
    for k in range(crossing + 1, crossing + 5):
        if k == turns or (k + 1) * X >= ceiling:  # call `turns` is the final answer
            end = k
            break
    return "at_risk" if end >= turns else "cut"


def test_fates_spend_and_dollars_by_closed_form() -> None:
    runs = [shaped("short", 10, "resolved"), shaped("edge", 20, "resolved"), shaped("long", 40, "unresolved")]
    fr = frontier(runs, grants=[150_000, 200_000, 250_000], price=stub_price)
    assert list(fr.table.columns) == list(COLUMNS)
    assert fr.table.dtypes.astype(str).to_dict() == dtypes(TABLE)
    assert tuple(fr.runs.columns) == names(LEDGER) and fr.runs.dtypes.astype(str).to_dict() == dtypes(LEDGER)
    assert set(fr.rows["fate"]) <= set(Fate) and fr.table["basis"].iloc[0] == "resolved"
    got = fr.rows.set_index(["run_id", "grant"])["fate"].to_dict()
    for run_id, turns in (("short", 10), ("edge", 20), ("long", 40)):
        for g in (150_000, 200_000, 250_000):
            expected = {"cut": "cut"}.get(fate(turns, g), fate(turns, g))
            assert got[(run_id, g)] == expected, (run_id, g)
    # edge: at 200,000 the 20th writing call crosses and the final answer comes inside the landing: at risk
    assert got[("edge", 200_000)] == "at_risk" and got[("edge", 150_000)] == "cut"
    p = fr.point(150_000).row
    assert (p["resolved"], p["resolved_kept"], p["resolved_at_risk"], p["resolved_lost"]) == (2, 1, 0, 1)
    assert (p["unresolved"], p["unresolved_cut"]) == (1, 1)
    # edge under 150,000: crossing after call 14 (150,000), ceiling 180,000 reached at call 17 -> 18 calls made;
    # long: the same 18 calls. short: all 11 calls.
    assert p["spend_tokens"] == 11 * X + 18 * X + 18 * X
    assert p["recorded_tokens"] == 11 * X + 21 * X + 41 * X
    assert p["spend_saved_tokens"] == (21 - 18) * X + (41 - 18) * X
    assert p["spend_usd"] == pytest.approx(p["spend_tokens"] * 1e-6)
    assert p["spend_saved_usd"] == pytest.approx(p["spend_saved_tokens"] * 1e-6)
    assert p["usd_runs"] == 3 and p["basis"] == "resolved"
    assert fr.point(250_000).row["resolved_kept"] == 2


def test_wilson_intervals_are_scipys() -> None:
    share, low, high = share_interval(57, 60)
    ci = binomtest(57, 60).proportion_ci(confidence_level=0.95, method="wilson")
    assert (share, low, high) == (0.95, ci.low, ci.high)
    assert round(low, 4) == 0.8630 and round(high, 4) == 0.9829
    assert all(math.isnan(v) for v in share_interval(0, 0))
    s90 = share_interval(57, 60, 0.9)
    assert s90[1] > low and s90[2] < high


def test_unlabelled_runs_count_finished_and_say_so() -> None:
    done = shaped("done", 5, None)
    errored = done.model_copy(update={"run_id": "errored", "outcome": Outcome(stop_reason="error")})
    last_error = done.model_copy(
        update={
            "run_id": "last-call-error",
            "turns": [*done.turns[:-1], done.turns[-1].model_copy(update={"finish_reason": "error"})],
        }
    )
    assert success_of(done) == (True, "finished")
    assert success_of(errored) == (False, "finished")  # a recording that ended in an error did not finish
    assert success_of(last_error) == (False, "finished")
    fr = frontier([done, errored, last_error], grants=[500_000], price=stub_price)
    row = fr.point(500_000).row
    assert (row["basis"], row["resolved"], row["unresolved"]) == ("finished", 1, 2)
    assert "finished runs kept" in fr.point(500_000).words
    mixed = frontier([done, shaped("lab", 5, "unresolved")], grants=[500_000], price=stub_price)
    assert mixed.point(500_000).row["basis"] == "mixed"
    assert any("labelled" in n for n in mixed.notes)


def test_groups_by_source_model_and_all() -> None:
    runs = [
        shaped("a", 10, "resolved", source="alpha", model="m1"),
        shaped("b", 30, "resolved", source="beta", model="m1"),
        shaped("c", 30, "unresolved", source="beta", model="m2"),
    ]
    by_source = frontier(runs, grants=[150_000], by="source", price=stub_price)
    assert by_source.groups == ["alpha", "beta", ALL_GROUP]
    assert by_source.point(150_000, ALL_GROUP).row["runs"] == 3
    assert by_source.point(150_000, "beta").row["resolved_lost"] == 1
    by_model = frontier(runs, grants=[150_000], by="model", price=stub_price)
    assert set(by_model.groups) == {"m1", "m2", ALL_GROUP}
    assert frontier(runs, grants=[150_000], by="all", price=stub_price).groups == [ALL_GROUP]


def test_regrouped_counts_the_same_rows_by_another_grouping() -> None:
    """The report's three groupings of one sweep: each equals a frontier counted from scratch by that grouping,
    and all three hold the one classified rows frame (not three copies)."""
    runs = [
        shaped("a", 10, "resolved", source="alpha", model="m1"),
        shaped("b", 30, "resolved", source="beta", model="m1"),
        shaped("c", 30, "unresolved", source="beta", model="m2"),
        shaped("d", 5, None, source="alpha", model="m2"),
    ]
    grants = [60_000, 150_000, 400_000]
    book = ledger(runs, stub_price)
    head = frontier(runs, grants=grants, by="source", book=book)
    for by in ("source", "model", "agent", "all"):
        again = head.regrouped(by, book)
        fresh = frontier(runs, grants=grants, by=by, book=book)
        pd.testing.assert_frame_equal(again.table, fresh.table, check_exact=True)
        pd.testing.assert_frame_equal(again.rows, fresh.rows, check_exact=True)
        assert (again.by, again.notes, again.groups) == (by, fresh.notes, fresh.groups)
        assert again.rows is head.rows and again.runs is head.runs
    assert head.regrouped("source", book) is head


def test_unpriced_runs_leave_the_dollars_and_are_counted() -> None:
    runs = [shaped("a", 10, "resolved"), shaped("b", 10, "resolved")]

    def half(model, usage, when=None, provider=None):
        return None

    fr = frontier(runs, grants=[150_000], price=half)
    row = fr.point(150_000).row
    assert row["usd_runs"] == 0 and math.isnan(row["spend_usd"])
    assert any("priced neither" in n for n in fr.notes)
    assert fr.records()[0]["spend_usd"] is None  # JSON-ready: NaN as null


def test_bad_input_is_named() -> None:
    runs = [shaped("a", 10, "resolved")]
    with pytest.raises(ValueError, match="--by"):
        frontier(runs, grants=[150_000], by="colour", price=stub_price)
    with pytest.raises(ValueError, match="confidence"):
        frontier(runs, grants=[150_000], confidence=1.5, price=stub_price)
    with pytest.raises(ValueError, match="no replayable runs"):
        frontier([], grants=[150_000])
    with pytest.raises(KeyError, match="not on the swept grid"):
        frontier(runs, grants=[150_000], price=stub_price).point(160_000)


def test_html_is_escaped() -> None:
    fr = frontier(
        [shaped("a", 10, "resolved", source="<script>x</script>")], grants=[150_000], price=stub_price
    )
    out = fr._repr_html_()
    assert "<script>" not in out and "&lt;script&gt;" in out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lengths=st.lists(st.integers(min_value=2, max_value=40), min_size=1, max_size=6),
    labels=st.lists(st.sampled_from(["resolved", "unresolved"]), min_size=6, max_size=6),
    grants=st.lists(st.integers(min_value=10_000, max_value=450_000), min_size=1, max_size=4, unique=True),
)
def test_every_run_has_one_fate_and_the_spend_adds_up(lengths, labels, grants) -> None:
    runs = [shaped(f"r{i}", n, labels[i]) for i, n in enumerate(lengths)]
    fr = frontier(runs, grants=sorted(grants), price=stub_price)
    t = fr.to_frame()
    assert (t["resolved_kept"] + t["resolved_at_risk"] + t["resolved_lost"] == t["resolved"]).all()
    assert (t["resolved"] + t["unresolved"] == t["runs"]).all()
    assert (t["spend_tokens"] + t["spend_saved_tokens"] == t["recorded_tokens"]).all()
    assert ((t["resolved_kept_low"] <= t["resolved_kept_share"]) | t["resolved_kept_share"].isna()).all()
    for rec in fr.rows.to_dict("records"):
        n = dict(zip([f"r{i}" for i in range(len(lengths))], lengths, strict=True))[rec["run_id"]]
        assert rec["fate"] == fate(n, rec["grant"])
    assert isinstance(t, pd.DataFrame)
