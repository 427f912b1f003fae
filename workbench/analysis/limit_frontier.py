"""The frontier in an agent's own limits, ``cost_limit`` (USD) or ``step_limit`` (docs/frontier.md, "In an
agent's own limits"): ``limit_frontier`` counts it, ``recommend_limits`` answers in the agent's own unit."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from workbench.analysis.frontier import (
    ALL_GROUP,
    Counted,
    Fate,
    _group_values,
    classify,
    ledger,
    missing,
    replayable_leaves,
    summarise,
)
from workbench.analysis.frontier import TABLE as GRANT_TABLE
from workbench.analysis.targets import AnalystInvariants
from workbench.govern.agent_limits import AgentLimits, rules_for
from workbench.govern.dollars import call_dollars
from workbench.govern.limit_rules import LimitRules
from workbench.govern.policy import Policy
from workbench.govern.verdict import StopReason
from workbench.replay.engine import replay
from workbench.replay.facts import run_facts
from workbench.replay.result import ReplayResult
from workbench.trace.columns import Column, names
from workbench.trace.schema import Run

KNOBS = {"cost_limit": "cost_limit_usd", "step_limit": "step_limit"}
"""The frontier's knob columns and the Policy fields they set."""
CAUSES = {StopReason.MAX_BUDGET: "cost_limit", StopReason.TURN_CAP: "step_limit"}
_AT = names(GRANT_TABLE).index("grant")
TABLE: tuple[Column[Any], ...] = (
    *GRANT_TABLE[:_AT],
    Column("cost_limit", None, None, "the swept cost limit, USD (None: not swept)"),
    Column("step_limit", None, None, "the swept step limit (None: not swept)"),
    *GRANT_TABLE[_AT + 1 :],
    *(
        Column(f"lost_by_{k}", "int64", None, f"resolved runs lost to the {k}")
        for k in (*CAUSES.values(), "other")
    ),
)
"""The grant frontier's columns with ``cost_limit`` and ``step_limit`` in place of ``grant``, plus lost by cause."""
COLUMNS = names(TABLE)
DEFAULT_COST_STEP = 0.25


def default_cost_limits(top_usd: float | None = None) -> tuple[float, ...]:
    """$0.25 steps from $0.25 to $3.00 (mini-swe-agent's and SWE-agent's default limit), or on to the costliest
    run when one cost more."""
    top = 3.0 if top_usd is None or not math.isfinite(top_usd) else max(3.0, top_usd)
    n = math.ceil(round(top / DEFAULT_COST_STEP, 9))
    return tuple(round(DEFAULT_COST_STEP * k, 2) for k in range(1, min(n, 400) + 1))


def money(usd: float) -> str:
    return f"${usd:,.2f}" if round(usd, 2) == usd else f"${usd:,.4f}"


def knob_words(cost_limit: float | None, step_limit: int | None) -> str:
    parts = []
    if cost_limit is not None:
        parts.append(f"cost_limit = {money(cost_limit)}")
    if step_limit is not None:
        parts.append(f"step_limit = {step_limit:,}")
    return " and ".join(parts) or "the recorded limits"


@dataclass(frozen=True)
class LimitFrontier(Counted):
    rules: str
    table: pd.DataFrame
    rows: pd.DataFrame
    runs: pd.DataFrame
    grid: tuple[tuple[float | None, int | None], ...]
    by: str
    price_source: str
    confidence: float = 0.95
    notes: tuple[str, ...] = ()
    left_out: tuple[str, ...] = field(default=())

    @property
    def swept(self) -> tuple[str, ...]:
        """The knobs this frontier sweeps (``cost_limit``, ``step_limit``)."""
        return tuple(
            k
            for i, k in enumerate(KNOBS)
            if len({g[i] for g in self.grid}) > 1 or self.grid[0][i] is not None
        )

    def curve(self, group: str | None = None) -> pd.DataFrame:
        group = group if group is not None else self.groups[0]
        out = self.table[self.table["group"] == group].reset_index(drop=True)
        if out.empty:
            raise KeyError(f"no group {group!r}; groups: {', '.join(self.groups)}")
        return out

    def lost(self, group: str, cost_limit: float | None = None, step_limit: int | None = None) -> list[str]:
        """The resolved runs of ``group`` a swept limit loses (cut before their recorded end)."""
        k = self.grid.index((cost_limit, step_limit))
        r = self.rows
        sel = (r["grant"] == k) & r["success"] & (r["fate"] == Fate.CUT)
        if group != ALL_GROUP:
            sel &= r["group"] == group
        return sorted(r.loc[sel, "run_id"])


