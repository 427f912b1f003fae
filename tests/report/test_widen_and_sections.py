"""What would give an answer when the grid has none (issue 26's headline), and the grant each single-grant section
reads, with its reason (issue 26: every section names the grant it uses and why)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.analysis.widen import probe_grants
from workbench.report.build import section_grant

SHARED = Path(__file__).resolve().parents[3] / "shared" / "traces"


def test_probe_grants_are_round_and_reach_the_ceiling() -> None:
    assert probe_grants(600_000, 10_000, 650_000) == (610_000, 620_000, 630_000, 640_000, 650_000)
    # a span too long for 12 points at the grid's step: the stride grows in multiples of the step
    assert probe_grants(600_000, 10_000, 1_925_000) == tuple(range(720_000, 2_040_001, 120_000))
    assert probe_grants(600_000, 10_000, 600_000) == ()


def test_the_section_grant_and_why() -> None:
    assert section_grant(330_000, None, (100_000, 200_000), "all runs") == (
        330_000,
        "grant 330,000, the recommended grant",
    )
    assert section_grant(None, None, (100_000, 200_000, 300_000), "all runs") == (
        200_000,
        "grant 200,000: no grant was recommended, so the middle of the grants swept (100,000 to 300,000)",
    )


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/traces is absent")
def test_widened_answer_on_the_shared_corpus() -> None:
    from workbench.analysis.frontier import frontier
    from workbench.analysis.recommendation import recommendations
    from workbench.analysis.targets import AnalystInvariants
    from workbench.analysis.widen import widen
    from workbench.report.build import load_leaves
    from workbench.report.efficiency_section import efficiency_section

    _, leaves, _ = load_leaves([SHARED / "mini-swe-agent", SHARED / "claude-code"])
    fr = frontier(leaves, grants=tuple(range(100_000, 300_001, 50_000)))
    inv = AnalystInvariants()
    picks = {p.group: p for p in recommendations(fr, inv)}
    head = picks["all runs"]
    assert not head.found and head.best_grant == 300_000
    wide = widen(fr, head, leaves, inv)
    assert wide is not None and wide.swept_top == 300_000 and wide.probed[0] > 300_000
    # the widened pick is the same engine's answer over the swept and the probed grants together
    assert wide.pick.found and wide.pick.grant in wide.probed
    r = wide.pick.row
    assert r is not None and r["resolved_kept_share"] >= 0.95
    assert wide.words.startswith(f"{wide.pick.grant:,} keeps {r['resolved_kept_share']:.1%} (")
    assert wide.grants_flag == f"--grants 100000:{wide.pick.grant}:50000"
    grant, why = section_grant(None, head, fr.table["grant"].unique().tolist(), "all runs")
    assert grant == 300_000 and why.startswith("grant 300,000: no grant was recommended for all runs")
    eff = efficiency_section(fr, grant, why, "all runs", "current")
    assert list(eff.scores["replayed"].unique()) == ["as recorded", "at grant 300,000"]
    assert len(eff.failures) == 10 and eff.failures["recorded USD"].str.startswith("$").all()
