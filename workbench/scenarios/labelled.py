"""Labelled synthetic runs: a stand-in for a graded benchmark when no real labelled corpus is at hand.

``labelled_runs(n, seed)`` makes ``n`` working leaves (``work_leaf``) of 10 to 90 turns whose bill grows with their
length, and labels each ``resolved`` or ``unresolved`` by a stated rule, not by any grader: the longer a run, the
less likely it resolved (P(resolved) = 0.9 falling by 0.01 a turn past 10, floored at 0.2), the shape real
SWE-bench corpora show (long runs are more often stuck). The label source says so. The model is a priced one
(``gpt-4o`` by default) so the dollar figures have something to price; its calls are dated 2026-01-01.

These runs exist so the cost-vs-success notebook and tests run on a fresh clone; every figure drawn from them is
about this generator, never about an agent.
"""

from __future__ import annotations

import numpy as np

from workbench.scenarios.corpus import work_leaf
from workbench.trace.schema import Run

LABEL_RULE = "synthetic: P(resolved) = max(0.2, 0.9 - 0.01 x (turns - 10)) (workbench.scenarios.labelled)"
TURNS_MIN, TURNS_MAX = 10, 90
SPENT_PER_TURN = 4_500
"""About what a leaf's bill grows by per turn (the honest leaves' ~110k over ~25 turns)."""


def p_resolved(turns: int) -> float:
    return max(0.2, 0.9 - 0.01 * (turns - TURNS_MIN))


def labelled_runs(n: int = 60, seed: int = 0, *, model: str = "gpt-4o") -> list[Run]:
    """``n`` labelled working leaves (source ``synthetic``, generator ``labelled_leaf``)."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    rng = np.random.default_rng(seed)
    runs = []
    for k in range(n):
        turns = int(rng.integers(TURNS_MIN, TURNS_MAX + 1))
        target = int(turns * SPENT_PER_TURN * rng.uniform(0.7, 1.3))
        run = work_leaf(
            rng,
            run_id=f"labelled-leaf-{k:03d}",
            turns=turns,
            median_prompt=int(rng.normal(14_200, 900)),
            target_spent=target,
            generator="labelled_leaf",
            corpus_seed=seed,
        )
        resolved = bool(rng.random() < p_resolved(turns))
        outcome = run.outcome.model_copy(
            update={"label": "resolved" if resolved else "unresolved", "label_source": LABEL_RULE}
        )
        runs.append(run.model_copy(update={"model": model, "outcome": outcome}))
    return runs
