"""Every Policy field says how the fast path treats it (``FastPath``), and each claim is checked: a disqualifying
field sends the policy down the governor path, and under any other field's non-default value the fast path's rows
equal the reference's (``sweep(..., fast=False)``, the governor replay) cell by cell."""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.estimate.constants import STRATEGIES
from workbench.govern.policy import (
    MEMOS,
    OBSERVATION_WINDOWS,
    RULE_SETS,
    FastPath,
    Policy,
    treated,
)
from workbench.govern.wrapup import READINGS
from workbench.replay import fast
from workbench.replay.sheet import PROBE_FIELDS
from workbench.scale.sweep import sweep
from workbench.scenarios.seed import CallSpec, TurnSpec, build_run, mixed_run
from workbench.trace.schema import Outcome, Run

FIELDS = [f.name for f in dataclasses.fields(Policy)]
META = {f.name: f.metadata for f in dataclasses.fields(Policy)}
DEFAULT = Policy()

some = st.none()
count = st.integers(1, 12)
# a value of each field other than its default, within what a policy accepts
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "rules": st.sampled_from([r for r in RULE_SETS if r != "current"]),
    "grant": st.integers(1, 400_000),
    "max_turns": st.integers(1, 60),
    "deadline_s": st.floats(1, 1e5),
    "cache_weight_percent": st.integers(0, 100),
    "cost_lands": st.just(False),
    "raw_lands": st.just(True),
    "reuse_lands": st.just(True),
    "raw_ceiling_multiple": st.integers(1, 5),
    "landing_turns": st.integers(1, 6),
    "landing_token_share": some | st.floats(0, 1),
    "wrapup_at": some | st.floats(0.01, 1.5),
    "wrapup_readings": st.lists(st.sampled_from(READINGS), unique=True).map(tuple),
    "wall_pace_at": some | st.floats(0, 1),
    "watchdog_pad_s": st.floats(0, 600),
    "deadline_landing_turns": st.integers(1, 6),
    "turn_backstop": some | st.integers(1, 60),
    "fold": st.just(True),
    "turn_cap_offset": st.integers(1, 5),
    "empty_abandon": st.just(False),
    "nudges": st.just(False),
    "length_batch": st.just(False),
    "finish_tools": st.lists(st.sampled_from(["finish", "read", "sh"]), min_size=1, unique=True).map(tuple),
    "reflex": st.just(True),
    "swarm": st.just(True),
    "no_progress": st.just(False),
    "repeat_cap": count,
    "stagnant_cap": count,
    "recon_turns": count,
    "turn_floor": count,
    "floor_window": count,
    "floor_min_productive": count,
    "conclude_grace": count,
    "tool_timeouts": st.just(False),
    "tool_timeout_cap": st.integers(1, 5),
    "stuck_detection": st.just(True),
    "stuck_action_observation": count,
    "stuck_action_error": count,
    "stuck_monologue": count,
    "stuck_alternating": count,
    "stuck_scan_events": st.integers(1, 100),
    "step_limit": st.integers(0, 30),
    "cost_limit_usd": st.floats(0, 5),
    "call_limit": st.integers(0, 30),
    "token_limit": st.integers(0, 100_000),
    "message_limit": st.integers(0, 30),
    "time_limit_s": st.floats(0, 600),
    "window": st.integers(1_000, 300_000),
    "observation_window": st.sampled_from(
        [w for w in OBSERVATION_WINDOWS if w != DEFAULT.observation_window]
    ),
    "memo": st.sampled_from([m for m in MEMOS if m != DEFAULT.memo]),
    "context_length": st.integers(1_000, 300_000),
    "reserve": st.integers(0, 50_000),
    "safety": st.integers(0, 50_000),
    "calibration": st.floats(1, 3),
    "estimator": st.sampled_from([s for s in STRATEGIES if s != DEFAULT.estimator]),
    "extra": st.dictionaries(st.sampled_from(["note", "by"]), st.text(max_size=4), min_size=1),
}
ANSWERED = [name for name in FIELDS if META[name]["fast"] is not FastPath.DISQUALIFYING]


def test_every_policy_field_is_classified() -> None:
    for name in FIELDS:
        assert isinstance(META[name].get("fast"), FastPath), f"{name} is not classified"
        assert META[name]["why"], f"{name}: a {META[name]['fast'].value} field says why"
    assert set(VALUES) == set(FIELDS)  # a new field needs a value here too, so its claim is checked


