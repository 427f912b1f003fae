"""The vectorised fast path for grids that only move the cost meter (``FastPath.GRID``: grant, cache weight, landing
token share, turn cap; docs/scale.md, "Sweeps"). Its oracle is the governor replay (``sweep(..., fast=False)``).

The grant-independent facts are read once per run (``probe``); every (run, policy) pair of a batch is then answered
with numpy (``blocks``), in stages that each mirror one governor rule (S, I, K, T, the earliest ``Stop``, U). It
applies where ``policy_eligible``, ``run_eligible`` and ``probe`` say; ``tests/replay/test_fast.py`` and
``test_fast_fields.py`` hold it equal to the governor path on the real and on random corpora."""

from __future__ import annotations

import weakref
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Literal

import numpy as np

from workbench.govern.landing import landing_allowance
from workbench.govern.messages import LENGTH_BATCH_TEXT
from workbench.govern.meter_record import COST, TURNS, no_progress_meter, tool_timeouts_meter
from workbench.govern.noprogress import MUTATION_TOOLS, ProgressGuard, Signal, Signature, signature
from workbench.govern.policy import COMPARED_FIELDS, FastPath, Policy, treated
from workbench.govern.pressure import reuse_ceiling
from workbench.govern.replies import EMPTY_REPLY_DIVISOR, is_length
from workbench.govern.tooltimeout import ToolTimeoutGuard
from workbench.govern.verdict import StopReason, Verdict
from workbench.replay.columns import NULLABLE
from workbench.replay.facts import call_facts, result_facts
from workbench.replay.sheet import PER_TURN, Sheet, engine_only, probe_key
from workbench.trace.schema import Run, is_sealed

FAST_FIELDS = frozenset(treated(FastPath.GRID))
"""The swept axes a group's policies may differ in (``FastPath.GRID``)."""
_DISQUALIFYING = tuple((name, getattr(Policy(), name)) for name in treated(FastPath.DISQUALIFYING))
_TIMED = tuple((name, getattr(Policy(), name)) for name in treated(FastPath.TIMED))
_KEY_FIELDS = tuple(name for name in COMPARED_FIELDS if name not in FAST_FIELDS)
BIG = np.iinfo(np.int64).max // 8
NONE = np.iinfo(np.int64).max
"""A turn no recording reaches (an absent candidate in a minimum)."""


def group_key(policy: Policy) -> tuple[Any, ...]:
    """Policies with equal keys differ only in the fast fields."""
    return tuple(getattr(policy, name) for name in _KEY_FIELDS)


def policy_eligible(p: Policy) -> bool:
    """The fast path answers ``p``: every ``FastPath.DISQUALIFYING`` field at its default, and a grant above 0."""
    return p.grant > 0 and all(getattr(p, name) == default for name, default in _DISQUALIFYING)


@dataclass(frozen=True, slots=True)
class Reach:
    """How far a group of policies can run outside a landing: its largest grant, smallest cache weight (spent
    rises with the weight, so these two cross last) and largest turn cap."""

    grant: int
    weight: int
    turns: int

    @classmethod
    def of(cls, policies: list[Policy]) -> Reach:
        grants, weights = (p.grant for p in policies), (p.cache_weight_percent for p in policies)
        grant = max(grants) if policies[0].cost_lands else BIG  # no lander: nothing crosses
        return cls(grant, min(weights), max(p.effective_max_turns for p in policies))


def run_eligible(run: Run, policy: Policy) -> bool:
    """The run has nothing the fast path leaves out as a whole: deadline rules (a timed run under a
    ``FastPath.TIMED`` field) or what only the engine reads (``sheet.engine_only``). ``probe`` checks the rest turn
    by turn (cache reads within the prompt)."""
    timed = bool(run.turns) and all(t.started_at is not None and t.ended_at is not None for t in run.turns)
    return not (clocked(policy) and timed) and not engine_only(run)


def clocked(policy: Policy) -> bool:
    """A ``FastPath.TIMED`` field is set: a timed run takes the governor path."""
    return any(getattr(policy, name) != default for name, default in _TIMED)


@dataclass(frozen=True, slots=True)
class Probe:
    """The grant-independent reading of one run under one group of policies, turn by turn as plain lists (the
    numpy work is done for a whole batch of runs at once, in ``blocks``)."""

    n: int
    prompt: list[int]  # per turn (None read as 0)
    cached: list[int]
    comp: list[int]
    calls: list[int]
    mutations: list[bool]  # inferred (the cut statistics' reading)
    tool_idx: list[int]  # turns whose calls run and reach the guards
    empties: list[int]  # reply-less turns (nudged or silent): the empty-reply rule's turns
    finals: list[int]
    guard_stop: int
    guard_kind: str
    guard_reason: str
    guard_meter: Any
    guard_events: list[tuple[int, str, int]]  # (turn, kind, decisions)
    guard_basis: str  # the guard stop's basis: "recorded", "inferred" ("" for none)
    first_unjudged: int  # the first turn the no-progress guard could not judge (-1: none)
    cheap_events: list[tuple[int, int, bool]]  # (turn, decisions, diverges next turn) for nudges and skips
    last_text: str  # the last reply text of the recording


