"""Sweeps: a corpus × a grid of policies → one DataFrame row per (run or segment, policy).

``sweep(runs, {"grant": range(100_000, 300_001, 10_000)})`` — ``runs`` is a Corpus, a list of Runs or one Run;
``grid`` is a dict of Policy parameter -> values (their cartesian product over ``base``) or a list of Policies.
Interactive sessions are split into their segments (``segments=True``). Progress is a tqdm bar over runs. Work runs
in this process (``workers=1``; the default for sweeps under 5,000 rows), on local processes (``workers=N``; the
default otherwise: all cores) or on a Dask cluster
(``client=dask.distributed.Client(...)``), with the same rows in every case. Groups of policies that differ only in
grant, cache weight, landing share or turn cap take the vectorised fast path where it is exact for a run
(``workbench.replay.fast``); ``fast=False`` forces the governor path.

Columns (``COLUMNS``; the ``report`` branch codes against them):

========================= ==================================================================================
run_id, segment           the run (``#sN`` suffix and segment index for a session's segment)
rules, grant, policy_label the policy (plus one column per grid parameter, and ``policy_index``)
stop_reason               done, budget, turn-cap, empty, no-progress, tool-timeouts, stuck, deadline, error,
                          context-truncated, a recorded reason for a run that finished on its own, or
                          end-of-recording (censored)
stop_turn                 0-based index of the last call the policy would have made (-1: none)
verdict                   budget_stop, turn_cap, empty_response, unverified_success, provider_failure,
                          context_truncated; None when
                          censored
meter, meter_reached,     the bound that ended the run (cost, turns, deadline, no-progress, tool-timeouts; ""
meter_allowed             when none) and its two numbers (cost: spent at land and the grant)
spent, raw                cost meter and raw tokens at the stop
landing_started_at        turn whose end ordered a landing (deadline landings: the turn it preceded); landing_kind
wrapup_at, concluded_at   turn after which the wrap-up warning / the conclude directive was injected
diverges_at               first recorded turn whose prompt the policy would have changed
censored                  the recording was cut by a limit before this policy stopped it: a lower bound
cut_turns, cut_tokens,    recorded turns after the stop, their raw tokens, tool calls and turns that changed the
cut_tool_calls,           workspace
cut_mutations
good_outcome_after_cut    the recording's good outcome (label resolved, or done) came after the cut
recorded_stop             the recording's own stop reason
turns, turns_replayed     recorded turns; calls the policy made
timed                     deadline rules applied (the run has timestamps and the policy a deadline)
n_events                  decisions in the timeline (``replay(...).to_frame()`` has them)
path                      "fast" or "governor"
========================= ==================================================================================
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from workbench.govern.policy import Policy
from workbench.replay import fast
from workbench.replay.engine import replay
from workbench.replay.facts import RunFacts, run_facts
from workbench.replay.grid import Grid, expand
from workbench.replay.parallel import corpus_out_of_gc, run_dask, run_local
from workbench.replay.result import SCALAR_FIELDS
from workbench.trace.schema import Run

COLUMNS = (*SCALAR_FIELDS, "path", "policy_index")
NULLABLE_INT = fast.NULLABLE
INT_COLUMNS = (
    "meter_reached",
    "meter_allowed",
    "grant",
    "stop_turn",
    "spent",
    "raw",
    "cut_turns",
    "cut_tokens",
    "cut_tool_calls",
    "cut_mutations",
    "turns",
    "turns_replayed",
    "n_events",
    "policy_index",
)
BOOL_COLUMNS = ("censored", "good_outcome_after_cut", "timed")
SMALL_SWEEP = 5_000
"""Below this many (run, policy) rows a sweep with no ``workers`` given runs in this process."""


def _leaves(runs: Any, segments: bool) -> list[Run]:
    if isinstance(runs, Run):
        runs = [runs]
    out: list[Run] = []
    for r in runs:
        out.extend(r.leaves() if segments else [r])
    return out


def _column(values: Any, name: str) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    if name in INT_COLUMNS or name in NULLABLE_INT:
        return np.asarray(values, dtype=np.int64)
    if name in BOOL_COLUMNS:
        return np.asarray(values, dtype=bool)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def policy_groups(policies: Sequence[Policy]) -> list[list[int]]:
    """Indices of the policies that differ only in the fast path's fields, group by group."""
    groups: dict[tuple, list[int]] = {}
    for k, p in enumerate(policies):
        groups.setdefault(fast.group_key(p), []).append(k)
    return list(groups.values())


