from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.govern.cost import Totals, spent
from workbench.govern.deadline import deadline_landing_reserve, default_deadline_s, wall_duration_text
from workbench.govern.landing import countdown, landing_allowance, landing_ceiling
from workbench.govern.meter_record import MeterRecord, cost_meter
from workbench.govern.pressure import reuse_ceiling
from workbench.govern.raw import raw_ceiling, raw_spent
from workbench.govern.turncap import clamp_max_turns, turn_cap
from workbench.govern.wrapup import budget_used, wrapup_due


def test_spent_reproduces_the_ink_s9_figure() -> None:
    # docs/governors.md §5.1: P=365,764, C=298,752, O=7,177 => 104,064
    assert spent(365_764, 298_752, 7_177) == 104_064


def test_spent_clamps_cached_into_prompt() -> None:
    assert spent(1_000, 5_000, 0) == 100  # cached > prompt: all of the prompt at the cached rate
    assert spent(1_000, -50, 10) == 1_010  # negative cache reads are no discount


def test_spent_truncates_once_on_the_total() -> None:
    # two turns of 5 cached tokens: per-turn truncation would give 0 + 0; on the total 10 * 10 // 100 = 1
    t = Totals().add(5, 5, 0).add(5, 5, 0)
    assert t.spent() == 1


def test_missing_usage_counts_as_zero_and_is_flagged() -> None:
    t = Totals().add(None, None, None).add(100, None, 10)
    assert (t.prompt, t.completion, t.spent(), t.missing_usage, t.missing_cached) == (100, 10, 110, 1, 1)


@given(st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 10**6), st.integers(0, 100))
def test_spent_lies_between_the_fully_cached_and_raw_readings(p: int, c: int, o: int, w: int) -> None:
    s = spent(p, c, o, w)
    assert o + min(c, p) * w // 100 <= s <= raw_spent(p, o)


def test_raw_and_reuse_ceilings() -> None:
    assert raw_ceiling(220_000) == 660_000
    assert raw_ceiling(150_000) == 450_000
    # docs/governors.md §3 table
    assert [
        reuse_ceiling(w) for w in (None, 0, 8_000, 64_000, 128_000, 144_000, 156_000, 160_000, 1_048_576)
    ] == [
        0,
        0,
        12_000,
        96_000,
        192_000,
        216_000,
        234_000,
        240_000,
        240_000,
    ]


def test_wrapup_is_strictly_above_seven_tenths() -> None:
    assert budget_used(700, 0, 0, 1_000, None) == 0.7
    assert not wrapup_due(0.7, warned=False)
    assert wrapup_due(0.7001, warned=False)
    assert not wrapup_due(0.99, warned=True)


def test_budget_used_reads_the_furthest_reading() -> None:
    # raw 2,000 of 3 x 1,000 = 0.667 beats cost 0.1; reuse 200,000 / 240,000 = 0.833 beats both
    assert budget_used(100, 2_000, 0, 1_000, None) == pytest.approx(2 / 3)
    assert budget_used(100, 2_000, 200_000, 1_000, 200_000) == pytest.approx(200_000 / 240_000)
    assert budget_used(100, 2_000, 200_000, 1_000, 200_000, readings=("cost",)) == pytest.approx(0.1)
    assert budget_used(100, 0, 0, 0, None) == 0


def test_landing_allowance_and_countdown() -> None:
    assert landing_allowance(220_000) == 44_000
    assert landing_allowance(0) == 0
    assert landing_ceiling(40_000, 40_000) == 48_000
    assert landing_ceiling(40_000, 40_000, None) == 0  # no token half
    assert countdown(4, 50_000, 48_000).ends  # the token half ends it before its last turn
    assert countdown(4, 50_000, 48_000).tokens_spent
    assert not countdown(2, 10, 0).ends and countdown(2, 10, 0).left == 1
    assert countdown(1, 10, 0).ends  # the last landing turn


def test_deadline_reserve_and_default_deadline() -> None:
    assert deadline_landing_reserve(600) == 60
    assert deadline_landing_reserve(3_600) == 120  # capped at the watchdog pad
    assert default_deadline_s(220_000) == 900
    assert default_deadline_s(2_000_000) == 2_400


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (2_700, "45m"),
        (5_400, "1h30m"),
        (7_200, "2h"),
        (150, "2m30s"),
        (30, "30s"),
        (0.4, ""),
        (0, ""),
        (29.5, "30s"),
    ],
)
def test_wall_duration_text(seconds: float, text: str) -> None:
    assert wall_duration_text(seconds) == text


def test_turn_backstop_and_fold() -> None:
    assert clamp_max_turns(0) == 400
    assert clamp_max_turns(401) == 400
    assert clamp_max_turns(200) == 200
    assert clamp_max_turns(1_000, None) == 1_000
    assert turn_cap(200, fold=True) == 2
    assert turn_cap(1, fold=True) == 1


def test_meter_words() -> None:
    assert cost_meter(230_155, 220_000).words() == "cost: 230,155 of 220,000 tokens of billed work"
    assert MeterRecord("no-progress", 5, 0, "").words() == "no-progress"
    assert MeterRecord("", 1, 1).words() == ""
    assert MeterRecord("deadline", 10, 600, "seconds").reread(0, 612.7).reached == 612
