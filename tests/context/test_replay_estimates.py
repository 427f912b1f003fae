"""The context replay's raw estimate of every request is the manager's definition (``raw_estimate``: the prefix, plus
the schema block, plus the sum of the request's message costs), however the replay reaches it, on every real run:
appended transcripts, rewritten ones (Claude Code's compactions) and a learned prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.context.manager import FitResult
from workbench.context.replay import replay_context
from workbench.estimate.estimator import Estimator, MessageCosts
from workbench.govern.policy import Policy
from workbench.replay.bill import _manager_requests
from workbench.scale import load
from workbench.trace.schema import Run

pytestmark = pytest.mark.real


def expected_estimates(run: Run, learned: float) -> list[float]:
    """Per request, ``raw_estimate`` of what it sent: the turn's own pool indices, priced from scratch."""
    estimator = Estimator()
    costs = MessageCosts(estimator)
    schema = estimator.schemas(run.tool_schemas)
    prefix, out = estimator.prefix_tokens, []
    for turn in run.turns:
        if turn.sent is None:
            continue
        sent = [run.messages[i] for a, b in turn.sent for i in range(a, b)]
        out.append(prefix + schema + costs.total(sent))
        if not run.tool_schemas and turn.usage.prompt is not None:
            prefix = learned  # learned at the first reported call, read from the next request on
    return out


def test_every_request_is_estimated_as_the_manager_defines_it(shared: Path) -> None:
    runs = [r for r in load(shared).runs if r.role != "compaction" and r.turns]
    rewritten = 0
    for run in runs:
        for length in (32_768, 1_000_000):
            ctx = replay_context(run, Policy(context_length=length, estimator="adr"))
            want = expected_estimates(run, ctx.prefix_tokens)[: len(ctx.rows)]
            assert [r.estimate for r in ctx.rows] == want, (run.run_id, length)
        rewritten += any(r.rewritten for r in ctx.rows)
    assert rewritten >= 5  # the Claude Code sessions' compactions are among them


def looked_up(run: Run, policy: Policy) -> dict[int, list[int]]:
    """Per turn, the pool index of each message the manager sent, looked up one by one."""
    index = {id(m): i for i, m in enumerate(run.messages)}
    out: dict[int, list[int]] = {}

    def on_fit(turn: int, fit: FitResult, _ids: list[int] | None) -> None:
        out[turn] = [index[id(m)] for m in fit.messages if id(m) in index]

    replay_context(run, policy, on_fit=on_fit)
    return out


def test_the_bills_manager_requests_are_the_indices_each_fit_sent(shared: Path) -> None:
    """What the bill reads per turn, on sessions that are pruned and rewritten: the indices of what was sent."""
    policy = Policy(context_length=65_536, estimator="adr")
    actions: set[str] = set()
    for run in [r for r in load(shared / "claude-code").runs if r.turns][:6]:
        kept, ctx = _manager_requests(run, policy)
        assert kept == looked_up(run, policy), run.run_id
        actions |= {r.action for r in ctx.rows} | {"rewritten" for r in ctx.rows if r.rewritten}
    assert {"send", "pruned", "rewritten"} <= actions  # whole requests, pruned ones, and after a compaction
