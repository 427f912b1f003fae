"""The report's work on its workers, a share of the corpus's runs each: the share's leaves read where it runs,
billed, and their context replays kept in outline for the heat map (docs/scale.md, "The report")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import pandas as pd

from workbench.analysis.limit_frontier import LimitRows, cost_replays
from workbench.govern import Policy
from workbench.report.bill_section import bill_rows, billable
from workbench.report.sweeps import ContextKey, context_key
from workbench.trace.schema import Run

SHARES_FROM = 32
"""Runs from which ``workers`` processes take them in contiguous shares (four each; more past ``SHARE_RUNS``)."""
SHARE_RUNS = 256
"""The most runs one share takes: a worker holds one share's leaves at a time (about 70 MB), so this bounds its
memory (over 100 copies of the shared traces a worker held 0.8 GB with shares of a quarter of its half)."""


@dataclass(frozen=True)
class Share:
    """A share's leaves' ids, their bill rows (``None``: none billable), per leaf its context replays
    (``ContextReplay.outline``) under each heat-map setting, by ``context_key``, and, by run id, the replays of
    its leaves of a dollar-limited agent under that agent's own cost limits (``cost_replays``)."""

    run_ids: tuple[str, ...]
    bills: pd.DataFrame | None
    replayed: tuple[dict[ContextKey, Any], ...]
    limits: dict[str, LimitRows]

    @staticmethod
    def joined(
        done: Sequence[Share], leaves: Sequence[Run]
    ) -> tuple[list[dict[ContextKey, Any]], dict[str, LimitRows]] | None:
        """The shares ``done``'s context and cost-limit replays, when they read these very leaves (else ``None``)."""
        if [r for s in done for r in s.run_ids] != [r.run_id for r in leaves]:
            return None
        return [r for s in done for r in s.replayed], {k: v for s in done for k, v in s.limits.items()}


def shares(
    runs: int,
    leaves_of: Callable[[range], Sequence[Run]],
    context_lengths: Sequence[int | None],
    masks: Sequence[int | None],
    heat: Sequence[Policy],
    own: Mapping[str, str],
    workers: int,
) -> list[Callable[[], Share]]:
    """The work on the leaves of ``runs`` runs, one function per share of them (four per worker from
    ``SHARES_FROM`` runs, at most ``SHARE_RUNS`` runs each; else one), each reading its share's leaves
    (``leaves_of(rows)``) where it runs: their bills under ``context_lengths`` x ``masks``, their context replays
    under each of ``heat``'s settings, and the replays of the leaves of ``own``'s sources under their agent's
    (``own[source]``) cost limits."""
    step = min(-(-runs // (4 * workers)), SHARE_RUNS) if workers > 1 and runs >= SHARES_FROM else runs
    work = partial(_share, leaves_of, lengths=context_lengths, masks=masks, heat=heat, own=own)
    return [partial(work, range(i, min(i + step, runs))) for i in range(0, runs, max(step, 1))]


def _share(
    leaves_of: Callable[[range], Sequence[Run]],
    rows: range,
    *,
    lengths: Sequence[int | None],
    masks: Sequence[int | None],
    heat: Sequence[Policy],
    own: Mapping[str, str],
) -> Share:
    from workbench.context.replay import replay_context

    leaves = list(leaves_of(rows))
    keys = {context_key(p): p for p in heat}
    kept: dict[int, dict[ContextKey, Any]] = {}

    def keep(run: Run, bills: Any) -> None:  # a billed run's replays: the ones its bills made
        kept[id(run)] = {k: bills.context(p).outline() for k, p in keys.items()}

    runs = billable(leaves)
    frame = bill_rows(runs, lengths, masks, on_run=keep if keys else None) if runs else None
    once = [kept.get(id(r)) or {k: replay_context(r, p).outline() for k, p in keys.items()} for r in leaves]
    limits = {r.run_id: cost_replays(r, own[r.source]) for r in leaves if r.source in own}
    held = {rid: got for rid, got in limits.items() if got is not None}
    return Share(tuple(r.run_id for r in leaves), frame, tuple(once), held)