def sweep_runs(
    runs: Sequence[Run],
    policies: Sequence[Policy],
    use_fast: bool = True,
    groups: list[list[int]] | None = None,
) -> dict[str, list[np.ndarray]]:
    """Every (run, policy) row for a chunk of runs, as column pieces — the unit of work every backend executes.

    Rows come run by run, in policy order within a run. A group's runs on the fast path are answered together
    (``fast.blocks``); the rest are replayed one (run, policy) at a time."""
    runs, policies = list(runs), list(policies)
    labels = [p.label for p in policies]
    groups = groups if groups is not None else policy_groups(policies)
    P = len(policies)
    facts: dict[int, RunFacts] = {}  # read only for runs the governor path replays
    parts: list[tuple[np.ndarray, dict[str, Any], str]] = []  # (row positions, columns, path)
    for members in groups:
        group = [policies[k] for k in members]
        cols = np.asarray(members, dtype=np.int64)
        eligible = use_fast and fast.policy_eligible(group[0])
        reach = fast.Reach.of(group) if eligible else None
        quick: list[int] = []
        probes: list[fast.Probe] = []
        for i, run in enumerate(runs):
            if reach is not None and fast.run_eligible(run, group[0]):
                pr = fast.probe(run, group[0], reach)
                if pr is not None:
                    quick.append(i)
                    probes.append(pr)
                    continue
            if i not in facts:
                facts[i] = run_facts(run)
            rows = [replay(run, policies[k], facts=facts[i]).row() for k in members]
            block = {c: [r[c] for r in rows] for c in SCALAR_FIELDS}
            for c in fast.NULLABLE:
                block[c] = [-1 if v is None else v for v in block[c]]
            parts.append((i * P + cols, block, "governor"))
        if quick:
            block = fast.blocks([runs[i] for i in quick], probes, group, [labels[k] for k in members])
            pos = (np.asarray(quick, dtype=np.int64)[:, None] * P + cols[None, :]).ravel()
            parts.append((pos, block, "fast"))
    total = len(runs) * P
    columns: dict[str, list[np.ndarray]] = {}
    positions = np.concatenate([pos for pos, _, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
    in_order = len(parts) == 1 and np.array_equal(positions, np.arange(total))
    for c in SCALAR_FIELDS:
        if in_order:  # one part, already in row order (every run of one group on one path)
            columns[c] = [_column(parts[0][1][c], c)]
            continue
        columns[c] = [_scatter([_column(b[c], c) for _, b, _ in parts], positions, total, c)]
    paths = [_column([path] * len(pos), "path") for pos, _, path in parts]
    columns["path"] = [_scatter(paths, positions, total, "path")]
    columns["policy_index"] = [np.tile(np.arange(P, dtype=np.int64), len(runs))]
    return columns


def _scatter(pieces: list[np.ndarray], positions: np.ndarray, total: int, name: str) -> np.ndarray:
    """The pieces' values placed at their row positions (every position is covered once)."""
    if not pieces:
        return _column([], name)
    values = np.concatenate(pieces)
    out = np.empty(total, dtype=values.dtype)
    out[positions] = values
    return out


class _Chunk:
    """Picklable work: some runs and every policy."""

    def __init__(
        self, runs: list[Run], policies: list[Policy], use_fast: bool, groups: list[list[int]]
    ) -> None:
        self.runs, self.policies, self.use_fast, self.groups = runs, policies, use_fast, groups

    def __call__(self) -> dict[str, list[np.ndarray]]:
        return sweep_runs(self.runs, self.policies, self.use_fast, self.groups)


def _work(chunk: _Chunk) -> dict[str, list[np.ndarray]]:
    with corpus_out_of_gc():
        return chunk()


def sweep(
    runs: Any,
    grid: Grid,
    *,
    base: Policy | str = "current",
    segments: bool = True,
    workers: int | None = None,
    client: Any = None,
    fast: bool = True,
    progress: bool = True,
    chunk_size: int | None = None,
) -> pd.DataFrame:
    """Replay every run (or segment) under every policy of ``grid``; one row each (columns: module docstring)."""
    policies, keys = expand(grid, base)
    leaves = _leaves(runs, segments)
    if workers is not None:
        n_workers = workers
    elif len(leaves) * len(policies) < SMALL_SWEEP:
        n_workers = 1  # starting processes would cost more than the work
    else:
        n_workers = os.cpu_count() or 1
    size = chunk_size or max(1, min(64, -(-len(leaves) // max(n_workers * 4, 1))))
    groups = policy_groups(policies)
    chunks = [_Chunk(leaves[i : i + size], policies, fast, groups) for i in range(0, len(leaves), size)]
    parts: dict[int, dict[str, list[np.ndarray]]] = {}
    bar = tqdm(total=len(leaves), desc="sweep", unit="run", disable=not progress)
    results: Iterable[tuple[int, dict[str, list[np.ndarray]]]] = (
        run_dask(_work, chunks, client) if client is not None else run_local(_work, chunks, n_workers)
    )
    for i, rows in results:
        parts[i] = rows
        bar.update(len(chunks[i].runs))
    bar.close()
    data: dict[str, Any] = {}
    for c in COLUMNS:
        pieces = [piece for i in sorted(parts) for piece in parts[i][c]]
        values = np.concatenate(pieces) if pieces else _column([], c)
        if c in NULLABLE_INT:
            values = pd.arrays.IntegerArray(values.astype(np.int64), values < 0)
        data[c] = values
    # the columns are fresh arrays owned by this frame: no copy, and no consolidation into 2-D blocks (which costs
    # as much as the fast path's own work on a large grid)
    frame = pd.DataFrame(data, columns=list(COLUMNS), copy=False)
    for key in keys:
        if key not in frame.columns:
            frame[key] = [getattr(policies[k], key) for k in frame["policy_index"]] if len(frame) else []
    return frame


def grid_columns(grid: Mapping[str, Sequence[Any]]) -> list[str]:
    return list(grid)
