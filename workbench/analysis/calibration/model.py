"""The calibration table: one frozen row per constant, and the table with ``.to_frame()`` and a notebook repr."""

from __future__ import annotations

import contextlib
import html
import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.analysis.calibration.provenance import ConstantRef
from workbench.format import cell

RECOMMENDED = "recommended"
NOT_ENOUGH = "not enough data"
KEEP = "keep"
"""The evidence does not argue for changing the constant: keep the value in use (``recommended`` is None)."""
ELSEWHERE = "evidence points elsewhere"
"""The runs this row reads argue for changing another constant (``why`` names the row)."""
NONE_SATISFIES = "no value satisfies"
"""No swept value satisfies the invariants (``why`` gives the best one and what it keeps)."""
STATUSES = (RECOMMENDED, NOT_ENOUGH, KEEP, ELSEWHERE, NONE_SATISFIES)

FRAME_COLUMNS = (
    "constant",
    "home",
    "seed",
    "in_use",
    "unit",
    "provenance",
    "status",
    "recommended",
    "band_low",
    "band_high",
    "extrapolated",
    "rule",
    "runs",
    "calls",
    "effect",
    "touched",
)


@dataclass(frozen=True)
class ConstantRow:
    """One constant against the corpus.

    ``effect`` is what the value in use does here, in counts; ``touched`` the runs it touches. ``recommended`` and
    ``band`` (either edge may be None: unbounded by this data) come from ``rule``; ``runs`` and ``calls`` are the
    evidence the recommendation rests on — never fewer than that. ``status`` is ``recommended`` or ``not enough
    data`` (then ``recommended`` is None and ``why`` says what is missing). ``evidence`` is the table a chart
    draws (``workbench.charts.calibration.constant_chart``); ``chart`` names its kind."""

    name: str
    ref: ConstantRef | None
    seed: Any
    in_use: Any
    unit: str
    effect: str
    touched: tuple[str, ...]
    status: str
    recommended: Any
    band: tuple[Any, Any] | None
    rule: str
    runs: int
    calls: int
    extrapolated: bool = False
    why: str = ""
    notes: tuple[str, ...] = ()
    chart: str = ""
    evidence: pd.DataFrame = field(default_factory=pd.DataFrame, compare=False, repr=False)
    home_text: str = ""
    provenance_text: str = ""
    """Used only for a constant with no single module home (``ref`` None): where it lives and why it is so."""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.status != RECOMMENDED and self.recommended is not None:
            raise ValueError(f"{self.name}: a {self.status!r} row carries no recommendation")
        if self.status == RECOMMENDED and self.recommended is None:
            raise ValueError(f"{self.name}: a recommended row needs a value")

    @property
    def home(self) -> str:
        return self.ref.path if self.ref is not None else self.home_text

    @property
    def provenance(self) -> str:
        return self.ref.provenance if self.ref is not None else self.provenance_text

    @property
    def recommendation_words(self) -> str:
        if self.status != RECOMMENDED:
            return f"{self.status}: {self.why}" if self.why else self.status
        words = cell(_plain(self.recommended))
        if self.band is not None:
            lo, hi = (cell(_plain(b)) if b is not None else "unbounded" for b in self.band)
            words += f" (band {lo} to {hi})"
        if self.extrapolated:
            words += " — extrapolated"
        return words

    def to_dict(self) -> dict[str, Any]:
        """One JSON-ready object (the evidence table as records)."""
        return {
            "constant": self.name,
            "home": self.home,
            "seed": _plain(self.seed),
            "in_use": _plain(self.in_use),
            "unit": self.unit,
            "provenance": self.provenance,
            "effect": self.effect,
            "touched": list(self.touched),
            "status": self.status,
            "recommended": _plain(self.recommended),
            "band": None if self.band is None else [_plain(b) for b in self.band],
            "extrapolated": self.extrapolated,
            "rule": self.rule,
            "why": self.why,
            "runs": self.runs,
            "calls": self.calls,
            "notes": list(self.notes),
            "evidence": [
                {k: _plain(v) for k, v in rec.items()} for rec in self.evidence.to_dict(orient="records")
            ],
        }

    def frame_row(self) -> dict[str, Any]:
        lo, hi = self.band if self.band is not None else (None, None)
        return {
            "constant": self.name,
            "home": self.home,
            "seed": _plain(self.seed),
            "in_use": _plain(self.in_use),
            "unit": self.unit,
            "provenance": self.provenance,
            "status": self.status,
            "recommended": _plain(self.recommended),
            "band_low": _plain(lo),
            "band_high": _plain(hi),
            "extrapolated": self.extrapolated,
            "rule": self.rule if self.status == RECOMMENDED else self.why,
            "runs": self.runs,
            "calls": self.calls,
            "effect": self.effect,
            "touched": ", ".join(self.touched),
        }

    def _repr_html_(self) -> str:
        items = [
            ("home", self.home),
            ("seed / in use", f"{cell(_plain(self.seed))} / {cell(_plain(self.in_use))} {self.unit}"),
            ("provenance", self.provenance),
            ("on this corpus", self.effect),
            ("recommendation", self.recommendation_words),
            ("rule", self.rule),
            ("evidence", f"{self.runs:,} runs, {self.calls:,} calls"),
            ("runs touched", ", ".join(self.touched) or "none"),
        ]
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
            for k, v in items
        )
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        table = self.evidence.to_html(index=False, max_rows=30) if not self.evidence.empty else ""
        return (
            f"<div><table><caption>{html.escape(self.name)}</caption>{rows}</table>"
            f"{'<ul>' + notes + '</ul>' if notes else ''}{table}</div>"
        )


