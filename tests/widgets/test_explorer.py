"""The explorer, driven programmatically as a person would drive its controls: the decisions shown must be
the replay's decisions for the settings the controls now hold."""

from __future__ import annotations

import pytest

from workbench.govern import Policy
from workbench.replay import replay
from workbench.scenarios.seed import repeated_call, warm_runaway
from workbench.widgets import Explorer
from workbench.widgets.explorer import RECORDED


@pytest.fixture()
def explorer() -> Explorer:
    return Explorer([warm_runaway(), repeated_call()])


def test_opens_on_the_first_run_under_the_default_grant(explorer: Explorer) -> None:
    r = explorer.result
    assert r is not None and r.run_id == "seed-warm-runaway"
    # The seed: at the 220,000 grant the 98%-cached runaway lands at about 1.28M raw tokens (98 calls).
    assert (r.stop_reason, r.stop_turn, r.raw) == ("budget", 97, 1_273_216)
    assert "budget at turn 97" in explorer.summary.value
    assert bytes(explorer.chart.value).startswith(b"\x89PNG")


def test_moving_the_grant_updates_the_decisions(explorer: Explorer) -> None:
    before_png = explorer.chart.value
    explorer.grant.value = 250_000
    r = explorer.result
    assert (r.stop_turn, r.raw) == (110, 1_442_112)  # the seed's figure at 250,000
    assert r.landing_started_at == 106
    assert "1,442,112" in explorer.summary.value
    assert "landing" in explorer.decisions.value
    assert bytes(explorer.chart.value) != bytes(before_png)
    explorer.grant.value = 190_000
    assert explorer.result.stop_turn + 1 == 85  # cost-only and landed turn counts agree at 85


def test_the_decisions_table_is_the_replays_own(explorer: Explorer) -> None:
    explorer.grant.value = 200_000
    expected = replay(warm_runaway(), Policy.named("current", grant=200_000)).to_frame()
    for kind in expected["kind"]:
        assert str(kind) in explorer.decisions.value


def test_switching_run_and_rules(explorer: Explorer) -> None:
    explorer.run.value = 1  # the repeated identical call
    assert explorer.result.stop_reason == "no-progress"
    explorer.rules.value = "ink-s9"  # no no-progress guard in that era
    assert explorer.result.stop_reason != "no-progress"
    assert explorer.result.policy.rules == "ink-s9"


def test_context_length_and_calibration_reach_the_policy(explorer: Explorer) -> None:
    explorer.context_length.value = 200_000
    explorer.calibration.value = 1.5
    p = explorer.result.policy
    assert (p.context_length, p.calibration) == (200_000, 1.5)
    assert explorer.result.context is not None


def test_recorded_rules_on_a_run_without_a_policy_says_so(explorer: Explorer) -> None:
    explorer.rules.value = RECORDED
    assert explorer.result is None
    assert explorer.error is not None and "recorded no policy" in explorer.error
    assert "recorded no policy" in explorer.summary.value


def test_outcome_colour_and_dollars() -> None:
    """Each run shows its outcome (label, else finished) in colour, its fate under the policy, and the meter in
    dollars: what the calls made cost, what the cut calls cost, summing to the recorded bill."""
    from workbench.analysis.frontier import ledger
    from workbench.scenarios.labelled import labelled_runs
    from workbench.widgets.explorer import OUTCOME_COLOURS, outcome_of

    runs = labelled_runs(4, seed=1)
    ex = Explorer(runs)
    for i, run in enumerate(runs):
        assert ex.run.options[i][0].split(" · ")[0].endswith(outcome_of(run))
    run = runs[0]
    ex.grant.value = 1_000_000
    outcome = outcome_of(run)
    assert outcome in ("resolved", "unresolved")
    assert OUTCOME_COLOURS[outcome] in ex.summary.value and "kept under this policy" in ex.summary.value
    spent, cut, total = ex.usd()
    book = ledger([run])
    assert total == pytest.approx(float(book.table["recorded_usd"].iloc[0])) and total > 0
    assert (spent, cut) == (pytest.approx(total), pytest.approx(0.0))
    assert f"${total:,.2f} recorded" in ex.summary.value
    ex.grant.value = 20_000  # far below the run's bill: a landing cuts it
    spent, cut, total = ex.usd()
    assert ex.result.cut_turns > 0 and cut > 0 and spent + cut == pytest.approx(total)
    assert ("lost" if outcome == "resolved" else "cut") + " under this policy" in ex.summary.value
    assert f"cut ${cut:,.2f}" in ex.summary.value


def test_unpriced_runs_say_so(explorer: Explorer) -> None:
    # the seed's synthetic runs carry no model a price database knows: no dollar figure is made up
    assert "no price for some call" in explorer.summary.value
    assert "unfinished" in explorer.run.options[0][0] or "finished" in explorer.run.options[0][0]
