"""The governor's words as StrEnums: the same strings as before, held as plain strings wherever they leave it."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.govern.decisions import PHASES, Next, Phase, Stop
from workbench.govern.limit_rules import Limit
from workbench.govern.policy import Policy
from workbench.govern.verdict import VERDICTS, StopReason, Verdict, verdict_for
from workbench.replay import replay, sweep
from workbench.scale import load

ROOT = Path(__file__).resolve().parents[2]


def test_the_words_are_the_strings_traces_hold() -> None:
    assert PHASES == ("start", "response", "tools", "error", "end")
    assert {n.value for n in Next} == {"call", "run-tools", "skip-tools", "retry", "continue", "stop"}
    assert VERDICTS == (
        "budget_stop",
        "turn_cap",
        "unverified_success",
        "empty_response",
        "provider_failure",
        "context_truncated",
    )
    assert all(type(v) is str for v in VERDICTS)
    assert StopReason.TURN_CAP == "turn-cap" and f"{StopReason.NO_PROGRESS}" == "no-progress"


def test_verdict_for_gives_plain_strings() -> None:
    cases = [
        ("budget", None, "x"),
        ("context-truncated", None, ""),
        ("max-iterations", "budget", ""),
        ("x", None, ""),
    ]
    got = [verdict_for(*c) for c in cases]
    assert got == ["budget_stop", "context_truncated", "budget_stop", "empty_response"]
    assert all(type(v) is str for v in got)


def test_a_decision_holds_plain_strings() -> None:
    stop = Stop(
        3, Phase.TOOLS, StopReason.NO_PROGRESS, verdict=Verdict.BUDGET_STOP, exhausted=StopReason.NO_PROGRESS
    )
    assert (stop.phase, stop.kind, stop.verdict, stop.exhausted) == (
        "tools",
        "no-progress",
        "budget_stop",
        "no-progress",
    )
    assert {type(v) for v in (stop.phase, stop.kind, stop.verdict, stop.exhausted)} == {str}


def test_an_agent_limit_names_a_known_stop_reason() -> None:
    with pytest.raises(ValueError, match="'max-bugdet' is not a valid StopReason"):
        Limit("cost_limit_usd", "usd", "before", False, "max-bugdet", "exit", "cost_limit")


def test_replays_and_sweeps_carry_plain_strings() -> None:
    runs = list(load(ROOT / "traces" / "synthetic"))[:8]
    for run in runs:
        out = replay(run, _current())
        assert type(out.stop_reason) is str and (out.verdict is None or type(out.verdict) is str)
        for d in out.decisions:
            assert type(d.phase) is str and type(d.kind) is str
    for fast in (True, False):
        frame = sweep(runs, {"grant": [50_000, 200_000]}, fast=fast, progress=False)
        for col in ("stop_reason", "verdict", "landing_kind", "meter", "recorded_stop", "stop_basis"):
            assert {type(v) for v in frame[col] if v is not None} <= {str}, col


def _current() -> Policy:
    return Policy.named("current")
