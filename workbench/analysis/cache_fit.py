"""The prompt-cache model run over a recorded run's own requests, call by call (docs/cache-model.md): each run's
requests are rebuilt (anchored token counts, the prefix layout) and fed to the cache model, and the predicted
cached tokens of every call are set beside the recorded ones (``fit_run``; the per-route fit, out of sample, is
workbench.analysis.route_fit). A run's first call is flagged (``first``): what the provider held before it (the
agent's earlier sessions) is not in the recording; a compaction boundary — the first call after the source
rewrote its transcript — too (``boundary``). ``stable_prefixes`` learns, leave-one-out, the prefix that survives
a source's rewrite.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from workbench.context.cache_model import CacheRules, CacheState, rules_for, step
from workbench.context.cache_requests import cache_request, eras, layout_for, reply_of, warm_state
from workbench.context.request_tokens import anchor
from workbench.trace.schema import Run


@dataclass(frozen=True)
class FitRow:
    run_id: str
    source: str
    family: str
    turn: int
    first: bool
    boundary: bool
    prompt: int
    recorded_cached: int | None
    """``None``: the call's response did not report its cache read (unknown, never a 0)."""
    predicted_cached: int
    recorded_write: int | None
    predicted_write: int


def fit_run(run: Run, rules: CacheRules | None = None, stable: int | None = None) -> list[FitRow]:
    """Predicted against recorded cached tokens for every call of ``run`` with recorded usage."""
    rules = rules or rules_for(run)
    counts = anchor(run)
    layout = layout_for(run, counts.prefix, rules, stable)
    state = CacheState()
    warm_state(run, layout, state)
    rows: list[FitRow] = []
    era_of = eras(run)
    for k, (t, ids) in enumerate(zip(run.turns, counts.ids, strict=True)):
        if ids is None or t.usage.prompt is None:
            continue
        blocks = [(("m", i), counts.of(i, run.messages[i])) for i in ids]
        req = cache_request(run, t, layout, blocks, rules, era=era_of[k], reply=reply_of(run, counts.ids, k))
        split = step(rules, req, state)
        rows.append(
            FitRow(
                run_id=run.run_id,
                source=run.source,
                family=rules.family,
                turn=t.index,
                first=not rows,
                boundary=k > 0 and era_of[k] != era_of[k - 1],
                prompt=t.usage.prompt,
                recorded_cached=t.usage.cached,
                predicted_cached=split.cached,
                recorded_write=t.usage.cache_write,
                predicted_write=split.cache_write,
            )
        )
    return rows


def stable_prefixes(runs: Iterable[Run]) -> dict[str, int]:
    """Per run, the prefix that survives the source's rewrite, learned from the *other* runs of the same source
    and model (leave-one-out): the median read at their compaction boundaries."""
    reads: list[tuple[str, str, int]] = []
    runs = list(runs)
    for r in runs:
        era_of = eras(r)
        for k in range(1, len(r.turns)):
            if era_of[k] != era_of[k - 1] and r.turns[k].usage.cached:
                reads.append((r.run_id, f"{r.source}:{r.turns[k].model or r.model}", r.turns[k].usage.cached))
    out = {}
    for r in runs:
        models = {f"{r.source}:{t.model or r.model}" for t in r.turns}
        others = [v for rid, key, v in reads if key in models and rid != r.run_id]
        if others:
            out[r.run_id] = int(statistics.median(others))
    return out
