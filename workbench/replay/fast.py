"""The vectorised fast path for grids that only move the cost meter: grant, cache weight, landing token share and
turn cap.

For one run and a group of policies that agree on everything else, the grant-independent facts are read once
(``probe``) — how each turn ends (tool turn, length-stopped batch, nudge, final), the guards' readings (which never
depend on the grant while no landing is active) — and then every policy of the group is answered with numpy, for a
whole batch of runs at once (``blocks``: each run's sorted arrays sit in a band of their own, so one search answers
every (run, policy) pair): cumulative sums give spent/raw per turn, the crossing is the first tool turn at or over
the grant, the landing's end is a search over the next tool turns, and the stop is the earliest of turn cap,
empty-reply abandonment, final answer, guard stop and landing end, in the governor's own phase order.

The guards are read only as far as any policy of the group can reach outside a landing (``Reach``), and not read in
full where they provably stay silent (``ProgressGuard.silent_over``; no timed-out result).

It is used only where it is exact (``policy_eligible``, ``run_eligible``, ``probe``): the cost meter is the only
lander (no raw/reuse landing, no OpenHands rules), no deadline applies, no fold, no context manager, no recorded
injections to match, and every turn's cache reads are within its prompt (so spent never decreases). Everything else
takes the governor path; ``tests/replay/test_fast.py`` holds the two equal on every run of the real and synthetic
corpora."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.govern.messages import LENGTH_BATCH_TEXT
from workbench.govern.meter_record import COST, TURNS, no_progress_meter, tool_timeouts_meter
from workbench.govern.noprogress import MUTATION_TOOLS, ProgressGuard, Signal, signature
from workbench.govern.policy import COMPARED_FIELDS, Policy
from workbench.govern.pressure import reuse_ceiling
from workbench.govern.replies import is_length
from workbench.govern.tooltimeout import ToolTimeoutGuard
from workbench.govern.verdict import BUDGET_STOP
from workbench.replay.columns import NULLABLE
from workbench.replay.engine import recorded_injections
from workbench.replay.facts import SELF_CLOSE, STANDING_FINDING, TOOL_SPEND, call_facts, result_facts
from workbench.replay.sheet import Sheet, probe_key
from workbench.trace.schema import Run

FAST_FIELDS = frozenset({"grant", "cache_weight_percent", "landing_token_share", "max_turns"})

TOOL, SKIP, NUDGE_EMPTY, NUDGE_LENGTH, FINAL, SILENT = range(6)
BIG = np.iinfo(np.int64).max // 8


_KEY_FIELDS = tuple(name for name in COMPARED_FIELDS if name not in FAST_FIELDS)


def group_key(policy: Policy) -> tuple:
    """Policies with equal keys differ only in the fast fields."""
    return tuple(getattr(policy, name) for name in _KEY_FIELDS)


def policy_eligible(p: Policy) -> bool:
    return (
        p.cost_lands
        and p.grant > 0
        and not p.raw_lands
        and not p.reuse_lands
        and not p.stuck_detection
        and not p.finish_tools
        and not p.fold
        and p.turn_cap_offset == 0
        and p.context_length is None
        and not p.reflex  # step J's endings read the calls: the engine's
        and not p.swarm
    )


@dataclass(frozen=True, slots=True)
class Reach:
    """How far a group of policies can run outside a landing: its largest grant, smallest cache weight (spent
    rises with the weight, so these two cross last) and largest turn cap."""

    grant: int
    weight: int
    turns: int

    @classmethod
    def of(cls, policies: list[Policy]) -> Reach:
        return cls(
            max(p.grant for p in policies),
            min(p.cache_weight_percent for p in policies),
            max(p.effective_max_turns for p in policies),
        )


def run_eligible(run: Run, policy: Policy) -> bool:
    """The run has nothing the fast path leaves out as a whole: deadline rules (a timed run under a deadline) or
    recorded injections to match. ``probe`` checks the rest turn by turn (cache reads within the prompt)."""
    timed = policy.deadline_s is not None and bool(run.turns)  # only a deadline asks whether the run is timed
    if timed and all(t.started_at is not None and t.ended_at is not None for t in run.turns):
        return False
    # tool-side spend and the leaf's own landing check are the engine's (the fast path reads turn usage only)
    if any(e.kind in (TOOL_SPEND, SELF_CLOSE, STANDING_FINDING) for e in run.events):
        return False
    if any(r.usage is not None for t in run.turns for r in t.tool_results):
        return False
    return recorded_injections(run) is None


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


def probe(run: Run, policy: Policy, reach: Reach) -> Probe | None:
    """The grant-independent reading of a run under one group of policies (``policy``, any of them, sets everything
    but the fast fields; ``reach`` is the group's); None when a turn's cache reads exceed its prompt (spent could
    fall, so the searches below would not be exact).

    Two passes: the token counts and how each turn ends, for every turn; then the guards, over the tool turns
    before ``limit``, the latest turn any policy of the group can still be running outside a landing (``reach``:
    its crossing under the largest grant and the smallest cache weight, or its turn cap). A guard reading at or after that turn
    can change no answer: the guards are read only before the crossing and before the stop (see ``blocks``)."""
    turns = run.turns
    n = len(turns)
    prompt: list[int] = []
    cached: list[int] = []
    comp: list[int] = []
    calls_turn: list[int] = []
    mut_turn: list[bool] = []
    tool_idx: list[int] = []
    empties: list[int] = []
    cheap: list[tuple[int, int, bool]] = []
    last = ""
    finals: list[int] = []
    nudges, batch = policy.nudges, policy.length_batch
    # the spent meter under the reach's weight, on cumulative totals: its first tool turn at the reach's grant
    p = c = o = 0
    limit = n
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
        if limit == n:
            cc = min(max(c, 0), p)
            if (p - cc) + cc * reach.weight // 100 + o >= reach.grant:
                limit = t
    limit = min(limit, reach.turns)
    progress = ProgressGuard.from_policy(policy) if policy.no_progress else None
    timeouts = ToolTimeoutGuard(policy.tool_timeout_cap) if policy.tool_timeouts else None
    guard_stop, guard_kind, guard_reason, guard_meter = n, "", "", None
    guard_events: list[tuple[int, str, int]] = []
    guard_basis, first_unjudged = "", -1
    observed = [turns[t] for t in tool_idx if t < limit]
    # a guard that provably stays silent over the observed turns is not read in full (its answer is known: nothing)
    if progress is not None:
        mutated = [
            True if x.mutated or any(c.name in MUTATION_TOOLS for c in x.tool_calls) else x.mutated
            for x in observed
        ]
        last_calls = [signature(x.tool_calls[-1].name, x.tool_calls[-1].arguments) for x in observed]
        if progress.silent_over(mutated, last_calls):
            progress = None
    if timeouts is not None and not any(r.timed_out for x in observed for r in x.tool_results):
        timeouts = None  # it counts only results flagged timed out
    if progress is not None or timeouts is not None:
        for t, turn in zip(tool_idx, observed, strict=False):
            calls = call_facts(turn)
            res = result_facts(turn)
            if timeouts is not None:
                hit = timeouts.observe(calls, res)
                if hit is not None:
                    guard_stop, guard_kind, guard_reason = t, "tool-timeouts", hit.reason
                    guard_meter = tool_timeouts_meter(hit.count, policy.tool_timeout_cap)
                    break
            if progress is not None:
                inferred = turn.mutated is not None and turn.mutated_rule is not None
                reading = progress.observe(calls, res, turn.mutated, inferred)
                if reading.unjudged and first_unjudged < 0:
                    first_unjudged = t
                if reading.signal is Signal.PACE:
                    guard_events.append((t, "recon", 2))
                elif reading.signal is Signal.CONCLUDE:
                    progress.mark_concluded()
                    guard_events.append((t, "conclude", 1))
                elif reading.signal is Signal.TERMINATE:
                    guard_stop, guard_kind, guard_reason = t, "no-progress", reading.reason
                    guard_meter = no_progress_meter(t + 1)
                    guard_basis = reading.basis
                    break
    return Probe(
        n=n,
        prompt=prompt,
        cached=cached,
        comp=comp,
        calls=calls_turn,
        mutations=mut_turn,
        tool_idx=tool_idx,
        empties=empties,
        finals=finals,
        guard_stop=guard_stop,
        guard_kind=guard_kind,
        guard_reason=guard_reason,
        guard_meter=guard_meter,
        guard_events=guard_events,
        guard_basis=guard_basis,
        first_unjudged=first_unjudged,
        cheap_events=cheap,
        last_text=last,
    )


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

    @classmethod
    def of(cls, parts: list[list[int]] | list[np.ndarray]) -> _Segments:
        lengths = np.array([len(a) for a in parts], dtype=np.int64)
        return cls(_flat(parts, int(lengths.sum())), lengths)

    def search(self, seg: np.ndarray, query: np.ndarray, side: str) -> np.ndarray:
        """Per pair, ``np.searchsorted(segment[seg], query, side)``."""
        base, start, _ = self._pairs(seg)
        q = np.minimum(np.maximum(np.asarray(query, dtype=np.int64) - self.low, -1), self.width - 1)
        return np.searchsorted(self.keys, base + q, side=side) - start

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


def _first_over(values: np.ndarray, denominators: np.ndarray, threshold: float) -> np.ndarray:
    """``_Segments.first_over`` for one sorted array and several denominators."""
    one = _Segments.of([np.asarray(values, dtype=np.int64)])
    return one.first_over(np.zeros(len(denominators), dtype=np.int64), np.asarray(denominators), threshold)


def _starts(lengths: np.ndarray) -> np.ndarray:
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def _flat(parts: Any, total: int) -> np.ndarray:
    """Lists (or arrays) of integers, one after another, as one int64 array."""
    return np.fromiter(itertools.chain.from_iterable(parts), dtype=np.int64, count=total)


def _running(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Cumulative sums that restart at every segment."""
    total = np.cumsum(values)
    before = np.where(starts > 0, total[np.maximum(starts - 1, 0)] if total.size else 0, 0)
    return total - np.repeat(before, lengths)


def _spent(P: np.ndarray, C: np.ndarray, comp_cum: np.ndarray, weight: int) -> np.ndarray:
    cc = np.minimum(np.maximum(C, 0), P)
    return (P - cc) + cc * weight // 100 + comp_cum


def blocks(sheet: Sheet, policies: list[Policy], labels: list[str]) -> dict[str, Any]:
    """The sweep rows of ``policies`` (one group: equal ``group_key``, all eligible) for many leaves at once, as
    columns of ``len(sheet) * len(policies)`` rows, leaf by leaf and in policy order within a leaf. ``sheet`` is
    the leaves' reading under the group's guard settings (``workbench.replay.sheet``: from ``probe`` of Runs in
    memory, or from a loaded corpus's index), every leaf of it eligible."""
    K = len(policies)
    weights = np.array([p.cache_weight_percent for p in policies], dtype=np.int64)
    groups = (
        [np.arange(K)]
        if (weights == weights[0]).all()
        else [np.flatnonzero(weights == w) for w in np.unique(weights)]
    )
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


def _blocks_for_weight(
    sheet: Sheet, policies: list[Policy], labels: list[str], weight: int
) -> dict[str, Any]:
    base = policies[0]
    R, K = len(sheet), len(policies)
    rr = np.repeat(np.arange(R, dtype=np.int64), K)  # the run of each (run, policy) pair
    kk = np.tile(np.arange(K, dtype=np.int64), R)  # its policy
    n_r = sheet.n
    off_r = _starts(n_r)
    per_turn = {
        name: getattr(sheet, name).values for name in ("prompt", "cached", "comp", "calls", "mutations")
    }
    P = _running(per_turn["prompt"], off_r, n_r)
    C = _running(per_turn["cached"], off_r, n_r)
    comp_cum = _running(per_turn["comp"], off_r, n_r)
    S = _spent(P, C, comp_cum, weight)
    raw = P + comp_cum
    tools = _Segments(sheet.tool_idx.values, sheet.tool_idx.lengths)
    nt_r = tools.lengths
    tool_turn = np.repeat(off_r, nt_r) + tools.values  # the tool turns' places in the flat per-turn arrays
    spent_tool = _Segments(S[tool_turn], nt_r)

    pair_off = off_r[rr]

    def at_turn(a: np.ndarray, turn: np.ndarray, ok: np.ndarray) -> np.ndarray:
        if not a.size:
            return np.zeros(len(turn), dtype=np.int64)
        return np.where(ok, a[np.minimum(np.maximum(pair_off + turn, 0), a.size - 1)], 0)

    n = n_r[rr]
    nt = nt_r[rr]
    g_k = np.array([p.grant for p in policies], dtype=np.int64)
    cap_k = np.array([p.effective_max_turns for p in policies], dtype=np.int64)
    share = [p.landing_token_share for p in policies]
    has_share_k = np.array([s is not None for s in share])
    allowance_k = np.where(
        has_share_k & (g_k > 0),
        (g_k.astype(np.float64) * np.array([s or 0.0 for s in share])).astype(np.int64, copy=False),
        0,
    )
    g, cap, has_share, allowance = g_k[kk], cap_k[kk], has_share_k[kk], allowance_k[kk]
    # spent never decreases on an eligible run: the crossing is a search over the tool turns' spend
    j = spent_tool.search(rr, g, "left")
    X = np.where(j < nt, tools.take(rr, j, 0), n)
    A = n.copy()
    if base.empty_abandon:
        e_count = sheet.empties.lengths
        if e_count.sum():
            e_local = sheet.empties.values
            e_run = np.repeat(np.arange(R, dtype=np.int64), e_count)
            e_flat = off_r[e_run] + e_local
            S_before = np.where(e_local > 0, S[np.maximum(e_flat - 1, 0)], 0)
            comp_e = per_turn["comp"][e_flat]
            rem = g_k[None, :] - S_before[:, None]
            hit = (rem > 0) & (comp_e[:, None] > rem // 2)
            first = np.where(hit, e_local[:, None], np.iinfo(np.int64).max)
            has = np.flatnonzero(e_count)
            starts = np.zeros(R, dtype=np.int64)
            np.cumsum(e_count[:-1], out=starts[1:])
            earliest = np.full((R, K), np.iinfo(np.int64).max, dtype=np.int64)
            earliest[has] = np.minimum.reduceat(first, starts[has], axis=0)
            A = np.minimum(A, earliest.ravel())
    landed = n > X
    ceiling = np.where(landed & has_share, at_turn(S, X, landed) + allowance, 0)
    # the landing's end: the LT-th tool turn after the crossing, or the first at or over the token ceiling
    E = n.copy()
    tokens_end = np.zeros(R * K, dtype=bool)
    LT = base.landing_turns
    if landed.any():
        pos = tools.search(rr, X, "right")
        for k in range(LT):
            at = pos + k
            valid = landed & (at < nt) & (n == E)
            t_k = tools.take(rr, at, 0)
            spent_hit = (ceiling > 0) & (at_turn(S, t_k, valid) >= ceiling)
            hit = valid & ((k == LT - 1) | spent_hit)
            E = np.where(hit, t_k, E)
            tokens_end |= hit & spent_hit & (LT - k > 1)
    # finals: the recording went on past one => reopened outside a landing, before the last iteration; the first
    # delivered final is the first at or after min(n - 1, X, cap - 1)
    finals = _Segments(sheet.finals.values, sheet.finals.lengths)
    reopen_below = np.minimum(np.minimum(n - 1, X), cap - 1)
    jf = finals.search(rr, reopen_below, "left")
    final = np.where(jf < finals.lengths[rr], finals.take(rr, jf, 0), n)
    G = sheet.guard_stop[rr]
    BIGK = 4 * n + 3
    keys = np.stack(
        [
            np.where(cap <= n, cap * 4, BIGK + 1),
            np.where(n > A, A * 4 + 1, BIGK + 1),
            np.where(final < n, final * 4 + 1, BIGK + 1),
            np.where((n > G) & (G < X), G * 4 + 2, BIGK + 1),
            np.where(n > E, E * 4 + 2, BIGK + 1),
        ]
    )
    which = keys.argmin(axis=0)
    key = keys.min(axis=0)
    stopped = key <= BIGK
    key = np.where(stopped, key, BIGK)
    stop_turn = np.where(which == 0, cap - 1, key // 4)
    stop_turn = np.where(stopped, stop_turn, n - 1)
    landing_at = np.where(landed & (key > X * 4 + 2), X, -1)
    did_land = landing_at >= 0
    has_stop = stop_turn >= 0
    spent_stop = at_turn(S, stop_turn, has_stop)
    raw_stop = at_turn(raw, stop_turn, has_stop)
    # reasons, verdicts, meters
    own = sheet.own[rr]
    code = np.where(stopped, which, 5)
    # per leaf, a row of answers per code (0 turn cap, 1 empty, 2 final, 3 guard, 4 landing end, 5 end of
    # recording), read with one lookup per pair
    reasons = np.empty((R, 6), dtype=object)
    reasons[:, 0], reasons[:, 1], reasons[:, 2], reasons[:, 4] = "turn-cap", "empty", "done", "budget"
    reasons[:, 3], reasons[:, 5] = sheet.guard_kind, sheet.end_reason
    reason = reasons[rr, code]
    # verdicts: the row's code, and for codes 2 and 5 whether a landing was under way (column 6 + code // 5)
    verdicts = np.empty((R, 8), dtype=object)
    verdicts[:, 0], verdicts[:, 1], verdicts[:, 2] = "turn_cap", "empty_response", "unverified_success"
    verdicts[:, 3] = verdicts[:, 4] = verdicts[:, 6] = BUDGET_STOP
    verdicts[:, 5], verdicts[:, 7] = sheet.verdict_plain, sheet.verdict_budget
    verdict = verdicts[rr, np.where(did_land & ((code == 2) | (code == 5)), 6 + code // 5, code)]
    censored = (code == 5) & ~own
    cost_rows = (code == 4) | (((code == 2) | (code == 5)) & did_land)
    meter_code = np.where(cost_rows, 0, np.where(code == 0, 1, np.where(code == 3, 2, 3)))
    meters = np.empty((R, 4), dtype=object)
    meters[:, 0], meters[:, 1], meters[:, 2], meters[:, 3] = COST, TURNS, sheet.guard_meter, ""
    meter = meters[rr, meter_code]
    guard_reached = sheet.guard_reached[rr]
    guard_allowed = sheet.guard_allowed[rr]
    meter_reached = np.where(
        cost_rows, spent_stop, np.where(code == 0, cap, np.where(code == 3, guard_reached, 0))
    )
    meter_allowed = np.where(cost_rows, g, np.where(code == 0, cap, np.where(code == 3, guard_allowed, 0)))
    # decisions and divergence
    n_events = stopped.astype(np.int64)
    div = n + 1
    # decisions before the stop (key): turns t with t * 4 + 1 < key, i.e. t < (key - 2) // 4 + 1
    before_stop = (key - 2) // 4 + 1
    cheap = _Segments(sheet.cheap_turns.values, sheet.cheap_turns.lengths)
    n_events += cheap.search(rr, before_stop, "left")  # one decision each
    t0 = sheet.first_cheap_div[rr]
    div = np.where((t0 >= 0) & (t0 * 4 + 1 < key), np.minimum(div, t0 + 1), div)
    n_events += np.where(
        finals.lengths[rr] > 0, finals.search(rr, np.minimum(reopen_below, before_stop), "left"), 0
    )
    # guard decisions count while no landing is active and before the stop: turns t < bound
    bound = np.minimum(X, (key - 3) // 4 + 1)
    guard_turns = _Segments(sheet.guard_turns.values, sheet.guard_turns.lengths)
    guard_counts = _Segments(sheet.guard_counts.values, sheet.guard_counts.lengths)
    n_events += guard_counts.take(rr, guard_turns.search(rr, bound, "left"), 0)
    gt0 = guard_turns.take(rr, np.zeros(R * K, dtype=np.int64), -1)
    div = np.where((gt0 >= 0) & (gt0 < bound), np.minimum(div, gt0 + 1), div)
    tc = sheet.first_conclude[rr]
    concluded_at = np.where((tc >= 0) & (tc < bound), tc, -1)
    tu = sheet.first_unjudged[rr]
    unjudged_at = np.where((tu >= 0) & (tu < bound), tu, -1)
    wrapup_at = np.full(R * K, -1, dtype=np.int64)
    if base.wrapup_at is not None:
        # every reading rises turn by turn, so the first tool turn over the line is a search per reading
        first = nt.copy()
        thr = base.wrapup_at
        if "cost" in base.wrapup_readings:
            first = np.minimum(first, spent_tool.first_over(rr, g, thr))
        if "raw" in base.wrapup_readings:
            raw_tool = _Segments(raw[tool_turn], nt_r)
            first = np.minimum(first, raw_tool.first_over(rr, g * base.raw_ceiling_multiple, thr))
        if base.window is not None:
            reuse_r = np.full(R, reuse_ceiling(base.window), dtype=np.int64)
        else:
            lengths, where = np.unique(sheet.context_length, return_inverse=True)
            ceilings = [reuse_ceiling(None if w < 0 else int(w)) for w in lengths]
            reuse_r = np.asarray(ceilings, dtype=np.int64)[where.reshape(-1)] if R else np.zeros(0, np.int64)
        if "reuse" in base.wrapup_readings and (reuse_r > 0).any():
            prompt_tool = _Segments(P[tool_turn], nt_r)
            reuse = reuse_r[rr]
            over = prompt_tool.first_over(rr, np.maximum(reuse, 1), thr)
            first = np.where(reuse > 0, np.minimum(first, over), first)
        t_w = np.where(first < nt, tools.take(rr, first, 0), n)
        limit = np.minimum(np.minimum(X - 1, (key - 2) // 4), n - 1)
        has = t_w <= limit
        wrapup_at = np.where(has, t_w, -1)
        n_events += has
        div = np.where(has, np.minimum(div, wrapup_at + 1), div)
    n_events += np.where(did_land, 2, 0) + ((which == 4) & stopped & tokens_end)
    div = np.where(did_land, np.minimum(div, landing_at + 1), div)
    diverges_at = np.where((div <= stop_turn) & (div < n), div, -1)
    replayed = stop_turn + 1
    # what the stop cut: every recorded turn from ``replayed`` on, per run (its total less the running sum before)
    cut: list[np.ndarray] = []
    for per in (per_turn["prompt"] + per_turn["comp"], per_turn["calls"], per_turn["mutations"]):
        running = _running(per, off_r, n_r)
        whole = at_turn(running, n - 1, n > 0)
        cut.append(whole - at_turn(running, replayed - 1, replayed > 0))
    good = sheet.good[rr]
    return {
        "run_id": sheet.run_id[rr],
        "segment": sheet.segment[rr],
        "rules": np.full(R * K, base.rules, dtype=object),
        "grant": g,
        "policy_label": np.array(labels, dtype=object)[kk],
        "stop_reason": reason,
        "stop_turn": stop_turn.astype(np.int64, copy=False),
        "verdict": verdict,
        "meter": meter,
        "meter_reached": meter_reached.astype(np.int64, copy=False),
        "meter_allowed": meter_allowed.astype(np.int64, copy=False),
        "spent": spent_stop.astype(np.int64, copy=False),
        "raw": raw_stop.astype(np.int64, copy=False),
        "landing_started_at": landing_at.astype(np.int64, copy=False),
        "landing_kind": np.array([None, "budget"], dtype=object)[did_land.astype(np.int64)],
        "wrapup_at": wrapup_at.astype(np.int64, copy=False),
        "concluded_at": concluded_at.astype(np.int64, copy=False),
        "diverges_at": diverges_at.astype(np.int64, copy=False),
        "censored": censored,
        "cut_turns": (n - replayed).astype(np.int64, copy=False),
        "cut_tokens": cut[0],
        "cut_tool_calls": cut[1],
        "cut_mutations": cut[2],
        "good_outcome_after_cut": (n - replayed > 0) & good,
        "recorded_stop": sheet.recorded_stop[rr],
        "turns": n.astype(np.int64, copy=False),
        "turns_replayed": replayed.astype(np.int64, copy=False),
        "timed": np.zeros(R * K, dtype=bool),
        "n_events": n_events.astype(np.int64, copy=False),
        "stop_basis": np.where((code == 3) & (sheet.guard_basis[rr] != ""), sheet.guard_basis[rr], None),
        "unjudged_at": unjudged_at.astype(np.int64, copy=False),
    }


def read_sheet(runs: Sequence[Run], policy: Policy) -> Sheet:
    """The sheet of ``runs`` under ``policy``'s guard settings, each leaf read over its whole length (an unlimited
    reach: a reading past any group's crossing or turn cap changes no answer, so the sheet serves every grid of
    these settings)."""
    unlimited = Reach(BIG, 0, BIG)
    return Sheet.of(runs, [probe(r, policy, unlimited) for r in runs], probe_key(policy))


__all__ = [
    "FAST_FIELDS",
    "NULLABLE",
    "Reach",
    "blocks",
    "group_key",
    "policy_eligible",
    "probe",
    "read_sheet",
    "run_eligible",
]
