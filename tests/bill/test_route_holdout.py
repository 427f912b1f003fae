"""Held out: the per-route cache fit learned on one set of runs and judged on another — half of a corpus, or an
agent it never saw — by the share of calls whose predicted read is within 2% of the recorded one, and by
whether each held-out run's bill interval (the fitted miss process drawn over the model's reads of its recorded
requests) covers its recorded bill at the stated 90% (docs/cache-model.md, "Held out"). Skips where
../shared/traces is absent."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import workbench as wb
from tests.bill._runs import tool_loop
from workbench.analysis.cache_fit import fit_run
from workbench.analysis.route_fit import fit_routes, folds_of
from workbench.context.cache_model import CacheRules
from workbench.context.cache_routes import RouteParams, route_params, route_rules
from workbench.replay.bill import RunPricer, counterfactual_bill
from workbench.replay.bill_interval import Draws, spread
from workbench.trace.schema import Run, Usage

CENT = 0.005  # bills are stated to the cent


def within_2pct(runs: list[Run], table: dict[str, RouteParams]) -> float:
    """The share of calls after each run's first whose read, predicted by the table's rules, is within 2%."""
    hits = [
        abs(r.predicted_cached - r.recorded_cached) <= 0.02 * r.recorded_cached
        for run in runs
        for r in fit_run(run, route_rules(run, table))
        if not r.first and r.recorded_cached is not None
    ]
    return float(np.mean(hits))


def covered(run: Run, table: dict[str, RouteParams]) -> bool:
    """Does the 90% interval of the model's bill of ``run``'s recorded requests (the recorded first call, then
    the model's reads, drawn with the route's miss process) hold the recorded bill?"""
    rules = route_rules(run, table)
    prices = RunPricer(run, rules)
    bill = counterfactual_bill(run, prices=prices, rules=rules)
    at = {t.index: k for k, t in enumerate(run.turns)}
    rows = [bill.rows[0]]
    for r in bill.rows[1:]:
        c = min(r.modelled_recorded_cached, r.recorded_prompt)
        w = min(r.modelled_recorded_cache_write, r.recorded_prompt - c)
        u = Usage(prompt=r.recorded_prompt, cached=c, cache_write=w or None, completion=r.completion)
        rows.append(
            dataclasses.replace(r, cached=c, cache_write=w, usd=prices.usd(at[r.turn], u), found=None)
        )
    first = bill.rows[1].turn if len(bill.rows) > 1 else None
    modelled = dataclasses.replace(bill, rows=tuple(rows), first_change=first)
    sp = spread(modelled, run, prices, route_params(run, table), Draws.make())
    assert sp.usd is not None
    lo, hi = np.quantile(sp.usd, (0.05, 0.95))
    return bool(lo - CENT <= bill.recorded()["usd"] <= hi + CENT)


def test_a_route_with_few_calls_falls_back_to_the_documented_rules_with_wide_intervals() -> None:
    """Two calls of one OpenAI run: the documented rules (128-token steps from 1,024), the miss share's interval
    the binomial one over its calls (0 to over a half), and no per-run spread claimed."""
    run = tool_loop([4000, 4000], model="gpt-5", cached=False)
    turns = [t.model_copy(update={"usage": t.usage.model_copy(update={"cached": c})})
             for t, c in zip(run.turns, (0, 3968), strict=True)]  # fmt: skip
    run = run.model_copy(update={"turns": turns})
    fit = fit_routes([run], reps=5)
    (p,) = fit.params.values()
    assert (p.accounting, p.block.value, p.min_tokens.value) == ("automatic", 128.0, 1024.0)
    assert p.miss_tokens.low is not None and p.miss_tokens.high is not None
    assert p.miss_tokens.high - p.miss_tokens.low > 0.5
    assert len(p.run_miss) == 10 and p.runs == 1 and not p.resampled


def test_a_cached_route_with_no_fit_bills_by_the_documented_rules_with_the_widest_interval() -> None:
    """No fitted row for the run's route: the documented rules, and a run's miss share from the Jeffreys prior
    (its deciles span 0.6% to 99.4%): nothing recorded bounds it."""
    run = tool_loop([4000] * 4, model="gpt-5")
    p = route_params(run, {})
    assert p is not None and (p.block.value, p.min_tokens.value, p.miss_ratios) == (128.0, 1024.0, (0.0,))
    assert (p.run_miss[0], p.run_miss[-1]) == (0.0062, 0.9938) and not p.resampled
    assert route_rules(run, {}) == CacheRules.openai()


# -- the shared recordings ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(shared: Path) -> list[Run]:
    return list(wb.load(shared).runs)


def test_half_the_gemini_runs_predict_the_other_half(corpus: list[Run]) -> None:
    """Fitted on one half of the mini-swe-agent + Gemini runs (by a hash of their id), the table predicts the
    other half's reads within 2% on 88.9% of calls (goal 80%; 92.0% the other way round), and the bill interval
    covers 42 of the 50 held-out runs' recorded bills (84% at a stated 90%; 44 of 50 the other way round)."""
    swe = [r for r in corpus if r.source == "mini-swe-agent"]
    half = folds_of([r.run_id for r in swe], 2)
    table = fit_routes([r for r in swe if half[r.run_id] == 0], reps=20).params
    held = [r for r in swe if half[r.run_id] == 1]
    assert round(within_2pct(held, table), 3) == 0.889
    assert sum(covered(r, table) for r in held) == 42 and len(held) == 50


def test_an_agent_never_fitted_is_billed_by_the_documented_rules_with_wide_intervals(
    corpus: list[Run],
) -> None:
    """Fitted on Claude Code and mini-swe-agent only, the Codex CLI run's route (OpenAI) has no row: its reads are
    predicted by the documented rules (30 of its 38 later calls within 2%, as K-fold says), and its bill interval
    spans the fitted routes' miss range, so it covers the recorded bill."""
    table = fit_routes([r for r in corpus if r.source in ("claude-code", "mini-swe-agent")], reps=20).params
    codex = [r for r in corpus if r.source == "codex-cli"]
    assert "openai" not in table
    assert route_rules(codex[0], table) == CacheRules.openai()
    assert round(within_2pct(codex, table) * 38) == 30
    p = route_params(codex[0], table)
    assert p is not None and p.miss_tokens.low is not None and p.miss_tokens.high is not None
    assert p.miss_tokens.high - p.miss_tokens.low > 0.1
    assert covered(codex[0], table)


def test_claude_code_sessions_fitted_apart_predict_each_other(corpus: list[Run]) -> None:
    """Anthropic: the table fitted on half the Claude Code files predicts the other half within 2% on 97.7% of
    calls, but its intervals cover only 6 of the 10 held-out bills (9 of 10 the other way round): the fitted half's
    5 runs saw almost no cache reset (miss share 0.05%), the held-out long sessions had several. Too few runs
    bound a rare event's rate from below only; the packaged fit (14 runs) covers 18 of 20."""
    cc = [r for r in corpus if r.source == "claude-code"]
    half = folds_of([r.run_id for r in cc], 2)
    table = fit_routes([r for r in cc if half[r.run_id] == 0], reps=20).params
    held = [r for r in cc if half[r.run_id] == 1]
    assert round(within_2pct(held, table), 3) == 0.977
    assert sum(covered(r, table) for r in held) == 6 and len(held) == 10
