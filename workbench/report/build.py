"""Build a calibration report: one ``ReportContext`` (load, sweep, frontier, recommendation), then each of
``SECTIONS`` computed over it (``workbench.report.sections``), assembled into a :class:`CalibrationReport` (frozen):
every table, figure and number the rendered report shows, so a notebook can look at any piece (or one section:
``render_section``) and :func:`workbench.report.render.write_report` can write it to ``report.html`` /
``report.md`` / PNGs. Time is an input (``now``); the report reads no clock.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import TypeVar

from matplotlib.figure import Figure

from workbench.analysis.targets import SEED_SET
from workbench.report.bill_section import REPORT_MASKS
from workbench.report.context import (
    PATHOLOGY_GENERATORS,
    SKIPPED_ROLES,
    BandFinding,
    CalibrationReport,
    ReportConfig,
    ReportContext,
    default_grants,
    default_paths,
    ending,
    headline_group,
    load_leaves,
    report_context,
    report_corpus,
    report_leaves,
    report_mode,
    section_grant,
)
from workbench.report.efficiency_section import EfficiencySection
from workbench.report.limits_section import dollar_limited
from workbench.report.provenance import Provenance
from workbench.report.sections import (
    SECTIONS,
    Answer,
    AnswerResult,
    Bills,
    BillsResult,
    CalibrationResult,
    ChartsResult,
    ContextLengths,
    ContextResult,
    EstimatorResult,
    LossesResult,
    SectionResult,
    StopsResult,
    TimelinesResult,
)
from workbench.report.shares import Share, shares
from workbench.scale.executor import local
from workbench.trace.corpus import Corpus
from workbench.trace.schema import Run

__all__ = [
    "PATHOLOGY_GENERATORS",
    "SKIPPED_ROLES",
    "BandFinding",
    "CalibrationReport",
    "ReportConfig",
    "ReportContext",
    "build_report",
    "default_grants",
    "default_paths",
    "ending",
    "headline_group",
    "load_leaves",
    "report_leaves",
    "report_mode",
    "section_grant",
]

T = TypeVar("T")


def _result(results: dict[str, SectionResult], name: str, kind: type[T]) -> T:
    got = results[name]
    if not isinstance(got, kind):
        raise TypeError(f"section {name!r} computed a {type(got).__name__}, not a {kind.__name__}")
    return got


def _leaves_of(corpus: Corpus, rows: range) -> list[Run]:
    return report_leaves(corpus, rows)[0]


def build_report(
    paths: Sequence[str | os.PathLike[str]] | None = None,
    *,
    config: ReportConfig | None = None,
    corpus: Corpus | None = None,
    command: str = "",
    now: datetime | None = None,
) -> CalibrationReport:
    """Load ``paths`` (default: bundled traces + real histories), or take an already loaded ``corpus`` (e.g. a
    notebook's filtered one), then compute every section over the one context (meanwhile, on the workers, the bills
    and the context and own-limit replays the answer and the heat map read: docs/scale.md, "The report"). What to
    compute is ``config`` (``progress``, ``estimate_study``,
    ``calibrate_constants`` among it); ``command`` and ``now`` are what the provenance records."""
    config = config or ReportConfig()
    corpus = corpus if corpus is not None else report_corpus(paths)
    # On workers, the shares start now, each reading its own leaves there (a large corpus's runs built there, not
    # copied from this process), while this process reads the leaves and computes every other section.
    pool, pending = local(config.workers), None
    if pool.size > 1:
        leaves_of = partial(_leaves_of, corpus)
        heat = ContextLengths.replays(config)
        own = {} if config.invariant_set == SEED_SET else dollar_limited()
        work = shares(len(corpus.runs), leaves_of, config.context_lengths, REPORT_MASKS, heat, own, pool.size)
        pending = pool.map(operator.call, work)
    ctx = report_context(paths, config=config, corpus=corpus, command=command, now=now)
    late = ("answer", "context", "bills")  # computed from the shares' work, read last
    here = {s.name: s.compute(ctx) for s in SECTIONS if s.name not in late}
    done = None if pending is None else [r for _, r in sorted(pending)]
    replayed, limits = (None, None) if done is None else Share.joined(done, ctx.leaves) or (None, None)
    here["answer"] = Answer().compute(ctx, limits)
    here["context"] = ContextLengths().compute(ctx, replayed)
    here["bills"] = Bills().compute(ctx, None if done is None else [s.bills for s in done])
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
        notes=ctx.probe_notes,
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