def _base_policy(leaf: Run, rules: str) -> Policy:
    """The leaf's own recorded limits when it is this agent's run, else the rule set's defaults."""
    try:
        rec = Policy.recorded(leaf)
    except ValueError:
        return Policy.named(rules)
    return rec if rec.rules == rules else Policy.named(rules)


def limit_frontier(
    runs: Any,
    *,
    rules: str = "mini-swe-agent",
    cost_limits: Sequence[float] | None = None,
    step_limits: Sequence[int] | None = None,
    by: str = "source",
    confidence: float = 0.95,
    price: Callable[..., Any] | None = None,
    known: Mapping[str, LimitRows] | None = None,
) -> LimitFrontier:
    """The frontier over an agent's own ``cost_limits`` and/or ``step_limits`` (their cartesian product).
    ``known``: per run id, its replays made already (``cost_replays``, for cost limits alone)."""
    agent = rules_for(rules)
    if agent is None:
        raise ValueError(
            f"rule set {rules!r} has no limits of its own agent; use one of the agents' rule sets"
        )
    fields = {lim.field for lim in agent.limits}
    if cost_limits and "cost_limit_usd" not in fields:
        raise ValueError(f"{rules} has no cost limit of its own")
    # the agent's step knob: its step limit, or SWE-agent's per_instance_call_limit
    step_field = next((f for f in ("step_limit", "call_limit") if f in fields), None)
    if step_limits and step_field is None:
        raise ValueError(f"{rules} has no step limit of its own")
    if not cost_limits and not step_limits:
        raise ValueError("no limits to sweep: give cost limits and/or step limits")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    leaves = replayable_leaves(runs)
    if not leaves:
        raise ValueError("no replayable runs: every run was empty or a compaction call")
    costs: list[float | None] = sorted({float(c) for c in cost_limits}) if cost_limits else [None]
    steps: list[int | None] = sorted({int(s) for s in step_limits}) if step_limits else [None]
    grid = tuple(itertools.product(costs, steps))
    notes: list[str] = [f"{rules}'s own limits, as {agent.source}"]
    left_out: list[str] = []
    if cost_limits:
        keep = []
        for leaf in leaves:
            (keep if call_dollars(leaf, agent.price_source, price).known else left_out).append(leaf)
        if left_out:
            notes.append(
                f"{len(left_out)} run(s) cannot be replayed in dollars (a call priced neither by its recorded cost "
                "nor by genai-prices): left out of this frontier"
            )
        leaves = keep
        if not leaves:
            raise ValueError("no run can be replayed in dollars: every run has a call priced neither way")
    # The dollars of the ledger are the rule set's own meter: recorded cost first for a "recorded" agent.
    book = ledger(leaves, _recorded_first(price) if agent.price_source == "recorded" else price)
    rows = []
    for leaf in leaves:
        got = None if known is None or step_limits else known.get(leaf.run_id)
        if got is None:
            peak = peak_dollars(leaf, agent.price_source) if cost_limits else None
            got = limit_replays(leaf, rules, grid, step_field, peak)
        for k, point in enumerate(grid):
            fields = got.get(point)
            # a cost limit past those replayed for the leaf is past its peak: it replays as the last one given
            if fields is None:
                if point[0] is None or point[0] < max(got)[0]:
                    raise ValueError(f"{leaf.run_id}: no replay given under {knob_words(*point)}")
                fields = got[max(got)]
            rows.append({"run_id": leaf.run_id, "rules": rules, "grant": k, "context_length": None, **fields})
    sweep = classify(pd.DataFrame(rows))
    table = summarise(sweep, book, by, confidence)
    facts = book.table.set_index("run_id")
    at = facts.index.get_indexer(sweep["run_id"])
    sweep = sweep.assign(
        success=facts["success"].to_numpy()[at].astype(bool),
        group=_group_values(facts, by).to_numpy()[at],
        cause=[CAUSES.get(s, "other") for s in sweep["stop_reason"]],
    )
    table = _with_knobs(table, sweep, grid)
    if book.table["success_basis"].nunique() > 1:
        notes.append(
            "labelled runs count as resolved by their label, the rest by whether they finished on their own"
        )
    return LimitFrontier(
        rules,
        table,
        sweep,
        book.table,
        grid,
        by,
        agent.price_source,
        confidence,
        tuple(notes),
        tuple(r.run_id for r in left_out),
    )


