"""Build a calibration report: one ``ReportContext`` (load, sweep, frontier, recommendation), then each of
``SECTIONS`` computed over it (``workbench.report.sections``), assembled into a :class:`CalibrationReport` (frozen):
every table, figure and number the rendered report shows, so a notebook can look at any piece and
:func:`workbench.report.render.write_report` can write it to ``report.html`` / ``report.md`` / PNGs. Time is an input
(``now``); the report reads no clock.
"""

from __future__ import annotations

import html
import operator
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

import pandas as pd
from matplotlib.figure import Figure

from workbench.analysis.band import GrantBand
from workbench.analysis.calibration import Calibration
from workbench.analysis.estimator import EstimatorFindings
from workbench.analysis.frontier import Frontier
from workbench.analysis.losses import Loss
from workbench.analysis.recommendation import Recommendation
from workbench.analysis.survival import Survival
from workbench.analysis.widen import Widened
from workbench.report.bill_section import REPORT_MASKS, BillSection, bill_shares, billable
from workbench.report.context import (
    PATHOLOGY_GENERATORS,
    SKIPPED_ROLES,
    BandFinding,
    ReportConfig,
    ReportContext,
    corpus_leaves,
    default_grants,
    default_paths,
    headline_group,
    load_leaves,
    report_context,
    report_leaves,
    report_mode,
    section_grant,
)
from workbench.report.efficiency_section import EfficiencySection
from workbench.report.limits_section import OwnLimitAnswer
from workbench.report.provenance import Provenance
from workbench.report.sections import (
    SECTIONS,
    AnswerResult,
    Bills,
    BillsResult,
    CalibrationResult,
    ChartsResult,
    Constants,
    ContextResult,
    EstimatorResult,
    LossesResult,
    SectionResult,
    StopsResult,
    TimelinesResult,
    _focus,
    ending,
)
from workbench.scale.executor import local
from workbench.trace.corpus import Corpus

__all__ = [
    "PATHOLOGY_GENERATORS",
    "SKIPPED_ROLES",
    "BandFinding",
    "CalibrationReport",
    "ReportConfig",
    "ReportContext",
    "build_report",
    "corpus_leaves",
    "default_grants",
    "default_paths",
    "ending",
    "focus_grants",
    "headline_group",
    "load_leaves",
    "report_leaves",
    "report_mode",
    "section_grant",
]

T = TypeVar("T")


@dataclass(frozen=True)
class CalibrationReport:
    """Every table, figure and number a calibration report shows."""

    config: ReportConfig
    facts: pd.DataFrame
    sweep: pd.DataFrame
    context: pd.DataFrame | None
    findings: tuple[BandFinding, ...]
    survivals: dict[str, Survival]
    stop_mix: pd.DataFrame
    fires: pd.DataFrame
    estimator: EstimatorFindings | None
    provenance: Provenance
    figures: dict[str, Figure]
    timeline_titles: dict[str, str]
    skipped: dict[str, int]
    notes: tuple[str, ...] = ()
    context_fires: pd.DataFrame | None = None
    """Where pruning, truncation, landing and stops fire per context length (at ``section_grants['context']``)."""
    section_grants: dict[str, tuple[int, str]] = field(default_factory=dict)
    """The grant each single-grant section (``context``, ``timelines``) reads, and why that one, in words."""
    frontier: Frontier | None = None
    """Per group (``config.by``) and grant: resolved runs kept / at risk / lost, spend in tokens and USD."""
    frontiers: dict[str, Frontier] = field(default_factory=dict)
    """The same sweep grouped by source, agent and model (the per-group tables)."""
    picks: tuple[Recommendation, ...] = ()
    """The one recommendation per group of ``frontier`` (rules[0], no context manager) under the headline's
    invariants (``workbench.analysis.recommendation``: the same as ``frontier`` and ``calibrate``)."""
    mode: str = "analyst"
    """``analyst``: the headline is the analyst's invariants on the frontier; ``seed``: the seed band."""
    recommended: int | None = None
    """The one grant every grant chart marks: the headline's (the whole corpus's pick, or the band's)."""
    bills: BillSection | None = None
    """The bill section (workbench.report.bill_section): what each context length would have cost."""
    calibration: Calibration | None = None
    """Every constant against the corpus under the first rule set (``workbench.analysis.calibration``)."""
    own_limits: dict[str, OwnLimitAnswer] = field(default_factory=dict)
    """Per source whose agent has a dollar limit of its own, the answer in that unit and the meter translation
    (``workbench.report.limits_section.OwnLimitAnswer``)."""
    losses: tuple[Loss, ...] = ()
    """The resolved runs the section grant (``section_grants['losses']``: the recommended grant, else the best
    swept one) loses (headline group, rules[0]), with their cause and evidence."""
    efficiency: EfficiencySection | None = None
    """SWE-Effi's EuTB/EuCB per group and the headline group's expensive failures at the section grant."""
    widened: dict[str, Widened] = field(default_factory=dict)
    """Per group whose swept grid satisfies no invariant set by the analyst: the recommendation over the grid widened
    past its top (``workbench.analysis.widen``): what would give an answer."""

    def finding(self, rules: str | None = None) -> BandFinding:
        rules = rules or self.config.rules[0]
        for f in self.findings:
            if f.rules == rules:
                return f
        raise KeyError(f"rules {rules!r} were not swept (swept: {', '.join(self.config.rules)})")

    def band(self, rules: str | None = None) -> GrantBand:
        return self.finding(rules).band

    @property
    def survival(self) -> Survival | None:
        """The headline fit (the honest runs the recommendation reads)."""
        return next(iter(self.survivals.values()), None)

    def to_frame(self) -> pd.DataFrame:
        """The annotated grant sweep the report's figures are computed from."""
        return self.sweep.copy()

    def _repr_html_(self) -> str:
        picks = "".join(
            f"<li><b>{html.escape(p.group)}</b>: "
            + html.escape(f"recommended grant {p.grant:,} — {p.why}" if p.grant else p.why)
            + "</li>"
            for p in self.picks
        )
        items = "".join(
            f"<li><b>{html.escape(f.rules)}</b>: {'seed probe ' if self.mode == 'analyst' else ''}band "
            f"{html.escape(f.words)}"
            + (f"; recommended {f.recommended:,}" if f.recommended else "")
            + "</li>"
            for f in self.findings
        )
        return (
            f"<div><b>{html.escape(self.config.title)}</b>: {len(self.facts)} runs, "
            f"{len(self.sweep):,} sweep rows<ul>{picks}{items}</ul></div>"
        )


