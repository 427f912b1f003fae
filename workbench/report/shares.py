"""The report's work on its workers, a share of the corpus's runs each: the share's leaves read where it runs,
billed, and their context replays kept in outline for the heat map (docs/scale.md, "The report")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import pandas as pd

from workbench.govern import Policy
from workbench.report.bill_section import bill_rows, billable
from workbench.report.sweeps import ContextKey, context_key
from workbench.trace.distinct import distinct
from workbench.trace.schema import Run

SHARES_FROM = 32
"""Runs from which the report's ``workers`` local processes take them in shares, four contiguous shares each."""


@dataclass(frozen=True)
class Share:
    """A share's leaves' ids, their bill rows (``None``: none billable) and per leaf its context replays
    (``ContextReplay.outline``) under each heat-map setting, by ``context_key``."""

    run_ids: tuple[str, ...]
    bills: pd.DataFrame | None
    replayed: tuple[dict[ContextKey, Any], ...]

    @staticmethod
    def replayed_for(done: Sequence[Share], leaves: Sequence[Run]) -> list[dict[ContextKey, Any]] | None:
        """Per leaf its context replays, when the shares ``done`` read these very leaves (else ``None``)."""
        ids = [r for s in done for r in s.run_ids]
        return [r for s in done for r in s.replayed] if ids == [r.run_id for r in leaves] else None


def shares(
    runs: int,
    leaves_of: Callable[[range], Sequence[Run]],
    context_lengths: Sequence[int | None],
    masks: Sequence[int | None],
    heat: Sequence[Policy],
    workers: int,
) -> list[Callable[[], Share]]:
    """The work on the leaves of ``runs`` runs, one function per share of them (four per worker from
    ``SHARES_FROM`` runs, else one), each reading its share's leaves (``leaves_of(rows)``) where it runs: their
    bills under ``context_lengths`` x ``masks``, and their context replays under each of ``heat``'s settings."""
    step = -(-runs // (4 * workers)) if workers > 1 and runs >= SHARES_FROM else runs
    work = partial(_share, leaves_of, lengths=context_lengths, masks=masks, heat=heat)
    return [partial(work, range(i, min(i + step, runs))) for i in range(0, runs, max(step, 1))]


def _share(leaves_of: Callable[[range], Sequence[Run]], rows: range, **kw: Any) -> Share:
    from workbench.context.replay import replay_context

    leaves = list(leaves_of(rows))
    keys = {context_key(p): p for p in kw["heat"]}
    kept: dict[int, dict[ContextKey, Any]] = {}

    def keep(run: Run, bills: Any) -> None:  # a billed run's replays: the ones its bills made
        kept[id(run)] = {k: bills.context(p).outline() for k, p in keys.items()}

    runs = billable(leaves)
    frame = bill_rows(runs, kw["lengths"], kw["masks"], on_run=keep if keys else None) if runs else None
    copies = distinct(leaves)  # a copy's replays are its original's (the run its bills were made for)
    once = [
        kept.get(id(r)) or {k: replay_context(r, p).outline() for k, p in keys.items()}
        for r in copies.uniques
    ]
    return Share(tuple(r.run_id for r in leaves), frame, tuple(copies.expand(once)))
