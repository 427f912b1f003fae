"""Estimator findings for a report: the study (``workbench.estimate.study``) summarised per source and
strategy, before and after calibration, in one table and one sentence per source."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class EstimatorFindings:
    """Per source and strategy: calls, share under-counted before / after calibration, median ratio."""

    table: pd.DataFrame
    study: Any
    notes: tuple[str, ...] = ()

    @property
    def words(self) -> str:
        adr = self.table[self.table["strategy"] == "adr"]
        parts = [
            f"{r.source}: ADR-107 under-counts {_share(r.under_rate)} of {r.calls:,} calls, {_share(r.cal_under_rate)} "
            f"after calibration (median reported/estimate {r.ratio_p50:.2f} → {r.cal_ratio_p50:.2f})"
            for r in adr.itertuples()
        ]
        return "; ".join(parts) + "." if parts else "no call could be compared with its reported prompt."

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def _repr_html_(self) -> str:
        return f"<div><p>{html.escape(self.words)}</p>{self.table.to_html(index=False)}</div>"


def _share(x: float) -> str:
    """One decimal, and never 0% for a non-zero share (0.3% used to read as "0%")."""
    if 0 < x < 0.001:
        return "<0.1%"
    return f"{x:.1%}"


def estimator_findings(study: Any) -> EstimatorFindings:
    """Summarise an EstimatorStudy per (source, strategy) from its per-call frame, with the study's own
    definitions: under-counted when reported prompt ÷ estimate > 1."""
    t = study.turns
    rows = []
    # no run recorded its requests: nothing to compare
    if t.empty or not {"source", "strategy"} <= set(t.columns):
        columns = ["source", "strategy", "runs", "calls", "under_rate", "cal_under_rate", "ratio_p50"]
        columns += ["cal_ratio_p50", "ratio_p90", "cal_ratio_p90"]
        return EstimatorFindings(pd.DataFrame(columns=columns), study, tuple(getattr(study, "notes", ())))
    for (source, strategy), g in t.groupby(["source", "strategy"], sort=True):
        r = g["prompt"] / g["estimate"]
        rc = g["prompt"] / g["calibrated"]
        rows.append(
            {
                "source": source,
                "strategy": strategy,
                "runs": int(g["run_id"].nunique()),
                "calls": len(g),
                "under_rate": float((r > 1).mean()),
                "cal_under_rate": float((rc > 1).mean()),
                "ratio_p50": float(r.median()),
                "cal_ratio_p50": float(rc.median()),
                "ratio_p90": float(r.quantile(0.9)),
                "cal_ratio_p90": float(rc.quantile(0.9)),
            }
        )
    return EstimatorFindings(pd.DataFrame(rows), study, tuple(getattr(study, "notes", ())))
