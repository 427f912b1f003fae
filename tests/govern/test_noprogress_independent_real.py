"""Held against an independent reading: the no-progress guard written out again from docs/governors.md §5.8 (the
seed's noprogress.go), with a shell write counted as the seed counts a revision, stops the same real
mini-swe-agent runs at the same turns as the replay does."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from workbench.govern.policy import Policy
from workbench.importers.shell import classify
from workbench.replay.engine import replay
from workbench.scale import load


def _seed_guard_stop(run) -> int | None:  # type: ignore[no-untyped-def]
    """The turn the seed's guard terminates at, reading each bash command's write as a mutation (anything else:
    no mutation, as the seed's revision counter would not move), or None."""
    last_key = last_res = None
    repeat = stagnant = turns = productive = 0
    window = [False] * 20
    seen: set[str] = set()
    concluded, left = False, 0
    for t in run.turns:
        if not t.tool_calls:
            continue  # a turn without calls (a final answer, a format error) is never observed
        turns += 1
        mutated = any(classify(json.loads(c.arguments)["command"]).kind == "write" for c in t.tool_calls)
        new_info = any_error = False
        for r in t.tool_results:
            if r.is_error:
                any_error = new_info = True
                continue
            h = hashlib.sha256((r.content or "").encode()).hexdigest()
            if h not in seen:
                seen.add(h)
                new_info = True
        c = t.tool_calls[-1]
        r = t.tool_results[-1] if t.tool_results else None
        key = c.name + "\x00" + c.arguments
        res = (
            None
            if r is None
            else ("E:" if r.is_error else "R:") + hashlib.sha256((r.content or "").encode()).hexdigest()
        )
        repeat = (
            repeat + 1 if (not any_error and key == last_key and res is not None and res == last_res) else 1
        )
        last_key, last_res = key, res
        stagnant = 0 if (mutated or new_info) else stagnant + 1
        slot = (turns - 1) % 20
        productive += (mutated or new_info) - window[slot]
        window[slot] = mutated or new_info
        if concluded:
            if repeat >= 4 or stagnant >= 6:
                return t.index
            left -= 1
            if left <= 0:
                return t.index
            continue
        if repeat >= 4 or stagnant >= 6 or (turns >= 60 and productive < 5):
            concluded, left = True, 4
    return None


@pytest.mark.real
def test_replay_stops_where_the_seed_guard_counting_shell_writes_does(shared: Path) -> None:
    root = shared / "mini-swe-agent"
    if not root.is_dir():
        pytest.skip("../shared/traces/mini-swe-agent is absent")
    policy = Policy.named("current", grant=10**9)
    mine, seed = {}, {}
    for run in load(root).runs:
        res = replay(run, policy)
        if res.stop_reason == "no-progress":
            mine[run.run_id] = res.stop_turn
        at = _seed_guard_stop(run)
        if at is not None and not (res.stop_reason not in ("no-progress",) and res.stop_turn < at):
            seed[run.run_id] = at
    assert mine == seed
    assert mine == {"sympy__sympy-15976": 27}


@pytest.mark.real
def test_at_every_grant_the_guard_stops_what_the_seed_guard_does_before_the_landing(shared: Path) -> None:
    """Grants 100,000 to 600,000: a run is stopped by the no-progress guard exactly when the independent seed
    guard terminates it before the grant's landing starts (the guard is not observed once a landing runs)."""
    root = shared / "mini-swe-agent"
    if not root.is_dir():
        pytest.skip("../shared/traces/mini-swe-agent is absent")
    runs = list(load(root).runs)
    seed = {r.run_id: _seed_guard_stop(r) for r in runs}
    for grant in range(100_000, 600_001, 50_000):
        unguarded = Policy.named("current", grant=grant, no_progress=False)
        guarded = Policy.named("current", grant=grant)
        for run in runs:
            crossing = replay(run, unguarded).landing_started_at
            at = seed[run.run_id]
            expected = at is not None and (crossing is None or at < crossing)
            res = replay(run, guarded)
            assert (res.stop_reason == "no-progress") == expected, (grant, run.run_id)
            if expected:
                assert res.stop_turn == at
