"""The sweeps a report runs, through the replay package (``workbench.replay``): the one place the report
asks for replays, so the grid it sweeps and the policies it records in its provenance cannot drift."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from workbench.govern import Policy
from workbench.replay import ReplayResult, replay
from workbench.replay.columns import RESULT_FIELDS
from workbench.trace.schema import Run


def policy_for(
    rules: str, grant: int, context_length: int | None = None, overrides: dict[str, Any] | None = None
) -> Policy:
    """The policy a report replays: a rule set at a grant and context length, with the report's ablations."""
    return Policy.named(rules, grant=grant, context_length=context_length, **(overrides or {}))


def replay_one(
    run: Run, rules: str, grant: int, context_length: int | None, overrides: dict[str, Any] | None = None
) -> ReplayResult:
    """One leaf under one policy (for timelines)."""
    return replay(run, policy_for(rules, grant, context_length, overrides))


CONTEXT_FIELDS = ("context_length", "calibration", "reserve", "safety", "estimator")
"""The policy fields only the context-window manager reads (the governor never does)."""

ContextKey = tuple[
    Any, ...
]  # a policy's CONTEXT_FIELDS: policies with one key give one context replay of a run


def context_key(policy: Any) -> ContextKey:
    return tuple(getattr(policy, k) for k in CONTEXT_FIELDS)


def policy_sweep(
    leaves: Sequence[Run],
    policies: Sequence[Policy],
    progress: bool = False,
    *,
    replayed: Sequence[Mapping[ContextKey, Any]] | None = None,
) -> pd.DataFrame:
    """One row per (leaf, policy): ``ReplayResult.row()`` plus the context columns (``CONTEXT_FIELDS``) and ``events``
    (the context replay's prune and truncation events), for any policies. The governor never reads the context
    fields, so a leaf whose context replay never truncates is swept once without a manager and its row takes the first
    prune as the divergence (docs/scale.md).
    ``replayed``: per leaf, context replays made already (``ContextReplay.outline`` is enough), by ``context_key``;
    a key it lacks is replayed here."""
    if replayed is not None and len(replayed) != len(leaves):
        raise ValueError(f"{len(replayed)} leaves' context replays given for {len(leaves)} leaves")
    from workbench.context.replay import replay_context
    from workbench.replay.facts import run_facts as replay_facts
    from workbench.scale.sweep import sweep as grid_sweep

    # Every leaf under every non-context policy, through the sweep and its fast path: the rows of the policies
    # without a manager, and the base of those whose context replay never truncates.
    bases: dict[Policy, int] = {}
    base_of = [bases.setdefault(_without_manager(policy), len(bases)) for policy in policies]
    plain: dict[str, np.ndarray] = {}
    if leaves and bases:
        frame = grid_sweep(list(leaves), list(bases), segments=False, workers=1, progress=False)
        cells = frame[list(RESULT_FIELDS)].astype(object)
        plain = {c: v.to_numpy() for c, v in cells.where(cells.notna(), None).items()}
    # Built column by column (every row has the same keys), not as a dict per row: at 100 copies of the shared
    # traces the rows' dicts held about 1 GB at the report's end (docs/scale.md, "The twelfth round").
    columns: dict[str, list[Any]] = {}
    for i, run in enumerate(tqdm(leaves, disable=not progress, desc="replaying", unit="run")):
        facts = None
        # The context replay reads only the context fields of a policy, not its grant: one per setting.
        memo: dict[ContextKey, Any] = {} if replayed is None else dict(replayed[i])
        said: dict[int, list[dict[str, Any]]] = {}  # a context replay's events, one list for every grant

        def context_once(r: Run, p: Policy, memo: dict[ContextKey, Any] = memo) -> Any:
            key = context_key(p)
            if key not in memo:
                memo[key] = replay_context(r, p)
            return memo[key]

        for policy, base in zip(policies, base_of, strict=True):
            ctx = context_once(run, policy) if policy.context_length is not None else None
            if ctx is None or ctx.truncated_at is None:
                row = {c: v[i * len(bases) + base] for c, v in plain.items()}
                if ctx is not None:
                    row["policy_label"] = policy.for_run(run).label
                    row["diverges_at"] = first_divergence(row["diverges_at"], row["stop_turn"], ctx)
                events = said.get(id(ctx))
                if events is None:
                    events = said[id(ctx)] = _context_events(ctx)
            else:
                facts = facts or replay_facts(run)
                res = replay(run, policy, facts=facts, context_replayer=context_once)
                row, events = res.row(), _events(res)
            for key in CONTEXT_FIELDS:
                row[key] = getattr(policy, key)
            row["events"] = events
            for key, value in row.items():
                columns.setdefault(key, []).append(value)
    return pd.DataFrame(columns)


