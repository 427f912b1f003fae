"""Sweeps: a corpus × a grid of policies → one DataFrame row per (run or segment, policy).

``sweep(runs, {"grant": range(100_000, 300_001, 10_000)})``; ``grid`` is a dict of Policy parameter -> values (their
cartesian product over ``base``) or a list of Policies. Sheets, processes and clusters are ``workbench.scale.sweep``'s
(docs/scale.md); the columns are ``workbench.replay.columns``'s (docs/frames.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from workbench.govern.policy import Policy
from workbench.replay import fast
from workbench.replay.columns import BOOLEANS, COLUMNS, INTEGERS, NULLABLE, RESULT_FIELDS
from workbench.replay.engine import replay
from workbench.replay.facts import RunFacts, run_facts, usage_unknown
from workbench.replay.grid import Grid, expand
from workbench.replay.sheet import Sheet, probe_key
from workbench.trace.schema import Run


def leaves_of(runs: Any, segments: bool) -> list[Run]:
    if isinstance(runs, Run):
        runs = [runs]
    out: list[Run] = []
    for r in runs:
        out.extend(r.leaves() if segments else [r])
    return out


def _column(values: Any, name: str) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values
    if name in INTEGERS:
        return np.asarray(values, dtype=np.int64)
    if name in BOOLEANS:
        return np.asarray(values, dtype=bool)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def policy_groups(policies: Sequence[Policy]) -> list[list[int]]:
    """Indices of the policies that differ only in the fast path's fields, group by group."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for k, p in enumerate(policies):
        groups.setdefault(fast.group_key(p), []).append(k)
    return list(groups.values())


