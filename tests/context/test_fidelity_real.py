"""Fidelity on real Claude Code sessions: the manager fires where Claude Code's auto-compaction did.

The policy models Claude Code (workbench.context.budget.claude_code_reserve, docs/anchors.md §5): a 200,000 window,
reserve min(max_output, 20,000) and a 13,000 buffer, i.e. a 167,000-token budget; the anchored estimator
(reported prompt + completion of the last call, plus an estimate of what followed) is how Claude Code counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.context import claude_code_reserve
from workbench.context.replay import replay_context
from workbench.govern.policy import Policy
from workbench.scale import load
from workbench.trace import Run

pytestmark = pytest.mark.real

CLAUDE_CODE_POLICY = Policy(
    context_length=200_000, reserve=claude_code_reserve(None), safety=13_000, estimator="anchored"
)


@pytest.fixture(scope="module")
def sessions(shared: Path) -> list[Run]:
    corpus = load(shared / "claude-code")
    return [r for r in corpus.runs if r.role == "main" and any(e.kind == "compaction" for e in r.events)]


def test_the_manager_fires_within_one_call_of_each_automatic_compaction(sessions: list[Run]) -> None:
    table = []
    for run in sessions:
        (comp,) = [e for e in run.events if e.kind == "compaction"]
        if comp.data["trigger"] != "auto":
            continue
        compaction_call = comp.turn + 1  # the first call after the boundary
        replay = replay_context(run, CLAUDE_CODE_POLICY)
        fired = replay.first_fire_at
        table.append((run.run_id[:8], comp.data["pre_tokens"], compaction_call, fired))
    print("\nrun       preTokens  compaction-call  manager-fires")
    for rid, pre, call, fired in table:
        print(f"{rid}  {pre:>9,}  {call:>15}  {fired:>13}")
    assert sorted(pre for _, pre, _, _ in table) == [167_094, 167_117, 167_731, 170_251]
    # exact call indices, side by side: (compaction call, manager's first fire)
    assert {rid: (call, fired) for rid, _, call, fired in table} == {
        "258c7280": (102, 102),
        "4d5611e5": (61, 61),
        "8463c716": (
            71,
            70,
        ),  # call 70's own request was 167,094 tokens: over budget; Claude Code checks late
        "fa812bfe": (126, 126),
    }
    assert all(fired is not None and abs(fired - call) <= 1 for _, _, call, fired in table)


def test_the_manual_compaction_is_not_a_budget_decision(sessions: list[Run]) -> None:
    (run,) = [r for r in sessions if any(e.data.get("trigger") == "manual" for e in r.events)]
    (comp,) = [e for e in run.events if e.kind == "compaction"]
    assert comp.data["pre_tokens"] == 142_431
    replay = replay_context(run, CLAUDE_CODE_POLICY)
    # nothing fires at the manual compaction (142k < 167k); uncompacted, the transcript reaches the budget later
    assert replay.first_fire_at == 179
    assert replay.first_fire_at > comp.turn + 2


def test_adr_and_fitted_fire_early_on_the_same_sessions(sessions: list[Run]) -> None:
    """The cost of over-counting: a seeded factor of 1.1 prunes long before the window is full."""
    early = {}
    for run in sessions:
        (comp,) = [e for e in run.events if e.kind == "compaction"]
        if comp.data["trigger"] != "auto":
            continue
        adr = replay_context(run, CLAUDE_CODE_POLICY.replace(estimator="adr")).first_fire_at
        early[run.run_id[:8]] = comp.turn + 1 - adr  # type: ignore[operator]
    print("\ncalls by which ADR-107 (seed 1.1) fires before Claude Code's compaction:", early)
    assert early == {"258c7280": 30, "4d5611e5": 16, "8463c716": 37, "fa812bfe": 18}
