"""The fast path's reading of many leaves as columns: what ``workbench.replay.fast.blocks`` needs of a leaf, with
no Run in sight (docs/scale.md, "Sweeps": built by ``Sheet.of`` or read from the corpus index).

A sheet answers only for policies whose guard settings are its ``key`` (``probe_key``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from itertools import chain
from typing import Any

import numpy as np

from workbench.govern.policy import Policy
from workbench.govern.verdict import verdict_for
from workbench.replay.censoring import finished_on_own, good_outcome
from workbench.replay.engine import END_OF_RECORDING, recorded_injections
from workbench.replay.facts import SELF_CLOSE, STANDING_FINDING, TOOL_SPEND, usage_unknown
from workbench.trace.schema import Run

PROBE_FIELDS: tuple[str, ...] = (
    "nudges", "length_batch", "no_progress", "repeat_cap", "stagnant_cap", "recon_turns", "turn_floor",
    "floor_window", "floor_min_productive", "conclude_grace", "tool_timeouts", "tool_timeout_cap",
)  # fmt: skip
"""Every policy field ``fast.probe`` reads: two policies equal on these read a leaf the same way."""


def probe_key(policy: Policy) -> tuple[Any, ...]:
    """The guard settings a sheet was read under (``PROBE_FIELDS``' values)."""
    return tuple(getattr(policy, name) for name in PROBE_FIELDS)


@dataclass(frozen=True, slots=True)
class Ragged:
    """One list of integers per leaf: every list one after another (``values``) and each list's length."""

    values: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, lists: Sequence[Sequence[int]]) -> Ragged:
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        values = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(lengths.sum()))
        return cls(values, lengths)

    @property
    def starts(self) -> np.ndarray:
        starts = np.zeros(len(self.lengths), dtype=np.int64)
        np.cumsum(self.lengths[:-1], out=starts[1:])
        return starts

    def take(self, idx: np.ndarray) -> Ragged:
        """The lists of leaves ``idx``, in that order."""
        lengths = self.lengths[idx]
        if not len(idx):
            return Ragged(np.zeros(0, dtype=np.int64), lengths)
        starts = self.starts[idx]
        total = int(lengths.sum())
        # every taken element's position: its list's start plus its place in the list
        offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        return Ragged(self.values[np.arange(total, dtype=np.int64) + offsets], lengths)

    @classmethod
    def concat(cls, parts: Sequence[Ragged]) -> Ragged:
        if not parts:
            return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        return cls(np.concatenate([p.values for p in parts]), np.concatenate([p.lengths for p in parts]))


PER_TURN = ("prompt", "cached", "comp", "calls", "mutations")
RAGGED = ("tool_idx", "empties", "finals", "cheap_turns", "guard_turns", "guard_counts")