def sweep_runs(
    runs: Sequence[Run],
    policies: Sequence[Policy],
    use_fast: bool = True,
    groups: list[list[int]] | None = None,
    sheet: Sheet | None = None,
) -> dict[str, list[np.ndarray]]:
    """Every (run, policy) row for a chunk of runs, as column pieces — the unit of work every backend executes.

    Rows come run by run, in policy order within a run. A group's runs on the fast path are answered together
    (``fast.blocks``); the rest are replayed one (run, policy) at a time. ``sheet``, when given, is the runs'
    fast-path reading under some guard settings (a loaded corpus's, ``workbench.scale.index``): a group with
    those settings is answered from it, and only the runs it cannot answer are built (``runs`` may be lazy)."""
    runs = runs if isinstance(runs, Sequence) else list(runs)
    policies = list(policies)
    labels = [p.label for p in policies]
    groups = groups if groups is not None else policy_groups(policies)
    P = len(policies)
    facts: dict[int, RunFacts] = {}  # read only for runs the governor path replays
    reads: dict[
        tuple[Any, ...], Any
    ] = {}  # the fast path's readings of a run, shared by the groups (``_probe``)
    sheets: dict[tuple[Any, ...], Sheet] = {}
    parts: list[tuple[np.ndarray, dict[str, Any], str]] = []  # (row positions, columns, path)
    for members in groups:
        group = [policies[k] for k in members]
        cols = np.asarray(members, dtype=np.int64)
        eligible = use_fast and fast.policy_eligible(group[0])
        if eligible and sheet is not None and sheet.key == probe_key(group[0]):
            ok = sheet.eligible(group[0])
            quick_idx = np.flatnonzero(ok)
            for i in np.flatnonzero(~ok).tolist():
                parts.append(
                    (i * P + cols, _governor_block(runs[i], i, members, policies, facts), "governor")
                )
            if len(quick_idx):
                block = fast.blocks(sheet.take(quick_idx), group, [labels[k] for k in members])
                pos = (quick_idx[:, None] * P + cols[None, :]).ravel()
                parts.append((pos, block, "fast"))
            continue
        reach = fast.Reach.of(group) if eligible else None
        quick: list[int] = []
        probes: list[fast.Probe] = []
        for i, run in enumerate(runs):
            if reach is not None and _eligible(run, i, group[0], reads):
                pr = _probe(run, i, group[0], reach, reads)
                if pr is not None:
                    quick.append(i)
                    probes.append(pr)
                    continue
            parts.append((i * P + cols, _governor_block(run, i, members, policies, facts), "governor"))
        if quick:
            # a sheet of this group's quick runs only (``sheet``, the caller's, stays the one for every run);
            # groups that read the runs alike (say, differing only in the wrap-up threshold) share it
            at = (probe_key(group[0]), reach, tuple(quick))
            if at not in sheets:
                sheets[at] = Sheet.of([runs[i] for i in quick], probes, at[0], flags=False)
            block = fast.blocks(sheets[at], group, [labels[k] for k in members])
            pos = (np.asarray(quick, dtype=np.int64)[:, None] * P + cols[None, :]).ravel()
            parts.append((pos, block, "fast"))
    total = len(runs) * P
    columns: dict[str, list[np.ndarray]] = {}
    positions = np.concatenate([pos for pos, _, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
    in_order = len(parts) == 1 and np.array_equal(positions, np.arange(total))
    for c in RESULT_FIELDS:
        if in_order:  # one part, already in row order (every run of one group on one path)
            columns[c] = [_column(parts[0][1][c], c)]
            continue
        columns[c] = [_scatter([_column(b[c], c) for _, b, _ in parts], positions, total, c)]
    paths = [_column([path] * len(pos), "path") for pos, _, path in parts]
    columns["path"] = [_scatter(paths, positions, total, "path")]
    columns["policy_index"] = [np.tile(np.arange(P, dtype=np.int64), len(runs))]
    return columns


def _eligible(run: Run, i: int, policy: Policy, reads: dict[tuple[Any, ...], Any]) -> bool:
    """``fast.run_eligible`` of run ``i``, read once per deadline setting."""
    key = (i, fast.clocked(policy))
    if key not in reads:
        reads[key] = fast.run_eligible(run, policy)
    ok: bool = reads[key]
    return ok


def _probe(
    run: Run, i: int, policy: Policy, reach: fast.Reach, reads: dict[tuple[Any, ...], Any]
) -> fast.Probe | None:
    """``fast.probe`` of run ``i``, its first pass read once per reply-rule setting and each probe once per guard
    setting and reach: the groups of a calibration grid differ in one threshold, so they share the rest."""
    turns_key = (i, policy.nudges, policy.length_batch)
    if turns_key not in reads:
        reads[turns_key] = fast.turns_of(run, policy)
    key = (i, probe_key(policy), reach)
    if key not in reads:
        read = reads[turns_key]
        reads[key] = None if read is None else fast.probe(run, policy, reach, read)
    probed: fast.Probe | None = reads[key]
    return probed


def _governor_block(
    run: Run, i: int, members: list[int], policies: list[Policy], facts: dict[int, RunFacts]
) -> dict[str, list[Any]]:
    """The rows of one run under a group's policies, replayed by the governor (its facts read once per run)."""
    if i not in facts:
        facts[i] = run_facts(run)
    rows = [replay(run, policies[k], facts=facts[i]).row() for k in members]
    block = {c: [r[c] for r in rows] for c in RESULT_FIELDS}
    for c in NULLABLE:
        block[c] = [-1 if v is None else v for v in block[c]]
    return block


def _scatter(pieces: list[np.ndarray], positions: np.ndarray, total: int, name: str) -> np.ndarray:
    """The pieces' values placed at their row positions (every position is covered once)."""
    if not pieces:
        return _column([], name)
    values = np.concatenate(pieces)
    out = np.empty(total, dtype=values.dtype)
    out[positions] = values
    return out


class Chunk:
    """Work on some runs (a list, or a lazy corpus's leaves with their sheet) under every policy: the unit every
    executor runs (``workbench.scale.sweep`` sends such work to other processes as file paths, never as Runs)."""

    def __init__(
        self,
        runs: Sequence[Run],
        policies: list[Policy],
        use_fast: bool,
        groups: list[list[int]],
        sheet: Sheet | None = None,
    ) -> None:
        self.runs, self.policies, self.use_fast, self.groups = runs, policies, use_fast, groups
        self.sheet = sheet
        self.size = len(runs)

    def __call__(self) -> dict[str, list[np.ndarray]]:
        return sweep_runs(self.runs, self.policies, self.use_fast, self.groups, self.sheet)


def replayable(leaves: Sequence[Run]) -> tuple[Sequence[Run], list[tuple[str, str]]]:
    """The leaves whose cost can be replayed, and the others named with why (a run no call of which recorded
    usage would read as 0 tokens at every grant: it is left out and named, never counted as spending nothing)."""
    excluded = [(r.run_id, why) for r in leaves if (why := usage_unknown(r)) is not None]
    if excluded:
        leaves = [r for r in leaves if usage_unknown(r) is None]
    return leaves, excluded


def warn_excluded(excluded: list[tuple[str, str]]) -> None:
    if excluded:
        warnings.warn(
            f"{len(excluded)} run(s) left out of the sweep: cost cannot be replayed for a run whose calls "
            f"recorded no usage (first: {excluded[0][0]}: {excluded[0][1]})",
            stacklevel=3,
        )


def frame_of(
    results: Iterable[tuple[int, dict[str, list[np.ndarray]]]],
    chunks: Sequence[Any],
    policies: list[Policy],
    keys: Sequence[str],
    excluded: list[tuple[str, str]],
    progress: bool = True,
) -> pd.DataFrame:
    """The sweep's frame from its chunks' column pieces (in any order; joined in chunk order)."""
    parts: dict[int, dict[str, list[np.ndarray]]] = {}
    bar = tqdm(total=sum(c.size for c in chunks), desc="sweep", unit="run", disable=not progress)
    for i, got in results:
        parts[i] = got
        bar.update(chunks[i].size)
    bar.close()
    data: dict[str, Any] = {}
    for c in COLUMNS:
        pieces = [piece for i in sorted(parts) for piece in parts[i][c]]
        values = np.concatenate(pieces) if pieces else _column([], c)
        data[c] = pd.arrays.IntegerArray(values.astype(np.int64), values < 0) if c in NULLABLE else values
    # the columns are fresh arrays owned by this frame: no copy, and no consolidation into 2-D blocks (which costs
    # as much as the fast path's own work on a large grid)
    frame = pd.DataFrame(data, columns=list(COLUMNS), copy=False)
    for key in keys:
        if key not in frame.columns:
            frame[key] = [getattr(policies[k], key) for k in frame["policy_index"]] if len(frame) else []
    frame.attrs["excluded"] = [{"run_id": rid, "reason": why} for rid, why in excluded]
    return frame


def in_process(chunks: Sequence[Chunk]) -> Iterator[tuple[int, dict[str, list[np.ndarray]]]]:
    for i, chunk in enumerate(chunks):
        yield i, chunk()


def sweep(
    runs: Any,
    grid: Grid,
    *,
    base: Policy | str = "current",
    segments: bool = True,
    fast: bool = True,
    progress: bool = True,
    chunk_size: int | None = None,
    slots: int = 1,
    run_chunks: Callable[[Sequence[Chunk]], Iterable[tuple[int, dict[str, list[np.ndarray]]]]] = in_process,
) -> pd.DataFrame:
    """Replay every run (or segment) of ``runs`` (Runs, or a Corpus) under every policy of ``grid``; one row each
    (columns: ``workbench.replay.columns``). The chunks run
    in this process unless ``run_chunks`` runs them elsewhere (``workbench.scale.sweep`` passes an executor's map
    and its ``slots``, so each slot gets about four chunks)."""
    policies, keys = expand(grid, base)
    groups = policy_groups(policies)
    leaves, excluded = replayable(leaves_of(runs, segments))
    warn_excluded(excluded)
    share = len(leaves) if slots == 1 else -(-len(leaves) // (4 * slots))
    size = chunk_size or max(1, min(64, share))
    chunks = [Chunk(leaves[i : i + size], policies, fast, groups) for i in range(0, len(leaves), size)]
    return frame_of(run_chunks(chunks), chunks, policies, keys, excluded, progress)