@dataclass(slots=True)
class Turns:
    """The first half of a probe, read once per run and reply-rule setting (``nudges``, ``length_batch``) and shared
    by every guard setting and reach (``probe``): the token counts and how each turn ends, the meter totals after
    each tool turn, and the tool turns' readings the guards take."""

    n: int
    prompt: list[int]
    cached: list[int]
    comp: list[int]
    calls: list[int]
    mutations: list[bool]
    tool_idx: list[int]
    empties: list[int]
    finals: list[int]
    cheap: list[tuple[int, int, bool]]
    last: str
    totals: list[
        tuple[int, int, int]
    ]  # per tool turn: the run's (prompt, cached, completion) totals after it
    changed: list[bool | None]  # per tool turn: mutated, as the no-progress guard's silence check reads it
    last_calls: list[Signature]  # per tool turn: its last call's ``signature``
    timed_out: list[bool]  # per tool turn: a result flagged timed out
    observed: list[Any]  # the tool turns themselves
    _facts: list[tuple[Any, Any, bool | None, bool]] | None = None
    _limits: dict[Reach, int] = field(default_factory=dict, compare=False, repr=False)

    def guard_facts(self) -> list[tuple[Any, Any, bool | None, bool]]:
        """Per tool turn, what the guards observe: its calls, results, workspace fact and whether it was inferred
        (read on the first call, then kept)."""
        if self._facts is None:
            self._facts = [
                (
                    call_facts(x),
                    result_facts(x),
                    x.mutated,
                    x.mutated is not None and x.mutated_rule is not None,
                )
                for x in self.observed
            ]
        return self._facts

    def limit(self, reach: Reach) -> int:
        """The first tool turn whose spend, at the reach's weight, reaches its grant (else ``n``), within its cap
        (kept per reach: a calibration probes a run under every guard value at one reach)."""
        if reach not in self._limits:
            self._limits[reach] = min(self._crossing(reach), reach.turns)
        return self._limits[reach]

    def _crossing(self, reach: Reach) -> int:
        for t, (p, c, o) in zip(self.tool_idx, self.totals, strict=True):
            cc = min(max(c, 0), p)
            if (p - cc) + cc * reach.weight // 100 + o >= reach.grant:
                return t
        return self.n


_READ: dict[int, dict[tuple[Any, Any], Turns | None]] = {}
"""``read_turns`` of the runs a corpus gave out (read-only: ``workbench.trace.schema.seal``), by the run's id and
reply-rule setting, each dropped when its run is freed: a report sweeps the same leaves some thirty times (the grant
sweeps, the calibration's every guard value), and this pass and the guards' facts were read again in each. About
37 KB a leaf with its guards' facts (docs/scale.md, "The report at 100 distinct copies")."""


def turns_of(run: Run, policy: Policy) -> Turns | None:
    """``read_turns(run, policy)``, read once per reply-rule setting for a corpus's run (an editable run is read
    on every call: it may have changed)."""
    if not is_sealed(run):
        return read_turns(run, policy)
    key = id(run)
    held = _READ.get(key)
    if held is None:
        held = _READ[key] = {}
        weakref.finalize(run, _READ.pop, key, None)
    setting = (policy.nudges, policy.length_batch)
    if setting not in held:
        held[setting] = read_turns(run, policy)
    return held[setting]


def read_turns(run: Run, policy: Policy) -> Turns | None:
    """``probe``'s first pass (``policy`` sets the reply rules); None when a turn's cache reads exceed its prompt."""
    turns, n, last = run.turns, len(run.turns), ""
    prompt: list[int] = []
    cached: list[int] = []
    comp: list[int] = []
    calls_turn: list[int] = []
    tool_idx: list[int] = []
    empties: list[int] = []
    finals: list[int] = []
    mut_turn: list[bool] = []
    cheap: list[tuple[int, int, bool]] = []
    totals: list[tuple[int, int, int]] = []
    nudges, batch = policy.nudges, policy.length_batch
    p = c = o = 0
    for t, turn in enumerate(turns):
        u = turn.usage
        if u.cached is not None and (u.prompt is None or u.cached > u.prompt):
            return None
        pt, ct, ot = u.prompt or 0, u.cached or 0, u.completion or 0
        prompt.append(pt)
        cached.append(ct)
        comp.append(ot)
        p, c, o = p + pt, c + ct, o + ot
        calls = turn.tool_calls
        calls_turn.append(len(calls))
        mutated = turn.mutated
        mut_turn.append(mutated if mutated is not None else any(x.name in MUTATION_TOOLS for x in calls))
        text = (turn.text or "").strip()
        if not calls:
            if text == "":
                empties.append(t)
                if nudges:
                    cheap.append((t, 1, True))
            elif turn.format_error is not None:
                pass  # the agent answered it as malformed and went on: not an ending, no decision
            elif nudges and is_length(turn.finish_reason):
                cheap.append((t, 1, True))
                last = text
            else:
                last = text
                finals.append(t)
            continue
        if text:
            last = text
        if batch and is_length(turn.finish_reason):
            res = result_facts(turn)
            recorded = bool(res) and all(x.content == LENGTH_BATCH_TEXT for x in res)
            cheap.append((t, 1, not recorded))
            continue
        tool_idx.append(t)
        totals.append((p, c, o))
    observed = [turns[t] for t in tool_idx]
    return Turns(
        n, prompt, cached, comp, calls_turn, mut_turn, tool_idx, empties, finals, cheap, last, totals,
        [True if x.mutated or any(c.name in MUTATION_TOOLS for c in x.tool_calls) else x.mutated for x in observed],
        [signature(x.tool_calls[-1].name, x.tool_calls[-1].arguments) for x in observed],
        [any(r.timed_out for r in x.tool_results) for x in observed],
        observed,
    )  # fmt: skip


