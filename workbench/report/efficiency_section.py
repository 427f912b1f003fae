"""The report's efficiency section (issue 22): SWE-Effi's effectiveness under a token and a cost budget (EuTB,
EuCB; ``workbench.analysis.efficiency``, Fan et al. 2025, arXiv:2509.09853) per group, recorded and at the
report's section grant, and the expensive failures: the unresolved runs that burn the most, with what that grant
saves on each. The same figures ``workbench frontier --efficiency`` prints."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from workbench.analysis.efficiency import RECORDED, TOKEN_CAP, USD_CAP, efficiency, expensive_failures
from workbench.analysis.frontier import Frontier
from workbench.format import usd


@dataclass(frozen=True)
class EfficiencySection:
    """EuTB/EuCB per group (recorded and at ``grant``) and the headline group's expensive failures."""

    grant: int
    grant_why: str
    group: str
    scores: pd.DataFrame
    """Per group: runs, resolved, resolve rate, EuTB and EuCB, recorded and at ``grant``, in words."""
    failures: pd.DataFrame
    """The ``group``'s unresolved runs by recorded spend, with what ``grant`` saves on each, in words."""
    words: str


def _pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"


def efficiency_section(
    fr: Frontier, grant: int, grant_why: str, group: str, rules: str, top: int = 10
) -> EfficiencySection:
    """The section over ``fr`` (rules ``rules``, no context manager) at ``grant`` (the report's section grant:
    ``grant_why`` says which and why), the failures of ``group`` (the headline group)."""
    eff = efficiency(fr)
    eff = eff[(eff["policy"] == RECORDED) | ((eff["rules"] == rules) & (eff["grant"] == grant))]
    eff = eff[~eff["policy"].astype(str).str.contains(" ctx=")]
    scores = pd.DataFrame(
        {
            "group": eff["group"],
            "replayed": ["as recorded" if p == RECORDED else f"at grant {grant:,}" for p in eff["policy"]],
            "runs": eff["runs"].astype(int),
            "resolved": eff["resolved"].astype(int),
            "resolve rate": eff["resolve_rate"].map(_pct),
            "EuTB": eff["eutb"].map(_pct),
            "EuCB": eff["eucb"].map(_pct),
            "runs priced": eff["usd_runs"].astype(int),
        }
    ).reset_index(drop=True)
    fails = expensive_failures(fr, grant, group, rules, top=top)
    failures = pd.DataFrame(
        {
            "run": fails["run_id"],
            "recorded USD": fails["recorded_usd"].map(usd),
            "cost-meter tokens": fails["recorded_tokens"].astype(int),
            "recorded ending": fails["recorded_stop"].fillna("—").astype(str),
            f"USD saved at {grant:,}": fails["saved_usd"].map(usd),
            f"tokens saved at {grant:,}": fails["saved_tokens"].astype(int),
            "cut by": fails["cut_by"].map(lambda c: c if isinstance(c, str) and c else "not cut"),
        }
    )
    burnt = float(fails["recorded_usd"].sum(min_count=1)) if len(fails) else math.nan
    saved = float(fails["saved_usd"].sum(min_count=1)) if len(fails) else math.nan
    words = (
        "SWE-Effi (Fan et al. 2025, arXiv:2509.09853) scores a system by the area under its resolve rate against a "
        f"per-run budget, up to a cap, normalised to the cap: EuTB for tokens (prompt + completion, up to "
        f"{TOKEN_CAP:,} per run) and EuCB for dollars (up to {usd(USD_CAP)} per run), 0% to 100%, never above the "
        "resolve rate. Under a grant, a run the grant cuts counts as not resolved and its resource is what it spent "
        f"up to the cut. The rows read {grant_why}."
    )
    if len(fails):
        words += (
            f" The expensive failures: the {len(fails)} costliest runs that did not succeed (group {group}), "
            f"{usd(burnt)} recorded; grant {grant:,} saves {usd(saved)} of it."
        )
    return EfficiencySection(grant, grant_why, group, scores, failures, words)
