"""Who cut each run, and why (docs/frontier.md, "Who cut each run"): each cut sweep row's cause, counted per
frontier row (``lost_by``, ``cut_by``), and one grant's losses with their evidence (``explain``). A cause the sweep
columns do not say is read from the decisions of one replay (the fast path's rows do not carry them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.govern.policy import Policy
from workbench.govern.verdict import StopReason
from workbench.trace.schema import Run

CAUSES = ("grant landing", "raw landing", "reuse landing", "deadline", "no-progress repeat",
          "no-progress stagnant", "no-progress floor", "tool-timeout", "turn backstop", "turn cap",
          "context truncated", "empty reply", "stuck", "error")  # fmt: skip
_BY_STOP = {
    "tool-timeouts": "tool-timeout",
    "context-truncated": "context truncated",
    "empty": "empty reply",
    "stuck": "stuck",
    "error": "error",
    "deadline": "deadline",
}
_BY_TRIGGER = {"raw": "raw landing", "reuse": "reuse landing"}


def _policy_of(rules: str, grant: int, context_length: Any, overrides: dict[str, Any]) -> Policy:
    ctx = None if context_length is None or pd.isna(context_length) else int(context_length)
    return Policy.named(rules, grant=int(grant), context_length=ctx, **overrides)


def _detail(decisions: Sequence[Any], policy: Policy) -> str | None:
    """The cause a replay's decisions give: the budget landing's trigger, or the concluding no-progress signal."""
    for d in decisions:
        if d.action == "start-landing" and d.kind == StopReason.BUDGET:
            return _BY_TRIGGER.get(d.data.get("trigger"), "grant landing")  # the cost meter's by default
        if d.action == "inject" and d.kind == "conclude":
            return no_progress_signal(d.data, policy)
    return None


def no_progress_signal(numbers: dict[str, Any], policy: Policy) -> str:
    """Which no-progress signal concluded: its counter at the directive against the policy's cap (the guard's
    own order: repeat, then stagnant, else the turn floor)."""
    if (numbers.get("repeat") or 0) >= policy.repeat_cap:
        return "no-progress repeat"
    if (numbers.get("stagnant") or 0) >= policy.stagnant_cap:
        return "no-progress stagnant"
    return "no-progress floor"


def causes(
    rows: pd.DataFrame, leaves: Sequence[Run] | dict[str, Run], overrides: dict[str, Any] | None = None
) -> pd.Series:
    """Each sweep row's cause (None for a row that was not cut). ``leaves``: the runs the rows name (replayed
    once per (run, policy) where the columns do not say the cause)."""
    overrides = overrides or {}
    by_id = leaves if isinstance(leaves, dict) else {r.run_id: r for r in leaves}
    cut = rows["cut_turns"].fillna(0).astype(int).to_numpy() > 0
    stop = rows["stop_reason"].astype(str).to_numpy()
    kind = rows["landing_kind"].to_numpy(dtype=object) if "landing_kind" in rows else np.full(len(rows), None)
    landed = rows["landing_started_at"].notna().to_numpy()
    out = np.full(len(rows), None, dtype=object)
    replay_at: list[int] = []
    policies = _rule_policies(rows, overrides)
    lands_other = {r: (p.raw_lands or p.reuse_lands) for r, p in policies.items()}
    rules = rows["rules"].astype(str).to_numpy()
    for i in np.flatnonzero(cut).tolist():
        s = stop[i]
        if s == "no-progress":
            replay_at.append(i)
        elif landed[i] and (kind[i] == "deadline"):
            out[i] = "deadline"
        elif (landed[i] and s in ("budget", "done")) or s == "budget":
            if lands_other.get(rules[i], False):
                replay_at.append(i)
            else:
                out[i] = "grant landing"
        elif s == "turn-cap":
            out[i] = "turn backstop" if policies[rules[i]].turn_backstop else "turn cap"
        else:
            out[i] = _BY_STOP.get(s, s)
    if replay_at:
        from workbench.replay.engine import replay

        memo: dict[tuple[Any, ...], str | None] = {}
        for i in replay_at:
            r = rows.iloc[i]
            ctx = r.get("context_length")
            # the no-progress guard reads no grant until a landing: one replay per (run, rules, stop turn)
            key = (r["run_id"], r["rules"], None if stop[i] == "no-progress" else r["grant"], r["stop_turn"])
            if key not in memo:
                policy = _policy_of(r["rules"], r["grant"], ctx, overrides)
                memo[key] = _detail(replay(by_id[r["run_id"]], policy).decisions, policy)
            out[i] = memo[key] or ("no-progress floor" if stop[i] == "no-progress" else "grant landing")
    return pd.Series(out, index=rows.index, name="cause")


def _rule_policies(rows: pd.DataFrame, overrides: dict[str, Any]) -> dict[str, Policy]:
    return {r: Policy.named(r, **overrides) for r in pd.unique(rows["rules"].astype(str))}


def count_map(values: pd.Series) -> dict[str, int]:
    """A cause → count map in ``CAUSES`` order (then any other cause), only the causes that occur."""
    counts = values.dropna().value_counts()
    order = [c for c in CAUSES if c in counts.index] + sorted(c for c in counts.index if c not in CAUSES)
    return {c: int(counts[c]) for c in order}


# -- one grant's losses, with the evidence ------------------------------------------------------------------------


@dataclass(frozen=True)
class Loss:
    """One resolved run a policy lost: where and why it stopped, the evidence, and what the recording did after."""

    run_id: str
    group: str
    cause: str
    stop_turn: int
    stop_reason: str
    evidence: tuple[str, ...]
    after: str

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "evidence": list(self.evidence)}  # the fields in order, the evidence a list

    @property
    def words(self) -> str:
        lines = [f"{self.run_id}: {self.cause}, stopped at turn {self.stop_turn} ({self.stop_reason})"]
        lines += [f"    {e}" for e in self.evidence]
        lines.append(f"    after the cut: {self.after}")
        return "\n".join(lines)


def _quote(text: str, n: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _calls_at(run: Run, turn: int) -> str:
    if not 0 <= turn < len(run.turns):
        return ""
    calls = run.turns[turn].tool_calls or ()
    return "; ".join(_quote(f"{c.name}({c.arguments})", 80) for c in calls[:2])


def evidence(run: Run, policy: Policy, row: dict[str, Any]) -> tuple[str, ...]:
    """The decisions that cut ``run`` under ``policy``, quoted briefly with the calls at their turns."""
    from workbench.replay.engine import replay

    res = replay(run, policy)
    out: list[str] = []
    for d in res.decisions:
        if d.action not in ("start-landing", "stop") and not (d.action == "inject" and d.kind == "conclude"):
            continue
        nums = {k: v for k, v in d.data.items() if v is not None}
        shown = ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in nums.items())
        line = f"turn {d.turn}: {d.action} {d.kind} — {_quote(d.reason, 120)}" + (
            f" [{shown}]" if shown else ""
        )
        calls = _calls_at(run, d.turn)
        if calls and d.action != "start-landing":
            line += f"; calls: {calls}"
        out.append(line)
    if d_turns := [d.turn for d in res.decisions if d.action == "inject" and d.kind == "conclude"]:
        # the repeated call the guard saw, from the turns before the directive
        t = d_turns[0]
        prior = [_calls_at(run, k) for k in range(max(0, t - 3), t)]
        if any(prior):
            out.append(
                "the turns before the directive called: " + " | ".join(p or "(no call)" for p in prior)
            )
    return tuple(out)


def after_cut(row: dict[str, Any]) -> str:
    """What the recording did after the policy's stop."""
    good = (
        "its good outcome came after the cut"
        if row.get("good_outcome_after_cut")
        else "no good outcome after"
    )
    return (
        f"{int(row['cut_turns']):,} more calls, {int(row.get('cut_tool_calls') or 0):,} tool calls, "
        f"{int(row.get('cut_mutations') or 0):,} that changed the workspace, {int(row.get('cut_tokens') or 0):,} raw "
        f"tokens; recorded end {row.get('recorded_stop') or '—'}; {good}"
    )


def explain(rows: pd.DataFrame, leaves: Sequence[Run], overrides: dict[str, Any] | None = None) -> list[Loss]:
    """The losses of the given frontier rows (one policy's rows: ``Frontier.lost(...)``), with their evidence."""
    overrides = overrides or {}
    by_id = {r.run_id: r for r in leaves}
    out = []
    for rec in rows.to_dict("records"):
        policy = _policy_of(rec["rules"], rec["grant"], rec.get("context_length"), overrides)
        run = by_id[rec["run_id"]]
        out.append(
            Loss(
                run_id=str(rec["run_id"]),
                group=str(rec.get("group", "")),
                cause=str(rec.get("cause") or ""),
                stop_turn=int(rec["stop_turn"]),
                stop_reason=str(rec["stop_reason"]),
                evidence=evidence(run, policy, rec),
                after=after_cut(rec),
            )
        )
    return out
