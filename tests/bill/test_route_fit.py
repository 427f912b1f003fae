"""The prompt-cache model fitted per provider route: its pieces on made-up calls, and the out-of-sample fit on the
shared recordings beside the two naive baselines (docs/cache-model.md; skips where ../shared/traces is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import workbench as wb
from workbench.analysis.route_fit import (
    _best_block,
    _fit_ttl,
    _point,
    fit_routes,
    folds_of,
    run_blocks,
)
from workbench.cli import main
from workbench.context.cache_routes import fitted_table, route_of, route_rules


def _calls(found: list[int], rec: list[int], gap: list[float] | None = None, run: str = "r") -> pd.DataFrame:
    n = len(found)
    return pd.DataFrame(
        {
            "run_id": run,
            "route": "x",
            "call": range(n),
            "first": [False] * n,
            "prompt": found,
            "recorded_cached": rec,
            "recorded_write": 0,
            "found_reply": found,
            "found_prompt": found,
            "explicit": 0,
            "gap": gap if gap is not None else [np.nan] * n,
            "endpoint": "",
            "reported": True,
        }
    )


def test_the_block_is_found_from_the_reads() -> None:
    found = np.array([5000, 9000, 13000, 2100, 40000])
    rec = found // 2000 * 2000
    block, hits = _best_block(found, rec, np.arange(1, 4097))
    assert (block, hits) == (2000, 5)


def test_the_run_block_learns_only_from_earlier_reads() -> None:
    rec = np.array([0, 4200, 6300, 0, 2000])
    runs = np.array(["a", "a", "a", "b", "b"])
    assert run_blocks(rec, runs, 2000.0).tolist() == [2000.0, 2000.0, 2100.0, 2000.0, 2000.0]


def test_a_ttl_is_fitted_only_where_gaps_explain_zero_reads() -> None:
    pred = np.array([4000, 4000, 4000, 4000])
    rec = np.array([4000, 0, 4000, 0])
    assert _fit_ttl(pred, rec, np.array([10.0, 900.0, 20.0, 1200.0])) == 20.0
    assert _fit_ttl(pred, rec, np.array([900.0, 10.0, 1200.0, 20.0])) is None  # a read after the longest gap


def test_a_route_that_never_read_is_fitted_as_no_cache() -> None:
    assert _point(_calls([5000, 9000], [0, 0])).accounting == "none"


def test_the_miss_share_and_what_misses_read() -> None:
    p = _point(_calls([4000] * 10, [4000] * 8 + [0, 2000]))
    assert (p.accounting, p.block, round(p.miss, 2)) == ("automatic", 4000, 0.2)
    assert (p.miss_ratios[0], p.miss_ratios[-1], p.miss_tokens) == (0.0, 0.5, pytest.approx(0.2))


@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=40, unique=True), st.integers(2, 6))
def test_folds_deal_runs_evenly_and_stably(ids: list[str], k: int) -> None:
    a, b = folds_of(ids, k), folds_of(list(reversed(ids)), k)
    assert a == b
    sizes = np.bincount(list(a.values()), minlength=k)
    assert sizes.max() - sizes.min() <= 1


# -- the shared recordings ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fit(shared: Path):
    return fit_routes(wb.load(shared).runs, reps=20)


def test_routes_on_the_shared_recordings(fit) -> None:
    s = fit.summary().set_index("route")
    assert s["calls"].to_dict() == {
        "anthropic": 879,
        "google": 69,
        "google via openrouter": 3732,
        "openai": 38,
        "openai via api.chatanywhere.org": 19,
        "unknown via openrouter": 102,
    }


def test_the_model_is_at_least_the_better_baseline_on_every_route_with_reported_reads(fit) -> None:
    s = fit.summary().set_index("route")
    known = s[s["reported"] > 0]
    assert known["beats_baseline"].all()
    within = {r: round(v, 3) for r, v in known["within_2pct"].items()}
    baseline = {r: round(v, 3) for r, v in known["baseline_within_2pct"].items()}
    assert within == {"anthropic": 0.99, "google": 0.899, "google via openrouter": 0.924, "openai": 0.789,
                      "openai via api.chatanywhere.org": 0.263}  # fmt: skip
    assert baseline == {"anthropic": 0.985, "google": 0.899, "google via openrouter": 0.706, "openai": 0.658,
                        "openai via api.chatanywhere.org": 0.158}  # fmt: skip


def test_a_route_that_never_reported_a_read_has_no_share(fit) -> None:
    """The llama runs' responses carry no ``prompt_tokens_details``: their reads are unknown, not 0, so the route
    has no within-2% share (it was 100% on defaulted zeros) and no fitted parameters; it is predicted to read
    nothing (no cache family is known for it)."""
    row = fit.summary().set_index("route").loc["unknown via openrouter"]
    assert (row["calls"], row["reported"]) == (102, 0)
    assert row["within_2pct"] is None or np.isnan(row["within_2pct"])
    assert "unknown via openrouter" not in fit.params
    obj = next(o for o in fit.objects() if o["route"] == "unknown via openrouter")
    assert (obj["within_2pct"], obj["cache_reads"], obj["parameters"]) == (
        None,
        "not reported (unknown)",
        None,
    )
    g = fit.calls[fit.calls["route"] == "unknown via openrouter"]
    assert not g["reported"].any() and g["predicted_cached"].sum() == 0


def test_gemini_via_openrouter_keeps_one_cache_per_endpoint(fit) -> None:
    """OpenRouter sends a run's calls to Vertex AI (``Google``) or AI Studio (``Google AI Studio``); each keeps its
    own cache, and AI Studio reads 1, 2, 3 blocks, then only even counts (fitted: multiple 2 from 4 blocks)."""
    g = fit.calls[(fit.calls["route"] == "google via openrouter") & ~fit.calls["first"]]
    assert g.groupby("endpoint").size().to_dict() == {"Google": 2766, "Google AI Studio": 966}
    assert fit.params["google via openrouter"].coarse == (("Google AI Studio", 2, 4),)
    ok = (g["predicted_cached"] - g["recorded_cached"]).abs() <= 0.02 * g["recorded_cached"]
    assert {e: round(v, 3) for e, v in ok.groupby(g["endpoint"]).mean().items()} == {
        "Google": 0.935,
        "Google AI Studio": 0.89,
    }


def test_a_runs_prediction_never_reads_its_own_recorded_read(fit) -> None:
    """Out of sample: changing one call's recorded read changes no prediction of that call (the run's later
    calls may follow it: the run's block is learned from its earlier reads)."""
    from workbench.analysis.route_fit import predict

    g = fit.calls[fit.calls["route"] == "google via openrouter"].reset_index(drop=True)
    p = _point(g[g["fold"] != 0])
    test = g[g["fold"] == 0].reset_index(drop=True)
    before = predict(test, p)
    changed = test.copy()
    changed.loc[5, "recorded_cached"] = 0
    after = predict(changed, p)
    assert after[5] == before[5]
    assert (after[:5] == before[:5]).all()