LimitRows = dict[tuple[float | None, int | None], dict[str, Any]]
"""A leaf's replays under an agent's own limits: per (cost limit, step limit), its row's fields in the frontier."""
LIMIT_ROW = ("stop_reason", "stop_turn", "spent", "raw", "landing_started_at", "censored", "cut_turns", "turns",
             "turns_replayed")  # fmt: skip


def limit_replays(
    leaf: Run,
    rules: str,
    grid: Sequence[tuple[float | None, int | None]],
    step_field: str | None,
    peak: float | None,
) -> LimitRows:
    """``leaf`` replayed under ``rules`` (its own recorded limits where it is that agent's run) at each point of
    ``grid``. A cost limit above ``peak`` (``peak_dollars``), which the run's dollar meter never reaches, decides
    nothing: those replay once per step limit."""
    base = _base_policy(leaf, rules)
    facts = run_facts(leaf)  # read once, replayed per grid point
    unreached: dict[int | None, ReplayResult] = {}
    out: LimitRows = {}
    alike: dict[tuple[Any, ...], dict[str, Any]] = {}
    for c, s in grid:
        over: dict[str, Any] = {} if c is None else {"cost_limit_usd": c}
        if s is not None:
            assert step_field is not None
            over[step_field] = s
        above = c is not None and peak is not None and c > peak
        res = unreached.get(s) if above else None
        if res is None:
            res = replay(leaf, base.replace(**over) if over else base, facts=facts)
            if above:
                unreached[s] = res
        # no landing read (an own limit's row is kept or cut, never at risk); equal rows one object: 72% repeat one
        row = {k: None if k == "landing_started_at" else getattr(res, k) for k in LIMIT_ROW}
        out[(c, s)] = alike.setdefault(tuple(row.values()), row)
    return out


def cost_replays(leaf: Run, rules: str) -> LimitRows | None:
    """``leaf`` under every cost limit of the default grid (``default_cost_limits``) up to a step past its own peak:
    what ``limit_frontier`` reads of it under any default grid, however costly the corpus's other runs (``None``:
    a call priced neither way, so the frontier leaves it out)."""
    agent = rules_for(rules)
    assert agent is not None
    if not call_dollars(leaf, agent.price_source).known:
        return None
    peak = peak_dollars(leaf, agent.price_source)
    return limit_replays(
        leaf, rules, [(c, None) for c in default_cost_limits(peak + DEFAULT_COST_STEP)], None, peak
    )


def peak_dollars(run: Run, source: str) -> float:
    """The highest reading the agent's own dollar meter (``AgentLimits``, as the replay feeds it) takes over the
    whole of ``run``: a cost limit above it is never crossed, strictly or not."""
    meter = AgentLimits(LimitRules("peak", (), source), {})  # no limit of its own: it only counts
    peak = 0.0  # its reading before the first call
    for usd in call_dollars(run, source).usd:  # the replay's own reading (workbench.replay.engine)
        meter.after_call(usd, None)
        if meter.usd is None:  # a call of unknown price: it reads nothing from here on
            break
        peak = max(peak, meter.usd)
    return peak