@dataclass(frozen=True)
class Sheet:
    """The fast path's reading of some leaves (one row each), under the guard settings ``key``."""

    key: tuple[Any, ...]
    run_id: np.ndarray  # object
    segment: np.ndarray  # int64, -1 for none
    context_length: np.ndarray  # int64, -1 for none
    n: np.ndarray
    guard_stop: np.ndarray
    guard_kind: np.ndarray  # object ("" for none)
    guard_meter: np.ndarray  # object ("" for none)
    guard_reached: np.ndarray
    guard_allowed: np.ndarray
    first_cheap_div: np.ndarray  # the first nudge or skip that changes the next request (-1: none)
    first_conclude: np.ndarray  # the first conclude directive (-1: none)
    first_unjudged: np.ndarray  # the first turn the no-progress guard could not judge (-1: none)
    guard_basis: np.ndarray  # object: the guard stop's basis ("recorded", "inferred"; "" for none)
    own: np.ndarray  # bool: the recording finished on its own
    good: np.ndarray  # bool: its good outcome (label resolved, or done)
    recorded_stop: np.ndarray  # object
    end_reason: np.ndarray  # object: the recorded stop (or done), or end-of-recording
    verdict_plain: np.ndarray  # object: the end's verdict with no landing under way (None when not own)
    verdict_budget: np.ndarray  # object: ... with a budget landing under way
    usage_unknown: np.ndarray  # object: why its cost cannot be replayed (None: it can)
    probe_ok: np.ndarray  # bool: cache reads within every prompt (spent never falls)
    engine_only: np.ndarray  # bool: tool-side spend, closing events, tool usage or recorded injections
    timed: np.ndarray  # bool: every turn has both timestamps (a deadline applies)
    prompt: Ragged
    cached: Ragged
    comp: Ragged
    calls: Ragged
    mutations: Ragged
    tool_idx: Ragged
    empties: Ragged
    finals: Ragged
    cheap_turns: Ragged
    guard_turns: Ragged
    guard_counts: Ragged  # running decision counts at each guard turn, from 0 (one longer than guard_turns)

    def __len__(self) -> int:
        return len(self.n)

    def eligible(self, policy: Policy) -> np.ndarray:
        """Per leaf, whether the fast path answers it under ``policy`` (``fast.run_eligible`` and ``probe``)."""
        ok: np.ndarray = self.probe_ok & ~self.engine_only
        if policy.deadline_s is not None:
            ok &= ~self.timed
        return ok

    def take(self, idx: np.ndarray | Sequence[int]) -> Sheet:
        idx = np.asarray(idx, dtype=np.int64)
        values: dict[str, Any] = {"key": self.key}
        for f in fields(self):
            if f.name == "key":
                continue
            v = getattr(self, f.name)
            values[f.name] = v.take(idx) if isinstance(v, Ragged) else v[idx]
        return Sheet(**values)

    @classmethod
    def concat(cls, parts: Sequence[Sheet], key: tuple[Any, ...]) -> Sheet:
        values: dict[str, Any] = {"key": key}
        for f in fields(cls):
            if f.name == "key":
                continue
            got = [getattr(p, f.name) for p in parts]
            if f.name in PER_TURN or f.name in RAGGED:
                values[f.name] = Ragged.concat(got)
            else:
                values[f.name] = np.concatenate(got) if got else _empty(f.name)
        return cls(**values)

    def columns(self) -> dict[str, Any]:
        """Plain arrays (a Ragged as ``<name>.values`` and ``<name>.lengths``), for storage."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "key":
                continue
            v = getattr(self, f.name)
            if isinstance(v, Ragged):
                out[f"{f.name}.values"], out[f"{f.name}.lengths"] = v.values, v.lengths
            else:
                out[f.name] = v
        return out

    @classmethod
    def from_columns(cls, key: tuple[Any, ...], cols: dict[str, Any]) -> Sheet:
        values: dict[str, Any] = {"key": key}
        for f in fields(cls):
            if f.name == "key":
                continue
            if f.name in PER_TURN or f.name in RAGGED:
                values[f.name] = Ragged(
                    np.asarray(cols[f"{f.name}.values"], dtype=np.int64),
                    np.asarray(cols[f"{f.name}.lengths"], dtype=np.int64),
                )
            else:
                values[f.name] = np.asarray(cols[f.name], dtype=_dtype(f.name))
        return cls(**values)

    @classmethod
    def of(
        cls, runs: Sequence[Run], probes: Sequence[Any | None], key: tuple[Any, ...], flags: bool = True
    ) -> Sheet:
        """The sheet of ``runs`` from their ``fast.probe`` readings (``None`` where the probe refused a leaf:
        such a row has ``probe_ok`` false and is never answered from the sheet). ``flags=False`` leaves out
        what only a stored sheet needs (``usage_unknown``, ``engine_only``, ``timed``: a sweep over Runs has
        already checked them)."""
        rows: dict[str, list[Any]] = {f.name: [] for f in fields(cls) if f.name != "key"}
        for run, pr in zip(runs, probes, strict=True):
            _row(rows, run, pr, flags)
        values: dict[str, Any] = {"key": key}
        for name, got in rows.items():
            if name in PER_TURN or name in RAGGED:
                values[name] = Ragged.of(got)
            else:
                values[name] = _array(got, name)
        return cls(**values)


OBJECT = frozenset(
    {"run_id", "guard_kind", "guard_basis", "guard_meter", "recorded_stop", "end_reason", "verdict_plain", "verdict_budget",
     "usage_unknown"}
)  # fmt: skip
BOOL = frozenset({"own", "good", "probe_ok", "engine_only", "timed"})


def _dtype(name: str) -> Any:
    return object if name in OBJECT else bool if name in BOOL else np.int64


def _empty(name: str) -> np.ndarray:
    return np.zeros(0, dtype=_dtype(name))


def _array(values: list[Any], name: str) -> np.ndarray:
    if name in OBJECT:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.asarray(values, dtype=_dtype(name))


def engine_only(run: Run) -> bool:
    """The leaf has something only the engine reads: tool-side spend, the leaf's own landing check, tool results'
    usage, or recorded injections to match (``fast.run_eligible``)."""
    if any(e.kind in (TOOL_SPEND, SELF_CLOSE, STANDING_FINDING) for e in run.events):
        return True
    if any(r.usage is not None for t in run.turns for r in t.tool_results):
        return True
    return recorded_injections(run) is not None


def _row(rows: dict[str, list[Any]], run: Run, pr: Any | None, flags: bool) -> None:
    own = finished_on_own(run)
    recorded = run.outcome.stop_reason
    end_reason = (recorded or "done") if own else END_OF_RECORDING
    end_text = ((pr.last_text if pr is not None else "") or run.outcome.text) if own else None
    seg = run.metadata.get("segment")
    meter = pr.guard_meter if pr is not None else None
    events = pr.guard_events if pr is not None else []
    cheap = pr.cheap_events if pr is not None else []
    counts = [0]
    for _, _, c in events:
        counts.append(counts[-1] + c)
    put = {
        "run_id": run.run_id,
        "segment": seg if isinstance(seg, int) else -1,
        "context_length": run.context_length if run.context_length is not None else -1,
        "n": pr.n if pr is not None else len(run.turns),
        "guard_stop": pr.guard_stop if pr is not None else len(run.turns),
        "guard_kind": pr.guard_kind if pr is not None else "",
        "guard_meter": meter.name if meter else "",
        "guard_reached": meter.reached if meter else 0,
        "guard_allowed": meter.allowed if meter else 0,
        "first_cheap_div": next((t for t, _, d in cheap if d), -1),
        "first_conclude": next((t for t, kind, _ in events if kind == "conclude"), -1),
        "first_unjudged": pr.first_unjudged if pr is not None else -1,
        "guard_basis": pr.guard_basis if pr is not None else "",
        "own": own,
        "good": good_outcome(run),
        "recorded_stop": recorded,
        "end_reason": end_reason,
        "verdict_plain": verdict_for(end_reason, None, end_text) if own else None,
        "verdict_budget": verdict_for(end_reason, "budget", end_text) if own else None,
        "usage_unknown": usage_unknown(run) if flags else None,
        "probe_ok": pr is not None,
        "engine_only": engine_only(run) if flags else False,
        "timed": flags
        and bool(run.turns)
        and all(t.started_at is not None and t.ended_at is not None for t in run.turns),
        "prompt": pr.prompt if pr is not None else [],
        "cached": pr.cached if pr is not None else [],
        "comp": pr.comp if pr is not None else [],
        "calls": pr.calls if pr is not None else [],
        "mutations": pr.mutations if pr is not None else [],  # bools: Ragged.of reads them as 0 and 1
        "tool_idx": pr.tool_idx if pr is not None else [],
        "empties": pr.empties if pr is not None else [],
        "finals": pr.finals if pr is not None else [],
        "cheap_turns": [t for t, _, _ in cheap],
        "guard_turns": [t for t, _, _ in events],
        "guard_counts": counts,
    }
    if pr is None:  # a refused leaf keeps its per-turn lists aligned with ``n`` (zeros; never read)
        put["n"] = 0
    for name, value in put.items():
        rows[name].append(value)


__all__ = ["PROBE_FIELDS", "Ragged", "Sheet", "engine_only", "probe_key"]
