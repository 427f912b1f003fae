"""The frontier: what each policy keeps of the runs that succeeded, and what it saves (docs/frontier.md).

``frontier(runs, ...)`` replays every run under every policy (rule set x grant x context length) and counts,
per group of runs and policy, the columns of ``TABLE``; a run kept, at risk or cut is its ``Fate``."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis import losses
from workbench.govern.cost import Totals
from workbench.govern.policy import Policy
from workbench.govern.verdict import StopReason
from workbench.pricing import normalise_model
from workbench.replay.censoring import GOOD_LABELS
from workbench.trace.columns import Column, names, read_row, typed
from workbench.trace.schema import Run

GROUP_KEYS = ("source", "agent", "model", "all")
INTERVAL_METHOD = "wilson"
INTERVAL_NAME = "Wilson score"
SKIPPED_ROLES = frozenset({"compaction"})  # a compaction call summarises another run's transcript: not a leaf
ALL_GROUP = "all runs"


class Basis(StrEnum):
    """What success is for a run (``success_basis``) or a group (``basis``)."""

    RESOLVED = "resolved"  # an external label
    FINISHED = "finished"  # no label: the recording finished on its own
    MIXED = "mixed"  # a group with runs of both kinds


class Fate(StrEnum):
    """How a policy treats one run (a sweep row's ``fate``, ``classify``)."""

    KEPT = "kept"  # ends as recorded, no landing
    AT_RISK = "at_risk"  # a landing started, nothing cut
    CUT = "cut"  # stopped before its recorded end


SHARES = {
    # share column stem: (numerator, denominator)
    "resolved_kept": ("resolved_kept", "resolved"),
    "resolved_at_risk": ("resolved_at_risk", "resolved"),
    "resolved_lost": ("resolved_lost", "resolved"),
    "unresolved_cut": ("unresolved_cut", "unresolved"),
}


def _count(name: str, doc: str) -> Column[Any]:
    return Column(name, "int64", None, doc)


def _shared(stem: str, doc: str) -> tuple[Column[Any], ...]:
    """A count, its share of ``SHARES[stem]``'s denominator and that share's interval."""
    of = SHARES[stem][1]
    return (
        _count(stem, doc),
        Column(f"{stem}_share", "float64", None, f"`{stem}` / `{of}`; NaN when `{of}` is 0"),
        Column(f"{stem}_low", "float64", None, "the share's interval, low end (`Frontier.interval`)"),
        Column(f"{stem}_high", "float64", None, "… and high end"),
    )


TABLE: tuple[Column[Any], ...] = (
    Column("group", "object", None, f"the group (the value of `by`), or `{ALL_GROUP}`"),
    Column("rules", "object", None, "the rule set"),
    _count("grant", "the grant"),
    Column("context_length", "object", None, "the context length; NaN: no context manager"),
    Column("basis", "object", None, "what success is (`Basis`): `resolved`, `finished` or `mixed`"),
    _count("runs", "leaves in the group"),
    _count("resolved", "those that succeeded"),
    *_shared("resolved_kept", "succeeded and end as recorded, no landing"),
    *_shared("resolved_at_risk", "succeeded; a landing started, the recording ended inside its allowance"),
    *_shared("resolved_lost", "succeeded; the policy stops them before their recorded end"),
    _count("unresolved", "those that did not succeed"),
    *_shared("unresolved_cut", "did not succeed; the policy stops them early"),
    _count("censored", "rows the recording's own limit cut before the policy decided"),
    _count("stopped_inferred", "no-progress stops on an inferred workspace fact"),
    _count("unjudged", "rows the no-progress guard could not judge"),
    _count("max_raw", "the most raw tokens any run reaches under the policy"),
    _count("spend_tokens", "the cost meter summed under the policy"),
    _count("spend_saved_tokens", "the recorded meter minus it, over the cut runs"),
    _count("recorded_tokens", "the recorded cost meter"),
    Column("spend_usd", "float64", None, "USD of the calls the policy makes (priced runs); NaN: none priced"),
    Column("spend_saved_usd", "float64", None, "USD of the calls it cuts"),
    Column("recorded_usd", "float64", None, "USD of the recorded calls"),
    _count("usd_runs", "runs whose every call has a price"),
    Column("lost_by", "object", None, "resolved runs lost, by cause (`workbench.analysis.losses`)"),
    Column("cut_by", "object", None, "unresolved runs cut, by cause"),
)
"""The frontier table (``Frontier.to_frame()``; one JSON line each in the CLI), in order; ``lost_by`` / ``cut_by``
sum to ``resolved_lost`` / ``unresolved_cut``."""
COLUMNS = names(TABLE)


# -- per run: what the recording did ------------------------------------------------------------------------------


def agent_of(run: Run) -> str:
    """The agent that made the run: the source's harness, with its own agent class where it records one."""
    for key in ("agent_class", "agent_type"):
        value = run.metadata.get(key)
        if isinstance(value, str) and value:
            return f"{run.source}:{value.rsplit('.', 1)[-1]}"  # the class, not its module path
    return run.source


def finished_cleanly(run: Run) -> bool:
    """The recording ended on its own with an answer: stop reason ``done``, not an error, not a limit, and its
    last call did not end in an error (a recording that ended in an error is not a finished run)."""
    if run.outcome.stop_reason != StopReason.DONE or not run.turns:
        return False
    last = run.turns[-1]
    return (last.finish_reason or "") not in {"error", "api_error"}


def success_of(run: Run) -> tuple[bool, str]:
    """(succeeded, on what basis): an external label where there is one, else a clean finish."""
    if run.outcome.label is not None:
        return run.outcome.label in GOOD_LABELS, Basis.RESOLVED
    return finished_cleanly(run), Basis.FINISHED


def _call_usd(run: Run, price: Callable[..., Any]) -> tuple[np.ndarray, str]:
    """Per call, its USD (genai-prices at the call's date, else the source's recorded cost); NaN where neither."""
    out = np.full(len(run.turns), np.nan)
    priced = recorded = 0
    for i, t in enumerate(run.turns):
        p = price(t.model or run.model, t.usage, t.started_at or run.started_at)
        if p is not None:
            out[i] = p.usd
            priced += 1
        elif t.usage.cost is not None:
            out[i] = float(t.usage.cost)
            recorded += 1
    n = len(run.turns)
    if priced + recorded < n:
        basis = "unknown"
    elif recorded == 0:
        basis = "genai-prices"
    elif priced == 0:
        basis = "recorded"
    else:
        basis = "genai-prices + recorded"
    return out, basis


@dataclass(frozen=True)
class RunLedger:
    """Per run, what the recording did and cost: one row per leaf (``table``, ``LEDGER``) and each leaf's cumulative
    USD per call (``cum_usd``; NaN from the first call whose price is unknown)."""

    table: pd.DataFrame
    cum_usd: dict[str, np.ndarray] = field(compare=False)

    def usd_through(self, run_id: str, calls: int) -> float:
        """USD of the first ``calls`` calls of a run (NaN when any of them is unpriced)."""
        if calls <= 0:
            return 0.0
        return float(self.cum_usd[run_id][calls - 1])

    def only(self, run_ids: Sequence[str]) -> RunLedger | None:
        """The ledger of these runs, in this order, as ``ledger`` would read it from them (a leaf's row is its
        own); ``None`` when one is missing here or a run id is not unique."""
        wanted, have = list(run_ids), self.table["run_id"]
        if not have.is_unique or len(set(wanted)) < len(wanted) or not set(wanted) <= set(have):
            return None
        if list(have) == wanted:
            return self
        table = self.table.set_index("run_id", drop=False).loc[wanted].reset_index(drop=True)
        return RunLedger(table, {r: self.cum_usd[r] for r in wanted})


@dataclass(frozen=True)
class Recorded:
    """One leaf with its recorded cost meter and its cumulative USD per call (a ledger row's item)."""

    run: Run
    totals: Totals
    cum_usd: np.ndarray
    usd_basis: str

    @classmethod
    def of(cls, run: Run, price: Callable[..., Any]) -> Recorded:
        totals = Totals()
        for t in run.turns:
            totals = totals.add(t.usage.prompt, t.usage.cached, t.usage.completion)
        usd, basis = _call_usd(run, price)
        return cls(run, totals, np.cumsum(usd), basis)  # NaN propagates from the first unpriced call on


LEDGER: tuple[Column[Recorded], ...] = (
    Column("run_id", "object", "run.run_id", "the leaf"),
    Column("source", "object", "run.source", "the format it was read from"),
    Column(
        "agent", "object", lambda r: agent_of(r.run), "its harness, with its own agent class (`agent_of`)"
    ),
    Column(
        "model",
        "object",
        lambda r: normalise_model(r.run.model) or "(unknown model)",
        "the model, normalised: one name whatever route recorded it",
    ),
    Column("model_raw", "object", "run.model", "the model as recorded"),
    Column("label", "object", "run.outcome.label", "an external grade (docs/labels.md)"),
    Column("label_source", "object", "run.outcome.label_source", "where the label was read"),
    Column("success", "bool", lambda r: success_of(r.run)[0], "a good label, else a clean finish"),
    Column("success_basis", "object", lambda r: success_of(r.run)[1], "`resolved` (a label) or `finished`"),
    Column("finished", "bool", lambda r: finished_cleanly(r.run), "it ended `done`, its last call no error"),
    Column("recorded_stop", "object", "run.outcome.stop_reason", "how the recording ended"),
    Column("recorded_tokens", "int64", lambda r: r.totals.spent(), "its cost meter"),
    Column("recorded_raw", "int64", lambda r: r.totals.prompt + r.totals.completion, "prompt + completion"),
    Column(
        "recorded_usd",
        "float64",
        lambda r: float(r.cum_usd[-1]) if len(r.cum_usd) else 0.0,
        "its USD; NaN when a call is priced neither way",
    ),
    Column(
        "usd_basis",
        "object",
        "usd_basis",
        "`genai-prices`, `recorded`, `genai-prices + recorded` or `unknown`",
    ),
)
"""The ledger (``Frontier.runs``): one row per leaf, what its recording did and cost."""
RUN_COLUMNS = names(LEDGER)


def ledger(runs: Iterable[Run], price: Callable[..., Any] | None = None) -> RunLedger:
    """The recorded facts of each leaf (pass leaves: a sweep row is a leaf)."""
    if price is None:
        from workbench.pricing import price_usage

        price = price_usage
    read = [Recorded.of(run, price) for run in runs]
    rows = [read_row(LEDGER, r) for r in read]
    cum = {row["run_id"]: r.cum_usd for row, r in zip(rows, read, strict=True)}
    return RunLedger(typed({c: [row[c] for row in rows] for c in RUN_COLUMNS}, LEDGER), cum)


def replayable_leaves(runs: Any) -> list[Run]:
    """The leaves a frontier counts: sessions split at user prompts, compaction calls and empty runs left out."""
    if isinstance(runs, Run):
        runs = [runs]
    out: list[Run] = []
    for run in runs:
        if run.role in SKIPPED_ROLES:
            continue
        out.extend(leaf for leaf in run.leaves() if leaf.turns)
    return out


# -- per (run, policy): how the policy treats the run -----------------------------------------------------------


def classify(rows: pd.DataFrame) -> pd.DataFrame:
    """Each sweep row's fate: ``kept`` (ends as recorded, no landing), ``at_risk`` (a landing started, nothing
    cut) or ``cut`` (stopped before its recorded end). Needs ``landing_started_at`` and ``cut_turns``."""
    cut = rows["cut_turns"].fillna(0).astype(int) > 0
    landed = rows["landing_started_at"].notna()
    fate = np.where(cut, Fate.CUT, np.where(landed, Fate.AT_RISK, Fate.KEPT))
    return rows.assign(fate=fate)


# -- confidence intervals ----------------------------------------------------------------------------------------


@lru_cache(maxsize=65_536)
def share_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """(share, low, high) for ``k`` of ``n``: the Wilson score interval (scipy); NaN when ``n`` is 0."""
    if n <= 0:
        return math.nan, math.nan, math.nan
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method=INTERVAL_METHOD)
    return k / n, float(ci.low), float(ci.high)


