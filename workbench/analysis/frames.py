"""Per-run recorded facts, and joining them onto sweep frames.

``run_facts`` reads what each recording itself did — its bill by the cost meter (``workbench.govern.cost``,
the one implementation of the seed's ``spent()``), raw tokens, turns, how it ended — so analyses can ask
"did it finish on its own?" and "what did it cost?" of the recording, separately from any replay.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from workbench.govern.cost import Totals
from workbench.govern.verdict import StopReason
from workbench.trace.columns import Column, names, read_row
from workbench.trace.schema import Run


@dataclass(frozen=True)
class RecordedRun:
    """One run with its cost meter's totals over the recorded calls."""

    run: Run
    totals: Totals
    prompts: list[int]

    @classmethod
    def of(cls, run: Run) -> RecordedRun:
        totals = Totals()
        for t in run.turns:
            totals = totals.add(t.usage.prompt, t.usage.cached, t.usage.completion)
        return cls(run, totals, [t.usage.prompt for t in run.turns if t.usage.prompt is not None])

    @property
    def known(self) -> bool:
        return self.totals.missing_usage < len(self.run.turns)


FACTS: tuple[Column[RecordedRun], ...] = (
    Column("run_id", None, "run.run_id", "the run (a leaf: sweep rows join on it)"),
    Column("source", None, "run.source", "the format it was read from"),
    Column("generator", None, lambda r: _generator(r.run), "a synthetic run's generator"),
    Column("model", None, "run.model", "the run's model as recorded"),
    Column("recorded_turns", None, lambda r: len(r.run.turns), "model calls recorded"),
    Column("recorded_stop", None, "run.outcome.stop_reason", "how the recording ended"),
    Column(
        "recorded_finished", None, lambda r: r.run.outcome.stop_reason == StopReason.DONE, "it ended `done`"
    ),
    Column("recorded_cut", None, "run.outcome.cut_by_limit", "a budget or cap cut it"),
    Column("recorded_spent", None, lambda r: r.totals.spent() if r.known else None, "its cost meter"),
    Column(
        "recorded_raw",
        None,
        lambda r: r.totals.prompt + r.totals.completion if r.known else None,
        "prompt + completion",
    ),
    Column(
        "median_prompt", None, lambda r: statistics.median(r.prompts) if r.prompts else None, "median prompt"
    ),
    Column("max_prompt", None, lambda r: max(r.prompts) if r.prompts else None, "largest prompt"),
    Column("context_length", None, "run.context_length", "the model's context window, where known"),
    Column("missing_usage", None, "totals.missing_usage", "calls that reported no usage"),
    Column("missing_cached", None, "totals.missing_cached", "calls that reported no cache reads"),
)
"""``run_facts``' columns (dtypes as pandas infers them: a column with an unknown holds NaN or None)."""
FACT_COLUMNS = names(FACTS)


def _generator(run: Run) -> str | None:
    gen = run.metadata.get("generator")
    if isinstance(gen, dict):
        return gen.get("name")
    return gen if isinstance(gen, str) else None


def run_facts(runs: Iterable[Run]) -> pd.DataFrame:
    """One row per run (pass leaves, not sessions, to match sweep rows): what the recording did."""
    return pd.DataFrame([read_row(FACTS, RecordedRun.of(run)) for run in runs], columns=list(FACT_COLUMNS))


def annotate(sweep: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """The sweep rows with each run's recorded facts joined on ``run_id`` (sweep columns win on clashes)."""
    extra = [c for c in facts.columns if c == "run_id" or c not in sweep.columns]
    out = sweep.merge(facts[extra], on="run_id", how="left", validate="many_to_one")
    missing = out["recorded_spent"].isna() & out["run_id"].isin(facts["run_id"]).eq(False)
    if missing.any():
        raise ValueError(f"sweep rows for runs with no facts: {sorted(set(out[missing]['run_id']))[:5]}")
    return out
