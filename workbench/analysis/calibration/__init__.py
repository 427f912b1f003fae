"""Recalibrating every constant of the seed's loop and of ADR-107 against a corpus with outcomes:
``calibrate(corpus, policy)`` returns a :class:`Calibration`, one row per constant; one module per constant
family, each rule in docs/calibrate.md."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from workbench.analysis.calibration.evidence import MIN_RUNS, Evidence
from workbench.analysis.calibration.model import NOT_ENOUGH, RECOMMENDED, Calibration, ConstantRow
from workbench.analysis.calibration.provenance import ConstantRef, provenance_of
from workbench.govern.policy import Policy

if TYPE_CHECKING:
    import pandas as pd

    from workbench.analysis.frontier import RunLedger

Builder = Callable[[Evidence, Policy], list[ConstantRow]]


def _builders(
    grants: Sequence[int] | None,
    invariants: Any = None,
    sweep: pd.DataFrame | None = None,
    book: RunLedger | None = None,
) -> dict[str, Builder]:
    from workbench.analysis.calibration import (
        emptyreply,
        grant,
        guards,
        landing,
        reserve,
        seed,
        turns,
        wrapup,
    )

    swept = tuple(grants) if grants is not None else grant.GRANTS
    return {
        "grant": lambda e, p: [grant.grant_row(e, p, swept, invariants, sweep, book)],
        "landing": landing.landing_rows,
        "turns": lambda e, p: [turns.backstop_row(e, p), turns.turn_cap_row(e, p)],
        "guards": lambda e, p: [*guards.guard_rows(e, p), guards.recon_row(e, p)],
        "wrapup": lambda e, p: [wrapup.wrapup_row(e, p)],
        "emptyreply": lambda e, p: [emptyreply.empty_reply_row(e, p)],
        "seed": lambda e, p: [seed.seed_row(e, p)],
        "reserve": reserve.reserve_rows,
    }


FAMILIES = ("grant", "landing", "turns", "guards", "wrapup", "emptyreply", "seed", "reserve")


def calibrate(
    corpus: Any,
    policy: Policy | str | None = None,
    *,
    families: Sequence[str] = FAMILIES,
    grants: Sequence[int] | None = None,
    invariants: Any = None,
    sweep: pd.DataFrame | None = None,
    book: RunLedger | None = None,
) -> Calibration:
    """Every constant against ``corpus`` (a Corpus or Runs) under ``policy`` (a Policy, a rule-set name, or
    None for ``current``). ``families`` picks which rows to compute (default: all, in the table's order);
    ``grants`` the grid the leaf grant is swept over (default ``grant.GRANTS``; a report passes its own);
    ``invariants`` the leaf grant's (``AnalystInvariants``, or ``"seed"``; default: keep 95% of resolved runs) —
    the leaf-grant row is the one recommendation ``frontier`` and ``report`` give for them. ``sweep`` and ``book``:
    the corpus's grant sweep (annotated rows) and ledger already read, as a report has them: the leaf-grant row
    reads the rows it needs from them (``grant.swept_at``) rather than sweeping again."""
    if policy is None:
        policy = Policy.named("current")
    elif isinstance(policy, str):
        policy = Policy.named(policy)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown constant families {unknown}; known: {', '.join(FAMILIES)}")
    evidence = Evidence.of(corpus, policy.cache_weight_percent)
    if not evidence.leaves:
        raise ValueError("no replayable runs to calibrate against")
    if grants is not None and len(tuple(grants)) < 2:
        raise ValueError("sweep at least two grants")
    builders = _builders(grants, invariants, sweep, book)
    rows = [row for family in FAMILIES if family in families for row in builders[family](evidence, policy)]
    notes = [evidence.describe()]
    if evidence.skipped:
        notes.append("left out: " + ", ".join(f"{n} {why}" for why, n in evidence.skipped))
    notes.append(f"no recommendation rests on fewer than {MIN_RUNS} runs")
    return Calibration(
        rows=tuple(rows),
        policy_label=policy.label,
        corpus=evidence.describe(),
        counts=evidence.counts,
        notes=tuple(notes),
    )


__all__ = [
    "FAMILIES",
    "MIN_RUNS",
    "NOT_ENOUGH",
    "RECOMMENDED",
    "Calibration",
    "ConstantRef",
    "ConstantRow",
    "Evidence",
    "calibrate",
    "provenance_of",
]
