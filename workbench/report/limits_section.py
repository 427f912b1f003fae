"""The report's answer in each agent's own unit: for every source whose agent has a dollar limit of its own
(``workbench.govern.agent_limits.SOURCE_RULES``), the recommended cost limit on its runs
(``workbench.analysis.limit_frontier``), shown beside the seed-grant answer, and the meter translation table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.analysis.limit_frontier import (
    LimitFrontier,
    LimitPick,
    LimitRows,
    default_cost_limits,
    limit_frontier,
    recommend_limits,
)
from workbench.analysis.targets import AnalystInvariants
from workbench.govern.agent_limits import SOURCE_RULES, rules_for
from workbench.govern.dollars import call_dollars
from workbench.trace.schema import Run


@dataclass(frozen=True)
class OwnLimitAnswer:
    source: str
    rules: str
    frontier: LimitFrontier
    pick: LimitPick
    translation: pd.DataFrame | None = None

    @property
    def text(self) -> str:
        p = self.pick
        head = f"In {self.rules}'s own limits ({_meter(self.frontier)}): "
        if not p.found or p.row is None:
            return head + p.why + "."
        r = p.row
        return head + (
            f"{p.why} (95% Wilson interval {r['resolved_kept_low']:.1%}-{r['resolved_kept_high']:.1%}; "
            f"{r['resolved_lost']} lost, {r['lost_by_cost_limit']} by the cost limit)."
        )


def _meter(fr: LimitFrontier) -> str:
    return (
        "dollars as each call recorded them" if fr.price_source == "recorded" else "dollars by genai-prices"
    )


def dollar_limited() -> dict[str, str]:
    """The sources whose agent has a dollar limit of its own, and its rule set."""
    agents = {source: (rules, rules_for(rules)) for source, rules in SOURCE_RULES.items()}
    return {
        source: rules
        for source, (rules, agent) in agents.items()
        if agent is not None and any(lim.field == "cost_limit_usd" for lim in agent.limits)
    }


def own_limit_answers(
    leaves: list[Run],
    analyst: AnalystInvariants,
    grant_frontier: Any | None = None,
    known: Mapping[str, LimitRows] | None = None,
) -> dict[str, OwnLimitAnswer]:
    """Per source with a dollar-limited agent, the recommended cost limit (default grid: $0.25 steps to the
    costliest run, at least $3); with ``grant_frontier`` (by source), the meter translation table too.
    ``known``: per run id, its replays made already (``cost_replays``: the report's workers make them)."""
    out: dict[str, OwnLimitAnswer] = {}
    for source, rules in dollar_limited().items():
        agent = rules_for(rules)
        assert agent is not None
        mine = [r for r in leaves if r.source == source]
        if not mine:
            continue
        priced = [call_dollars(r, agent.price_source).usd for r in mine]
        top = max((sum(u) for u in priced if None not in u), default=0.0)
        try:
            fr = limit_frontier(
                mine, rules=rules, cost_limits=default_cost_limits(top), by="source", known=known
            )
        except ValueError:
            continue  # no run of this source can be replayed in dollars
        (pick,) = [p for p in recommend_limits(fr, analyst) if p.group == source] or [None]
        if pick is None:
            continue
        table = None
        if grant_frontier is not None and source in grant_frontier.groups:
            from workbench.analysis.meter_translation import translate

            table = translate(grant_frontier, fr, source)
        out[source] = OwnLimitAnswer(source, rules, fr, pick, table)
    return out
