"""Build a calibration report: load a corpus, sweep it, analyse the sweep, draw the charts.

``build_report`` returns a :class:`CalibrationReport` (frozen) — every table, figure and number the rendered
report shows, so a notebook can look at any piece and :func:`workbench.report.render.write_report` can
write it to ``report.html`` / ``report.md`` / PNGs. Time is an input (``now``); the report reads no clock.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from workbench.analysis.band import GrantBand, grant_band, refine
from workbench.analysis.calibration import Calibration, calibrate
from workbench.analysis.estimator import EstimatorFindings, estimator_findings
from workbench.analysis.fires import fire_points, fire_summary, stop_mix
from workbench.analysis.frames import annotate, run_facts
from workbench.analysis.frontier import ALL_GROUP, Frontier, frontier, ledger
from workbench.analysis.invariants import RUNAWAY_GENERATOR, Invariant, seed_invariants
from workbench.analysis.losses import Loss, explain
from workbench.analysis.recommendation import Recommendation, recommendations
from workbench.analysis.survival import Coverage, Survival, survival, tokens_to_finish
from workbench.analysis.targets import SEED_SET, AnalystInvariants
from workbench.analysis.widen import Widened, widen
from workbench.charts.estimator import estimator_chart
from workbench.charts.frontier import frontier_chart, kept_chart, outcome_survival_chart
from workbench.charts.heatmap import stop_heatmap
from workbench.charts.timeline import run_timeline
from workbench.estimate.study import study
from workbench.govern.policy import Policy
from workbench.replay.facts import usage_unknown
from workbench.report.bill_section import bill_section
from workbench.report.efficiency_section import EfficiencySection, efficiency_section
from workbench.report.limits_section import own_limit_answers
from workbench.report.provenance import Provenance, provenance
from workbench.report.sweeps import context_sweep, grant_sweep, policy_dicts, replay_one
from workbench.scale import load
from workbench.scale.lazy import LazyRuns
from workbench.trace.corpus import Corpus
from workbench.trace.distinct import Fingerprints
from workbench.trace.schema import Run

# Seed shapes that are pathologies by construction: they are evidence for invariants, not honest work,
# so they never enter the tokens-to-finish survival of honest runs.
PATHOLOGY_GENERATORS = frozenset(
    {RUNAWAY_GENERATOR, "repeated_call", "tool_timeouts", "empty_burn", "length_stopped_batch"}
)
# Roles that are not a leaf's own work (a compaction call summarises another run's transcript).
SKIPPED_ROLES = frozenset({"compaction"})


def default_grants() -> tuple[int, ...]:
    """The frontier's grid (100,000 to 600,000 in steps of 10,000), so the report recommends the grant
    ``frontier`` and ``calibrate`` do for the same invariants; the seed band's edges are still bisected to the
    token (``refine``)."""
    from workbench.analysis.frontier import default_grants as frontier_grants

    return frontier_grants()


@dataclass(frozen=True)
class ReportConfig:
    """What to sweep and what to hold the sweep to."""

    rules: tuple[str, ...] = ("current",)
    grants: tuple[int, ...] = field(default_factory=default_grants)
    context_lengths: tuple[int | None, ...] = (None, 32_768, 65_536, 131_072)
    context_grant_points: int = 6
    """The heat map sweeps this many grants (spread over ``grants``) × every context length."""
    coverage_share: float = 0.9
    coverage_sources: tuple[str, ...] | None = None
    """Sources whose honest runs the headline coverage and the recommendation read (None: every source)."""
    invariants: tuple[Invariant, ...] = field(default_factory=seed_invariants)
    """The seed's invariants over its synthetic runaway (the ``seed`` set; the seed probe on a real corpus)."""
    analyst: AnalystInvariants = field(default_factory=AnalystInvariants)
    """The invariants the analyst sets (``--keep-resolved`` ...): the headline on a real corpus."""
    invariant_set: str = "auto"
    """``auto``: the seed set heads a corpus of synthetic runs only, the analyst's set any other; ``seed`` or
    ``analyst`` to choose."""
    by: str = "source"
    """How the headline groups runs: ``source``, ``agent``, ``model`` or ``all``."""
    title: str = "Calibration report"
    overrides: dict[str, Any] = field(default_factory=dict)
    """Policy fields every replayed policy carries (``--without`` / ``--set``)."""

    def __post_init__(self) -> None:
        if not self.rules:
            raise ValueError("at least one rule set is needed")
        if len(self.grants) < 2:
            raise ValueError("sweep at least two grants")
        if sorted(set(self.grants)) != list(self.grants):
            raise ValueError("grants must be increasing and distinct")
        if self.invariant_set not in ("auto", SEED_SET, "analyst"):
            raise ValueError(f"invariant set must be auto, seed or analyst, got {self.invariant_set!r}")
        if self.by not in ("source", "agent", "model", "all"):
            raise ValueError(f"by must be source, agent, model or all, got {self.by!r}")

    def context_grants(self, recommended: int | None = None) -> tuple[int, ...]:
        """The heat map's grants: ``context_grant_points`` spread over ``grants``, plus the recommended grant
        (the context section reads the recommended grant itself, never a neighbour)."""
        n = max(1, min(self.context_grant_points, len(self.grants)))
        if n == 1:
            picked = {self.grants[len(self.grants) // 2]}
        else:
            picked = {self.grants[round(i * (len(self.grants) - 1) / (n - 1))] for i in range(n)}
        if recommended is not None:
            picked.add(recommended)
        return tuple(sorted(picked))


@dataclass(frozen=True)
class BandFinding:
    """The band of one rule set, with the coverage grant and what to recommend."""

    rules: str
    band: GrantBand
    coverage: Coverage | None
    recommended: int | None
    recommended_why: str

    @property
    def words(self) -> str:
        return self.band.words

    def to_frame(self) -> pd.DataFrame:
        return self.band.to_frame()

    def _repr_html_(self) -> str:
        rec = (
            f"<p>Recommended {self.recommended:,}: {html.escape(self.recommended_why)}</p>"
            if self.recommended
            else ""
        )
        cov = f"<p>{html.escape(self.coverage.words)}</p>" if self.coverage else ""
        return f"<div><b>Rules {html.escape(self.rules)}</b>{rec}{cov}{self.band._repr_html_()}</div>"


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
    bills: Any = None
    """The bill section (workbench.report.bill_section): what each context length would have cost."""
    calibration: Calibration | None = None
    """Every constant against the corpus under the first rule set (``workbench.analysis.calibration``)."""
    own_limits: dict[str, Any] = field(default_factory=dict)
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

    def pick(self, group: str | None = None) -> Recommendation:
        """The analyst's pick for one group (default: the headline group)."""
        want = group or headline_group(self.frontier)
        for p in self.picks:
            if p.group == want:
                return p
        raise KeyError(f"no group {want!r}; groups: {', '.join(p.group for p in self.picks)}")

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


def headline_group(fr: Frontier | None) -> str:
    """The group whose pick the charts mark: the whole corpus when there are several groups."""
    if fr is None or not fr.groups:
        return ALL_GROUP
    return ALL_GROUP if ALL_GROUP in fr.groups else fr.groups[0]


def report_mode(config: ReportConfig, facts: pd.DataFrame) -> str:
    """``seed`` for a corpus of synthetic runs only (unless the analyst chose), else ``analyst``."""
    if config.invariant_set != "auto":
        return "seed" if config.invariant_set == SEED_SET else "analyst"
    return "seed" if set(facts["source"]) <= {"synthetic"} else "analyst"


def _context_replay_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("workbench.context.replay") is not None


def _generator(run: Run) -> str | None:
    gen = run.metadata.get("generator")
    return gen.get("name") if isinstance(gen, dict) else None


def default_paths() -> list[Path]:
    """The bundled ``traces/`` and the agent histories on this machine."""
    from workbench.paths import bundled_traces, real_histories

    paths = [bundled_traces()] if bundled_traces().is_dir() else []
    return paths + real_histories()


def load_leaves(paths: Sequence[str | os.PathLike[str]]) -> tuple[Corpus, list[Run], dict[str, int]]:
    """The corpus under ``paths`` and its leaves (sessions split at user prompts; compaction calls left out)."""
    corpus = load(*paths)
    leaves, skipped = corpus_leaves(corpus)
    return corpus, leaves, skipped


def _run_files(corpus: Corpus) -> list[str]:
    """The file each run came from — read from a large corpus's references (``workbench.scale.lazy``), so its
    runs are not built a second time for provenance."""
    runs = corpus.runs
    if isinstance(runs, LazyRuns) and not runs.holds_all:
        out = []
        for i in range(len(runs)):
            ref = runs.ref(i)
            run = runs[i] if ref is None else None
            out.append(ref.file if ref is not None else (run.loaded_from or run.source_file or ""))  # type: ignore[union-attr]
        return out
    return [r.loaded_from or r.source_file or "" for r in runs]


def _digests(corpus: Corpus) -> dict[str, str]:
    """The SHA-256 of each loaded plain file, from its cache key (``workbench.scale.cache.file_key``); a folder
    run's key hashes its layout too, so a folder is hashed by ``provenance`` itself."""
    from workbench.scale.cache import content_digest

    return {f: content_digest(key) for f, key in corpus.file_keys.items() if not os.path.isdir(f)}


def corpus_leaves(corpus: Corpus) -> tuple[list[Run], dict[str, int]]:
    """A corpus's replayable leaves, and what was left out (by reason)."""
    leaves, skipped, _ = report_leaves(corpus)
    return leaves, skipped


def report_leaves(corpus: Corpus) -> tuple[list[Run], dict[str, int], Fingerprints]:
    """A corpus's replayable leaves, what was left out (by reason), and the leaves' fingerprints
    (``workbench.trace.distinct``) as far as the corpus knows them. A large corpus (``LazyRuns.read_only``)
    builds a copy of a run from its twin and gives the prints computed when its files were read; the rest —
    a small corpus, a run assigned after loading — are left for ``Fingerprints.covering`` to compute. The
    leaves are for reading only: a large corpus's copies share their twin's turns and messages."""
    leaves: list[Run] = []
    skipped: dict[str, int] = {}
    known: dict[int, tuple[Run, bytes]] = {}
    runs = corpus.runs
    pairs = runs.read_only() if isinstance(runs, LazyRuns) else ((run, None) for run in runs)
    for run, prints in pairs:
        if run.role in SKIPPED_ROLES:
            skipped[run.role] = skipped.get(run.role, 0) + 1
            continue
        if not run.turns:
            skipped["no turns"] = skipped.get("no turns", 0) + 1
            continue
        if usage_unknown(run) is not None:
            # no call recorded its usage (e.g. SWE-agent keeps only run totals): a cost sweep cannot replay it
            key = "with no per-call usage (cost cannot be replayed)"
            skipped[key] = skipped.get(key, 0) + 1
            continue
        these = run.leaves()
        if prints is not None and len(prints) == len(these):
            known.update((id(leaf), (leaf, p)) for leaf, p in zip(these, prints, strict=True))
        leaves.extend(leaf for leaf in these if leaf.turns)
    return leaves, skipped, Fingerprints(known).covering(leaves)


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


def _probes(leaves: list[Run], invariants: Sequence[Invariant]) -> list[Run]:
    """Synthetic probe runs for invariants whose run the corpus lacks (one per distinct probe)."""
    have = {r.run_id for r in leaves} | {g for g in map(_generator, leaves) if g}
    built: dict[str, Run] = {}
    for inv in invariants:
        if inv.run not in have and inv.probe and inv.probe not in built:
            built[inv.probe] = inv.build_probe()
    return list(built.values())


def _holds_at(
    leaves: list[Run], invariants: Sequence[Invariant], rules: str, overrides: dict[str, Any] | None = None
) -> Callable[[int], bool]:
    """``holds_at(grant)``: every invariant holds on a fresh replay of the run it reads, at that grant."""
    targets = {}
    for inv in invariants:
        hit = [r for r in leaves if r.run_id == inv.run or _generator(r) == inv.run]
        if hit:
            targets[inv.name] = (inv, hit[0])

    def holds_at(grant: int) -> bool:
        for inv, run in targets.values():
            row = pd.Series(
                {**replay_one(run, rules, grant, None, overrides).row(), "generator": _generator(run)}
            )
            if not inv.holds(row):
                return False
        return True

    return holds_at


def section_grant(
    recommended: int | None, pick: Recommendation | None, grid: Sequence[int], group: str
) -> tuple[int, str]:
    """The one grant the single-grant sections read (who cut which run, the groups at one grant, the context
    table, the timelines), and why that one, in words a reader can check: the recommended grant; else, when no
    grant was recommended, the headline group's best swept grant (the most successful runs kept); else the middle
    of the grid."""
    if recommended is not None:
        return recommended, f"grant {recommended:,}, the recommended grant"
    if pick is not None and pick.best_grant is not None:
        return pick.best_grant, (
            f"grant {pick.best_grant:,}: no grant was recommended for {group}, so its best swept grant (it "
            f"{pick.best_keeps})"
        )
    middle = grid[len(grid) // 2]
    return (
        middle,
        f"grant {middle:,}: no grant was recommended, so the middle of the grants swept ({min(grid):,} to {max(grid):,})",
    )


def _grant_why(grant: int, focus: tuple[int, str], grid: Sequence[int]) -> str:
    """Why a section on its own grid reads ``grant``: the section grant where the grid has it, else its middle."""
    if grant == focus[0]:
        return focus[1]
    return f"grant {grant:,}: the report's section grant {focus[0]:,} is not on this section's grid, so its middle"


def _timeline_targets(facts: pd.DataFrame, leaves: list[Run], probes: list[Run]) -> list[tuple[str, Run]]:
    by_id = {r.run_id: r for r in [*leaves, *probes]}
    picks: list[tuple[str, Run]] = []
    for probe in probes:
        if _generator(probe) == RUNAWAY_GENERATOR:
            picks.append(("timeline_runaway", probe))
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


def build_report(
    paths: Sequence[str | os.PathLike[str]] | None = None,
    *,
    config: ReportConfig | None = None,
    command: str = "",
    now: datetime | None = None,
    progress: bool = False,
    estimate_study: bool = True,
    corpus: Corpus | None = None,
    calibrate_constants: bool = True,
) -> CalibrationReport:
    """Load ``paths`` (default: bundled traces + real histories) — or take an already loaded ``corpus``
    (e.g. a notebook's filtered one) — then sweep, analyse and chart it. ``calibrate_constants``: also
    recalibrate every constant (the report's calibration section)."""
    config = config or ReportConfig()
    if corpus is not None:
        paths = [str(f) for f in corpus.files]
        leaves, skipped, prints = report_leaves(corpus)
    else:
        paths = list(paths) if paths else default_paths()
        if not paths:
            raise ValueError(
                "no corpus: pass paths, or generate traces/ with `python -m workbench.scenarios`"
            )
        corpus = load(*paths)
        leaves, skipped, prints = report_leaves(corpus)
    if not leaves:
        problems = "; ".join(str(p) for p in corpus.problems[:3])
        raise ValueError(
            f"no replayable runs under {', '.join(map(str, paths))}" + (f" ({problems})" if problems else "")
        )
    mode = report_mode(config, pd.DataFrame({"source": [r.source for r in leaves]}))
    head_invariants: AnalystInvariants | str = SEED_SET if mode == "seed" else config.analyst
    over = dict(config.overrides)
    facts = run_facts(leaves, prints)
    # Each leaf's content fingerprint (computed once, or read from the corpus's index): every replay, bill and
    # price below computes copies once.
    sweep = annotate(
        grant_sweep(leaves, config.rules, config.grants, progress=progress, prints=prints, overrides=over),
        facts,
    )

    notes: list[str] = []
    probes = _probes(leaves, config.invariants)
    probe_rows = None
    if probes:
        probe_rows = annotate(
            grant_sweep(probes, config.rules, config.grants, overrides=over), run_facts(probes)
        )
        for run in probes:
            notes.append(
                f"invariant probe {run.run_id} was generated ({run.metadata['generator']['name']}, synthetic): "
                "the corpus has no such run; it is replayed for the invariants only, not counted in any figure"
            )

    survivals = _survivals(facts, config.coverage_sources)
    book = ledger(leaves, prints=prints)
    fr = frontier(
        leaves, rules=config.rules, grants=config.grants, by=config.by, sweep=sweep, book=book, overrides=over
    )
    frontiers = {
        by: fr
        if by == config.by
        else frontier(
            leaves, rules=config.rules, grants=config.grants, by=by, sweep=sweep, book=book, overrides=over
        )
        for by in ("source", "agent", "model")
    }
    # The one recommendation (workbench.analysis.recommendation): what `frontier` and `calibrate` say too.
    all_recs = recommendations(fr, head_invariants, leaves)
    picks = tuple(p for p in all_recs if p.rules == config.rules[0] and p.context_length is None)
    # Each agent's own unit (cost_limit in dollars) beside the seed-grant answer, for the sources that have one.
    own_limits = own_limit_answers(leaves, config.analyst, frontiers["source"]) if mode == "analyst" else {}
    head = headline_group(fr)
    seed_recs = (
        all_recs if mode == "seed" else recommendations(fr, SEED_SET, leaves)
    )  # the seed probe beside an analyst headline
    findings = []
    for rules in config.rules:
        rows = None if probe_rows is None else probe_rows[probe_rows["rules"] == rules]
        band = grant_band(sweep[sweep["rules"] == rules], config.invariants, rows)
        band = refine(band, _holds_at([*leaves, *probes], config.invariants, rules, over))
        srec = next(
            (p for p in seed_recs if p.rules == rules and p.group == head and p.context_length is None), None
        )
        findings.append(
            BandFinding(rules, band, None, srec.grant if srec else None, srec.why if srec else "")
        )

    main = findings[0]
    recommended = next((p.grant for p in picks if p.group == head), None)
    focus = section_grant(recommended, next((p for p in picks if p.group == head), None), config.grants, head)
    section_grants: dict[str, tuple[int, str]] = {k: focus for k in ("groups", "losses", "timelines")}
    widened: dict[str, Widened] = {}
    if mode == "analyst":
        for p in picks:
            wide = widen(fr, p, leaves, config.analyst, overrides=over)
            if wide is not None:
                widened[p.group] = wide
    losses = tuple(explain(fr.lost(focus[0], head, config.rules[0]), leaves, over))
    effi = efficiency_section(fr, focus[0], focus[1], head, config.rules[0])
    shown = _focus(config.grants, recommended, main.band if mode == "seed" else None)
    at_focus = sweep[sweep["grant"].isin(shown)]
    mix = stop_mix(at_focus.assign(stop_reason=ending(at_focus)))
    fires = fire_summary(fire_points(at_focus))

    honest_leaves = [r for r in leaves if _generator(r) not in PATHOLOGY_GENERATORS]
    estimator = estimator_findings(study(honest_leaves, prints=prints)) if estimate_study else None

    ctx_frame = None
    context_fires = None
    head_rec = next((p for p in picks if p.group == head), None)
    band_span = head_rec.band if mode == "seed" and head_rec is not None and head_rec.band else None
    figures: dict[str, Figure] = {
        "sweep": kept_chart(fr, group=head, rules=config.rules[0], recommended=recommended, band=band_span),
        "frontier": frontier_chart(
            fr,
            rules=config.rules[0],
            recommended={p.group: p.grant for p in picks} if mode == "analyst" else {head: recommended},
            bands={p.group: p.band for p in picks} if mode == "analyst" else {head: band_span},
        ),
        "survival": outcome_survival_chart(fr, group=head, rules=config.rules[0], recommended=recommended),
    }
    if estimator is not None and not estimator.table.empty:
        figures["estimator"] = estimator_chart(estimator.study.turns, estimator.study.classes)
    if any(c is not None for c in config.context_lengths) and not _context_replay_available():
        notes.append(
            "context lengths were not swept: workbench.context.replay is not installed in this checkout"
        )
    elif any(c is not None for c in config.context_lengths):
        ctx_grants = config.context_grants(focus[0])
        ctx_frame = annotate(
            context_sweep(
                leaves,
                config.rules[0],
                ctx_grants,
                config.context_lengths,
                progress=progress,
                prints=prints,
                overrides=over,
            ),
            facts,
        )
        near = focus[0] if focus[0] in ctx_grants else ctx_grants[len(ctx_grants) // 2]
        section_grants["context"] = (near, _grant_why(near, focus, ctx_grants))
        at = ctx_frame[ctx_frame["grant"] == near]
        context_fires = fire_summary(fire_points(at), by=("grant", "context_length"))
        figures["heatmap"] = stop_heatmap(
            ctx_frame,
            title=f"Runs per stop reason over grant × context length ({config.rules[0]})",
            recommended=recommended,
        )

    titles: dict[str, str] = {}
    grant = focus[0]
    for name, run in _timeline_targets(facts, leaves, probes):
        res = replay_one(run, config.rules[0], grant, None, over)
        probe = " (synthetic invariant probe)" if any(run is p for p in probes) else ""
        titles[name] = f"{run.run_id}{probe} under {config.rules[0]}, grant {grant:,}"
        refs = {
            f"{i.name}: {i.column} {i.op} {i.bound:,.0f}": i.bound
            for i in config.invariants
            if i.column == "raw" and i.run in (run.run_id, _generator(run))
        }
        figures[name] = run_timeline(run, res, title=titles[name], references=refs)
    grown = facts[facts["generator"] == "outgrowing_window"]
    if len(grown) and _context_replay_available():
        run = next(r for r in leaves if r.run_id == grown.iloc[0]["run_id"])
        window = int(run.context_length or 0) or None
        res = replay_one(run, config.rules[0], grant, window, over)
        titles["timeline_window"] = (
            f"{run.run_id} under {config.rules[0]}, grant {grant:,}, context length {window:,}"
        )
        figures["timeline_window"] = run_timeline(run, res, title=titles["timeline_window"])

    bills = bill_section(leaves, config.context_lengths, prints=prints)
    cal = (
        calibrate(
            leaves,
            Policy.named(config.rules[0], **over),
            grants=config.grants,
            prints=prints,
            invariants=head_invariants,
        )
        if calibrate_constants
        else None
    )
    if bills is not None:
        figures["bills"] = bills.figure
    if cal is not None:
        from workbench.report.calibration import calibration_figures

        figures.update(calibration_figures(cal))

    runs_per_file: dict[str, int] = {}
    for key in _run_files(corpus):
        runs_per_file[key] = runs_per_file.get(key, 0) + 1
    prov = provenance(
        corpus.files,
        runs_per_file,
        policy_dicts(config.rules, config.grants, config.context_lengths, over),
        command,
        generated_at=now,
        problems=[str(p) for p in corpus.problems],
        not_loaded=[(str(s.path), s.reason) for s in corpus.skipped],
        digests=_digests(corpus),
    )
    return CalibrationReport(
        config=config,
        facts=facts,
        sweep=sweep,
        context=ctx_frame,
        findings=tuple(findings),
        survivals=survivals,
        stop_mix=mix,
        fires=fires,
        estimator=estimator,
        provenance=prov,
        figures=figures,
        timeline_titles=titles,
        skipped=skipped,
        notes=tuple(notes),
        context_fires=context_fires,
        section_grants=section_grants,
        frontier=fr,
        frontiers=frontiers,
        picks=picks,
        mode=mode,
        recommended=recommended,
        bills=bills,
        calibration=cal,
        own_limits=own_limits,
        losses=losses,
        widened=widened,
        efficiency=effi,
    )


def ending(frame: pd.DataFrame) -> pd.Series:
    """How each sweep row ends, in words an analyst reads: ``as recorded`` (nothing cut, no landing: whatever
    the recording did — including ending in an error — happens), ``as recorded, landing started``, else the
    policy's own stop (``budget``, ``no-progress``, ``done`` = answered inside a landing, ...). Censored rows are
    ``censored``."""
    cut = frame["cut_turns"].fillna(0).astype(int) > 0
    landed = frame["landing_started_at"].notna()
    out = frame["stop_reason"].astype(object).where(cut, "as recorded")
    out = out.where(cut | ~landed, "as recorded, landing started")
    return out.where(~frame["censored"].astype(bool), "censored")


def _focus(grants: Sequence[int], recommended: int | None, band: GrantBand | None) -> list[int]:
    out = {grants[0], grants[-1]}
    if 220_000 in grants:
        out.add(220_000)  # the seed's own grant (DefaultLeafTokens), the reference every reader knows
    if recommended:
        out.add(recommended)
    if band is not None:
        out |= {g for g in (band.low, band.high) if g}
    return sorted(out)


def focus_grants(report: CalibrationReport) -> list[int]:
    """The grants the stop-mix and fires tables show: the grid's ends, the seed's 220,000, the recommended
    grant (and the seed band's edges when the band heads the report)."""
    f = report.findings[0]
    return _focus(report.config.grants, report.recommended, f.band if report.mode == "seed" else None)