def probe(run: Run, policy: Policy, reach: Reach, read: Turns | None = None) -> Probe | None:
    """The grant-independent reading of a run under one group of policies (``policy``, any of them, sets everything
    but the fast fields; ``reach`` is the group's); None when a turn's cache reads exceed its prompt (spent could
    fall, so the searches below would not be exact). ``read``: the run's ``read_turns`` under the same reply
    rules, when the caller has it.

    Two passes: the token counts and how each turn ends, for every turn (``read_turns``); then the guards, over the
    tool turns before ``limit``, the latest turn any policy of the group can still be running outside a landing
    (``reach``: its crossing under the largest grant and the smallest cache weight, or its turn cap). A guard
    reading at or after that turn can change no answer: the guards are read only before the crossing and before
    the stop (see ``blocks``)."""
    r = read if read is not None else turns_of(run, policy)
    if r is None:
        return None
    n, tool_idx = r.n, r.tool_idx
    limit = r.limit(reach)
    progress = ProgressGuard.from_policy(policy) if policy.no_progress else None
    timeouts = ToolTimeoutGuard(policy.tool_timeout_cap) if policy.tool_timeouts else None
    guard_stop, guard_kind, guard_reason, guard_meter = n, "", "", None
    guard_events: list[tuple[int, str, int]] = []
    guard_basis, first_unjudged = "", -1
    k = bisect_left(tool_idx, limit)  # the observed tool turns: those before ``limit``
    # a guard that provably stays silent over the observed turns is not read in full (its answer is known: nothing)
    if progress is not None and progress.silent_over(r.changed[:k], r.last_calls[:k]):
        progress = None
    if timeouts is not None and not any(r.timed_out[:k]):
        timeouts = None  # it counts only results flagged timed out
    if progress is not None or timeouts is not None:
        for t, (facts, res, mutated, inferred) in zip(tool_idx[:k], r.guard_facts(), strict=False):
            if timeouts is not None:
                hit = timeouts.observe(facts, res)
                if hit is not None:
                    guard_stop, guard_kind, guard_reason = t, "tool-timeouts", hit.reason
                    guard_meter = tool_timeouts_meter(hit.count, policy.tool_timeout_cap)
                    break
            if progress is not None:
                signal, fired, unjudged = progress.step(facts, res, mutated, inferred)
                if unjudged and first_unjudged < 0:
                    first_unjudged = t
                if signal is Signal.PACE:
                    guard_events.append((t, "recon", 2))
                elif signal is Signal.CONCLUDE:
                    progress.mark_concluded()
                    guard_events.append((t, "conclude", 1))
                elif signal is Signal.TERMINATE:
                    guard_stop, guard_kind, guard_reason = t, "no-progress", progress.reason(fired)
                    guard_meter = no_progress_meter(t + 1)
                    guard_basis = progress.basis(fired)
                    break
    return Probe(
        n, r.prompt, r.cached, r.comp, r.calls, r.mutations, tool_idx, r.empties, r.finals, guard_stop, guard_kind,
        guard_reason, guard_meter, guard_events, guard_basis, first_unjudged, r.cheap, r.last,
    )  # fmt: skip


