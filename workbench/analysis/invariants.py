"""Invariants a grant must satisfy, as data: which run, which sweep column, which bound, and why.

An invariant is checked against the sweep rows of one run (chosen by generator name or run id) at each
candidate grant. A censored row cannot prove anything (the recording ended before the policy decided), so
an invariant that ``requires_stop`` fails on it, and one that finds no row at all is *unevaluated* rather
than held — a band is never stated on an invariant nobody checked.
"""

from __future__ import annotations

import importlib
import operator
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

import pandas as pd

from workbench.trace.schema import Run

# seed 001 (linear.go), DefaultLeafTokens comment: "a 98%-cached runaway runs out of money before the 1.4M
# raw tokens the audited melt-downs reached".
RUNAWAY_RAW_CEILING = 1_400_000
# seed 001 (linear.go), DefaultLeafTokens comment: "at 190,000 the simulated cost bound and the real run both
# land at 85 turns, so the comparison stops separating".
REAL_RUNAWAY_TURNS = 85
# The seed scenario both invariants read (workbench.scenarios.seed.warm_runaway).
RUNAWAY_GENERATOR = "warm_runaway"
RUNAWAY_PROBE = "workbench.scenarios.seed:warm_runaway"

Op = Literal["<", "<=", ">", ">="]
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Invariant:
    """``column op bound`` must hold on the sweep row of run ``run`` (generator name or run id)."""

    name: str
    run: str
    column: str
    op: Op
    bound: float
    why: str
    provenance: str
    requires_stop: bool = True
    """A censored row (recording ended first) counts as a failure: it cannot show the policy stopped it."""
    probe: str | None = None
    """``module:function`` building the run this invariant reads, for a corpus that lacks it (a synthetic
    probe: replayed for the invariant only, never counted in the corpus's figures)."""

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise ValueError(f"invariant {self.name!r}: op must be one of {sorted(_OPS)}, got {self.op!r}")

    @property
    def statement(self) -> str:
        return f"{self.run}: {self.column} {self.op} {self.bound:,.0f}"

    def rows(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The sweep rows this invariant reads."""
        mask = frame["run_id"] == self.run
        if "generator" in frame.columns:
            mask |= frame["generator"] == self.run
        return frame[mask]

    def holds(self, row: pd.Series) -> bool:
        """Does it hold on one sweep row?"""
        if self.requires_stop and bool(row.get("censored", False)):
            return False
        value = row[self.column]
        if value is None or pd.isna(value):
            return False
        return bool(_OPS[self.op](value, self.bound))

    def build_probe(self) -> Run:
        """The probe run (``probe`` imported and called with no arguments)."""
        if not self.probe or ":" not in self.probe:
            raise ValueError(f"invariant {self.name!r} has no probe (module:function) to build its run from")
        module, _, attr = self.probe.partition(":")
        return getattr(importlib.import_module(module), attr)()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def seed_invariants() -> tuple[Invariant, ...]:
    """The two invariants the seed states over ``DefaultLeafTokens`` (the band's ceiling and floor)."""
    return (
        Invariant(
            name="runaway lands on its money",
            run=RUNAWAY_GENERATOR,
            column="raw",
            op="<",
            bound=RUNAWAY_RAW_CEILING,
            why="a 98%-cached runaway must be stopped by its bill before the 1.4M raw tokens the audited "
            "melt-downs reached",
            provenance="seed 001 linear.go, DefaultLeafTokens (TestACacheDiscountedRunawayLandsOnItsMoney)",
            probe=RUNAWAY_PROBE,
        ),
        Invariant(
            name="cost still separates from turn count",
            run=RUNAWAY_GENERATOR,
            column="turns_replayed",
            op=">",
            bound=REAL_RUNAWAY_TURNS,
            why="the cost bound must let the runaway run more turns than the real run's 85, or cost alone "
            "no longer tells a runaway from the turn count it landed at",
            provenance="seed 001 linear.go, DefaultLeafTokens (the same test's closing assertion)",
            probe=RUNAWAY_PROBE,
        ),
    )