def _plain(value: Any) -> Any:
    """numpy scalars and NaN to plain JSON values."""
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        with contextlib.suppress(ValueError, AttributeError):
            value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


@dataclass(frozen=True)
class Calibration:
    """Every constant of the seed's loop and of ADR-107 against one corpus, under one policy."""

    rows: tuple[ConstantRow, ...]
    policy_label: str
    corpus: str
    counts: dict[str, int]
    notes: tuple[str, ...] = ()

    def row(self, name: str) -> ConstantRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no row {name!r}; rows: {', '.join(r.name for r in self.rows)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rows)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([r.frame_row() for r in self.rows], columns=list(FRAME_COLUMNS))

    def to_dicts(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]

    def compare(self, held_out: Calibration) -> pd.DataFrame:
        """This table against the same table computed on held-out runs, constant by constant: both
        recommendations and bands, and whether the held-out recommendation falls inside this band (None where
        either side has no recommendation or this side no band)."""
        other = {r.name: r for r in held_out.rows}
        rows = []
        for r in self.rows:
            h = other.get(r.name)
            inside = None
            if (
                h is not None
                and r.band is not None
                and r.recommended is not None
                and h.recommended is not None
            ):
                lo, hi = r.band
                inside = (lo is None or h.recommended >= lo) and (hi is None or h.recommended <= hi)
            rows.append(
                {
                    "constant": r.name,
                    "recommended": _plain(r.recommended),
                    "band_low": _plain(r.band[0]) if r.band else None,
                    "band_high": _plain(r.band[1]) if r.band else None,
                    "runs": r.runs,
                    "held_out_recommended": _plain(h.recommended) if h else None,
                    "held_out_band_low": _plain(h.band[0]) if h and h.band else None,
                    "held_out_band_high": _plain(h.band[1]) if h and h.band else None,
                    "held_out_runs": h.runs if h else 0,
                    "held_out_inside_band": inside,
                }
            )
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        cols = ["constant", "seed", "in_use", "unit", "status", "recommended", "band_low", "band_high"]
        cols += ["extrapolated", "runs", "calls", "effect"]
        frame = self.to_frame()[cols]
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return (
            f"<div><b>Calibration of every constant</b> under {html.escape(self.policy_label)}: "
            f"{html.escape(self.corpus)}<ul>{notes}</ul>{frame.to_html(index=False)}</div>"
        )
