"""The calibration table: one frozen row per constant, and the table with ``.to_frame()`` and a notebook repr."""

from __future__ import annotations

import contextlib
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from workbench.analysis.calibration.provenance import ConstantRef
from workbench.format import cell

RECOMMENDED = "recommended"
NOT_ENOUGH = "not enough data"
KEEP = "keep"
"""The evidence does not argue for changing the constant: keep the value in use (``recommended`` is None)."""
ELSEWHERE = "evidence points elsewhere"
"""The runs this row reads argue for changing another constant: ``points_to`` names that row, ``why`` says why."""
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
    "value",
    "points_to",
    "at_grid_edge",
    "flags",
)


@dataclass(frozen=True)
class BandCheck:
    """This row's answer against the same constant's row computed on another corpus."""

    corpus: str
    status: str
    value: Any
    """The other corpus's answer: its recommendation, or the value in use it keeps (None: it has none)."""
    band: tuple[Any, Any] | None
    runs: int
    inside: bool | None
    """This row's answer inside the other's band; None when either side has no answer or the other no band."""

    @property
    def band_words(self) -> str:
        if self.band is None:
            return "no band"
        lo, hi = (cell(_plain(b)) if b is not None else "unbounded" for b in self.band)
        return f"[{lo}, {hi}]"

    @property
    def words(self) -> str:
        if self.inside is False and self.status == NONE_SATISFIES:
            return f"{self.corpus} has no value satisfying the invariants ({self.runs:,} runs)"
        if self.inside is False:
            return f"outside {self.corpus}'s band {self.band_words} ({self.runs:,} runs)"
        if self.inside:
            return f"inside {self.corpus}'s band {self.band_words} ({self.runs:,} runs)"
        other = f"{self.status}" + (f" {cell(_plain(self.value))}" if self.value is not None else "")
        return f"not comparable with {self.corpus} ({other}, {self.band_words})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "status": self.status,
            "value": _plain(self.value),
            "band": None if self.band is None else [_plain(b) for b in self.band],
            "runs": self.runs,
            "inside": self.inside,
        }


