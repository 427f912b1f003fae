"""The one context every report section reads: the loaded corpus and its leaves, the config, the grant sweep, the
frontier and the one recommendation, and the grant the single-grant sections read (``ReportContext``, built once by
``report_context``), and the report the sections assemble from it (``CalibrationReport``). Also the config itself
(``ReportConfig``) and the corpus helpers the sections share."""

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
from workbench.analysis.calibration import Calibration
from workbench.analysis.estimator import EstimatorFindings
from workbench.analysis.frames import annotate, run_facts
from workbench.analysis.frontier import ALL_GROUP, Frontier, RunLedger, default_grants, frontier, ledger
from workbench.analysis.invariants import RUNAWAY_GENERATOR, Invariant, seed_invariants
from workbench.analysis.losses import Loss
from workbench.analysis.recommendation import Recommendation, recommendations
from workbench.analysis.survival import Coverage, Survival
from workbench.analysis.targets import SEED_SET, AnalystInvariants
from workbench.analysis.widen import Widened
from workbench.replay.facts import usage_unknown
from workbench.report.bill_section import BillSection
from workbench.report.efficiency_section import EfficiencySection
from workbench.report.limits_section import OwnLimitAnswer
from workbench.report.provenance import Provenance
from workbench.report.sweeps import grant_sweep, replay_one
from workbench.scale import load
from workbench.trace.corpus import Corpus
from workbench.trace.fingerprint import remember
from workbench.trace.schema import Run, seal

# Seed shapes that are pathologies by construction: they are evidence for invariants, not honest work,
# so they never enter the tokens-to-finish survival of honest runs.
PATHOLOGY_GENERATORS = frozenset(
    {RUNAWAY_GENERATOR, "repeated_call", "tool_timeouts", "empty_burn", "length_stopped_batch"}
)
# Roles that are not a leaf's own work (a compaction call summarises another run's transcript).
SKIPPED_ROLES = frozenset({"compaction"})


@dataclass(frozen=True)
class ReportConfig:
    """What to sweep and what to hold the sweep to."""

    rules: tuple[str, ...] = ("current",)
    grants: tuple[int, ...] = field(default_factory=default_grants)
    """The frontier's grid, so the report recommends what ``frontier`` and ``calibrate`` do (the seed band's edges
    are still bisected to the token: ``refine``)."""
    context_lengths: tuple[int | None, ...] = (None, 32_768, 65_536, 131_072)
    context_grant_points: int = 6
    """The heat map sweeps this many grants (spread over ``grants``) × every context length."""
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
    overrides: dict[str, Override] = field(default_factory=dict)
    """Policy fields every replayed policy carries (``--without`` / ``--set``)."""
    progress: bool = False
    """Show the sweeps' progress."""
    estimate_study: bool = True
    """Run the estimator study (the report's estimator section)."""
    calibrate_constants: bool = True
    """Recalibrate every constant (the report's calibration section)."""
    workers: int | None = None
    """Local processes for the per-run work (the bills and the heat map's context replays) where
    enough runs make them pay (``workbench.scale.executor``; ``None``: this process, the library's default; the
    report command: one per core). The report is the same either way."""

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
    leaves, skipped = report_leaves(corpus)
    return corpus, leaves, skipped


def _run_files(corpus: Corpus) -> list[str]:
    """The file each run came from — read from the corpus's store, so a large corpus's runs are not built a second
    time for provenance."""
    runs = corpus.runs
    out = []
    for i in range(len(runs)):
        where = runs.origin(i)
        if where is None:
            run = runs[i]
            where = run.loaded_from or run.source_file or ""
        out.append(where)
    return out


def _digests(corpus: Corpus) -> dict[str, str]:
    """The SHA-256 of each loaded plain file, from its cache key (``workbench.scale.cache.file_key``); a folder
    run's key hashes its layout too, so a folder is hashed by ``provenance`` itself."""
    from workbench.scale.cache import content_digest

    return {f: content_digest(key) for f, key in corpus.runs.file_keys.items() if not os.path.isdir(f)}


def report_leaves(corpus: Corpus, rows: range | None = None) -> tuple[list[Run], dict[str, int]]:
    """A corpus's replayable leaves (of its runs ``rows``, else all; read-only, as the corpus's runs are) and what
    was left out (by reason). A corpus loaded through the index (``RunStore.read_only``) builds a copy of a run from
    its twin, and its leaves' fingerprints are the ones computed when its files were read
    (``workbench.trace.fingerprint.remember``)."""
    leaves: list[Run] = []
    skipped: dict[str, int] = {}
    for run, leaf_prints in corpus.runs.read_only(rows):
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
        these = [seal(leaf) for leaf in run.leaves()]
        if leaf_prints is not None and len(leaf_prints) == len(these):
            for leaf, p in zip(these, leaf_prints, strict=True):
                remember(leaf, p)
        leaves.extend(leaf for leaf in these if leaf.turns)
    return leaves, skipped


def _probes(leaves: list[Run], invariants: Sequence[Invariant]) -> list[Run]:
    """Synthetic probe runs for invariants whose run the corpus lacks (one per distinct probe)."""
    have = {r.run_id for r in leaves} | {g for g in map(_generator, leaves) if g}
    built: dict[str, Run] = {}
    for inv in invariants:
        if inv.run not in have and inv.probe and inv.probe not in built:
            built[inv.probe] = inv.build_probe()
    return list(built.values())


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


