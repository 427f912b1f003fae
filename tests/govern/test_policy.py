from __future__ import annotations

import pytest

from workbench.govern import RULE_SETS, Policy
from workbench.trace.schema import RecordedPolicy, Run


def test_rule_sets() -> None:
    assert set(RULE_SETS) == {
        "current",
        "ink-s9",
        "older",
        "openhands",
        "mini-swe-agent",
        "swe-agent",
        "claude-code",
        "inspect",
    }
    cur, ink, old, oh = (Policy.named(n) for n in ("current", "ink-s9", "older", "openhands"))
    assert (cur.grant, cur.landing_token_share, cur.no_progress, cur.raw_lands) == (220_000, 0.2, True, False)
    assert (ink.grant, ink.landing_token_share, ink.no_progress, ink.raw_lands, ink.reuse_lands) == (
        150_000,
        None,
        False,
        True,
        True,
    )
    assert ink.wrapup_readings == ("cost", "raw")
    assert (old.observation_window, old.memo, old.reuse_lands) == ("grant/6", "call-keyed", False)
    assert (oh.stuck_detection, oh.cost_lands, oh.max_turns, oh.turn_backstop) == (True, False, 500, None)


def test_named_overrides_and_errors() -> None:
    p = Policy.named("ink-s9", grant=200_000, landing_turns=2)
    assert (p.rules, p.grant, p.landing_turns, p.raw_lands) == ("ink-s9", 200_000, 2, True)
    assert p.label == "ink-s9 g=200,000 landing_turns=2"
    with pytest.raises(ValueError, match="unknown rule set 'nope'"):
        Policy.named("nope")
    with pytest.raises(ValueError, match="unknown policy parameter"):
        Policy().replace(grnt=1)
    with pytest.raises(ValueError, match="grant must be an int"):
        Policy(grant=1.5)  # type: ignore[arg-type]
    assert Policy().replace(rules="ink-s9").grant == 150_000  # a new rule set starts from its own values


def test_to_dict_round_trip() -> None:
    p = Policy.named("openhands", max_turns=30, context_length=8_000)
    assert Policy.from_dict(p.to_dict()) == p


def test_recorded_policy() -> None:
    oh = Run(run_id="x", source="openhands", policy=RecordedPolicy(rules="openhands", max_turns=50))
    assert (Policy.recorded(oh).rules, Policy.recorded(oh).max_turns) == ("openhands", 50)
    own = Run(
        run_id="y", source="workbench", policy=RecordedPolicy(params={"policy": Policy(grant=9).to_dict()})
    )
    assert Policy.recorded(own) == Policy(grant=9)
    cc = Run(run_id="z", source="codex-cli", policy=RecordedPolicy(context_length=258_400))
    assert (Policy.recorded(cc).rules, Policy.recorded(cc).window) == ("current", 258_400)
    with pytest.raises(ValueError, match="recorded no policy"):
        Policy.recorded(Run(run_id="w", source="claude-code"))


def test_progress_guard_from_policy_takes_every_threshold() -> None:
    from workbench.govern.noprogress import ProgressGuard

    p = Policy(
        repeat_cap=5,
        stagnant_cap=7,
        recon_turns=11,
        turn_floor=61,
        floor_window=21,
        floor_min_productive=6,
        conclude_grace=3,
    )
    g = ProgressGuard.from_policy(p)
    got = (
        g.repeat_cap,
        g.stagnant_cap,
        g.recon_turns,
        g.turn_floor,
        g.floor_window,
        g.min_productive,
        g.grace,
    )
    assert got == (5, 7, 11, 61, 21, 6, 3)
    assert len(g.window) == 21
