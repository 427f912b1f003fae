"""The report's bill section, rendered through its own template block."""

from __future__ import annotations

from tests.bill._runs import tool_loop
from workbench.replay.bill import counterfactual_bill
from workbench.report.bill_section import bill_context, bill_section

SIZES = [4000, 300, 6000, 200, 5000, 800, 7000, 100, 3000, 2500, 900, 6000]


def test_section_totals_are_the_bills() -> None:
    run = tool_loop(SIZES)
    section = bill_section([run], [16_000])
    assert section is not None and section.runs == 1
    t = section.totals.set_index(["context_length", "mask"])
    assert t.loc[("none", "none"), "cf_spent"] == counterfactual_bill(run).counterfactual()["spent"]
    assert (
        t.loc[("none", 10), "cf_prompt_tokens"]
        == counterfactual_bill(run, mask_observations=10).counterfactual()["prompt_tokens"]
    )
    ctx = bill_context(section)
    assert "call by call" in ctx["words"] and "<table" in ctx["table"] and "| context" in ctx["md"]


def test_no_usage_no_section() -> None:
    run = tool_loop([100, 200]).model_copy(deep=True)
    for t in run.turns:
        t.usage.prompt = None
    assert bill_section([run], [None]) is None
    assert bill_context(None) is None