# -- the frontier ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FrontierPoint:
    """One (group, policy) row of a frontier, read as words."""

    row: dict[str, Any]
    confidence: float

    def __getitem__(self, key: str) -> Any:
        return self.row[key]

    @property
    def success_word(self) -> str:
        return "finished" if self.row["basis"] == Basis.FINISHED else "resolved"

    @property
    def words(self) -> str:
        r = self.row
        ci = round(self.confidence * 100)
        kept = (
            f"{r['resolved_kept']} of {r['resolved']} {self.success_word} runs kept "
            f"({_pct(r['resolved_kept_share'])}, {ci}% {INTERVAL_NAME} interval "
            f"{_pct(r['resolved_kept_low'])} to {_pct(r['resolved_kept_high'])})"
        )
        saved = f"saves {r['spend_saved_tokens']:,} tokens"
        if not math.isnan(r["spend_saved_usd"]):
            saved += f" and ${r['spend_saved_usd']:,.2f}"
        return f"grant {r['grant']:,}: {kept}; {saved}"


def missing(v: Any) -> bool:
    """None or NaN: a frame cell with no value."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def _pct(x: float) -> str:
    return "—" if missing(x) else f"{x:.1%}"


class Counted:
    """What a frontier reads off its table (``Frontier``, ``LimitFrontier``)."""

    table: pd.DataFrame
    confidence: float

    @property
    def interval(self) -> str:
        return f"{INTERVAL_NAME} interval, {self.confidence:.0%} two-sided (scipy.stats.binomtest)"

    @property
    def groups(self) -> list[str]:
        return list(dict.fromkeys(self.table["group"]))

    def records(self) -> list[dict[str, Any]]:
        """The table as JSON-ready dicts (NaN and NA as None, numpy scalars as Python's)."""
        return [{k: _plain(v) for k, v in rec.items()} for rec in self.table.to_dict("records")]


@dataclass(frozen=True)
class Frontier(Counted):
    """Per (group, policy): runs kept, at risk and lost, with Wilson intervals, and the spend in tokens and USD.

    ``table`` has ``COLUMNS``; ``rows`` is every (run, policy) sweep row with its ``fate`` and the run's facts;
    ``runs`` one row per leaf (``RUN_COLUMNS``)."""

    table: pd.DataFrame
    rows: pd.DataFrame
    runs: pd.DataFrame
    by: str
    confidence: float = 0.95
    notes: tuple[str, ...] = ()
    overrides: dict[str, Any] = field(default_factory=dict, compare=False)
    """The Policy overrides every swept policy carried (``--without`` / ``--set``)."""

    def lost(
        self,
        grant: int,
        group: str | None = None,
        rules: str | None = None,
        context_length: int | None = None,
        *,
        resolved: bool = True,
    ) -> pd.DataFrame:
        """The sweep rows of the resolved runs lost (``resolved=False``: the unresolved runs cut) at one grant,
        with their ``cause``."""
        r = self.rows
        group = group if group is not None else self.groups[0]
        rules = rules if rules is not None else str(self.table["rules"].iloc[0])
        sel = (r["grant"] == grant) & (r["rules"] == rules) & (r["fate"] == Fate.CUT)
        sel &= r["success"].astype(bool) if resolved else ~r["success"].astype(bool)
        if group != ALL_GROUP:
            sel &= r[self.by].astype(str) == group
        ctx = r["context_length"]
        sel &= ctx.isna() if context_length is None else ctx == context_length
        return r[sel].assign(group=group).reset_index(drop=True)

    def regrouped(self, by: str, book: RunLedger) -> Frontier:
        """The same sweep counted by another grouping (``book``: the ledger this frontier was counted from). The
        classified rows do not depend on the grouping, so they are shared, not classified and held again."""
        if by == self.by:
            return self
        table = summarise(self.rows, book, by, self.confidence)
        return Frontier(table, self.rows, self.runs, by, self.confidence, self.notes, self.overrides)

    def basis(self, group: str) -> str:
        hit = self.table[self.table["group"] == group]
        if hit.empty:
            raise KeyError(f"no group {group!r}; groups: {', '.join(self.groups)}")
        return str(hit["basis"].iloc[0])

    def curve(
        self, group: str | None = None, rules: str | None = None, context_length: int | None = None
    ) -> pd.DataFrame:
        """The rows of one group, rule set and context length, by grant (defaults: the first of each)."""
        t = self.table
        group = group if group is not None else self.groups[0]
        rules = rules if rules is not None else str(t["rules"].iloc[0])
        sel = (t["group"] == group) & (t["rules"] == rules)
        sel &= t["context_length"].isna() if context_length is None else t["context_length"] == context_length
        out = t[sel].sort_values("grant").reset_index(drop=True)
        if out.empty:
            raise KeyError(f"no rows for group {group!r}, rules {rules!r}, context length {context_length}")
        return out

    def point(
        self,
        grant: int,
        group: str | None = None,
        rules: str | None = None,
        context_length: int | None = None,
    ) -> FrontierPoint:
        """One (group, policy) row."""
        c = self.curve(group, rules, context_length)
        hit = c[c["grant"] == grant]
        if hit.empty:
            raise KeyError(f"grant {grant:,} is not on the swept grid")
        return FrontierPoint(hit.iloc[0].to_dict(), self.confidence)

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def __repr__(self) -> str:
        policies = self.table[["rules", "grant", "context_length"]].drop_duplicates().shape[0]
        return (
            f"Frontier({len(self.groups)} group(s) by {self.by}, {policies} policies, {len(self.runs)} runs)"
        )

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return (
            f"<div><b>Frontier</b> by {html.escape(self.by)}: {len(self.runs)} runs, "
            f"{html.escape(', '.join(f'{g} ({self.basis(g)})' for g in self.groups))}. "
            f"Shares carry the {html.escape(self.interval)}.<ul>{notes}</ul>"
            f"{self.table.to_html(index=False, max_rows=40, na_rep='—')}</div>"
        )


def _plain(v: Any) -> Any:
    if v is None or v is pd.NA:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _group_values(runs: pd.DataFrame, by: str) -> pd.Series:
    if by not in GROUP_KEYS:
        raise ValueError(f"--by must be one of {', '.join(GROUP_KEYS)}, got {by!r}")
    if by == "all":
        return pd.Series(ALL_GROUP, index=runs.index)
    return runs[by].astype(str)


def summarise(
    rows: pd.DataFrame, runs: RunLedger, by: str = "source", confidence: float = 0.95
) -> pd.DataFrame:
    """The frontier table from classified sweep rows (``classify``) and the runs' ledger.

    Vectorised over rows (a report at 100x copies counts millions): whole-number columns are summed per
    (group, policy) with ``np.bincount`` (exact: every partial sum is a whole number far below 2**53); each dollar
    sum is numpy's sum of that group's priced rows in row order, the sum pandas takes, so every figure equals the
    per-group pandas computation it replaces."""
    facts = runs.table.set_index("run_id")
    at = facts.index.get_indexer(rows["run_id"])
    if (at < 0).any():
        raise ValueError("sweep rows name runs the ledger does not have")
    n = len(rows)
    success = facts["success"].to_numpy()[at].astype(bool)
    resolved_basis = (facts["success_basis"].to_numpy() == Basis.RESOLVED)[at]
    finished_basis = (facts["success_basis"].to_numpy() == Basis.FINISHED)[at]
    recorded_tokens = facts["recorded_tokens"].to_numpy(dtype=np.int64)[at]
    spent = rows["spent"].astype("int64").to_numpy()
    fate = rows["fate"].to_numpy()
    cut, kept, at_risk = fate == Fate.CUT, fate == Fate.KEPT, fate == Fate.AT_RISK
    saved = np.where(cut, np.clip(recorded_tokens - spent, 0, None), 0)
    usd = _usd_through(runs, facts.index, at, rows["turns_replayed"].astype(int).to_numpy())
    total = facts["recorded_usd"].to_numpy(dtype=float)[at]
    usd_saved = np.where(cut, total - usd, 0.0)
    priced = ~np.isnan(total)
    cause = rows["cause"].to_numpy(dtype=object) if "cause" in rows.columns else None
    ctx = _context_codes(rows["context_length"] if "context_length" in rows.columns else None, n)
    # one code per (rules, grant, context length), from each column's own codes
    levels = [pd.factorize(v) for v in (rows["rules"].to_numpy(), rows["grant"].to_numpy(), ctx)]
    policy_code = np.zeros(n, dtype=np.int64)
    for codes, uniques in levels:
        policy_code = policy_code * len(uniques) + codes
    width = max(1, math.prod(len(u) for _, u in levels))
    groups = _group_values(facts, by).to_numpy()[at]
    groupings = [groups]
    if by != "all" and len(pd.unique(groups)) > 1:
        groupings.append(np.full(n, ALL_GROUP, dtype=object))
    columns = {
        "runs": np.ones(n, dtype=np.int64),
        "resolved": success,
        "resolved_kept": success & kept,
        "resolved_at_risk": success & at_risk,
        "resolved_lost": success & cut,
        "unresolved": ~success,
        "unresolved_cut": ~success & cut,
        "censored": rows["censored"].astype(bool).to_numpy(),
        "stopped_inferred": _column_or(rows, "stop_basis", None).to_numpy(dtype=object) == "inferred",
        "unjudged": _column_or(rows, "unjudged_at", None).notna().to_numpy(),
        "spend_tokens": spent,
        "spend_saved_tokens": saved,
        "recorded_tokens": recorded_tokens,
        "usd_runs": priced,
        "_resolved_basis": resolved_basis,
        "_finished_basis": finished_basis,
    }
    raw = rows["raw"].to_numpy(dtype=np.int64)
    out = []
    for group_of in groupings:
        group_code, group_keys = pd.factorize(group_of)
        key = group_code.astype(np.int64) * width + policy_code
        size = len(group_keys) * width
        counted = np.bincount(key, minlength=size)
        cells = np.flatnonzero(counted)
        sums = {
            c: np.rint(np.bincount(key, weights=v.astype(float), minlength=size)[cells]).astype(np.int64)
            for c, v in columns.items()
        }
        order = np.argsort(key, kind="stable")  # rows of one (group, policy) together, in row order
        starts = np.concatenate([[0], np.cumsum(counted[cells])])
        top = np.maximum.reduceat(raw[order], starts[:-1])
        for j, cell in enumerate(cells):
            sel = order[starts[j] : starts[j + 1]]
            rules, grant, c = _decode(cell % width, levels)
            rec: dict[str, Any] = {
                "group": group_keys[cell // width],
                "rules": rules,
                "grant": int(grant),
                "context_length": None if c < 0 else int(c),
            }
            count = int(sums["runs"][j])
            rec["basis"] = (
                Basis.RESOLVED
                if sums["_resolved_basis"][j] == count
                else Basis.FINISHED
                if sums["_finished_basis"][j] == count
                else Basis.MIXED
            )
            rec.update({c: int(v[j]) for c, v in sums.items() if not c.startswith("_")})
            rec["max_raw"] = int(top[j])
            mine = priced[sel]
            if mine.any():
                rec["spend_usd"] = _sum(usd[sel][mine])
                rec["spend_saved_usd"] = _sum(usd_saved[sel][mine])
                rec["recorded_usd"] = _sum(total[sel][mine])
            else:
                rec["spend_usd"] = rec["spend_saved_usd"] = rec["recorded_usd"] = math.nan
            for stem, (num, den) in SHARES.items():
                share, low, high = share_interval(rec[num], rec[den], confidence)
                rec[f"{stem}_share"], rec[f"{stem}_low"], rec[f"{stem}_high"] = share, low, high
            if cause is not None:  # the cut rows' causes (``workbench.analysis.losses``)
                rec["lost_by"] = losses.count_map(pd.Series(cause[sel][cut[sel] & success[sel]]))
                rec["cut_by"] = losses.count_map(pd.Series(cause[sel][cut[sel] & ~success[sel]]))
            out.append(rec)
    return table_frame(out)


def table_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Table cells as the frontier's typed frame (``TABLE``; a column no cell has yet is None throughout), in the
    table's order: by group (the whole corpus after its groups), rules, context length, grant."""
    table = typed({c: [r.get(c) for r in records] for c in COLUMNS}, TABLE)
    order_by = table.assign(
        _last=table["group"] == ALL_GROUP, _ctx=table["context_length"].map(lambda v: -1 if v is None else v)
    )
    order_by = order_by.sort_values(["_last", "group", "rules", "_ctx", "grant"], kind="stable")
    return table.loc[order_by.index].reset_index(drop=True)


def _column_or(rows: pd.DataFrame, name: str, default: Any) -> pd.Series:
    """A sweep column, or ``default`` throughout for rows swept before it existed (a caller's own frame)."""
    if name in rows.columns:
        return rows[name]
    return pd.Series([default] * len(rows), index=rows.index, dtype=object)


def _decode(code: int, levels: list[tuple[np.ndarray, Any]]) -> list[Any]:
    """The (rules, grant, context length) of a policy code (``summarise``'s mixed radix)."""
    out = []
    for _, uniques in reversed(levels):
        code, k = divmod(int(code), len(uniques))
        out.append(uniques[k])
    return out[::-1]


def _sum(values: np.ndarray) -> float:
    """A group's dollars as pandas sums a float Series: NaN skipped, numpy's sum of the rest in row order."""
    return float(np.where(np.isnan(values), 0.0, values).sum())


def _usd_through(book: RunLedger, ids: pd.Index, at: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """Per row, ``book.usd_through(run, calls)``: every run's cumulative USD in one array, read at once."""
    cums = [book.cum_usd[r] for r in ids]
    lengths = np.array([len(c) for c in cums], dtype=np.int64)
    if (calls > lengths[at]).any():
        raise ValueError("a sweep row made more calls than its run recorded")
    flat = np.concatenate([*cums, np.zeros(1)])
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return np.where(calls <= 0, 0.0, flat[np.where(calls <= 0, 0, offsets[at] + calls - 1)])


def _context_codes(column: pd.Series | None, n: int) -> np.ndarray:
    """Each row's context length as an integer, -1 for none (None or NaN)."""
    out = np.full(n, -1, dtype=np.int64)
    if column is None:
        return out
    values = column.to_numpy(dtype=object)
    known = ~pd.isna(values)
    if known.any():
        out[known] = values[known].astype(np.int64)
    return out


def policies_for(
    rules: Sequence[str],
    grants: Sequence[int],
    context_lengths: Sequence[int | None],
    overrides: dict[str, Any] | None = None,
) -> list[Policy]:
    """Every (rule set, grant, context length), in that nesting, each with ``overrides`` (``--without``/``--set``)."""
    return [
        Policy.named(r, grant=int(g), context_length=c, **(overrides or {}))
        for r in rules
        for c in context_lengths
        for g in grants
    ]


SWEEP_COLUMNS = (
    "run_id",
    "rules",
    "grant",
    "context_length",
    "stop_reason",
    "stop_turn",
    "spent",
    "raw",
    "landing_started_at",
    "censored",
    "cut_turns",
    "turns",
    "turns_replayed",
    "stop_basis",
    "unjudged_at",
)
"""The sweep columns a frontier counts (``workbench.replay.sweep``'s names)."""
CAUSE_COLUMNS = (
    "landing_kind",
    "cut_tokens",
    "cut_tool_calls",
    "cut_mutations",
    "good_outcome_after_cut",
    "recorded_stop",
)
"""Sweep columns a frontier keeps where they are there: a cut's cause and what the recording did after it."""


def sweep_rows(
    leaves: Sequence[Run], policies: Sequence[Policy], *, progress: bool = False, workers: int | None = 1
) -> pd.DataFrame:
    """The sweep rows the frontier counts: through ``workbench.replay.sweep`` (its fast path where exact) for
    policies without a context manager, through the report's context sweep (the same engine, one context replay
    per run and setting) for the rest."""
    from workbench.scale.sweep import sweep

    plain = [p for p in policies if p.context_length is None]
    framed = [p for p in policies if p.context_length is not None]
    parts = []
    if plain:
        part = sweep(list(leaves), plain, segments=False, progress=progress, workers=workers)
        part["context_length"] = None
        parts.append(part)
    if framed:
        from workbench.report.sweeps import policy_sweep

        parts.append(policy_sweep(leaves, framed, progress=progress))
    return pd.concat([_keep(p) for p in parts], ignore_index=True)


def _keep(part: pd.DataFrame) -> pd.DataFrame:
    return part[[*SWEEP_COLUMNS, *(c for c in CAUSE_COLUMNS if c in part.columns)]]


def default_grants() -> tuple[int, ...]:
    """100,000 to 600,000 in steps of 10,000: from well under the seed's 220,000 to past the costliest honest
    runs of the shared SWE-bench corpus."""
    return tuple(range(100_000, 600_001, 10_000))


def frontier(
    runs: Any,
    *,
    rules: Sequence[str] = ("current",),
    grants: Sequence[int] | None = None,
    context_lengths: Sequence[int | None] = (None,),
    by: str = "source",
    confidence: float = 0.95,
    progress: bool = False,
    workers: int | None = 1,
    price: Callable[..., Any] | None = None,
    sweep: pd.DataFrame | None = None,
    book: RunLedger | None = None,
    overrides: dict[str, Any] | None = None,
) -> Frontier:
    """The frontier of ``runs`` (a Corpus, Runs or one Run) over every (rule set, grant, context length);
    ``by`` and ``sweep`` as docs/frontier.md says. ``price``: ``price_usage``'s signature (tests pass their own);
    ``book``: a ledger already read holding these runs (``ledger(leaves)``, or a corpus's: their rows are taken),
    to price them once for several groupings and sections;
    ``overrides``: Policy fields every swept policy carries (``{"no_progress": False}``: without the guard)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    leaves = replayable_leaves(runs)
    if not leaves:
        raise ValueError("no replayable runs: every run was empty or a compaction call")
    grants = tuple(grants) if grants is not None else default_grants()
    if not grants:
        raise ValueError("no grants to sweep")
    if not context_lengths:
        raise ValueError("no context lengths to sweep (pass (None,) for no context manager)")
    # a wider ledger (a corpus's, for a group of its runs) gives these runs' rows
    own = book.only([r.run_id for r in leaves]) if book is not None else None
    book = own if own is not None else ledger(leaves, price)
    if sweep is None:
        sweep = sweep_rows(
            leaves,
            policies_for(rules, grants, context_lengths, overrides),
            progress=progress,
            workers=workers,
        )
    else:
        missing = [c for c in SWEEP_COLUMNS if c not in sweep.columns]
        if missing:
            raise ValueError(f"sweep rows lack column(s) {missing}")
        sweep = _keep(sweep)
    rows = classify(sweep)
    rows = rows.assign(cause=losses.causes(rows, leaves, overrides))
    table = summarise(rows, book, by, confidence)
    notes = []
    unknown = book.table[book.table["usd_basis"] == "unknown"]
    if len(unknown):
        notes.append(
            f"{len(unknown)} run(s) have a call priced neither by genai-prices nor by their source: "
            "left out of every dollar figure (usd_runs counts the runs that are in)"
        )
    mixed = book.table["success_basis"].nunique() > 1
    if mixed:
        notes.append(
            "some runs are labelled and some are not: labelled runs count as resolved by their label, the rest "
            "by whether their recording finished on its own"
        )
    facts = book.table.set_index("run_id")
    at = facts.index.get_indexer(rows["run_id"])  # every row's run is in the ledger (summarise checked)
    rows = rows.assign(
        **{c: facts[c].to_numpy()[at] for c in ("source", "agent", "model", "success", "success_basis")}
    )
    # each row's own dollars (the calls the policy makes), for per-run readings such as SWE-Effi's EuCB
    rows = rows.assign(usd=_usd_through(book, facts.index, at, rows["turns_replayed"].astype(int).to_numpy()))
    if overrides:
        notes.append("every policy carries " + ", ".join(f"{k}={v}" for k, v in overrides.items()))
    return Frontier(table, rows, book.table, by, confidence, tuple(notes), dict(overrides or {}))