Override = int | float | bool | str | tuple[str, ...] | None
"""A Policy field's value, as ``--set``/``--without`` give it."""


@dataclass(frozen=True)
class ReportContext:
    """What every section computes from: built once, read by all (``workbench.report.sections``)."""

    config: ReportConfig
    corpus: Corpus
    leaves: list[Run]
    skipped: dict[str, int]
    command: str
    now: datetime | None
    mode: str
    """``analyst`` (the analyst's invariants head the report) or ``seed`` (the seed band)."""
    invariants: AnalystInvariants | str
    """The headline's invariants: the analyst's, or ``seed``."""
    facts: pd.DataFrame
    sweep: pd.DataFrame
    probes: list[Run]
    probe_rows: pd.DataFrame | None
    frontier: Frontier
    frontiers: dict[str, Frontier]
    book: RunLedger
    """The leaves' ledger, read once: the frontier's, and the calibration's leaf grant's."""
    recommendations: tuple[Recommendation, ...]
    """Every recommendation of ``frontier`` under the headline's invariants."""
    picks: tuple[Recommendation, ...]
    """The ones for rules[0], no context manager: one per group."""
    head: str
    recommended: int | None
    focus: tuple[int, str]
    """The grant the single-grant sections read, and why (``section_grant``)."""
    findings: tuple[BandFinding, ...]
    """The seed band per rule set (the headline on a synthetic corpus, the seed probe beside an analyst one)."""

    @property
    def overrides(self) -> dict[str, Override]:
        return dict(self.config.overrides)

    @property
    def probe_notes(self) -> tuple[str, ...]:
        return tuple(
            f"invariant probe {run.run_id} was generated ({run.metadata['generator']['name']}, synthetic): "
            "the corpus has no such run; it is replayed for the invariants only, not counted in any figure"
            for run in self.probes
        )


def report_corpus(paths: Sequence[str | os.PathLike[str]] | None) -> Corpus:
    """The corpus under ``paths`` (default: bundled traces + real histories)."""
    paths = list(paths) if paths else default_paths()
    if not paths:
        raise ValueError("no corpus: pass paths, or generate traces/ with `python -m workbench.scenarios`")
    return load(*paths)


def report_context(
    paths: Sequence[str | os.PathLike[str]] | None = None,
    *,
    config: ReportConfig,
    corpus: Corpus | None = None,
    command: str = "",
    now: datetime | None = None,
) -> ReportContext:
    """Load ``paths`` (default: bundled traces + real histories), or take an already loaded ``corpus``, then sweep
    its leaves over the grants and read the frontier and the one recommendation."""
    corpus = corpus if corpus is not None else report_corpus(paths)
    leaves, skipped = report_leaves(corpus)
    if not leaves:
        problems = "; ".join(str(p) for p in corpus.problems[:3])
        where = ", ".join(map(str, paths or corpus.files))
        raise ValueError(f"no replayable runs under {where}" + (f" ({problems})" if problems else ""))
    mode = report_mode(config, pd.DataFrame({"source": [r.source for r in leaves]}))
    invariants = SEED_SET if mode == "seed" else config.analyst
    over = dict(config.overrides)
    facts = run_facts(leaves)
    # Here, whatever ``workers`` says: over 12,600 leaves 7.4 s, where two forked workers took 9.7 s and copied
    # 1.3 GB each of the leaves they read (docs/scale.md, "The twelfth round").
    sweep = annotate(
        grant_sweep(leaves, config.rules, config.grants, progress=config.progress, overrides=over), facts
    )
    probes = _probes(leaves, config.invariants)
    probe_rows = None
    if probes:
        probe_rows = annotate(
            grant_sweep(probes, config.rules, config.grants, overrides=over), run_facts(probes)
        )
    book = ledger(leaves)
    fr = frontier(
        leaves, rules=config.rules, grants=config.grants, by=config.by, sweep=sweep, book=book, overrides=over
    )
    frontiers = {by: fr.regrouped(by, book) for by in ("source", "agent", "model")}
    # The one recommendation (workbench.analysis.recommendation): what `frontier` and `calibrate` say too.
    all_recs = tuple(recommendations(fr, invariants, leaves))
    picks = tuple(p for p in all_recs if p.rules == config.rules[0] and p.context_length is None)
    head = headline_group(fr)
    recommended = next((p.grant for p in picks if p.group == head), None)
    focus = section_grant(recommended, next((p for p in picks if p.group == head), None), config.grants, head)
    seed_recs = all_recs if mode == "seed" else recommendations(fr, SEED_SET, leaves)
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
    return ReportContext(
        config=config, corpus=corpus, leaves=leaves, skipped=skipped, command=command, now=now,
        mode=mode, invariants=invariants, facts=facts, sweep=sweep, probes=probes, probe_rows=probe_rows,
        frontier=fr, frontiers=frontiers, book=book, recommendations=all_recs, picks=picks, head=head,
        recommended=recommended, focus=focus, findings=tuple(findings),
    )  # fmt: skip


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
