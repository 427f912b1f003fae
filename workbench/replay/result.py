"""ReplayResult: what one policy would have done to one recorded run (or segment)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.govern.decisions import Decision
from workbench.govern.meter_record import MeterRecord
from workbench.govern.policy import Policy
from workbench.replay.columns import RESULT_COLUMNS
from workbench.trace.columns import read_row


@dataclass(frozen=True)
class ReplayResult:
    """The counterfactual: stop turn, reason and verdict; spend at the stop; what was cut; where the prompt would
    first have differed from the recording (``diverges_at``); whether the figures are a censored lower bound.

    Turn numbers are 0-based indices of the recorded turns (model calls). ``stop_turn`` is the last call the policy
    would have made (``-1``: none). Decisions after ``diverges_at`` were taken on recorded turns the model would
    have been prompted differently for: they are approximate (a landing's turns are the recorded turns)."""

    run_id: str
    policy: Policy
    stop_reason: str
    stop_turn: int
    verdict: str | None
    meter: MeterRecord | None
    spent: int
    raw: int
    landing_started_at: int | None
    landing_kind: str | None
    wrapup_at: int | None
    concluded_at: int | None
    diverges_at: int | None
    censored: bool
    cut_turns: int
    cut_tokens: int
    cut_tool_calls: int
    cut_mutations: int
    good_outcome_after_cut: bool
    recorded_stop: str | None
    turns: int
    turns_replayed: int
    timed: bool
    decisions: tuple[Decision, ...] = ()
    notes: tuple[str, ...] = ()
    segment: int | None = None
    context: Any = field(default=None, compare=False)
    usage_known: bool = True
    """False when no recorded call reported its usage: the cost figures are not measurements (see ``notes``)."""
    stop_basis: str | None = None
    """For a no-progress stop: whether the signal read ``recorded`` facts or an ``inferred`` workspace fact."""
    unjudged_at: int | None = None
    """The first turn (at or before the stop) where the no-progress guard could not judge: it would have fired had
    the unknown workspace changes been read as none. ``None``: it could judge every turn."""

    @property
    def rules(self) -> str:
        return self.policy.rules

    @property
    def grant(self) -> int:
        return self.policy.grant

    @property
    def policy_label(self) -> str:
        return self.policy.label

    @property
    def n_events(self) -> int:
        return len(self.decisions)

    @property
    def events(self) -> list[dict[str, Any]]:
        return [d.to_dict() for d in self.decisions]

    def row(self) -> dict[str, Any]:
        """One flat row (the sweep's columns: ``workbench.replay.columns.RESULT_COLUMNS``)."""
        return read_row(RESULT_COLUMNS, self)

    def to_dict(self) -> dict[str, Any]:
        out = self.row()
        for key in ("meter_reached", "meter_allowed"):
            out.pop(key)
        out["meter"] = (
            None
            if self.meter is None
            else {
                "name": self.meter.name,
                "reached": self.meter.reached,
                "allowed": self.meter.allowed,
                "unit": self.meter.unit,
                "words": self.meter.words(),
            }
        )
        out["events"] = self.events
        out["notes"] = list(self.notes)
        out["usage_known"] = self.usage_known
        out["policy"] = self.policy.to_dict()
        if self.context is not None and hasattr(self.context, "first_prune_at"):
            out["context"] = {
                "first_prune_at": self.context.first_prune_at,
                "truncated_at": getattr(self.context, "truncated_at", None),
            }
        return out

    def to_frame(self) -> pd.DataFrame:
        """The decision timeline: one row per decision with the numbers that triggered it."""
        rows = [d.to_row() for d in self.decisions]
        cols = ["turn", "phase", "action", "kind", "reason"]
        frame = pd.DataFrame(rows)
        if frame.empty:
            return pd.DataFrame(columns=cols)
        rest = [c for c in frame.columns if c not in cols]
        return frame[cols + rest]

    def summary(self) -> str:
        where = f"turn {self.stop_turn}" if self.stop_turn >= 0 else "before any call"
        bound = " (censored: a lower bound)" if self.censored else ""
        spent = (
            f"spent {self.spent:,}, raw {self.raw:,}"
            if self.usage_known
            else "cost not replayable (no call recorded its usage)"
        )
        return (
            f"{self.run_id} under {self.policy.label}: {self.stop_reason} at {where}, {self.verdict or '—'}; "
            f"{spent}; cut {self.cut_turns} of {self.turns} turns{bound}"
        )

    def __repr__(self) -> str:
        return f"ReplayResult({self.summary()})"

    def _repr_html_(self) -> str:
        facts = [
            ("policy", self.policy.label),
            ("stop", f"{self.stop_reason} at turn {self.stop_turn}"),
            ("verdict", self.verdict or "—"),
            ("meter", self.meter.words() if self.meter else "—"),
            ("spent / raw", f"{self.spent:,} / {self.raw:,}"),
            (
                "landing",
                "—"
                if self.landing_started_at is None
                else f"{self.landing_kind} at turn {self.landing_started_at}",
            ),
            ("wrap-up at", "—" if self.wrapup_at is None else str(self.wrapup_at)),
            ("diverges at", "—" if self.diverges_at is None else str(self.diverges_at)),
            ("censored", "yes — a lower bound" if self.censored else "no"),
            (
                "cut",
                f"{self.cut_turns} turns, {self.cut_tokens:,} tokens, {self.cut_tool_calls} tool calls, "
                f"{self.cut_mutations} workspace changes",
            ),
            ("good outcome after cut", "yes" if self.good_outcome_after_cut else "no"),
            ("recorded stop", self.recorded_stop or "—"),
        ]
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
            for k, v in facts
        )
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        timeline = (
            self.to_frame().to_html(index=False, max_rows=60) if self.decisions else "<p>no decisions</p>"
        )
        return (
            f"<div><table><caption>Replay of {html.escape(self.run_id)}</caption>{rows}</table>"
            f"{'<ul>' + notes + '</ul>' if notes else ''}{timeline}</div>"
        )
