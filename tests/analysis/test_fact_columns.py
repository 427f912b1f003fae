"""run_facts' columns are its spec's (workbench.analysis.frames.FACTS), on runs that report usage and one that does not."""

from __future__ import annotations

from tests.samples.lines import small_run
from workbench.analysis.frames import FACT_COLUMNS, run_facts


def test_run_facts_has_the_specs_columns_and_reads_the_meter() -> None:
    known = small_run()
    unknown = small_run().model_copy(update={"run_id": "r2"})
    unknown.turns = [
        t.model_copy(
            update={"usage": t.usage.model_copy(update={"prompt": None, "completion": None, "cached": None})}
        )
        for t in unknown.turns
    ]
    facts = run_facts([known, unknown]).set_index("run_id")
    assert ("run_id", *facts.columns) == FACT_COLUMNS
    assert facts.loc["r1", "recorded_raw"] == sum(
        (t.usage.prompt or 0) + (t.usage.completion or 0) for t in known.turns
    )
    assert facts.loc["r2", "missing_usage"] == len(unknown.turns)
    assert facts["recorded_spent"].isna().tolist() == [False, True]