def _recorded_first(price: Callable[..., Any] | None) -> Callable[..., Any]:
    """A ledger price function under which each call's recorded cost comes first (the ledger falls back to the
    recorded cost when the price function has none): genai-prices only for calls that recorded none."""
    from workbench.pricing import Price, price_usage

    fallback = price or price_usage

    def price_of(model: Any, usage: Any, when: Any = None) -> Any:
        if usage.cost is not None:
            return Price(usd=float(usage.cost), model=str(model or ""), provider="recorded")
        return fallback(model, usage, when)

    return price_of


def _with_knobs(table: pd.DataFrame, sweep: pd.DataFrame, grid: tuple) -> pd.DataFrame:
    """The table with ``cost_limit``/``step_limit`` for the grid index ``summarise`` kept as ``grant``, and the
    resolved runs lost by cause."""
    lost = sweep[sweep["success"] & (sweep["fate"] == Fate.CUT)]
    by_group = lost.groupby(["group", "grant", "cause"]).size()
    by_all = lost.groupby(["grant", "cause"]).size()
    out = table.copy()
    k = out["grant"].astype(int)
    out["cost_limit"] = [grid[i][0] for i in k]
    out["step_limit"] = [grid[i][1] for i in k]
    for cause in ("cost_limit", "step_limit", "other"):
        out[f"lost_by_{cause}"] = [
            int(by_all.get((i, cause), 0) if g == ALL_GROUP else by_group.get((g, i, cause), 0))
            for g, i in zip(out["group"], k, strict=True)
        ]
    return out[list(COLUMNS)].reset_index(drop=True)  # summarise's order: by group (all runs last), then grid


@dataclass(frozen=True)
class LimitPick:
    group: str
    rules: str
    invariants: AnalystInvariants
    cost_limit: float | None
    step_limit: int | None
    found: bool
    why: str
    row: dict[str, Any] | None = None

    @property
    def words(self) -> str:
        return f"set {knob_words(self.cost_limit, self.step_limit)}" if self.found else self.why

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "rules": self.rules,
            "invariants": asdict(self.invariants),
            "cost_limit": self.cost_limit,
            "step_limit": self.step_limit,
            "why": self.why,
        }


def recommend_limits(fr: LimitFrontier, invariants: AnalystInvariants | None = None) -> list[LimitPick]:
    """Per group, the smallest swept limit (cost first, then steps) where every invariant holds."""
    invariants = invariants if invariants is not None else AnalystInvariants()
    out = []
    for group in fr.groups:
        curve = fr.curve(group)
        words = invariants.words
        records = curve.to_dict("records")
        at = next((k for k, rec in enumerate(records) if not invariants.failures(rec)), None)
        hit = None if at is None else records[at]
        first = curve.iloc[0]
        word = "finished" if first["basis"] == "finished" else "resolved"
        if hit is None:
            best = curve.loc[curve["resolved_kept_share"].fillna(-1).idxmax()]
            why = (
                f"no swept limit satisfies every invariant ({words}); the most any keeps is "
                f"{int(best['resolved_kept'])} of {int(best['resolved'])} {word} runs at "
                f"{knob_words(_none(best['cost_limit']), _int(best['step_limit']))}"
            )
            out.append(LimitPick(group, fr.rules, invariants, None, None, False, why))
            continue
        c, s = _none(hit["cost_limit"]), _int(hit["step_limit"])
        why = (
            f"set {knob_words(c, s)}: the smallest swept limit where every invariant holds ({words}); it keeps "
            f"{hit['resolved_kept']} of {hit['resolved']} {word} runs"
        )
        if hit["spend_saved_usd"] is not None and not pd.isna(hit["spend_saved_usd"]):
            why += f" and saves ${float(hit['spend_saved_usd']):,.2f}"
        if at == 0:
            why += "; it is the bottom of the swept grid: a smaller limit may hold too"
        out.append(LimitPick(group, fr.rules, invariants, c, s, True, why, hit))
    return out


def _none(v: Any) -> float | None:
    return None if missing(v) else float(v)


def _int(v: Any) -> int | None:
    return None if missing(v) else int(v)