def _result(results: dict[str, SectionResult], name: str, kind: type[T]) -> T:
    got = results[name]
    if not isinstance(got, kind):
        raise TypeError(f"section {name!r} computed a {type(got).__name__}, not a {kind.__name__}")
    return got


def build_report(
    paths: Sequence[str | os.PathLike[str]] | None = None,
    *,
    config: ReportConfig | None = None,
    corpus: Corpus | None = None,
    command: str = "",
    now: datetime | None = None,
) -> CalibrationReport:
    """Load ``paths`` (default: bundled traces + real histories), or take an already loaded ``corpus`` (e.g. a
    notebook's filtered one), then compute every section over the one context (the calibration's replays and the
    bills on the workers meanwhile: docs/scale.md, "The report"). What to compute is ``config``
    (``progress``, ``estimate_study``, ``calibrate_constants`` among it); ``command`` and ``now`` are what the
    provenance records."""
    ctx = report_context(paths, config=config or ReportConfig(), corpus=corpus, command=command, now=now)
    pool = local(ctx.config.workers)
    bills = bill_shares(billable(ctx.leaves), ctx.config.context_lengths, REPORT_MASKS, pool.size)
    pending = pool.map(operator.call, [lambda: Constants.replayed(ctx), *bills])
    here = {s.name: s.compute(ctx) for s in SECTIONS if s.name not in ("bills", "calibration")}
    got = [r for _, r in sorted(pending)]  # by index: unique
    here["calibration"], here["bills"] = Constants.drawn(got[0]), Bills().compute(ctx, got[1:])
    results: dict[str, SectionResult] = {s.name: here[s.name] for s in SECTIONS}
    figures: dict[str, Figure] = {}
    for r in results.values():
        figures.update(getattr(r, "figures", None) or {})
    answer = _result(results, "answer", AnswerResult)
    stops = _result(results, "stops", StopsResult)
    context = _result(results, "context", ContextResult)
    timelines = _result(results, "timelines", TimelinesResult)
    section_grants = {k: ctx.focus for k in ("groups", "losses", "timelines")}
    if context.grant is not None:
        section_grants["context"] = context.grant
    _result(results, "grant_charts", ChartsResult)
    return CalibrationReport(
        config=ctx.config,
        facts=ctx.facts,
        sweep=ctx.sweep,
        context=context.frame,
        findings=ctx.findings,
        survivals=answer.survivals,
        stop_mix=stops.stop_mix,
        fires=stops.fires,
        estimator=_result(results, "estimator", EstimatorResult).findings,
        provenance=_result(results, "provenance", Provenance),
        figures=figures,
        timeline_titles=timelines.titles,
        skipped=ctx.skipped,
        notes=(*ctx.probe_notes, *context.notes),
        context_fires=context.fires,
        section_grants=section_grants,
        frontier=ctx.frontier,
        frontiers=ctx.frontiers,
        picks=ctx.picks,
        mode=ctx.mode,
        recommended=ctx.recommended,
        bills=_result(results, "bills", BillsResult).section,
        calibration=_result(results, "calibration", CalibrationResult).calibration,
        own_limits=answer.own_limits,
        losses=_result(results, "losses", LossesResult).losses,
        widened=answer.widened,
        efficiency=_result(results, "efficiency", EfficiencySection),
    )


def focus_grants(report: CalibrationReport) -> list[int]:
    """The grants the stop-mix and fires tables show: the grid's ends, the seed's 220,000, the recommended
    grant (and the seed band's edges when the band heads the report)."""
    f = report.findings[0]
    return _focus(report.config.grants, report.recommended, f.band if report.mode == "seed" else None)