class _Segments:
    """Searches in many sorted segments at once (one per run): each segment's values are shifted into a band of
    their own, ``segment * width + (value - low)``, so one ``np.searchsorted`` answers every (run, query) pair and
    the answer is the index *within* the pair's segment — exactly what a search in that run's own array gives."""

    def __init__(self, values: np.ndarray, lengths: np.ndarray) -> None:
        """``values``: every segment's values, one segment after another; ``lengths``: each segment's length."""
        self.lengths = lengths
        self.starts = _starts(lengths)
        self.values = values
        self.low = int(self.values.min()) if self.values.size else 0
        self.width = (int(self.values.max()) - self.low + 2) if self.values.size else 2
        seg = np.repeat(np.arange(len(lengths), dtype=np.int64), self.lengths)
        if (len(lengths) + 1) * self.width >= 2**62:
            raise OverflowError("token counts too large to search in one band per run")
        self.keys = seg * self.width + (self.values - self.low)
        self._seg: np.ndarray | None = (
            None  # the last pairs' runs, and what they read of the segments (below)
        )
        self._base = self._start = self._len = np.zeros(0, dtype=np.int64)

    def _pairs(self, seg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per pair: its band's base, its segment's start and length (kept: a batch asks for the same pairs)."""
        if self._seg is not seg:
            self._seg = seg
            self._base, self._start, self._len = seg * self.width, self.starts[seg], self.lengths[seg]
        return self._base, self._start, self._len

    def search(self, seg: np.ndarray, query: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
        """Per pair, ``np.searchsorted(segment[seg], query, side)``."""
        base, start, _ = self._pairs(seg)
        q = np.minimum(np.maximum(np.asarray(query, dtype=np.int64) - self.low, -1), self.width - 1)
        found: np.ndarray = np.searchsorted(self.keys, base + q, side=side) - start
        return found

    def take(self, seg: np.ndarray, at: np.ndarray, fill: int) -> np.ndarray:
        """Per pair, ``segment[seg][at]`` where ``0 <= at < len``, else ``fill``."""
        _, start, length = self._pairs(seg)
        ok = (at >= 0) & (at < length)
        if not self.values.size:
            return np.full(len(seg), fill, dtype=np.int64)
        idx = np.minimum(np.maximum(start + at, 0), self.values.size - 1)
        return np.where(ok, self.values[idx], fill)

    def first_over(self, seg: np.ndarray, denominators: np.ndarray, threshold: float) -> np.ndarray:
        """Per pair, the first index i of the pair's (non-decreasing) segment with ``value[i] / D > threshold``
        exactly as float64 division decides it (the segment's length when none). The search runs on
        ``floor(threshold * D)`` (for an integer v, ``v > x`` iff ``v > floor(x)``); the rounding of that product
        can only misplace the boundary by the one distinct value next to it, which is checked with the true
        division."""
        L = self._pairs(seg)[2]
        cut = np.floor(threshold * denominators.astype(np.float64)).astype(np.int64)
        j = self.search(seg, cut, "right")
        if not self.values.size:
            return j
        prev = self.take(seg, j - 1, 0)
        back = (j > 0) & (prev / denominators > threshold)
        j = np.where(back, self.search(seg, prev, "left"), j)
        here = self.take(seg, j, 0)
        ahead = (j < L) & ~(here / denominators > threshold)
        return np.where(ahead, self.search(seg, here, "right"), j)


def _starts(lengths: np.ndarray) -> np.ndarray:
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def _running(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Cumulative sums that restart at every segment."""
    total = np.cumsum(values)
    before = np.where(starts > 0, total[np.maximum(starts - 1, 0)] if total.size else 0, 0)
    out: np.ndarray = total - np.repeat(before, lengths)
    return out


def _spent(P: np.ndarray, C: np.ndarray, comp_cum: np.ndarray, weight: int) -> np.ndarray:
    cc = np.minimum(np.maximum(C, 0), P)
    out: np.ndarray = (P - cc) + cc * weight // 100 + comp_cum
    return out


def blocks(sheet: Sheet, policies: list[Policy], labels: list[str]) -> dict[str, Any]:
    """The sweep rows of ``policies`` (one group: equal ``group_key``, all eligible) for many leaves at once, as
    columns of ``len(sheet) * len(policies)`` rows, leaf by leaf and in policy order within a leaf. ``sheet`` is
    the leaves' reading under the group's guard settings (``workbench.replay.sheet``: from ``probe`` of Runs in
    memory, or from a loaded corpus's index), every leaf of it eligible."""
    K = len(policies)
    weights = np.array([p.cache_weight_percent for p in policies], dtype=np.int64)
    groups = [np.flatnonzero(weights == w) for w in np.unique(weights)]
    R = len(sheet)
    parts = []
    for idx in groups:
        sub = [policies[i] for i in idx]
        cols = _blocks_split(sheet, sub, [labels[i] for i in idx], int(weights[idx[0]]))
        pos = (np.arange(R, dtype=np.int64)[:, None] * K + idx[None, :]).ravel()
        parts.append((pos, cols))
    if len(parts) == 1:
        return parts[0][1]
    pos = np.concatenate([p for p, _ in parts])
    out: dict[str, Any] = {}
    for name in parts[0][1]:
        values = np.concatenate(
            [np.asarray(c[name], dtype=object if isinstance(c[name], list) else None) for _, c in parts]
        )
        target = np.empty(len(pos), dtype=values.dtype)
        target[pos] = values
        out[name] = target
    return out


def _blocks_split(sheet: Sheet, policies: list[Policy], labels: list[str], weight: int) -> dict[str, Any]:
    try:
        return _blocks_for_weight(sheet, policies, labels, weight)
    except OverflowError:
        if len(sheet) == 1:
            raise
    half = len(sheet) // 2  # token counts too large to band together: halve the batch
    idx = np.arange(len(sheet), dtype=np.int64)
    a = _blocks_split(sheet.take(idx[:half]), policies, labels, weight)
    b = _blocks_split(sheet.take(idx[half:]), policies, labels, weight)
    return {k: np.concatenate([a[k], b[k]]) for k in a}


class Stop(IntEnum):
    """How a (run, policy) pair ends, in the fast path's own encoding (the rows carry the governor's words). The
    members are in the order the governor meets them within one turn, so a pair's stop is the first member at
    the smallest turn (``_earliest``): ``after_response``'s empty-reply abandonment (step I) and final answer
    (step K); ``after_tools``' guards (steps V/W) and landing end (step T, never at a guard's turn: the guards
    are read only before the landing starts); then the next ``begin_turn``'s turn cap, which stops the run after
    the turn's last call. ``END``: none of them, the recording ran out."""

    EMPTY = 0
    FINAL = 1
    GUARD = 2
    LANDING = 3
    TURN_CAP = 4
    END = 5


class _Batch:
    """One batch of (run, policy) pairs under one cache weight, run by run and in policy order within a run:
    each pair's run (``rr``) and policy (``kk``), its run's length ``n`` and tool turns, its policy's grant and
    turn cap, and the runs' meters after each call, flat run after run (the governor's ``Totals``): ``P`` the
    prompt tokens sent (Σsent), ``S`` the cost meter (``cost.spent`` at the weight), ``raw``."""

    def __init__(self, sheet: Sheet, policies: list[Policy], weight: int) -> None:
        self.sheet, self.base, self.R, self.K = sheet, policies[0], len(sheet), len(policies)
        self.rr = np.repeat(np.arange(self.R, dtype=np.int64), self.K)
        self.kk = np.tile(np.arange(self.K, dtype=np.int64), self.R)
        self.n_r, self.off_r = sheet.n, _starts(sheet.n)
        self.per_turn = {name: getattr(sheet, name).values for name in PER_TURN}
        self.P = self.running(self.per_turn["prompt"])
        C = self.running(self.per_turn["cached"])
        comp = self.running(self.per_turn["comp"])
        self.S = _spent(self.P, C, comp, weight)
        self.raw = self.P + comp
        self.tools = _Segments(sheet.tool_idx.values, sheet.tool_idx.lengths)
        self.tool_turn = np.repeat(self.off_r, self.tools.lengths) + self.tools.values  # in the flat arrays
        self.spent_tool = _Segments(self.S[self.tool_turn], self.tools.lengths)
        self.pair_off = self.off_r[self.rr]
        self.n, self.nt = self.n_r[self.rr], self.tools.lengths[self.rr]
        self.grant_k = np.array([p.grant for p in policies], dtype=np.int64)
        self.grant = self.grant_k[self.kk]
        self.cap = np.array([p.effective_max_turns for p in policies], dtype=np.int64)[self.kk]

    def running(self, values: np.ndarray) -> np.ndarray:
        """Per turn, the sum of ``values`` over its run's turns up to it."""
        return _running(values, self.off_r, self.n_r)

    def at(self, values: np.ndarray, turn: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """Per pair, a per-turn value at its run's ``turn`` where ``ok``, else 0."""
        if not values.size:
            return np.zeros(len(turn), dtype=np.int64)
        return np.where(ok, values[np.minimum(np.maximum(self.pair_off + turn, 0), values.size - 1)], 0)

    def tool_at(self, j: np.ndarray) -> np.ndarray:
        """Per pair, its run's ``j``-th tool turn (``n`` past the last)."""
        return np.where(j < self.nt, self.tools.take(self.rr, j, 0), self.n)


def _crossing(b: _Batch) -> np.ndarray:
    """Step S: the budget landing starts after the first tool turn whose spend reaches the grant (``n``: none).
    Spent never falls on an eligible run, so this is a search over the tool turns' spend. Without the cost
    lander (``cost_lands`` off) nothing crosses."""
    if not b.base.cost_lands:
        return b.n.copy()
    return b.tool_at(b.spent_tool.search(b.rr, b.grant, "left"))


def _abandonment(b: _Batch) -> np.ndarray:
    """Step I (``replies.abandon_empty``): the first reply-less turn whose completion burned more than half of the
    grant left before it (``n``: none, or the rule is off). Every reply-less turn is tried against every grant."""
    A = b.n.copy()
    e_count = b.sheet.empties.lengths
    if not b.base.empty_abandon or not e_count.sum():
        return A
    e_local = b.sheet.empties.values
    e_flat = b.off_r[np.repeat(np.arange(b.R, dtype=np.int64), e_count)] + e_local
    spent_before = np.where(e_local > 0, b.S[np.maximum(e_flat - 1, 0)], 0)
    left = b.grant_k[None, :] - spent_before[:, None]
    hit = (left > 0) & (b.per_turn["comp"][e_flat][:, None] > left // EMPTY_REPLY_DIVISOR)
    first = np.where(hit, e_local[:, None], NONE)
    has = np.flatnonzero(e_count)
    earliest = np.full((b.R, b.K), NONE, dtype=np.int64)
    earliest[has] = np.minimum.reduceat(first, _starts(e_count)[has], axis=0)
    out: np.ndarray = np.minimum(A, earliest.ravel())
    return out


def _landing_end(b: _Batch, X: np.ndarray, policies: list[Policy]) -> tuple[np.ndarray, np.ndarray]:
    """Step T (``landing.countdown``): the landing ends at the ``landing_turns``-th tool turn after the crossing,
    or at the first of them whose spend reaches the token ceiling (the crossing's spend plus ``landing_allowance``;
    none without a token share). Returns the end turn (``n``: the recording ran out first) and whether the token
    half ended it before its last turn (the ``landing-tokens`` note)."""
    E = b.n.copy()
    tokens_end = np.zeros(len(E), dtype=bool)
    landed = b.n > X
    if not landed.any():
        return E, tokens_end
    has_share = np.array([p.landing_token_share is not None for p in policies])[b.kk]
    allowance = np.array([landing_allowance(p.grant, p.landing_token_share) for p in policies])[b.kk]
    ceiling = np.where(landed & has_share, b.at(b.S, X, landed) + allowance, 0)  # landing.landing_ceiling
    pos = b.tools.search(b.rr, X, "right")
    LT = b.base.landing_turns
    for k in range(LT):
        at = pos + k
        valid = landed & (at < b.nt) & (b.n == E)
        t_k = b.tools.take(b.rr, at, 0)
        spent_hit = (ceiling > 0) & (b.at(b.S, t_k, valid) >= ceiling)
        hit = valid & ((k == LT - 1) | spent_hit)
        E = np.where(hit, t_k, E)
        tokens_end |= hit & spent_hit & (LT - k > 1)
    return E, tokens_end


def _reopen_below(b: _Batch, X: np.ndarray) -> np.ndarray:
    """Step K's reopening: a final the recording went past was steered, and reopens the loop (a note, no stop)
    while no landing is under way and before the last iteration; so a final is delivered at a turn at or after
    ``min(n - 1, X, cap - 1)`` (the crossing is a tool turn, never a final)."""
    out: np.ndarray = np.minimum(np.minimum(b.n - 1, X), b.cap - 1)
    return out


def _delivered_final(b: _Batch, X: np.ndarray) -> np.ndarray:
    """Step K: the first final answer that is delivered, not reopened (``n``: none)."""
    finals = _Segments(b.sheet.finals.values, b.sheet.finals.lengths)
    j = finals.search(b.rr, _reopen_below(b, X), "left")
    return np.where(j < finals.lengths[b.rr], finals.take(b.rr, j, 0), b.n)


def _earliest(b: _Batch, candidates: dict[Stop, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The stop of each pair: per candidate, the turn of the last call it lets the run make (``n`` or more: it
    does not stop the recording), in ``Stop`` order; the first at the smallest turn wins (``Stop``). Returns the
    code (``END`` when none) and the stop turn (``n - 1`` when none)."""
    turns = np.stack([candidates[stop] for stop in Stop if stop is not Stop.END])
    which, turn = turns.argmin(axis=0), turns.min(axis=0)
    stopped = turn < b.n
    return np.where(stopped, which, Stop.END), np.where(stopped, turn, b.n - 1)


def _wrapup(b: _Batch, X: np.ndarray, responses_before: np.ndarray) -> np.ndarray:
    """Step U (``wrapup.budget_used``, ``wrapup_due``): the first tool turn before the crossing whose reading is
    over ``wrapup_at`` and before the stop (step U comes before the guards at the same turn), else -1. Every
    reading rises turn by turn, so each is a search; the float division is decided exactly (``first_over``)."""
    base, nt = b.base, b.nt
    if base.wrapup_at is None:
        return np.full(len(nt), -1, dtype=np.int64)
    first, thr = nt.copy(), base.wrapup_at
    if "cost" in base.wrapup_readings:
        first = np.minimum(first, b.spent_tool.first_over(b.rr, b.grant, thr))
    if "raw" in base.wrapup_readings:
        raw_tool = _Segments(b.raw[b.tool_turn], b.tools.lengths)
        first = np.minimum(first, raw_tool.first_over(b.rr, b.grant * base.raw_ceiling_multiple, thr))
    if base.window is not None:
        reuse_r = np.full(b.R, reuse_ceiling(base.window), dtype=np.int64)
    else:
        lengths, where = np.unique(b.sheet.context_length, return_inverse=True)
        ceilings = [reuse_ceiling(None if w < 0 else int(w)) for w in lengths]
        reuse_r = np.asarray(ceilings, dtype=np.int64)[where.reshape(-1)] if b.R else np.zeros(0, np.int64)
    if "reuse" in base.wrapup_readings and (reuse_r > 0).any():
        prompt_tool = _Segments(b.P[b.tool_turn], b.tools.lengths)
        reuse = reuse_r[b.rr]
        over = prompt_tool.first_over(b.rr, np.maximum(reuse, 1), thr)
        first = np.where(reuse > 0, np.minimum(first, over), first)
    t_w = b.tool_at(first)
    return np.where(t_w < np.minimum(X, responses_before), t_w, -1)


def _timeline(
    b: _Batch, X: np.ndarray, code: np.ndarray, stop_turn: np.ndarray, tokens_end: np.ndarray
) -> dict[str, np.ndarray]:
    """The decisions before the stop and the first turn they change (``n_events``, ``diverges_at``), and the
    first conclude directive, unjudged turn and wrap-up: the stop itself; one per nudge or skipped batch and per
    reopened final (steps K, M); the guards' recon (two) and conclude (one) decisions while no landing is
    active; the wrap-up; the landing's start (two) and its token note."""
    sheet, rr = b.sheet, b.rr
    # a decision after turn t's response precedes the stop iff t < responses_before; after its tools, t < tools_before
    responses_before = stop_turn + (code > Stop.FINAL)
    tools_before = stop_turn + (code > Stop.LANDING)
    n_events = (code != Stop.END).astype(np.int64)
    div = b.n + 1
    cheap = _Segments(sheet.cheap_turns.values, sheet.cheap_turns.lengths)
    n_events += cheap.search(rr, responses_before, "left")
    t0 = sheet.first_cheap_div[rr]
    div = np.where((t0 >= 0) & (t0 < responses_before), np.minimum(div, t0 + 1), div)
    finals = _Segments(sheet.finals.values, sheet.finals.lengths)
    reopened_before = np.minimum(_reopen_below(b, X), responses_before)
    n_events += np.where(finals.lengths[rr] > 0, finals.search(rr, reopened_before, "left"), 0)
    guarded = np.minimum(X, tools_before)  # the guards speak only before the landing
    guard_turns = _Segments(sheet.guard_turns.values, sheet.guard_turns.lengths)
    guard_counts = _Segments(sheet.guard_counts.values, sheet.guard_counts.lengths)
    n_events += guard_counts.take(rr, guard_turns.search(rr, guarded, "left"), 0)
    gt0 = guard_turns.take(rr, np.zeros(len(rr), dtype=np.int64), -1)
    div = np.where((gt0 >= 0) & (gt0 < guarded), np.minimum(div, gt0 + 1), div)
    tc, tu = sheet.first_conclude[rr], sheet.first_unjudged[rr]
    wrapup_at = _wrapup(b, X, responses_before)
    has_wrapup = wrapup_at >= 0
    n_events += has_wrapup
    div = np.where(has_wrapup, np.minimum(div, wrapup_at + 1), div)
    landing_at = np.where((b.n > X) & (tools_before > X), X, -1)
    did_land = landing_at >= 0
    n_events += np.where(did_land, 2, 0) + ((code == Stop.LANDING) & tokens_end)
    div = np.where(did_land, np.minimum(div, landing_at + 1), div)
    return {
        "landing_started_at": landing_at,
        "wrapup_at": wrapup_at,
        "concluded_at": np.where((tc >= 0) & (tc < guarded), tc, -1),
        "diverges_at": np.where((div <= stop_turn) & (div < b.n), div, -1),
        "n_events": n_events,
        "unjudged_at": np.where((tu >= 0) & (tu < guarded), tu, -1),
    }


_REASONS = {Stop.EMPTY: StopReason.EMPTY.value, Stop.FINAL: StopReason.DONE.value}
_REASONS.update({Stop.LANDING: StopReason.BUDGET.value, Stop.TURN_CAP: StopReason.TURN_CAP.value})
_VERDICTS = {Stop.EMPTY: Verdict.EMPTY_RESPONSE.value, Stop.FINAL: Verdict.UNVERIFIED_SUCCESS.value}
_VERDICTS.update({Stop.GUARD: Verdict.BUDGET_STOP.value, Stop.LANDING: Verdict.BUDGET_STOP.value})
_VERDICTS[Stop.TURN_CAP] = Verdict.TURN_CAP.value


def _by_stop(
    b: _Batch, code: np.ndarray, fixed: dict[Stop, Any], per_run: dict[Stop, np.ndarray]
) -> np.ndarray:
    """Per pair, the answer its stop code gives: one for every run (``fixed``) or its run's own (``per_run``)."""
    table = np.empty((b.R, len(Stop)), dtype=object)
    for stop, value in (fixed | per_run).items():
        table[:, stop] = value
    out: np.ndarray = table[b.rr, code]
    return out


def _ending(b: _Batch, code: np.ndarray, stop_turn: np.ndarray, landed: np.ndarray) -> dict[str, np.ndarray]:
    """What the stop says (``verdict.verdict_for``, the meter records): its reason; its verdict, a budget stop for
    a final or the recording's end under a landing; its meter — the cost meter at the stop for a landing's end,
    or a final or the end under one, the turn meter at the cap, the guard's own meter."""
    sheet = b.sheet
    reason = _by_stop(b, code, _REASONS, {Stop.GUARD: sheet.guard_kind, Stop.END: sheet.end_reason})
    verdict = _by_stop(b, code, _VERDICTS, {Stop.END: sheet.verdict_plain})
    verdict = np.where(landed & (code == Stop.FINAL), Verdict.BUDGET_STOP.value, verdict)
    verdict = np.where(landed & (code == Stop.END), sheet.verdict_budget[b.rr], verdict)
    spent_stop = b.at(b.S, stop_turn, stop_turn >= 0)
    cost = (code == Stop.LANDING) | (((code == Stop.FINAL) | (code == Stop.END)) & landed)
    cap, guard = code == Stop.TURN_CAP, code == Stop.GUARD
    meter = _by_stop(b, code, {stop: "" for stop in Stop}, {Stop.GUARD: sheet.guard_meter})
    meter = np.where(cost, COST, np.where(cap, TURNS, meter))
    reached = np.where(guard, sheet.guard_reached[b.rr], 0)
    allowed = np.where(guard, sheet.guard_allowed[b.rr], 0)
    return {
        "stop_reason": reason,
        "verdict": verdict,
        "meter": meter,
        "meter_reached": np.where(cost, spent_stop, np.where(cap, b.cap, reached)),
        "meter_allowed": np.where(cost, b.grant, np.where(cap, b.cap, allowed)),
        "spent": spent_stop,
        "raw": b.at(b.raw, stop_turn, stop_turn >= 0),
        "censored": (code == Stop.END) & ~sheet.own[b.rr],
    }


def _cut(b: _Batch, replayed: np.ndarray) -> dict[str, np.ndarray]:
    """What the stop cut: every recorded turn from ``replayed`` on (its run's total less the running sum before)."""
    per, out = b.per_turn, {}
    cut = {"tokens": per["prompt"] + per["comp"], "tool_calls": per["calls"], "mutations": per["mutations"]}
    for name, values in cut.items():
        running = b.running(values)
        out[f"cut_{name}"] = b.at(running, b.n - 1, b.n > 0) - b.at(running, replayed - 1, replayed > 0)
    return out


def _blocks_for_weight(
    sheet: Sheet, policies: list[Policy], labels: list[str], weight: int
) -> dict[str, Any]:
    """The rows of one weight's policies: the stages above, each a governor rule over every pair at once."""
    b = _Batch(sheet, policies, weight)
    X = _crossing(b)
    E, tokens_end = _landing_end(b, X, policies)
    G = sheet.guard_stop[b.rr]  # steps V/W, read by ``probe``: they speak only before the landing
    candidates = {
        Stop.EMPTY: _abandonment(b),
        Stop.FINAL: _delivered_final(b, X),
        Stop.GUARD: np.where(G < X, G, b.n),
        Stop.LANDING: E,
        Stop.TURN_CAP: np.where(b.cap <= b.n, b.cap - 1, b.n),
    }
    code, stop_turn = _earliest(b, candidates)
    timeline = _timeline(b, X, code, stop_turn, tokens_end)
    landed = timeline["landing_started_at"] >= 0
    n, rr = b.n, b.rr
    replayed = stop_turn + 1
    return {
        "run_id": sheet.run_id[rr],
        "segment": sheet.segment[rr],
        "rules": np.array([b.base.rules] * len(rr), dtype=object),  # one str (np.full copies it per row)
        "grant": b.grant,
        "policy_label": np.array(labels, dtype=object)[b.kk],
        "stop_turn": stop_turn,
        **_ending(b, code, stop_turn, landed),
        "landing_kind": np.array([None, "budget"], dtype=object)[landed.astype(np.int64)],
        **timeline,
        **_cut(b, replayed),
        "cut_turns": n - replayed,
        "good_outcome_after_cut": (n - replayed > 0) & sheet.good[rr],
        "recorded_stop": sheet.recorded_stop[rr],
        "turns": n,
        "turns_replayed": replayed,
        "timed": np.zeros(len(rr), dtype=bool),
        "stop_basis": np.where(
            (code == Stop.GUARD) & (sheet.guard_basis[rr] != ""),
            sheet.guard_basis[rr],
            np.full(len(rr), None, dtype=object),
        ),
    }


def read_sheet(runs: Sequence[Run], policy: Policy) -> Sheet:
    """The sheet of ``runs`` under ``policy``'s guard settings, each leaf read over its whole length (an unlimited
    reach: a reading past any group's crossing or turn cap changes no answer, so the sheet serves every grid of
    these settings)."""
    unlimited = Reach(BIG, 0, BIG)
    return Sheet.of(runs, [probe(r, policy, unlimited) for r in runs], probe_key(policy))


__all__ = [
    "FAST_FIELDS", "NULLABLE", "Reach", "Stop", "blocks", "group_key", "policy_eligible", "probe", "read_sheet",
    "run_eligible",
]  # fmt: skip
