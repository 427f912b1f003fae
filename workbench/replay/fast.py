"""The vectorised fast path for grids that only move the cost meter: grant, cache weight, landing token share and
turn cap.

For one run and a group of policies that agree on everything else, the grant-independent facts are read once — how
each turn ends (tool turn, length-stopped batch, nudge, final), the guards' readings (which never depend on the
grant while no landing is active) — and then every policy of the group is answered at once with numpy: cumulative
sums give spent/raw per turn, the crossing is the first tool turn at or over the grant, the landing's end is a
search over the next tool turns, and the stop is the earliest of turn cap, empty-reply abandonment, final answer,
guard stop and landing end, in the governor's own phase order.

It is used only where it is exact (``eligible``): the cost meter is the only lander (no raw/reuse landing, no
OpenHands rules), no deadline applies, no fold, no context manager, no recorded injections to match, and every
turn's cache reads are within its prompt (so spent never decreases). Everything else takes the governor path;
``tests/replay/test_fast.py`` holds the two equal on every run of the real and synthetic corpora.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.govern.messages import LENGTH_BATCH_TEXT
from workbench.govern.meter_record import COST, TURNS, no_progress_meter, tool_timeouts_meter
from workbench.govern.noprogress import ProgressGuard, Signal
from workbench.govern.policy import COMPARED_FIELDS, Policy
from workbench.govern.pressure import reuse_ceiling
from workbench.govern.replies import is_length
from workbench.govern.tooltimeout import ToolTimeoutGuard
from workbench.govern.verdict import BUDGET_STOP, verdict_for
from workbench.replay.censoring import finished_on_own, good_outcome
from workbench.replay.engine import END_OF_RECORDING, recorded_injections
from workbench.replay.facts import RunFacts
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
    )


def run_eligible(run: Run, facts: RunFacts, policy: Policy) -> bool:
    if facts.timed and policy.deadline_s is not None:
        return False
    if recorded_injections(run) is not None:
        return False
    for t in facts.turns:
        r = t.reply
        if r.cached is not None and r.prompt is not None and r.cached > r.prompt:
            return False
        if r.cached is not None and r.prompt is None:
            return False
    return True


@dataclass
class Probe:
    """The grant-independent reading of one run under one group of policies."""

    n: int
    kind: np.ndarray
    P: np.ndarray
    C: np.ndarray
    comp_cum: np.ndarray
    comp: np.ndarray
    tool_idx: np.ndarray
    finals: np.ndarray
    texts: list[str]
    guard_stop: int
    guard_kind: str
    guard_reason: str
    guard_meter: Any
    guard_events: list[tuple[int, str, int]]  # (turn, kind, decisions)
    cheap_events: list[tuple[int, int, bool]]  # (turn, decisions, diverges next turn) for nudges and skips
    last_text_upto: list[str]
    suffix_raw: np.ndarray
    suffix_calls: np.ndarray
    suffix_mut: np.ndarray


def probe(run: Run, facts: RunFacts, policy: Policy) -> Probe:
    n = len(facts.turns)
    kind = np.empty(n, dtype=np.int8)
    P = np.zeros(n, dtype=np.int64)
    C = np.zeros(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    comp = np.zeros(n, dtype=np.int64)
    progress = ProgressGuard.from_policy(policy) if policy.no_progress else None
    timeouts = ToolTimeoutGuard(policy.tool_timeout_cap) if policy.tool_timeouts else None
    guard_stop, guard_kind, guard_reason, guard_meter = n, "", "", None
    guard_events: list[tuple[int, str, int]] = []
    cheap: list[tuple[int, int, bool]] = []
    last_text_upto: list[str] = []
    last = ""
    finals: list[int] = []
    texts: list[str] = []
    p = c = o = 0
    for t, tf in enumerate(facts.turns):
        r = tf.reply
        p += r.prompt or 0
        c += r.cached or 0
        o += r.completion or 0
        P[t], C[t], out[t], comp[t] = p, c, o, r.completion or 0
        text = (r.text or "").strip()
        texts.append(text)
        if not r.calls:
            if text == "":
                kind[t] = NUDGE_EMPTY if policy.nudges else SILENT
                if policy.nudges:
                    cheap.append((t, 1, True))
            elif is_length(r.finish_reason) and policy.nudges:
                kind[t] = NUDGE_LENGTH
                cheap.append((t, 1, True))
                last = text
            else:
                kind[t] = FINAL
                last = text
                finals.append(t)
            last_text_upto.append(last)
            continue
        if text:
            last = text
        last_text_upto.append(last)
        if policy.length_batch and is_length(r.finish_reason):
            kind[t] = SKIP
            recorded = bool(tf.results) and all(x.content == LENGTH_BATCH_TEXT for x in tf.results)
            cheap.append((t, 1, not recorded))
            continue
        kind[t] = TOOL
        if guard_stop < n:
            continue
        res = list(tf.results)[: len(r.calls)]
        if timeouts is not None:
            hit = timeouts.observe(r.calls, res)
            if hit is not None:
                guard_stop, guard_kind, guard_reason = t, "tool-timeouts", hit.reason
                guard_meter = tool_timeouts_meter(hit.count, policy.tool_timeout_cap)
                continue
        if progress is not None:
            reading = progress.observe(r.calls, res, bool(tf.mutated))
            if reading.signal is Signal.PACE:
                guard_events.append((t, "recon", 2))
            elif reading.signal is Signal.CONCLUDE:
                progress.mark_concluded()
                guard_events.append((t, "conclude", 1))
            elif reading.signal is Signal.TERMINATE:
                guard_stop, guard_kind, guard_reason = t, "no-progress", reading.reason
                guard_meter = no_progress_meter(t + 1)
    raw_turn = np.array([tf.raw_tokens for tf in facts.turns], dtype=np.int64)
    calls_turn = np.array([len(tf.reply.calls) for tf in facts.turns], dtype=np.int64)
    mut_turn = np.array([tf.inferred_mutation for tf in facts.turns], dtype=np.int64)

    def suffix(a: np.ndarray) -> np.ndarray:
        out = np.zeros(n + 1, dtype=np.int64)
        out[:n] = np.cumsum(a[::-1])[::-1]
        return out

    return Probe(
        n=n,
        kind=kind,
        P=P,
        C=C,
        comp_cum=out,
        comp=comp,
        tool_idx=np.flatnonzero(kind == TOOL),
        finals=np.array(finals, dtype=np.int64),
        texts=texts,
        guard_stop=guard_stop,
        guard_kind=guard_kind,
        guard_reason=guard_reason,
        guard_meter=guard_meter,
        guard_events=guard_events,
        cheap_events=cheap,
        last_text_upto=last_text_upto,
        suffix_raw=suffix(raw_turn),
        suffix_calls=suffix(calls_turn),
        suffix_mut=suffix(mut_turn),
    )


def _first_over(values: np.ndarray, denominators: np.ndarray, threshold: float) -> np.ndarray:
    """Per denominator D, the first index i of the non-decreasing ``values`` with ``values[i] / D > threshold``
    exactly as float64 division decides it (len(values) when none). The search runs on ``threshold * D``; the
    rounding of that product can only misplace the boundary by the one distinct value next to it, which is
    checked with the true division."""
    n = len(values)
    j = np.searchsorted(values, threshold * denominators.astype(np.float64), side="right")
    if n == 0:
        return j
    prev = np.maximum(j - 1, 0)
    back = (j > 0) & (values[prev] / denominators > threshold)
    j = np.where(back, np.searchsorted(values, values[prev], side="left"), j)
    here = np.minimum(j, n - 1)
    ahead = (j < n) & ~(values[here] / denominators > threshold)
    return np.where(ahead, np.searchsorted(values, values[here], side="right"), j)


def _spent(pr: Probe, weight: int) -> np.ndarray:
    cc = np.minimum(np.maximum(pr.C, 0), pr.P)
    return (pr.P - cc) + cc * weight // 100 + pr.comp_cum


NULLABLE = ("segment", "landing_started_at", "wrapup_at", "concluded_at", "diverges_at")
"""Columns whose "None" is carried as -1 in a block (non-negative otherwise)."""


def block(run: Run, facts: RunFacts, policies: list[Policy], labels: list[str]) -> dict[str, Any]:
    """The sweep rows of ``policies`` (one group: equal ``group_key``, all eligible) for one run, as columns."""
    base = policies[0]
    pr = probe(run, facts, base)
    K = len(policies)
    weights = np.array([p.cache_weight_percent for p in policies], dtype=np.int64)
    if (weights == weights[0]).all():
        return _block_for_weight(run, pr, policies, labels, int(weights[0]))
    cols: dict[str, Any] | None = None
    for w in np.unique(weights):
        idx = np.flatnonzero(weights == w)
        part = _block_for_weight(run, pr, [policies[i] for i in idx], [labels[i] for i in idx], int(w))
        if cols is None:
            cols = {
                k: (np.empty(K, dtype=v.dtype) if isinstance(v, np.ndarray) else [None] * K)
                for k, v in part.items()
            }
        for k, v in part.items():
            target = cols[k]
            if isinstance(target, np.ndarray):
                target[idx] = v
            else:
                for j, i in enumerate(idx):
                    target[i] = v[j]
    assert cols is not None
    return cols


def _block_for_weight(
    run: Run, pr: Probe, policies: list[Policy], labels: list[str], weight: int
) -> dict[str, Any]:
    base = policies[0]
    n, K = pr.n, len(policies)
    g = np.array([p.grant for p in policies], dtype=np.int64)
    max_turns = np.array([p.effective_max_turns for p in policies], dtype=np.int64)
    cap = max_turns
    share = [p.landing_token_share for p in policies]
    has_share = np.array([s is not None for s in share])
    allowance = np.where(
        has_share & (g > 0),
        (g.astype(np.float64) * np.array([s or 0.0 for s in share])).astype(np.int64),
        0,
    )
    S = _spent(pr, weight)
    raw = pr.P + pr.comp_cum
    none = np.full(K, n, dtype=np.int64)
    nt = len(pr.tool_idx)
    S_tool = S[pr.tool_idx]
    # spent never decreases on an eligible run: the crossing is a search over the tool turns' spend
    j = np.searchsorted(S_tool, g, side="left")
    X = np.where(j < nt, pr.tool_idx[np.minimum(j, max(nt - 1, 0))] if nt else n, n).astype(np.int64)
    A = none.copy()
    if base.empty_abandon and n:
        S_before = np.concatenate(([0], S[:-1]))
        empty = (pr.kind == NUDGE_EMPTY) | (pr.kind == SILENT)
        for e in np.flatnonzero(empty)[::-1]:  # latest first, so the earliest wins
            rem = g - S_before[e]
            A = np.where((rem > 0) & (pr.comp[e] > rem // 2), e, A)
    landed = n > X
    Xc = np.minimum(X, max(n - 1, 0))
    ceiling = np.where(landed & has_share, (S[Xc] if n else 0) + allowance, 0)
    # the landing's end: the LT-th tool turn after the crossing, or the first at or over the token ceiling
    E = np.full(K, n, dtype=np.int64)
    tokens_end = np.zeros(K, dtype=bool)
    LT = base.landing_turns
    if nt and landed.any():
        pos = np.searchsorted(pr.tool_idx, X, side="right")
        for k in range(LT):
            at = pos + k
            valid = landed & (at < nt) & (n == E)
            t_k = pr.tool_idx[np.minimum(at, nt - 1)]
            spent_hit = (ceiling > 0) & (S[t_k] >= ceiling)
            hit = valid & ((k == LT - 1) | spent_hit)
            E = np.where(hit, t_k, E)
            tokens_end |= hit & spent_hit & (LT - k > 1)
    # finals: the recording went on past one => reopened outside a landing, before the last iteration
    F_all = pr.finals
    if F_all.size:
        reopened = (
            (F_all[None, :] < n - 1) & (F_all[None, :] < X[:, None]) & (F_all[None, :] + 1 < cap[:, None])
        )
        delivered = ~reopened
        final = np.where(delivered.any(axis=1), F_all[delivered.argmax(axis=1)], n)
    else:
        reopened = np.zeros((K, 0), dtype=bool)
        final = none
    G = pr.guard_stop
    BIGK = np.int64(4 * n + 3)
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
    safe_turn = np.maximum(stop_turn, 0)
    spent_stop = np.where(stop_turn >= 0, S[safe_turn] if n else 0, 0)
    raw_stop = np.where(stop_turn >= 0, raw[safe_turn] if n else 0, 0)
    # reasons, verdicts, meters
    own = finished_on_own(run)
    recorded = run.outcome.stop_reason
    code = np.where(stopped, which, 5)
    end_text = (pr.last_text_upto[n - 1] if n else "") or run.outcome.text
    end_reason = (recorded or "done") if own else END_OF_RECORDING
    reasons = np.array(["turn-cap", "empty", "done", pr.guard_kind, "budget", end_reason], dtype=object)
    reason = reasons[code]
    verdict = np.where(
        code == 0,
        "turn_cap",
        np.where(
            code == 1,
            "empty_response",
            np.where(code == 2, np.where(did_land, BUDGET_STOP, "unverified_success"), BUDGET_STOP),
        ),
    ).astype(object)
    if own:
        landed_v = verdict_for(end_reason, "budget", end_text)
        plain_v = verdict_for(end_reason, None, end_text)
        verdict = np.where(code == 5, np.where(did_land, landed_v, plain_v), verdict).astype(object)
    else:
        verdict[code == 5] = None
    censored = (code == 5) & (not own)
    cost_rows = (code == 4) | (((code == 2) | (code == 5)) & did_land)
    guard = pr.guard_meter
    meter = np.where(
        cost_rows, COST, np.where(code == 0, TURNS, np.where(code == 3, guard.name if guard else "", ""))
    )
    meter_reached = np.where(
        cost_rows, spent_stop, np.where(code == 0, cap, np.where(code == 3, guard.reached if guard else 0, 0))
    )
    meter_allowed = np.where(
        cost_rows, g, np.where(code == 0, max_turns, np.where(code == 3, guard.allowed if guard else 0, 0))
    )
    # decisions and divergence
    n_events = stopped.astype(np.int64)
    div = np.full(K, n + 1, dtype=np.int64)
    if pr.cheap_events:
        cheap_t = np.array([t for t, _, _ in pr.cheap_events], dtype=np.int64)
        n_events += np.searchsorted(cheap_t * 4 + 1, key, side="left")  # one decision each
        diverging = [t for t, _, d in pr.cheap_events if d]
        if diverging:
            t0 = diverging[0]
            div = np.where(t0 * 4 + 1 < key, np.minimum(div, t0 + 1), div)
    if F_all.size:
        n_events += ((F_all[None, :] * 4 + 1 < key[:, None]) & reopened).sum(axis=1)
    concluded_at = np.full(K, -1, dtype=np.int64)
    if pr.guard_events:
        # guard decisions count while no landing is active and before the stop: turns t < bound
        bound = np.minimum(X, (key - 3) // 4 + 1)
        gt = np.array([t for t, _, _ in pr.guard_events], dtype=np.int64)
        counts = np.concatenate(([0], np.cumsum([c for _, _, c in pr.guard_events])))
        n_events += counts[np.searchsorted(gt, bound, side="left")]
        div = np.where(gt[0] < bound, np.minimum(div, gt[0] + 1), div)
        for t, kind, _ in pr.guard_events:
            if kind == "conclude":
                concluded_at = np.where(t < bound, t, -1)
                break
    wrapup_at = np.full(K, -1, dtype=np.int64)
    if base.wrapup_at is not None and nt:
        # every reading rises turn by turn, so the first tool turn over the line is a search per reading
        first = np.full(K, nt, dtype=np.int64)
        thr = base.wrapup_at
        if "cost" in base.wrapup_readings:
            first = np.minimum(first, _first_over(S_tool, g, thr))
        if "raw" in base.wrapup_readings:
            first = np.minimum(first, _first_over(raw[pr.tool_idx], g * base.raw_ceiling_multiple, thr))
        window = base.window if base.window is not None else run.context_length
        reuse = reuse_ceiling(window)
        if "reuse" in base.wrapup_readings and reuse > 0:
            first = np.minimum(first, _first_over(pr.P[pr.tool_idx], np.full(K, reuse, dtype=np.int64), thr))
        t_w = np.where(first < nt, pr.tool_idx[np.minimum(first, nt - 1)], n)
        limit = np.minimum(np.minimum(X - 1, (key - 2) // 4), n - 1)
        has = t_w <= limit
        wrapup_at = np.where(has, t_w, -1)
        n_events += has
        div = np.where(has, np.minimum(div, wrapup_at + 1), div)
    n_events += np.where(did_land, 2, 0) + ((which == 4) & stopped & tokens_end)
    div = np.where(did_land, np.minimum(div, landing_at + 1), div)
    diverges_at = np.where((div <= stop_turn) & (div < n), div, -1)
    replayed = stop_turn + 1
    seg = run.metadata.get("segment")
    good = good_outcome(run)
    return {
        "run_id": [run.run_id] * K,
        "segment": np.full(K, seg if isinstance(seg, int) else -1, dtype=np.int64),
        "rules": [base.rules] * K,
        "grant": g,
        "policy_label": labels,
        "stop_reason": reason.tolist(),
        "stop_turn": stop_turn.astype(np.int64),
        "verdict": verdict.tolist(),
        "meter": meter.astype(object),
        "meter_reached": meter_reached.astype(np.int64),
        "meter_allowed": meter_allowed.astype(np.int64),
        "spent": spent_stop.astype(np.int64),
        "raw": raw_stop.astype(np.int64),
        "landing_started_at": landing_at,
        "landing_kind": ["budget" if x else None for x in did_land],
        "wrapup_at": wrapup_at,
        "concluded_at": concluded_at,
        "diverges_at": diverges_at,
        "censored": censored,
        "cut_turns": (n - replayed).astype(np.int64),
        "cut_tokens": pr.suffix_raw[replayed],
        "cut_tool_calls": pr.suffix_calls[replayed],
        "cut_mutations": pr.suffix_mut[replayed],
        "good_outcome_after_cut": (n - replayed > 0) & good,
        "recorded_stop": [recorded] * K,
        "turns": np.full(K, n, dtype=np.int64),
        "turns_replayed": replayed.astype(np.int64),
        "timed": np.zeros(K, dtype=bool),
        "n_events": n_events.astype(np.int64),
    }


__all__ = ["FAST_FIELDS", "NULLABLE", "block", "group_key", "policy_eligible", "run_eligible"]
