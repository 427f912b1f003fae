"""ADR-107's calibration on every real run: after a run's first reported usage, the calibrated estimate never
under-counts a later call's reported prompt tokens by more than the growth the last turn added — except where
the source rewrote its own transcript (a compaction), which the table counts apart."""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise
from pathlib import Path

import pytest

from workbench.context.replay import replay_context
from workbench.govern.policy import Policy
from workbench.scale import load

pytestmark = pytest.mark.real


def test_calibrated_estimate_bound_on_every_real_run(shared: Path) -> None:
    corpus = load(shared)
    policy = Policy(context_length=1_000_000, estimator="adr")
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # runs, calls, violations, at rewrite
    for run in corpus.runs:
        if run.role == "compaction":  # its file holds the summary request, not what the call re-sent
            continue
        rows = [r for r in replay_context(run, policy).rows if r.actual_prompt is not None]
        s = stats[run.source]
        s[0] += 1
        for prev, row in pairwise(rows):
            growth = max(0, row.actual_prompt - prev.actual_prompt)  # type: ignore[operator]
            s[1] += 1
            if row.actual_prompt - row.calibrated_estimate > growth:  # type: ignore[operator]
                s[2] += 1
                s[3] += row.rewritten
    print("\nsource        runs  calls-after-first  violations  rate     at-rewrite")
    for source, (runs, calls, bad, rewrite) in sorted(stats.items()):
        print(f"{source:<12}  {runs:>4}  {calls:>17}  {bad:>10}  {bad / calls:.4f}   {rewrite:>10}")
    assert {k: tuple(v) for k, v in stats.items()} == {
        "claude-code": (15, 879, 4, 4),
        "codex-cli": (1, 38, 0, 0),
        "mini-swe-agent": (100, 3801, 0, 0),
        "openhands": (4, 121, 0, 0),
    }
    # the bound holds on every call of an append-only transcript; all 4 exceptions fall on compaction rewrites
    assert all(v[2] == v[3] for v in stats.values())
