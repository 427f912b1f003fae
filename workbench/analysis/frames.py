"""Per-run recorded facts, and joining them onto sweep frames.

``run_facts`` reads what each recording itself did — its bill by the cost meter (``workbench.govern.cost``,
the one implementation of the seed's ``spent()``), raw tokens, turns, how it ended — so analyses can ask
"did it finish on its own?" and "what did it cost?" of the recording, separately from any replay.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

import pandas as pd

from workbench.govern.cost import Totals
from workbench.govern.verdict import StopReason
from workbench.trace.distinct import Fingerprints, distinct
from workbench.trace.schema import Run

FACT_COLUMNS = (
    "run_id",
    "source",
    "generator",
    "model",
    "recorded_turns",
    "recorded_stop",
    "recorded_finished",
    "recorded_cut",
    "recorded_spent",
    "recorded_raw",
    "median_prompt",
    "max_prompt",
    "context_length",
    "missing_usage",
    "missing_cached",
)


def _generator(run: Run) -> str | None:
    gen = run.metadata.get("generator")
    if isinstance(gen, dict):
        return gen.get("name")
    return gen if isinstance(gen, str) else None


def run_facts(runs: Iterable[Run], prints: Fingerprints | None = None) -> pd.DataFrame:
    """One row per run (pass leaves, not sessions, to match sweep rows): what the recording did. ``prints``: the
    runs' fingerprints (``workbench.trace.distinct``) — a copy's row is its original's under its own ``run_id``,
    read once."""
    runs = list(runs)
    if prints is not None:
        copies = distinct(runs, prints)
        if copies.merged:
            one = _fact_rows(copies.uniques)
            rows = [
                {**one[k], "run_id": run.run_id} for run, k in zip(runs, copies.index.tolist(), strict=True)
            ]
            return pd.DataFrame(rows, columns=list(FACT_COLUMNS))
    return pd.DataFrame(_fact_rows(runs), columns=list(FACT_COLUMNS))


def _fact_rows(runs: Iterable[Run]) -> list[dict[str, object]]:
    rows = []
    for run in runs:
        totals = Totals()
        for t in run.turns:
            totals = totals.add(t.usage.prompt, t.usage.cached, t.usage.completion)
        prompts = [t.usage.prompt for t in run.turns if t.usage.prompt is not None]
        known = totals.missing_usage < len(run.turns)
        rows.append(
            {
                "run_id": run.run_id,
                "source": run.source,
                "generator": _generator(run),
                "model": run.model,
                "recorded_turns": len(run.turns),
                "recorded_stop": run.outcome.stop_reason,
                "recorded_finished": run.outcome.stop_reason == StopReason.DONE,
                "recorded_cut": run.outcome.cut_by_limit,
                "recorded_spent": totals.spent() if known else None,
                "recorded_raw": totals.prompt + totals.completion if known else None,
                "median_prompt": statistics.median(prompts) if prompts else None,
                "max_prompt": max(prompts) if prompts else None,
                "context_length": run.context_length,
                "missing_usage": totals.missing_usage,
                "missing_cached": totals.missing_cached,
            }
        )
    return rows


def annotate(sweep: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """The sweep rows with each run's recorded facts joined on ``run_id`` (sweep columns win on clashes)."""
    extra = [c for c in facts.columns if c == "run_id" or c not in sweep.columns]
    out = sweep.merge(facts[extra], on="run_id", how="left", validate="many_to_one")
    missing = out["recorded_spent"].isna() & out["run_id"].isin(facts["run_id"]).eq(False)
    if missing.any():
        raise ValueError(f"sweep rows for runs with no facts: {sorted(set(out[missing]['run_id']))[:5]}")
    return out
