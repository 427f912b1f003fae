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

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from workbench.govern.messages import LENGTH_BATCH_TEXT
from workbench.govern.meter_record import cost_meter, no_progress_meter, tool_timeouts_meter, turns_meter
from workbench.govern.noprogress import ProgressGuard, Signal
from workbench.govern.policy import Policy
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


def group_key(policy: Policy) -> tuple:
    """Policies with equal keys differ only in the fast fields."""
    return tuple(getattr(policy, f.name) for f in fields(policy) if f.compare and f.name not in FAST_FIELDS)


def policy_eligible(p: Policy) -> bool:
    return (
        p.cost_lands
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
    final: int
    guard_stop: int
    guard_kind: str
    guard_reason: str
    guard_meter: Any
    guard_events: list[tuple[int, str, int]]  # (turn, kind, decisions)
    cheap_events: list[tuple[int, int, bool]]  # (turn, decisions, diverges next turn) for nudges and skips
    last_text_upto: list[str]
    final_text: str
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
    progress = (
        ProgressGuard(
            policy.repeat_cap,
            policy.stagnant_cap,
            policy.recon_turns,
            policy.turn_floor,
            policy.floor_window,
            policy.floor_min_productive,
            policy.conclude_grace,
        )
        if policy.no_progress
        else None
    )
    timeouts = ToolTimeoutGuard(policy.tool_timeout_cap) if policy.tool_timeouts else None
    guard_stop, guard_kind, guard_reason, guard_meter = n, "", "", None
    guard_events: list[tuple[int, str, int]] = []
    cheap: list[tuple[int, int, bool]] = []
    last_text_upto: list[str] = []
    last = ""
    final = n
    final_text = ""
    p = c = o = 0
    for t, tf in enumerate(facts.turns):
        r = tf.reply
        p += r.prompt or 0
        c += r.cached or 0
        o += r.completion or 0
        P[t], C[t], out[t], comp[t] = p, c, o, r.completion or 0
        text = (r.text or "").strip()
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
                if final == n:
                    final, final_text = t, text
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
        if guard_stop < n or final < t:
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
        final=final,
        guard_stop=guard_stop,
        guard_kind=guard_kind,
        guard_reason=guard_reason,
        guard_meter=guard_meter,
        guard_events=guard_events,
        cheap_events=cheap,
        last_text_upto=last_text_upto,
        final_text=final_text,
        suffix_raw=suffix(raw_turn),
        suffix_calls=suffix(calls_turn),
        suffix_mut=suffix(mut_turn),
    )


def _spent(pr: Probe, weight: int) -> np.ndarray:
    cc = np.minimum(np.maximum(pr.C, 0), pr.P)
    return (pr.P - cc) + cc * weight // 100 + pr.comp_cum


