"""The grant band: for each candidate grant, what it does to an annotated sweep frame, and where every
:class:`~workbench.analysis.invariants.Invariant` holds (docs/report.md, "Which invariants head the report")."""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from workbench.analysis.invariants import Invariant, seed_invariants

REQUIRED_COLUMNS = ("run_id", "grant", "stop_reason", "spent", "raw", "turns", "turns_replayed",
                    "landing_started_at", "censored", "cut_turns", "cut_tool_calls", "cut_mutations",
                    "recorded_finished", "recorded_spent")  # fmt: skip


@dataclass(frozen=True)
class Binding:
    """An invariant that fails just outside the band: it is what puts the edge where it is."""

    edge: str  # "floor" or "ceiling"
    grant: int  # the first grant outside the band on that side
    invariant: str
    run_id: str
    column: str
    value: float | None
    bound: float
    op: str

    @property
    def words(self) -> str:
        value = "no value" if self.value is None else f"{self.value:,.0f}"
        return (
            f"{self.edge}: at {self.grant:,} {self.invariant!r} fails on {self.run_id} "
            f"({self.column} = {value}, needs {self.op} {self.bound:,.0f})"
        )


@dataclass(frozen=True)
class GrantBand:
    """Per-grant effects and the band of grants where every invariant holds."""

    table: pd.DataFrame
    invariants: tuple[Invariant, ...]
    low: int | None
    high: int | None
    bindings: tuple[Binding, ...] = ()
    unevaluated: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    exact_low: int | None = None
    exact_high: int | None = None
    """The edges to the token, bisected between a swept grant and its failing neighbour (``refine``)."""

    @property
    def found(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def words(self) -> str:
        if self.unevaluated:
            return "no band: unevaluated invariants (" + ", ".join(self.unevaluated) + ")"
        if not self.found:
            return "no grant on the grid satisfies every invariant"
        words = f"{self.low:,} to {self.high:,} tokens of billed work"
        if self.exact_low is not None or self.exact_high is not None:
            lo = f"{self.exact_low:,}" if self.exact_low is not None else "—"
            hi = f"{self.exact_high:,}" if self.exact_high is not None else "—"
            words += f" (edges to the token: {lo} to {hi})"
        return words

    def row(self, grant: int) -> pd.Series:
        """The table row of one grant."""
        hit = self.table[self.table["grant"] == grant]
        if hit.empty:
            raise KeyError(f"grant {grant:,} is not on the swept grid")
        return hit.iloc[0]

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def _repr_html_(self) -> str:
        binds = "".join(f"<li>{html.escape(b.words)}</li>" for b in self.bindings)
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return (
            f"<div><b>Grant band:</b> {html.escape(self.words)}<ul>{binds}{notes}</ul>"
            f"{self.table.to_html(index=False, max_rows=40)}</div>"
        )


def _check(frame: pd.DataFrame, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"sweep frame lacks column(s) {missing}; annotate it with workbench.analysis.annotate"
        )
    dupes = frame.duplicated(["run_id", "grant"])
    if dupes.any():
        extra = [
            c
            for c in frame.columns
            if c in {"rules", "context_length", "calibration", "cache_weight_percent"}
        ]
        raise ValueError(
            f"{int(dupes.sum())} (run_id, grant) pairs appear more than once: filter the frame to one policy "
            f"family first (by {extra or 'the other grid columns'})"
        )


def _landed(frame: pd.DataFrame) -> pd.Series:
    """A landing was ordered while the recording still had turns to make (it was working, not finishing)."""
    return frame["landing_started_at"].notna() & (frame["landing_started_at"] < frame["turns"] - 1)


def _finished_inside(frame: pd.DataFrame) -> pd.Series:
    return (
        (frame["stop_reason"] == "done")
        & frame["landing_started_at"].isna()
        & ~frame["censored"].astype(bool)
    )


def effects(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-grant effects on the corpus (no invariants): one row per grant, sorted.

    Counted per grant with ``np.bincount`` (one pass per column over a sweep of any size): every figure is a
    whole number, summed exactly, and the share is the same float division a per-grant mean makes."""
    _check(frame, REQUIRED_COLUMNS)
    if frame.empty:
        return pd.DataFrame([])
    grants, code = np.unique(frame["grant"].to_numpy(dtype=np.int64), return_inverse=True)

    def total(values: pd.Series | np.ndarray) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        v = np.where(np.isnan(v), 0.0, v)  # a missing value adds nothing, as in a pandas sum
        return np.rint(np.bincount(code, weights=v, minlength=len(grants))).astype(np.int64)

    honest = frame["recorded_finished"].astype(bool).to_numpy()
    inside = _finished_inside(frame).to_numpy(dtype=bool, na_value=False)
    landed = _landed(frame).to_numpy(dtype=bool, na_value=False)
    saved = (frame["recorded_spent"] - frame["spent"]).clip(lower=0).where(frame["cut_turns"] > 0, 0)
    finished_runs = total(honest)
    finished_inside = total(honest & inside)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(finished_runs > 0, finished_inside / np.maximum(finished_runs, 1), np.nan)
    return pd.DataFrame(
        {
            "grant": grants,
            "finished_runs": finished_runs,
            "finished_inside": finished_inside,
            "share_finished": share.astype(float),
            "landed_mid_work": total(landed),
            "censored": total(frame["censored"].astype(bool).to_numpy()),
            "spend": total(frame["spent"]),
            "spend_saved": total(saved.to_numpy(dtype=float, na_value=np.nan)),
            "cut_turns": total(frame["cut_turns"].to_numpy(dtype=float, na_value=np.nan)),
            "cut_tool_calls": total(frame["cut_tool_calls"].to_numpy(dtype=float, na_value=np.nan)),
            "cut_mutations": total(frame["cut_mutations"].to_numpy(dtype=float, na_value=np.nan)),
        }
    )


def _contiguous_band(grants: list[int], ok: list[bool]) -> tuple[int | None, int | None, bool]:
    """The widest contiguous run of passing grants; and whether the passing set is one run."""
    best: tuple[int, int] | None = None
    runs = 0
    start = None
    for i, good in enumerate([*ok, False]):
        if good and start is None:
            start = i
        elif not good and start is not None:
            runs += 1
            if best is None or (i - start) > (best[1] - best[0] + 1):
                best = (start, i - 1)
            start = None
    if best is None:
        return None, None, True
    return grants[best[0]], grants[best[1]], runs <= 1


def grant_band(
    frame: pd.DataFrame, invariants: tuple[Invariant, ...] | None = None, probes: pd.DataFrame | None = None
) -> GrantBand:
    """Effects of every grant in ``frame`` and the band where every invariant holds.

    ``frame`` must hold one policy family (one row per run and grant). Invariants default to the seed's two.
    ``probes``: sweep rows of synthetic probe runs (same grants), read by an invariant whose run the corpus
    lacks; they never enter the effects table.
    """
    invariants = seed_invariants() if invariants is None else tuple(invariants)
    table = effects(frame)
    grants = table["grant"].tolist()
    unevaluated = []
    status: dict[str, list[bool]] = {}
    values: dict[str, dict[int, tuple[str, float | None]]] = {}
    for inv in invariants:
        rows = inv.rows(frame)
        if rows.empty and probes is not None:
            rows = inv.rows(probes)
        if rows.empty:
            unevaluated.append(inv.name)
            continue
        by_grant = {int(g): r for g, r in rows.groupby("grant")}
        status[inv.name] = []
        values[inv.name] = {}
        for grant in grants:
            r = by_grant.get(grant)
            if r is None or r.empty:
                status[inv.name].append(False)
                values[inv.name][grant] = ("(no row)", None)
                continue
            row = r.iloc[0]
            status[inv.name].append(inv.holds(row))
            v = row[inv.column]
            values[inv.name][grant] = (str(row["run_id"]), None if pd.isna(v) else float(v))
        table[f"ok: {inv.name}"] = status[inv.name]
        table[f"{inv.column} of {inv.run}"] = [values[inv.name][g][1] for g in grants]
    notes: list[str] = []
    if unevaluated or not invariants:
        table["all_hold"] = False
        return GrantBand(table, invariants, None, None, (), tuple(unevaluated), tuple(notes))
    ok = [all(status[i.name][k] for i in invariants) for k in range(len(grants))]
    table["all_hold"] = ok
    low, high, single = _contiguous_band(grants, ok)
    if low is None:
        for inv in invariants:
            held = [g for g, good in zip(grants, status[inv.name], strict=True) if good]
            where = f"holds from {held[0]:,} to {held[-1]:,}" if held else "holds at no swept grant"
            notes.append(f"{inv.name!r} {where} ({len(held)} of {len(grants)} grants)")
    if not single:
        notes.append("the grants where every invariant holds are not one interval; the widest is shown")
    bindings: list[Binding] = []
    if low is not None:
        for edge, idx in (("floor", grants.index(low) - 1), ("ceiling", grants.index(high) + 1)):
            if not 0 <= idx < len(grants):
                notes.append(f"the band's {edge} is the edge of the swept grid: widen --grants to find it")
                continue
            for inv in invariants:
                if not status[inv.name][idx]:
                    run_id, value = values[inv.name][grants[idx]]
                    bindings.append(
                        Binding(edge, grants[idx], inv.name, run_id, inv.column, value, inv.bound, inv.op)
                    )
    return GrantBand(table, invariants, low, high, tuple(bindings), (), tuple(notes))


def bisect_edge(good: int, bad: int, holds: Callable[[int], bool]) -> int:
    """The grant nearest ``bad`` that still holds, between a swept grant that holds (``good``) and its
    neighbour that does not (``bad``), by bisection on integers. Assumes one crossing between them (the
    invariants here are monotone in the grant); ``holds`` is evaluated about log2(|bad - good|) times."""
    if good == bad:
        raise ValueError("bisect_edge needs two different grants")
    step = 1 if bad > good else -1
    while abs(bad - good) > 1:
        mid = (good + bad) // 2 if step > 0 else -((-good - bad) // 2)
        if holds(mid):
            good = mid
        else:
            bad = mid
    return good


def refine(band: GrantBand, holds_at: Callable[[int], bool]) -> GrantBand:
    """The band with its edges bisected to the token wherever a binding invariant puts them: ``holds_at(g)``
    says whether every invariant holds at grant ``g`` (the caller replays the binding runs)."""
    if not band.found:
        return band
    assert band.low is not None and band.high is not None
    floors = [b.grant for b in band.bindings if b.edge == "floor"]
    ceilings = [b.grant for b in band.bindings if b.edge == "ceiling"]
    low = bisect_edge(band.low, floors[0], holds_at) if floors else None
    high = bisect_edge(band.high, ceilings[0], holds_at) if ceilings else None
    return dataclasses.replace(band, exact_low=low, exact_high=high)
