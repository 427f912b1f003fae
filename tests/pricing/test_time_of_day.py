"""A price that changes within a day (DeepSeek's off-peak hours, genai-prices' ``TimeOfDateConstraint``): a bill
prices each call at the rate in force when it was sent, as ``price_usage`` does, not at the day's first call's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.bill._runs import tool_loop
from workbench.context.cache_routes import route_rules
from workbench.pricing import price_epoch, price_usage
from workbench.replay.bill import RunPricer, counterfactual_bill

PEAK_ENDS = datetime(2025, 6, 1, 16, 30, tzinfo=UTC)  # genai-prices: deepseek-chat's peak is 00:30-16:30 UTC


def test_a_run_across_the_off_peak_boundary_is_priced_call_by_call() -> None:
    run = tool_loop([400] * 8, model="deepseek-chat", cached=False)
    sent = [datetime(2025, 6, 1, 14, tzinfo=UTC) + timedelta(minutes=30 * k) for k in range(8)]  # 14:00-17:30
    turns = [t.model_copy(update={"started_at": at}) for t, at in zip(run.turns, sent, strict=True)]
    run = run.model_copy(update={"turns": turns})
    prices = RunPricer(run, route_rules(run))
    per_token = []
    for k, t in enumerate(run.turns):
        want = price_usage("deepseek-chat", t.usage, t.started_at)
        assert want is not None
        assert prices.usd(k, t.usage) == pytest.approx(want.usd, rel=1e-12, abs=1e-15)
        per_token.append((t.started_at >= PEAK_ENDS, prices.rates(k, t.usage.prompt or 0)))
    peak = {r for off, r in per_token if not off}
    off_peak = {r for off, r in per_token if off}
    assert len(peak) == len(off_peak) == 1  # one rate each side of 16:30, every call priced at its own
    (p_in, _, _, p_out), (o_in, _, _, o_out) = peak.pop(), off_peak.pop()
    assert p_in == pytest.approx(2 * o_in) and p_out == pytest.approx(2 * o_out)  # DeepSeek: off-peak is half
    recorded = [price_usage("deepseek-chat", t.usage, t.started_at) for t in run.turns]
    total = sum(p.usd for p in recorded if p is not None)
    assert counterfactual_bill(run).recorded()["usd"] == pytest.approx(total, rel=1e-12)


@given(st.integers(0, 24 * 60 - 1), st.integers(0, 24 * 60 - 1))
def test_calls_in_one_epoch_have_one_price(a: int, b: int) -> None:
    at = [datetime(2025, 6, 1, m // 60, m % 60, tzinfo=UTC) for m in (a, b)]
    same_epoch = price_epoch("deepseek-chat", at[0]) == price_epoch("deepseek-chat", at[1])
    usage = tool_loop([10], model="deepseek-chat").turns[0].usage
    prices = [price_usage("deepseek-chat", usage, when) for when in at]
    assert prices[0] is not None and prices[1] is not None
    assert same_epoch == (prices[0].usd == prices[1].usd)


def test_a_model_priced_by_date_alone_has_one_epoch_a_day() -> None:
    day = [datetime(2025, 6, 1, h, tzinfo=UTC) for h in range(24)]
    assert len({price_epoch("claude-sonnet-4-5", when) for when in day}) == 1
    assert price_epoch("no-such-model-anywhere", day[0]) == ()
    assert price_epoch("deepseek-chat", None) == ()
