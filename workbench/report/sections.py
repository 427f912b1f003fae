"""The report as sections: each a ``Section`` over one ``ReportContext`` that computes its result
(``compute(ctx)``, frozen; a result that draws carries its Figures) and renders itself: ``view(report)`` is what its
templates ``templates/sections/<name>.{html,md}.j2`` read. ``SECTIONS`` is the report in page order;
``build_report`` computes the list, ``workbench.report.render`` renders it (docs/report.md, "Sections")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pandas as pd
from matplotlib.figure import Figure

from workbench.analysis.calibration import Calibration, calibrate
from workbench.analysis.estimator import EstimatorFindings, estimator_findings
from workbench.analysis.fires import fire_points, fire_summary, stop_mix
from workbench.analysis.frames import annotate
from workbench.analysis.invariants import RUNAWAY_GENERATOR
from workbench.analysis.limit_frontier import LimitRows
from workbench.analysis.losses import Loss, explain
from workbench.analysis.survival import Survival, survival, tokens_to_finish
from workbench.analysis.widen import Widened, widen
from workbench.charts.estimator import estimator_chart
from workbench.charts.frontier import frontier_chart, kept_chart, outcome_survival_chart
from workbench.charts.heatmap import stop_heatmap
from workbench.charts.timeline import run_timeline
from workbench.estimate.study import study
from workbench.govern.policy import Policy
from workbench.report import views
from workbench.report.bill_section import BillSection, bill_section
from workbench.report.calibration import calibration_figures
from workbench.report.context import (
    PATHOLOGY_GENERATORS,
    ReportConfig,
    ReportContext,
    _digests,
    _focus,
    _generator,
    _grant_why,
    _run_files,
    ending,
)
from workbench.report.efficiency_section import EfficiencySection, efficiency_section
from workbench.report.limits_section import OwnLimitAnswer, own_limit_answers
from workbench.report.provenance import Provenance, provenance
from workbench.report.sweeps import ContextKey, context_sweep, policy_dicts, policy_for, replay_one
from workbench.trace.schema import Run

if TYPE_CHECKING:
    from workbench.report.context import CalibrationReport


def _survivals(facts: pd.DataFrame, sources: tuple[str, ...] | None) -> dict[str, Survival]:
    """The headline fit first (honest runs of ``sources``, or all), then one per source when several."""
    honest = facts[~facts["generator"].isin(PATHOLOGY_GENERATORS)]
    obs = tokens_to_finish(honest)
    by_source = honest.set_index("run_id")["source"]
    out: dict[str, Survival] = {}
    head = obs if sources is None else obs[obs["run_id"].map(by_source).isin(sources)]
    if head.empty or not head["finished"].any():
        return out
    out["honest runs" if sources is None else "honest runs of " + ", ".join(sources)] = survival(head)
    if obs["run_id"].map(by_source).nunique() < 2:
        return out  # one source: its curve is the headline curve
    for source in sorted(by_source.unique()):
        sub = obs[obs["run_id"].map(by_source) == source]
        if sources is not None and tuple(sources) == (source,):
            continue  # the headline fit already is this source
        if len(sub) >= 2 and sub["finished"].any():
            out[source] = survival(sub)
    return out


def _timeline_targets(facts: pd.DataFrame, leaves: list[Run], probes: list[Run]) -> list[tuple[str, Run]]:
    by_id = {r.run_id: r for r in [*leaves, *probes]}
    picks = [("timeline_runaway", probe) for probe in probes if _generator(probe) == RUNAWAY_GENERATOR]
    for gen, name in ((RUNAWAY_GENERATOR, "timeline_runaway"), ("split_worthy_leaf", "timeline_split")):
        hit = facts[facts["generator"] == gen]
        if len(hit):
            picks.append((name, by_id[hit.iloc[0]["run_id"]]))
    honest = facts[facts["recorded_finished"] & ~facts["generator"].isin(PATHOLOGY_GENERATORS)]
    if len(honest):
        top = honest.sort_values("recorded_spent", ascending=False).iloc[0]
        if all(r.run_id != top["run_id"] for _, r in picks):
            picks.append(("timeline_costliest", by_id[top["run_id"]]))
    return picks


R = TypeVar("R", covariant=True)


class Section(Protocol[R]):
    """One section of the report: what it computes from the context, and what its templates read."""

    name: str

    def compute(self, ctx: ReportContext) -> R: ...

    def view(self, report: CalibrationReport) -> dict[str, Any]: ...


@dataclass
class Shown:
    """A section that computes nothing of its own: its ``view`` shows what the context computed."""

    name: str
    view: Callable[[CalibrationReport], dict[str, Any]]

    def compute(self, ctx: ReportContext) -> None:
        return None


@dataclass(frozen=True)
class AnswerResult:
    """The agents' own-limit answers, the honest runs' survival fits, and what would give an answer where the
    grid has none (the seed bands are the context's: ``ReportContext.findings``)."""

    own_limits: dict[str, OwnLimitAnswer]
    survivals: dict[str, Survival]
    widened: dict[str, Widened]


class Answer:
    name = "answer"
    view = staticmethod(views.answer)

    def compute(self, ctx: ReportContext, known: Mapping[str, LimitRows] | None = None) -> AnswerResult:
        """The section; ``known``: per run id, its replays under its agent's own cost limits made already."""
        config, over = ctx.config, ctx.overrides
        # Each agent's own unit (cost_limit in dollars) beside the seed-grant answer, for the sources that have one.
        own = (
            own_limit_answers(ctx.leaves, config.analyst, ctx.frontiers["source"], known)
            if ctx.mode == "analyst"
            else {}
        )
        widened: dict[str, Widened] = {}
        if ctx.mode == "analyst":
            for p in ctx.picks:
                wide = widen(ctx.frontier, p, ctx.leaves, config.analyst, overrides=over, book=ctx.book)
                if wide is not None:
                    widened[p.group] = wide
        return AnswerResult(own, _survivals(ctx.facts, config.coverage_sources), widened)


@dataclass(frozen=True)
class LossesResult:
    losses: tuple[Loss, ...]


class Losses:
    """The resolved runs the section grant loses (headline group, rules[0]), with cause and evidence."""

    name = "losses"
    view = staticmethod(views.losses)

    def compute(self, ctx: ReportContext) -> LossesResult:
        lost = ctx.frontier.lost(ctx.focus[0], ctx.head, ctx.config.rules[0])
        return LossesResult(tuple(explain(lost, ctx.leaves, ctx.overrides)))


class Efficiency:
    name = "efficiency"
    view = staticmethod(views.efficiency)

    def compute(self, ctx: ReportContext) -> EfficiencySection:
        return efficiency_section(ctx.frontier, ctx.focus[0], ctx.focus[1], ctx.head, ctx.config.rules[0])


@dataclass(frozen=True)
class StopsResult:
    """How runs end and where the governors fire, at the focus grants (``_focus``)."""

    stop_mix: pd.DataFrame
    fires: pd.DataFrame


class Stops:
    name = "stops"
    view = staticmethod(views.stops)

    def compute(self, ctx: ReportContext) -> StopsResult:
        band = ctx.findings[0].band if ctx.mode == "seed" else None
        shown = _focus(ctx.config.grants, ctx.recommended, band)
        at = ctx.sweep[ctx.sweep["grant"].isin(shown)]
        return StopsResult(stop_mix(at.assign(stop_reason=ending(at))), fire_summary(fire_points(at)))


@dataclass(frozen=True)
class ChartsResult:
    """The grant charts: what each grant keeps and saves, the frontier, kept split by outcome."""

    figures: dict[str, Figure]


class GrantCharts:
    name = "grant_charts"
    view = staticmethod(views.grant_charts)

    def compute(self, ctx: ReportContext) -> ChartsResult:
        fr, head, rules, rec = ctx.frontier, ctx.head, ctx.config.rules[0], ctx.recommended
        head_rec = next((p for p in ctx.picks if p.group == head), None)
        band_span = head_rec.band if ctx.mode == "seed" and head_rec is not None and head_rec.band else None
        analyst = ctx.mode == "analyst"
        return ChartsResult(
            {
                "sweep": kept_chart(fr, group=head, rules=rules, recommended=rec, band=band_span),
                "frontier": frontier_chart(
                    fr,
                    rules=rules,
                    recommended={p.group: p.grant for p in ctx.picks} if analyst else {head: rec},
                    bands={p.group: p.band for p in ctx.picks} if analyst else {head: band_span},
                ),
                "survival": outcome_survival_chart(fr, group=head, rules=rules, recommended=rec),
            }
        )


@dataclass(frozen=True)
class EstimatorResult:
    findings: EstimatorFindings | None
    figures: dict[str, Figure]


class Estimator:
    name = "estimator"
    view = staticmethod(views.estimator)

    def compute(self, ctx: ReportContext) -> EstimatorResult:
        if not ctx.config.estimate_study:
            return EstimatorResult(None, {})
        honest = [r for r in ctx.leaves if _generator(r) not in PATHOLOGY_GENERATORS]
        found = estimator_findings(study(honest))
        figures = {}
        if not found.table.empty:
            figures["estimator"] = estimator_chart(found.study.turns, found.study.classes)
        return EstimatorResult(found, figures)


@dataclass(frozen=True)
class ContextResult:
    """The grant × context-length sweep, where its governors fire at one grant (and which, and why)."""

    frame: pd.DataFrame | None
    fires: pd.DataFrame | None
    grant: tuple[int, str] | None
    figures: dict[str, Figure]


class ContextLengths:
    name = "context"
    view = staticmethod(views.context)

    @staticmethod
    def replays(config: ReportConfig) -> list[Policy]:
        """One policy per context length the heat map sweeps: the context replays each leaf needs (none when it
        sweeps none), which the report's workers make beside the bills (``report.shares``)."""
        over = dict(config.overrides)
        return [policy_for(config.rules[0], config.grants[0], c, over) for c in config.context_lengths if c]

    def compute(
        self, ctx: ReportContext, replayed: Sequence[Mapping[ContextKey, Any]] | None = None
    ) -> ContextResult:
        """The section; ``replayed``: per leaf, its context replays made already (on the workers)."""
        config = ctx.config
        if not any(c is not None for c in config.context_lengths):
            return ContextResult(None, None, None, {})
        grants = config.context_grants(ctx.focus[0])
        frame = annotate(
            context_sweep(
                ctx.leaves,
                config.rules[0],
                grants,
                config.context_lengths,
                progress=config.progress,
                overrides=ctx.overrides,
                replayed=replayed,
            ),
            ctx.facts,
        )
        near = ctx.focus[0] if ctx.focus[0] in grants else grants[len(grants) // 2]
        at = frame[frame["grant"] == near]
        figure = stop_heatmap(
            frame,
            title=f"Runs per stop reason over grant × context length ({config.rules[0]})",
            recommended=ctx.recommended,
        )
        return ContextResult(
            frame,
            fire_summary(fire_points(at), by=("grant", "context_length")),
            (near, _grant_why(near, ctx.focus, grants)),
            {"heatmap": figure},
        )


@dataclass(frozen=True)
class TimelinesResult:
    titles: dict[str, str]
    figures: dict[str, Figure]


class Timelines:
    name = "timelines"
    view = staticmethod(views.timelines)

    def compute(self, ctx: ReportContext) -> TimelinesResult:
        config, over, grant = ctx.config, ctx.overrides, ctx.focus[0]
        titles: dict[str, str] = {}
        figures: dict[str, Figure] = {}
        for name, run in _timeline_targets(ctx.facts, ctx.leaves, ctx.probes):
            res = replay_one(run, config.rules[0], grant, None, over)
            probe = " (synthetic invariant probe)" if any(run is p for p in ctx.probes) else ""
            titles[name] = f"{run.run_id}{probe} under {config.rules[0]}, grant {grant:,}"
            refs = {
                f"{i.name}: {i.column} {i.op} {i.bound:,.0f}": i.bound
                for i in config.invariants
                if i.column == "raw" and i.run in (run.run_id, _generator(run))
            }
            figures[name] = run_timeline(run, res, title=titles[name], references=refs)
        grown = ctx.facts[ctx.facts["generator"] == "outgrowing_window"]
        if len(grown):
            run = next(r for r in ctx.leaves if r.run_id == grown.iloc[0]["run_id"])
            window = int(run.context_length or 0) or None
            res = replay_one(run, config.rules[0], grant, window, over)
            titles["timeline_window"] = (
                f"{run.run_id} under {config.rules[0]}, grant {grant:,}, context length {window:,}"
            )
            figures["timeline_window"] = run_timeline(run, res, title=titles["timeline_window"])
        return TimelinesResult(titles, figures)


@dataclass(frozen=True)
class BillsResult:
    section: BillSection | None
    figures: dict[str, Figure]


class Bills:
    name = "bills"
    view = staticmethod(views.bills)

    def compute(self, ctx: ReportContext, parts: Sequence[pd.DataFrame | None] | None = None) -> BillsResult:
        section = bill_section(ctx.leaves, ctx.config.context_lengths, parts=parts)
        return BillsResult(section, {"bills": section.figure} if section is not None else {})


@dataclass(frozen=True)
class CalibrationResult:
    calibration: Calibration | None
    figures: dict[str, Figure]


class Constants:
    name = "calibration"
    view = staticmethod(views.calibration)

    def compute(self, ctx: ReportContext) -> CalibrationResult:
        if not ctx.config.calibrate_constants:
            return CalibrationResult(None, {})
        policy = Policy.named(ctx.config.rules[0], **ctx.config.overrides)
        cal = calibrate(
            ctx.leaves,
            policy,
            grants=ctx.config.grants,
            invariants=ctx.invariants,
            sweep=ctx.sweep,
            book=ctx.book,
        )
        return CalibrationResult(cal, calibration_figures(cal))


class Sources:
    """Where the figures came from: the files with their hashes, the policies, the command."""

    name = "provenance"
    view = staticmethod(views.provenance)

    def compute(self, ctx: ReportContext) -> Provenance:
        config, corpus = ctx.config, ctx.corpus
        return provenance(
            corpus.files,
            Counter(_run_files(corpus)),
            policy_dicts(config.rules, config.grants, config.context_lengths, ctx.overrides),
            ctx.command,
            generated_at=ctx.now,
            problems=[str(p) for p in corpus.problems],
            not_loaded=[(str(s.path), s.reason) for s in corpus.skipped],
            digests=_digests(corpus),
        )


SectionResult = (
    AnswerResult
    | LossesResult
    | EfficiencySection
    | StopsResult
    | ChartsResult
    | EstimatorResult
    | ContextResult
    | TimelinesResult
    | BillsResult
    | CalibrationResult
    | Provenance
    | None
)

SECTIONS: tuple[Section[SectionResult], ...] = (
    Answer(),
    Shown("reading", views.reading),  # how to read the report, and the glossary
    GrantCharts(),
    Losses(),
    Efficiency(),
    Shown("invariants", views.invariants),  # the analyst's and the seed's
    Shown("corpus", views.corpus),  # runs per source and kind, the files not loaded
    Stops(),
    ContextLengths(),
    Estimator(),
    Timelines(),
    Bills(),
    Constants(),
    Sources(),
)
"""The report, section by section, in page order."""