def test_the_fast_path_reads_what_its_classes_say() -> None:
    assert (
        fast.FAST_FIELDS
        == set(treated(FastPath.GRID))
        == {
            "grant",
            "max_turns",
            "cache_weight_percent",
            "landing_token_share",
        }
    )
    assert set(treated(FastPath.PROBE)) == set(PROBE_FIELDS)
    assert treated(FastPath.TIMED) == ("deadline_s",)
    assert fast.policy_eligible(DEFAULT)
    assert not fast.policy_eligible(DEFAULT.replace(grant=0))  # the wrap-up reading divides by the grant


def _turns(draw: st.DrawFn) -> list[TurnSpec]:
    """A small run's turns: tool turns (reads, writes, timeouts), reply-less and truncated replies, finals mid-run
    and at the end, cache reads of any share of the prompt."""
    specs = []
    prompt = draw(st.integers(0, 20_000))
    for i in range(draw(st.integers(0, 14))):
        prompt += draw(st.integers(0, 30_000))
        cached = draw(st.none() | st.integers(0, prompt))
        completion = draw(st.none() | st.integers(0, 60_000))
        kind = draw(
            st.sampled_from(["read", "read", "write", "timeout", "empty", "final", "length", "batch"])
        )
        text = {"empty": "", "final": "Done.", "length": "cut"}.get(kind, draw(st.sampled_from(["", "w"])))
        calls: tuple[CallSpec, ...] = ()
        if kind in ("read", "batch"):
            calls = (
                CallSpec("read", {"path": draw(st.sampled_from(["a", "b"]))}, draw(st.sampled_from("xy"))),
            )
        elif kind == "write":
            calls = (CallSpec("write", {"path": f"w{i}"}, "ok"),)
        elif kind == "timeout":
            calls = (CallSpec("sh", {"command": "make"}, "timed out", is_error=True, timed_out=True),)
        finish = "length" if kind in ("length", "batch") else None
        mutated = draw(st.sampled_from([None, True, False])) if calls else None
        specs.append(TurnSpec(prompt, cached, completion, text, calls, finish, mutated))
    return specs


@st.composite
def corpora(draw: st.DrawFn) -> list[Run]:
    """Three runs: two of ``workbench.scenarios``' mixed runs and one drawn turn by turn."""
    seeds = draw(st.lists(st.integers(0, 10**6), min_size=2, max_size=2))
    drawn = build_run(
        "drawn",
        _turns(draw),
        generator="test",
        params={},
        outcome=Outcome(stop_reason=draw(st.sampled_from([None, "done", "budget"]))),
        context_length=draw(st.sampled_from([None, 200_000])),
    )
    return [*(mixed_run(s, max_turns=40) for s in seeds), drawn]


def same(runs: list[Run], policies: list[Policy]) -> pd.DataFrame:
    quick = sweep(runs, policies, workers=1, progress=False)
    reference = sweep(runs, policies, workers=1, progress=False, fast=False)
    cols = [c for c in quick.columns if c != "path"]
    pd.testing.assert_frame_equal(quick[cols], reference[cols])
    return quick


@pytest.mark.parametrize("name", treated(FastPath.DISQUALIFYING))
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_disqualifying_field_sends_the_policy_down_the_governor_path(
    name: str, data: st.DataObject
) -> None:
    value = data.draw(VALUES[name])
    policy = DEFAULT.replace(**{name: value})
    assert not fast.policy_eligible(policy)
    out = sweep(
        [mixed_run(data.draw(st.integers(0, 10**6)), max_turns=20)], [policy], workers=1, progress=False
    )
    assert (out.path == "governor").all()


@pytest.mark.parametrize("name", ANSWERED)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), runs=corpora())
def test_fast_equals_reference_under_any_other_field(name: str, data: st.DataObject, runs: list[Run]) -> None:
    """The field at a drawn value, over a grid of the swept axes: the fast path answers every row, equal to the
    reference (a deadline only where no run is timed: these runs have no timestamps)."""
    value = data.draw(VALUES[name])
    grants = data.draw(st.lists(st.integers(1, 300_000), min_size=1, max_size=3))
    share = data.draw(st.sampled_from([None, 0.0, 0.2]))
    policies = [
        DEFAULT.replace(grant=g, landing_token_share=share, max_turns=data.draw(st.integers(1, 50)))
        for g in grants
    ]
    policies = [p.replace(**{name: value}) for p in policies]
    assert all(fast.policy_eligible(p) for p in policies)
    out = same(runs, policies)
    assert (out.path == "fast").all()


def test_a_deadline_sends_only_timed_runs_down_the_governor_path() -> None:
    timed = build_run("t", [TurnSpec(prompt=10, text="done", seconds=5)], generator="test", params={})
    out = same([timed, mixed_run(3)], [DEFAULT.replace(deadline_s=60.0)])
    assert out.path.tolist() == ["governor", "fast"]
