"""What would give an answer when no swept grant satisfies the invariants: the same recommendation
(``workbench.analysis.recommendation.recommend``) over the grid widened past its top.

A resolved run is kept at any grant above its recorded cost-meter total (its landing never starts), so past the
largest such total among a group's resolved runs the grant stops mattering to them: the widened grid runs from the
swept top to there, in at most ``points`` round steps. The probe replays only the group's own runs, at the new grants
only; the answer names the widened ``--grants`` that would sweep it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.analysis.frontier import ALL_GROUP, Frontier, RunLedger, frontier, missing
from workbench.analysis.recommendation import Recommendation, recommend
from workbench.analysis.targets import AnalystInvariants
from workbench.format import usd
from workbench.govern.policy import AGENT_RULES
from workbench.trace.schema import Run


@dataclass(frozen=True)
class Widened:
    """The recommendation over the widened grid, for one group whose swept grid had none."""

    group: str
    swept_top: int
    probed: tuple[int, ...]
    """The grants past the swept top that were replayed."""
    pick: Recommendation
    """``recommend`` over the swept and the probed grants together."""
    grants_flag: str
    """The ``--grants START:STOP:STEP`` that sweeps the widened grid."""

    @property
    def words(self) -> str:
        """``660,000 keeps 95.2% (89.3%–97.9%) and saves $1.61`` (then sweep ``grants_flag``), or that even the
        widened grid has none, with its best grant."""
        p = self.pick
        if p.found and p.row is not None:
            r = p.row
            money = "" if missing(r["spend_saved_usd"]) else f" and saves {usd(r['spend_saved_usd'])}"
            return (
                f"{p.grant:,} keeps {r['resolved_kept_share']:.1%} ({r['resolved_kept_low']:.1%}–"
                f"{r['resolved_kept_high']:.1%}){money}"
            )
        top = self.probed[-1] if self.probed else self.swept_top
        best = f"; the best is {p.best_grant:,}: it {p.best_keeps}" if p.best_grant else ""
        return (
            f"no grant up to {top:,} (past every {_word(p)} run's recorded spend) satisfies them either{best}: "
            "the invariants, not the grid, rule it out"
        )


def _word(p: Recommendation) -> str:
    return "finished" if p.row is not None and p.row.get("basis") == "finished" else "successful"


def _members(fr: Frontier, group: str, leaves: Sequence[Run]) -> list[Run]:
    if group == ALL_GROUP:
        return list(leaves)
    ids = set(fr.runs.loc[fr.runs[fr.by].astype(str) == group, "run_id"])
    return [r for r in leaves if r.run_id in ids]


def probe_grants(top: int, step: int, ceiling: int, points: int = 12) -> tuple[int, ...]:
    """Round grants from ``top + step`` up to ``ceiling`` (inclusive, rounded up to the step), at most ``points``
    of them: the step grows (in multiples of ``step``) when the span needs it."""
    if ceiling <= top:
        return ()
    span = ceiling - top
    k = max(1, math.ceil(span / step / points))
    stride = k * step
    last = top + math.ceil(span / stride) * stride
    return tuple(range(top + stride, last + 1, stride))


def widen(
    fr: Frontier,
    rec: Recommendation,
    leaves: Sequence[Run],
    invariants: AnalystInvariants,
    *,
    overrides: dict[str, Any] | None = None,
    points: int = 12,
    book: RunLedger | None = None,
) -> Widened | None:
    """The recommendation for ``rec``'s group over the grid widened past its top, when ``rec`` found none.
    ``None`` when widening cannot help or does not apply: a grant was found, no successful run, a context
    manager's curve, or rules that never read the grant (``AGENT_RULES``). ``book``: the leaves' ledger already
    read (the report's), so the members are not priced again."""
    if rec.found or rec.rules in AGENT_RULES or rec.context_length is not None or len(rec.grants) < 2:
        return None
    curve = fr.curve(rec.group, rec.rules)
    if int(curve["resolved"].max()) == 0:
        return None
    members = _members(fr, rec.group, leaves)
    ids = {r.run_id for r in members}
    theirs = fr.runs[fr.runs["run_id"].isin(ids)]
    spent = theirs.loc[theirs["success"].astype(bool), "recorded_tokens"]
    if spent.empty:
        return None
    grants = sorted(rec.grants)
    step = min(b - a for a, b in itertools.pairwise(grants))
    probed = probe_grants(grants[-1], step, int(spent.max()) + step, points)
    if not probed:
        return None
    wide = frontier(members, rules=(rec.rules,), grants=probed, by=fr.by, confidence=fr.confidence,
                    overrides=overrides, book=book)  # fmt: skip
    extra = wide.curve(rec.group if rec.group in wide.groups else wide.groups[0], rec.rules)
    both = pd.concat([curve, extra.assign(group=rec.group)], ignore_index=True)
    pick = recommend(both, invariants)
    flag = f"--grants {grants[0]}:{probed[-1] if not pick.found else max(pick.grant or 0, probed[0])}:{step}"
    return Widened(rec.group, grants[-1], probed, pick, flag)