@dataclass(frozen=True)
class ConstantRow:
    """One constant against the corpus; its fields are the table of docs/calibrate.md."""

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
    value: Any = None
    """Keep: the value in use the evidence confirms; evidence points elsewhere: the figure this rule computed."""
    points_to: str = ""
    at_grid_edge: bool = False
    flags: tuple[str, ...] = ()
    checks: tuple[BandCheck, ...] = ()

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if self.status != RECOMMENDED and self.recommended is not None:
            raise ValueError(f"{self.name}: a {self.status!r} row carries no recommendation")
        if self.status == RECOMMENDED and self.recommended is None:
            raise ValueError(f"{self.name}: a recommended row needs a value")
        if (self.status == ELSEWHERE) != bool(self.points_to):
            raise ValueError(f"{self.name}: exactly an {ELSEWHERE!r} row names the row it points to")
        if self.status == KEEP and self.value is None:
            raise ValueError(f"{self.name}: a kept row names the value it keeps")
        if self.at_grid_edge and not self.extrapolated:
            raise ValueError(f"{self.name}: a value at its grid's edge is extrapolated")

    @property
    def answer(self) -> Any:
        """What the row tells the reader to run: the recommendation, or the value in use it keeps (else None)."""
        if self.status == RECOMMENDED:
            return self.recommended
        return self.value if self.status == KEEP else None

    @property
    def status_words(self) -> str:
        """The status, with the row it points to: ``evidence points elsewhere: leaf grant``."""
        return f"{ELSEWHERE}: {self.points_to}" if self.status == ELSEWHERE else self.status

    def _band_words(self) -> str:
        if self.band is None:
            return ""
        lo, hi = (cell(_plain(b)) if b is not None else "unbounded" for b in self.band)
        return f" (band {lo} to {hi})"

    @property
    def home(self) -> str:
        return self.ref.path if self.ref is not None else self.home_text

    @property
    def provenance(self) -> str:
        return self.ref.provenance if self.ref is not None else self.provenance_text

    @property
    def recommendation_words(self) -> str:
        if self.status == KEEP:
            words = f"keep {cell(_plain(self.value))}{self._band_words()}"
            return words + (f": {self.why}" if self.why else "")
        if self.status != RECOMMENDED:
            head = self.status_words
            if self.status == ELSEWHERE and self.value is not None:
                head += f" (this rule gives {cell(_plain(self.value))}{self._band_words()})"
            return f"{head}: {self.why}" if self.why else head
        words = cell(_plain(self.recommended)) + self._band_words()
        if self.at_grid_edge:
            words += " — at grid edge, extrapolated"
        elif self.extrapolated:
            words += " — extrapolated"
        return words

    def to_dict(self, evidence: bool = True) -> dict[str, Any]:
        """One JSON-ready object (the evidence table as records; ``evidence=False``: none)."""
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
            "value": _plain(self.value),
            "points_to": self.points_to or None,
            "status_words": self.status_words,
            "at_grid_edge": self.at_grid_edge,
            "flags": list(self.flags),
            "checks": [c.to_dict() for c in self.checks],
            "notes": list(self.notes),
            "evidence": [
                {k: _plain(v) for k, v in rec.items()} for rec in self.evidence.to_dict(orient="records")
            ]
            if evidence
            else [],
        }

    def frame_row(self) -> dict[str, Any]:
        """The table's row (``FRAME_COLUMNS`` of it): ``to_dict``'s fields, the lists joined, the band split."""
        lo, hi = self.band if self.band is not None else (None, None)
        return self.to_dict(evidence=False) | {
            "status": self.status_words,
            "band_low": _plain(lo),
            "band_high": _plain(hi),
            "rule": self.rule if self.status in (RECOMMENDED, KEEP) else self.why,
            "touched": ", ".join(self.touched),
            "flags": "; ".join(self.flags),
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
            *(("flag", f) for f in self.flags),
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


def within(value: Any, band: tuple[Any, Any] | None) -> bool | None:
    """``value`` inside ``band`` (an edge of None is unbounded); None when there is no value or no band."""
    if value is None or band is None:
        return None
    lo, hi = band
    return bool((lo is None or value >= lo) and (hi is None or value <= hi))


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
        """This table against the same table computed on held-out runs, constant by constant: both answers
        (the recommendation, or the value in use a kept row confirms) and bands, and whether the held-out answer
        falls inside this band (None where either side has no answer or this side no band)."""
        other = {r.name: r for r in held_out.rows}
        rows = []
        for r in self.rows:
            h = other.get(r.name)
            inside = None if h is None else within(h.answer, r.band)
            rows.append(
                {
                    "constant": r.name,
                    "status": r.status_words,
                    "recommended": _plain(r.answer),
                    "band_low": _plain(r.band[0]) if r.band else None,
                    "band_high": _plain(r.band[1]) if r.band else None,
                    "runs": r.runs,
                    "held_out_status": h.status_words if h else None,
                    "held_out_recommended": _plain(h.answer) if h else None,
                    "held_out_band_low": _plain(h.band[0]) if h and h.band else None,
                    "held_out_band_high": _plain(h.band[1]) if h and h.band else None,
                    "held_out_runs": h.runs if h else 0,
                    "held_out_inside_band": inside,
                }
            )
        return pd.DataFrame(rows)

    def checked_against(self, others: Sequence[tuple[str, Calibration]]) -> Calibration:
        """This table with every row checked against the same constant on each other corpus (label, table):
        ``checks`` holds each one's answer and band, and a row whose answer falls outside another corpus's band
        is flagged, naming the corpus and its band."""
        rows = []
        for r in self.rows:
            checks = []
            for label, cal in others:
                o = next((x for x in cal.rows if x.name == r.name), None)
                if o is None:
                    continue
                if o.status == NONE_SATISFIES and r.answer is not None:
                    inside: bool | None = False  # no value holds there: this one does not either
                else:
                    inside = within(r.answer, o.band) if o.answer is not None else None
                checks.append(
                    BandCheck(
                        corpus=label,
                        status=o.status_words,
                        value=o.answer,
                        band=o.band,
                        runs=o.runs,
                        inside=inside,
                    )
                )
            flags = tuple(c.words for c in checks if c.inside is False)
            rows.append(replace(r, checks=(*r.checks, *checks), flags=(*r.flags, *flags)))
        notes = (*self.notes, "checked against " + "; ".join(f"{label}: {c.corpus}" for label, c in others))
        return replace(self, rows=tuple(rows), notes=notes)

    def _repr_html_(self) -> str:
        cols = ["constant", "seed", "in_use", "unit", "status", "recommended", "band_low", "band_high"]
        cols += ["extrapolated", "runs", "calls", "effect"]
        frame = self.to_frame()[cols]
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return (
            f"<div><b>Calibration of every constant</b> under {html.escape(self.policy_label)}: "
            f"{html.escape(self.corpus)}<ul>{notes}</ul>{frame.to_html(index=False)}</div>"
        )