def rows(run: Run, facts: RunFacts, policies: list[Policy]) -> list[dict[str, Any]]:
    """The sweep rows of ``policies`` (one group: equal ``group_key``, all eligible) for one run."""
    base = policies[0]
    pr = probe(run, facts, base)
    n = pr.n
    out: list[dict[str, Any]] = [{} for _ in policies]
    window = base.window if base.window is not None else run.context_length
    reuse = reuse_ceiling(window)
    own = finished_on_own(run)
    good = good_outcome(run)
    by_weight: dict[int, list[int]] = {}
    for k, p in enumerate(policies):
        by_weight.setdefault(p.cache_weight_percent, []).append(k)
    is_tool = pr.kind == TOOL
    raw = pr.P + pr.comp_cum
    for weight, members in by_weight.items():
        S = _spent(pr, weight)
        S_before = np.concatenate(([0], S[:-1])) if n else S
        g = np.array([policies[k].grant for k in members], dtype=np.int64)
        # crossing: the first tool turn at or over the grant
        cross_mask = is_tool[None, :] & (S[None, :] >= g[:, None]) if n else np.zeros((len(g), 0), bool)
        X = np.where(cross_mask.any(axis=1), cross_mask.argmax(axis=1), n) if n else np.full(len(g), 0)
        # empty-reply abandonment
        if base.empty_abandon and n:
            rem = g[:, None] - S_before[None, :]
            ab = (pr.kind == NUDGE_EMPTY)[None, :] & (rem > 0) & (pr.comp[None, :] > rem // 2)
            A = np.where(ab.any(axis=1), ab.argmax(axis=1), n)
        else:
            A = np.full(len(g), n)
        used = None
        if base.wrapup_at is not None and n:
            gf = g[:, None]
            used = S[None, :] / gf if "cost" in base.wrapup_readings else np.zeros((len(g), n))
            if "raw" in base.wrapup_readings:
                used = np.maximum(used, raw[None, :] / (gf * base.raw_ceiling_multiple))
            if "reuse" in base.wrapup_readings and reuse > 0:
                used = np.maximum(used, pr.P[None, :] / reuse)
        for row_i, k in enumerate(members):
            p = policies[k]
            out[k] = _one(
                run,
                pr,
                p,
                S,
                raw,
                int(g[row_i]),
                int(X[row_i]),
                int(A[row_i]),
                None if used is None else used[row_i],
                is_tool,
                own,
                good,
            )
    return out


def _one(run, pr: Probe, p: Policy, S, raw, grant: int, X: int, A: int, used, is_tool, own: bool, good: bool):
    n = pr.n
    max_turns = p.effective_max_turns
    cap = max_turns
    # landing end
    E = n
    tokens_end = False
    ceiling = 0
    if n > X:
        from workbench.govern.landing import landing_ceiling

        ceiling = landing_ceiling(int(S[X]), grant, p.landing_token_share)
        pos = int(np.searchsorted(pr.tool_idx, X, side="right"))
        LT = p.landing_turns
        for k in range(LT):
            if pos + k >= len(pr.tool_idx):
                break
            t = int(pr.tool_idx[pos + k])
            spent_hit = ceiling > 0 and S[t] >= ceiling
            if k == LT - 1 or spent_hit:
                E = t
                tokens_end = bool(spent_hit and (LT - k) > 1)
                break
    # candidate stops, keyed by (turn, phase): start 0, response 1, tools 2
    cands: list[tuple[int, str, int]] = []
    if cap <= n:
        cands.append((cap * 4, "turn-cap", cap - 1))
    if n > A:
        cands.append((A * 4 + 1, "empty", A))
    if pr.final < n:
        cands.append((pr.final * 4 + 1, "done", pr.final))
    if pr.guard_stop < n and pr.guard_stop < X:
        cands.append((pr.guard_stop * 4 + 2, pr.guard_kind, pr.guard_stop))
    if n > E:
        cands.append((E * 4 + 2, "budget", E))
    landed = n > X
    if cands:
        key, reason, stop_turn = min(cands)
    else:
        key, reason, stop_turn = n * 4 + 3, None, n - 1
    landing_at = X if landed and key > X * 4 + 2 else None
    exhausted = "budget" if landing_at is not None else None
    meter = cost_meter(0, grant) if landing_at is not None else None
    censored = False
    text = pr.last_text_upto[stop_turn] if stop_turn >= 0 else ""
    if reason == "turn-cap":
        meter = turns_meter(cap, max_turns)
    elif reason in ("tool-timeouts", "no-progress"):
        meter, exhausted = pr.guard_meter, reason
    elif reason == "empty":
        text = ""
    elif reason == "done":
        text = pr.final_text
    spent_stop = int(S[stop_turn]) if stop_turn >= 0 else 0
    if meter is not None and meter.name == "cost":
        meter = cost_meter(spent_stop, grant)
    if reason is None:
        if own:
            reason = run.outcome.stop_reason or "done"
            verdict = verdict_for(reason, exhausted, text or run.outcome.text)
        else:
            reason, verdict, censored = END_OF_RECORDING, None, True
    else:
        verdict = verdict_for(reason, exhausted, text)
    # decisions: grant-independent ones before the stop, then the grant-dependent ones
    n_events = 1 if key < n * 4 + 3 else 0
    div = n + 1
    for t, count, diverges in pr.cheap_events:
        if t * 4 + 1 < key:
            n_events += count
            if diverges:
                div = min(div, t + 1)
    concluded_at = None
    for t, kind, count in pr.guard_events:
        if t < X and t * 4 + 2 < key:
            n_events += count
            div = min(div, t + 1)
            if kind == "conclude" and concluded_at is None:
                concluded_at = t
    wrapup_at = None
    if used is not None:
        limit = min(X - 1, key // 4 if key % 4 >= 2 else key // 4 - 1, n - 1)
        if limit >= 0:
            hits = np.flatnonzero(is_tool[: limit + 1] & (used[: limit + 1] > p.wrapup_at))
            if hits.size:
                wrapup_at = int(hits[0])
                n_events += 1
                div = min(div, wrapup_at + 1)
    if landing_at is not None:
        n_events += 2
        div = min(div, landing_at + 1)
        if reason == "budget" and tokens_end:
            n_events += 1
    diverges_at = div if div <= stop_turn and div < n else None
    replayed = stop_turn + 1
    return {
        "run_id": run.run_id,
        "segment": run.metadata.get("segment") if isinstance(run.metadata.get("segment"), int) else None,
        "rules": p.rules,
        "grant": grant,
        "policy_label": p.label,
        "stop_reason": reason,
        "stop_turn": stop_turn,
        "verdict": verdict,
        "meter": meter.words() if meter is not None else "",
        "spent": spent_stop,
        "raw": int(raw[stop_turn]) if stop_turn >= 0 else 0,
        "landing_started_at": landing_at,
        "landing_kind": "budget" if landing_at is not None else None,
        "wrapup_at": wrapup_at,
        "concluded_at": concluded_at,
        "diverges_at": diverges_at,
        "censored": censored,
        "cut_turns": n - replayed,
        "cut_tokens": int(pr.suffix_raw[replayed]),
        "cut_tool_calls": int(pr.suffix_calls[replayed]),
        "cut_mutations": int(pr.suffix_mut[replayed]),
        "good_outcome_after_cut": bool(n - replayed > 0 and good),
        "recorded_stop": run.outcome.stop_reason,
        "turns": n,
        "turns_replayed": replayed,
        "timed": False,
        "n_events": n_events,
    }


__all__ = ["BUDGET_STOP", "FAST_FIELDS", "group_key", "policy_eligible", "rows", "run_eligible"]
