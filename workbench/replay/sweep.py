"""Sweeps: a corpus × a grid of policies → one DataFrame row per (run or segment, policy).

``sweep(runs, {"grant": range(100_000, 300_001, 10_000)})`` — ``runs`` is a Corpus, a list of Runs or one Run;
``grid`` is a dict of Policy parameter -> values (their cartesian product over ``base``) or a list of Policies.
Interactive sessions are split into their segments (``segments=True``). Progress is a tqdm bar over runs. Work runs
in this process (``workers=1``), on local processes (``workers=N``, the default: all cores) or on a Dask cluster
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
verdict                   budget_stop, turn_cap, empty_response, unverified_success, provider_failure; None when
                          censored
meter                     the bound's words ("cost: 230,155 of 220,000 tokens of billed work"), "" when none
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

import pandas as pd
from tqdm.auto import tqdm

from workbench.govern.policy import Policy
from workbench.replay import fast
from workbench.replay.engine import replay
from workbench.replay.facts import run_facts
from workbench.replay.grid import Grid, expand
from workbench.replay.parallel import run_dask, run_local
from workbench.replay.result import SCALAR_FIELDS
from workbench.trace.schema import Run

COLUMNS = (*SCALAR_FIELDS, "path", "policy_index")


def _leaves(runs: Any, segments: bool) -> list[Run]:
    if isinstance(runs, Run):
        runs = [runs]
    out: list[Run] = []
    for r in runs:
        out.extend(r.leaves() if segments else [r])
    return out


def sweep_runs(
    runs: Sequence[Run], policies: Sequence[Policy], use_fast: bool = True
) -> list[dict[str, Any]]:
    """Every (run, policy) row for a chunk of runs — the unit of work every backend executes."""
    rows: list[dict[str, Any]] = []
    groups: dict[tuple, list[int]] = {}
    for k, p in enumerate(policies):
        groups.setdefault(fast.group_key(p), []).append(k)
    for run in runs:
        facts = run_facts(run)
        out: list[dict[str, Any] | None] = [None] * len(policies)
        for members in groups.values():
            group = [policies[k] for k in members]
            if use_fast and fast.policy_eligible(group[0]) and fast.run_eligible(run, facts, group[0]):
                for k, row in zip(members, fast.rows(run, facts, group), strict=True):
                    out[k] = {**row, "path": "fast"}
            else:
                for k in members:
                    out[k] = {**replay(run, policies[k], facts=facts).row(), "path": "governor"}
        for k, row in enumerate(out):
            assert row is not None
            row["policy_index"] = k
            rows.append(row)
    return rows


class _Chunk:
    """Picklable work: some runs and every policy."""

    def __init__(self, runs: list[Run], policies: list[Policy], use_fast: bool) -> None:
        self.runs, self.policies, self.use_fast = runs, policies, use_fast

    def __call__(self) -> list[dict[str, Any]]:
        return sweep_runs(self.runs, self.policies, self.use_fast)


def _work(chunk: _Chunk) -> list[dict[str, Any]]:
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
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    size = chunk_size or max(1, min(64, -(-len(leaves) // max(n_workers * 4, 1))))
    chunks = [_Chunk(leaves[i : i + size], policies, fast) for i in range(0, len(leaves), size)]
    parts: dict[int, list[dict[str, Any]]] = {}
    bar = tqdm(total=len(leaves), desc="sweep", unit="run", disable=not progress)
    results: Iterable[tuple[int, list[dict[str, Any]]]] = (
        run_dask(_work, chunks, client) if client is not None else run_local(_work, chunks, n_workers)
    )
    for i, rows in results:
        parts[i] = rows
        bar.update(len(chunks[i].runs))
    bar.close()
    rows = [row for i in sorted(parts) for row in parts[i]]
    frame = pd.DataFrame(rows, columns=list(COLUMNS)) if rows else pd.DataFrame(columns=list(COLUMNS))
    for key in keys:
        if key not in frame.columns:
            frame[key] = [getattr(policies[k], key) for k in frame["policy_index"]] if len(frame) else []
    return frame


def grid_columns(grid: Mapping[str, Sequence[Any]]) -> list[str]:
    return list(grid)