def _without_manager(policy: Policy) -> Policy:
    return policy if policy.context_length is None else policy.replace(context_length=None)


def first_divergence(div: int | None, stop_turn: int, ctx: Any) -> int | None:
    """The engine's rule: the context manager's first prune is the divergence where it comes at or before the
    stop and before any other divergence."""
    fp = getattr(ctx, "first_prune_at", None)
    if fp is not None and fp <= stop_turn and (div is None or fp < div):
        return fp
    return div


def _events(res: ReplayResult) -> list[dict[str, Any]]:
    return _context_events(getattr(res, "context", None))


def _context_events(ctx: Any) -> list[dict[str, Any]]:
    return [{"kind": e.kind, "turn": e.turn} for e in getattr(ctx, "events", None) or []]


def grant_sweep(
    leaves: Sequence[Run],
    rules: Sequence[str],
    grants: Sequence[int],
    *,
    progress: bool = False,
    workers: int | None = None,
    overrides: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Every leaf under every (rule set, grant), no context manager: the band's evidence. Runs through
    ``workbench.replay.sweep`` and its vectorised fast path; one process by default
    (measured faster than a pool at this size: the fast path takes well under a second)."""
    from workbench.scale.sweep import sweep

    policies = [policy_for(r, g, None, overrides) for r in rules for g in grants]
    frame = sweep(list(leaves), policies, segments=False, progress=progress, workers=workers or 1)
    frame["context_length"] = None
    frame["events"] = [()] * len(frame)  # no events: one empty tuple for all (36 MB of lists at 100 copies)
    return frame


def context_sweep(
    leaves: Sequence[Run],
    rules: str,
    grants: Sequence[int],
    context_lengths: Sequence[int | None],
    *,
    progress: bool = False,
    overrides: dict[str, Any] | None = None,
    replayed: Sequence[Mapping[ContextKey, Any]] | None = None,
) -> pd.DataFrame:
    """Every leaf under every (grant, context length) of one rule set: the heat map's evidence. Replayed one
    by one (not through the sweep) so each row keeps its context replay's prune events.
    ``replayed``: per leaf, its context replays made already (``policy_sweep``)."""
    policies = [policy_for(rules, g, c, overrides) for g in grants for c in context_lengths]
    return policy_sweep(leaves, policies, progress, replayed=replayed)


def policy_dicts(
    rules: Sequence[str],
    grants: Sequence[int],
    context_lengths: Sequence[int | None],
    overrides: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The policy family swept, for the provenance: each rule set's full parameters (with the ablations) and the
    grid."""
    out = []
    for r in rules:
        base = Policy.named(r, **(overrides or {})).to_dict()
        out.append(
            {
                "rules": r,
                "grants": f"{grants[0]:,} to {grants[-1]:,} ({len(grants)} points)",
                "context_lengths": ", ".join("none" if c is None else f"{c:,}" for c in context_lengths),
                "parameters": {
                    k: v for k, v in base.items() if k not in {"rules", "grant", "context_length"}
                },
            }
        )
    return out