def test_the_packaged_table_is_the_fit_of_the_shared_recordings(fit) -> None:
    table = fitted_table()
    for route, p in fit.params.items():
        assert table[route].accounting == p.accounting
        assert table[route].block.value == p.block.value
        assert table[route].reply_cached == p.reply_cached


def test_the_bill_uses_the_route_rules(shared: Path) -> None:
    runs = wb.load(shared / "openhands" / "multi_swe_bench_ponyc.output.jsonl").runs
    assert {route_of(r) for r in runs} == {"unknown via openrouter"}
    assert {route_rules(r).family for r in runs} == {"none"}


def test_bills_fit_json_and_calls(shared: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "calls.csv"
    args = [
        "bills",
        str(shared / "codex-cli"),
        str(shared / "openhands"),
        "--fit",
        "--json",
        "--calls",
        str(out),
    ]
    assert main(args) == 0
    objs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["route"] for o in objs] == [
        "openai",
        "openai via api.chatanywhere.org",
        "unknown via openrouter",
    ]
    keys = {"route", "calls", "within_2pct", "within_10pct", "baseline_within_2pct", "baseline_within_10pct"}
    assert keys <= set(objs[0]) and "block" in objs[0]["parameters"]
    assert objs[2]["within_2pct"] is None and objs[2]["parameters"] is None  # reads never reported
    rows = pd.read_csv(out)
    assert list(rows.columns)[:5] == ["run_id", "call", "route", "recorded_cached", "predicted_cached"]
    llama = rows[rows["route"] == "unknown via openrouter"]
    assert llama["recorded_cached"].isna().all()  # an empty cell, never a defaulted 0
    assert len(rows) == 20 + 39 + 23 + 33 + 49 - 0  # every call with recorded usage, first calls flagged


def test_bills_calls_without_fit_is_a_usage_error(tmp_path: Path, shared: Path, capsys) -> None:
    assert main(["bills", str(shared / "codex-cli"), "--calls", str(tmp_path / "c.csv")]) == 2


def test_the_ttl_has_its_bootstrap_interval(fit) -> None:
    """The TTL is re-fitted on every resample of runs; a resample where no expiry explains more calls leaves the
    high end unbounded (``None``)."""
    ttl = fit.params["google via openrouter"].ttl_s
    assert ttl.value == 117.0
    assert ttl.low is not None and ttl.low <= ttl.value
    assert ttl.high is None or ttl.high >= ttl.value
    assert fit.params["anthropic"].ttl_s.value is None  # none fitted: only its lower bound is known
