"""Render a CalibrationReport to a self-contained ``report.html`` (charts inlined as base64 PNG), a
``report.md`` beside its PNGs, through jinja2 templates shipped in the package."""

from __future__ import annotations

import errno
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from workbench.analysis.frontier import ALL_GROUP, share_interval
from workbench.analysis.recommendation import recommendations
from workbench.analysis.targets import SEED_SET
from workbench.charts.frontier import frontier_layout
from workbench.format import md_code, md_inline
from workbench.outputs import MANIFEST, fresh_folder, inside, manifest, refusal, swap_in
from workbench.report.bill_section import bill_context
from workbench.report.build import CalibrationReport, ending, focus_grants, headline_group
from workbench.report.calibration import calibration_context
from workbench.report.figures import GRANT_CHARTS, png_base64, png_bytes, render, svg_text
from workbench.report.provenance import Provenance
from workbench.report.tables import html_table, md_table


@dataclass(frozen=True)
class Written:
    """What ``write_report`` wrote."""

    html: Path
    markdown: Path
    images: tuple[Path, ...]


class MarkdownText(str):
    """Markdown the report built itself (a table whose cells are already escaped): not escaped again."""


def _md_finalize(value: Any) -> Any:
    # Every value the Markdown template prints is literal text (run ids, sources, notes): escaped, so a newline
    # or a '#' from a trace cannot open a heading or end a table row. Tables arrive as MarkdownText.
    if isinstance(value, MarkdownText):
        return value
    return md_inline(value)


def _env(markdown: bool = False) -> Environment:
    env = Environment(
        loader=PackageLoader("workbench.report", "templates"),
        autoescape=lambda name: bool(name) and name.endswith(".html.j2"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_md_finalize if markdown else None,
    )
    env.filters["md_code"] = lambda v: MarkdownText(md_code(v))
    return env


def _missing(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _pct(x: float | None) -> str:
    """A share to one decimal; a small non-zero share never reads as 0% (0.3% stays 0.3%, 0.04% is <0.1%)."""
    return "—" if x is None or _missing(x) else "<0.1%" if 0 < x < 0.001 else f"{x:.1%}"


def _ci(lo: float, hi: float) -> str:
    return "—" if _missing(lo) else f"{lo:.1%}–{hi:.1%}"


def _usd(x: float | None) -> str:
    return "—" if _missing(x) else f"${x:,.2f}"


def _tok(x: float | None) -> str:
    return "—" if x is None or _missing(x) else f"{x / 1e6:,.2f}M" if abs(x) >= 1e6 else f"{x:,.0f}"


GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "grant",
        "The cost-meter reading at which a landing starts — not a ceiling. The cost meter counts fresh "
        "prompt tokens, 10% of cache reads and completion tokens, cumulatively over the run.",
    ),
    (
        "landing",
        "What the governor orders once the meter reaches the grant after a tool call: at most 4 more "
        "calls to wrap up, ending early once the meter passes its reading at the crossing + 20% of the grant. A run "
        "can therefore bill more than its grant; that is the design.",
    ),
    ("allowance", "What a landing allows: those 4 calls or that 20% of the grant, whichever runs out first."),
    (
        "resolved",
        "A run an external grader labelled resolved (e.g. SWE-bench). Where a run has no label, "
        "'finished' takes its place: the recording ended on its own with an answer (stop done, last call not an "
        "error). The basis column says which.",
    ),
    (
        "kept",
        "A resolved run the policy lets finish exactly as recorded: no landing started, nothing cut. This is "
        "the report's one coverage: 'covers 95%' means 95% of resolved runs are kept.",
    ),
    (
        "at risk",
        "A resolved run whose landing started but whose recording ended within the landing's allowance: "
        "it still ends as recorded, but it was told to wrap up, and a longer ending would have been cut.",
    ),
    (
        "lost",
        "A resolved run the policy stops before its recorded end (turns cut): its success is not reached.",
    ),
    (
        "not resolved, cut",
        "A run that did not succeed and that the policy stops early: where savings should come from.",
    ),
    (
        "censored",
        "The recording ended (cut by its own limit) before this policy decided: the figures are a lower "
        "bound, never a completion.",
    ),
    (
        "diverges",
        "The first recorded turn the policy would have prompted differently (after an injected message, a "
        "skipped tool batch or a landing order). Turns after it are approximate: the replay reuses the recorded "
        "turns.",
    ),
    ("unverified success", "The governor's verdict on a run that ended with an answer no grader checked."),
    (
        "ADR-107",
        "The context-window design the workbench replays: a chars/N estimator with an only-growing "
        "calibration factor and turn-atomic pruning; CONTEXT_TRUNCATED ends a run whose newest turn cannot fit.",
    ),
    (
        "as recorded",
        "In the stop tables: the replay ends where the recording ended (nothing cut, no landing), "
        "whatever the recording's own ending was — including an error.",
    ),
    (
        "95% interval (Wilson)",
        "Every share carries a 95% Wilson score interval (scipy.stats.binomtest): the range of shares "
        "consistent with the counts.",
    ),
    (
        "cost meter",
        "The running total the governor compares with the grant: fresh prompt tokens, plus 10% of the tokens "
        "read from the prompt cache, plus completion tokens, summed over the run's calls so far.",
    ),
    (
        "raw tokens",
        "Every prompt and completion token the run's calls sent or received, cache reads counted in full: what "
        "the provider processed, not what the cost meter counts.",
    ),
    (
        "cache read, cache write",
        "A provider keeps a prompt's beginning for a while; a later call that starts the same way reads it "
        "(cheaper: 10% of the input price at Anthropic) instead of sending it fresh. Writing it costs more "
        "(1.25x input for five minutes, 2x for an hour).",
    ),
    ("coverage", "The share of successful runs a grant keeps (see kept): 'covers 95%' = keeps 95% of them."),
    (
        "invariant",
        "A condition the recommended grant must meet, such as 'keep at least 95% of resolved runs'; the analyst "
        "sets them (the seed states two of its own, read only in the seed probe).",
    ),
    (
        "finished",
        "A recording that ended on its own with an answer (stop done, last call not an error): what counts as "
        "success when no grader labelled the run.",
    ),
    (
        "rule set",
        "A named version of the governor's rules to replay under: current (today's), ink-s9 and older (earlier "
        "eras of the same rules), openhands (OpenHands' own iteration limit, which reads no grant).",
    ),
    (
        "context length",
        "The context window, in tokens, that the replayed context manager must fit each prompt into; 'none' "
        "replays without a manager.",
    ),
    (
        "leaf (leaves)",
        "One unit the replay works on: a whole run, or one segment of an interactive session (sessions are "
        "split at each prompt the user typed).",
    ),
    (
        "seed (seed 001, linear.go)",
        "The design document the workbench's defaults come from: its constants, its synthetic runaway and its "
        "two invariants. In the seed's code they live in the Go file linear.go.",
    ),
    (
        "seed's grant (DefaultLeafTokens)",
        "The grant the seed ships with, 220,000 cost-meter tokens; the seed's constant is DefaultLeafTokens.",
    ),
    (
        "synthetic runaway (seed-warm-runaway)",
        "A made-up run the seed describes: 98% of each prompt read from the cache, it keeps calling the model "
        "and never finishes. The seed's invariants are read on it; in the bundled traces its id is "
        "seed-warm-runaway.",
    ),
    (
        "melt-down (audited melt-downs)",
        "A real runaway run the seed's authors examined afterwards: such runs reached 1.4M raw tokens before they "
        "stopped, the figure the seed's first invariant guards.",
    ),
    ("grant band", "The range of grants where both of the seed's invariants hold on its synthetic runaway."),
    (
        "seed probe",
        "The section that reads the seed's invariants on its synthetic runaway, apart from this corpus.",
    ),
    (
        "steered",
        "A run that received new guidance (a user's message, a notification) while it was writing its final "
        "answer: the governor reopens it instead of ending it.",
    ),
    (
        "spend saved",
        "The cost-meter tokens (and dollars: genai-prices at each call's date, else the cost the "
        "source recorded) of the calls the policy cuts.",
    ),
    (
        "SWE-Effi, EuTB, EuCB",
        "SWE-Effi (Fan et al. 2025) scores an agent by the area under its resolve rate against a per-run budget, "
        "up to a cap, as a share of the cap: EuTB for tokens (cap 2M per run), EuCB for dollars (cap $1.00 per run). "
        "100% would be every run resolved at no cost; a run resolved above the cap adds nothing.",
    ),
    (
        "expensive failures",
        "The runs that did not succeed, costliest first: where a grant's savings should come from.",
    ),
    (
        "best swept grant",
        "When no swept grant satisfies the invariants: the one that keeps the most successful runs (the smallest "
        "such grant). Sections that read one grant use it then, and say so.",
    ),
    (
        "widen the grid",
        "Sweep grants past the top of the swept grid (--grants START:STOP:STEP): the report replays the headline "
        "group at larger grants to say which grant would satisfy the invariants.",
    ),
    (
        "recommended grant",
        "The smallest swept grant where every invariant holds: the analyst's (keep 95% of "
        "resolved runs by default) on a real corpus; inside the seed band on the bundled synthetic corpus.",
    ),
)


def section_grant_of(report: CalibrationReport, section: str) -> int | None:
    """The grant a single-grant section reads (``CalibrationReport.section_grants``), else the recommended one."""
    hit = report.section_grants.get(section)
    return hit[0] if hit is not None else report.recommended


def _word(report: CalibrationReport, group: str | None = None) -> str:
    fr = report.frontier
    if fr is None:
        return "resolved"
    try:
        return "finished" if fr.basis(group or headline_group(fr)) == "finished" else "resolved"
    except KeyError:
        return "resolved"


def frontier_table(report: CalibrationReport, group: str | None = None) -> pd.DataFrame:
    """The grant table of one group: key columns first, a row per round grant plus the focus grants."""
    fr = report.frontier
    assert fr is not None
    group = group or headline_group(fr)
    c = fr.curve(group, report.config.rules[0])
    span = int(c["grant"].max() - c["grant"].min())
    step = 20_000 if span <= 600_000 else 50_000
    focus = set(focus_grants(report))
    pick = next((p for p in report.picks if p.group == group), None)
    if pick is not None and pick.grant:
        focus.add(pick.grant)
    c = c[c["grant"].isin(focus) | (c["grant"] % step == 0)]
    holds = dict(zip(pick.grants, pick.holds, strict=True)) if pick is not None else {}
    word = _word(report, group)
    rows = []
    for r in c.to_dict("records"):
        mark = " ◀ recommended" if r["grant"] == report.recommended else ""
        rows.append(
            {
                "grant": f"{r['grant']:,}{mark}",
                f"{word} kept": f"{r['resolved_kept']} of {r['resolved']}",
                "kept %": _pct(r["resolved_kept_share"]),
                "95% interval": _ci(r["resolved_kept_low"], r["resolved_kept_high"]),
                "at risk": r["resolved_at_risk"],
                "lost": r["resolved_lost"],
                f"not {word}, cut": r["unresolved_cut"],
                "tokens saved": _tok(r["spend_saved_tokens"]),
                "USD saved": _usd(r["spend_saved_usd"]),
                "invariants hold": "yes" if holds.get(r["grant"]) else "no",
            }
        )
    return pd.DataFrame(rows)


def group_table(report: CalibrationReport) -> pd.DataFrame:
    """Per source, agent and model: the group's own recommended grant and what the section grant (the recommended
    grant, else the best swept one: ``section_grants['groups']``) does to it."""
    rows = []
    rec = section_grant_of(report, "groups")
    for by, fr in report.frontiers.items():
        invariants = SEED_SET if report.mode == "seed" else report.config.analyst
        picks = {
            p.group: p
            for p in recommendations(fr, invariants)
            if p.rules == report.config.rules[0] and p.context_length is None
        }
        for g in fr.groups:
            if g == ALL_GROUP:
                continue
            c = fr.curve(g, report.config.rules[0])
            at = c[c["grant"] == rec].iloc[0] if rec is not None and (c["grant"] == rec).any() else None
            p = picks.get(g)
            rows.append(
                {
                    "by": by,
                    "group": g,
                    "runs": int(c["runs"].iloc[0]),
                    "basis": c["basis"].iloc[0],
                    "succeeded": int(c["resolved"].iloc[0]),
                    "own grant": f"{p.grant:,}" if p is not None and p.grant else "none on grid",
                    f"kept at {rec:,}" if rec is not None else "kept": "—"
                    if at is None
                    else f"{at['resolved_kept']} ({_pct(at['resolved_kept_share'])})",
                    "95% interval": "—"
                    if at is None
                    else _ci(at["resolved_kept_low"], at["resolved_kept_high"]),
                    "USD saved": "—" if at is None else _usd(at["spend_saved_usd"]),
                }
            )
    return pd.DataFrame(rows)


def loss_table(report: CalibrationReport) -> pd.DataFrame:
    """The resolved runs the recommended grant loses: cause, stop turn, the decisions that cut them, and what the
    recording did after the cut (``workbench frontier --explain GRANT`` prints the same)."""
    cols = ["run", "cause", "stop turn", "evidence", "after the cut"]
    rows = [
        {
            "run": loss.run_id,
            "cause": loss.cause,
            "stop turn": loss.stop_turn,
            "evidence": " · ".join(loss.evidence),
            "after the cut": loss.after,
        }
        for loss in report.losses
    ]
    return pd.DataFrame(rows, columns=cols)


def outcome_table(report: CalibrationReport) -> pd.DataFrame:
    """Split by outcome: how many runs the headline grant keeps, and the grant that keeps 95% of each."""
    fr = report.frontier
    assert fr is not None
    group = headline_group(fr)
    rows_ = fr.rows if group == ALL_GROUP else fr.rows[fr.rows[fr.by].astype(str) == group]
    rows_ = rows_[(rows_["rules"] == report.config.rules[0]) & rows_["context_length"].isna()]
    word = _word(report)
    out = []
    for ok, name in ((True, word), (False, f"not {word}")):
        part = rows_[rows_["success"] == ok]
        if part.empty:
            continue
        kept = part.groupby("grant")["fate"].apply(lambda f: int((f == "kept").sum()))
        n = int(part.groupby("grant").size().iloc[0])
        enough = kept[kept >= 0.95 * n - 1e-9]
        rec = section_grant_of(report, "groups")
        k = int(kept.get(rec, 0)) if rec is not None else None
        share, lo, hi = share_interval(k, n) if k is not None else (math.nan, math.nan, math.nan)
        out.append(
            {
                "outcome": name,
                "runs": n,
                f"kept at {rec:,}" if rec is not None else "kept": "—"
                if k is None
                else f"{k} ({_pct(share)})",
                "95% interval": _ci(lo, hi),
                "grant keeping 95%": f"{int(enough.index[0]):,}" if len(enough) else "not on the grid",
            }
        )
    return pd.DataFrame(out)


def _relative(paths: list[str]) -> tuple[str, list[str]]:
    """The common folder of ``paths`` and each path relative to it."""
    if not paths:
        return "", []
    root = os.path.commonpath([os.path.abspath(p) for p in paths])
    if len(paths) == 1:
        root = os.path.dirname(root)
    rel = [os.path.relpath(os.path.abspath(p), root) for p in paths]
    shown = os.path.relpath(root) if not os.path.relpath(root).startswith("../../..") else root
    return shown, rel


def provenance_tables(report: CalibrationReport) -> dict[str, pd.DataFrame]:
    prov = report.provenance
    files = prov.to_frame()
    root, rel = _relative(files["path"].tolist())
    files = files.assign(path=rel)[["path", "runs", "size", "sha256"]]
    about = pd.DataFrame(
        [
            {"item": "workbench", "value": prov.version},
            {"item": "Python", "value": prov.python},
            {"item": "generated", "value": prov.generated_at or "—"},
            {"item": "command", "value": prov.command or "—"},
            {"item": "corpus root (files below are relative to it)", "value": root or "—"},
            {
                "item": "files / runs",
                "value": f"{len(files)} / {int(files['runs'].sum()) if len(files) else 0}",
            },
        ]
    )
    policies = []
    for p in prov.policies:
        policies.append({"rule set": p["rules"], "parameter": "grants swept", "value": p["grants"]})
        policies.append(
            {"rule set": p["rules"], "parameter": "context lengths", "value": p["context_lengths"]}
        )
        for k, v in p["parameters"].items():
            policies.append({"rule set": p["rules"], "parameter": k, "value": str(v)})
    return {"about": about, "files": files, "policies": pd.DataFrame(policies)}


def report_tables(report: CalibrationReport) -> dict[str, pd.DataFrame]:
    """The report's tables as DataFrames (what both renderings show)."""
    facts = report.facts
    runs = report.frontier.runs.set_index("run_id") if report.frontier is not None else None
    f = facts.assign(kind=facts["generator"].fillna("recorded"))
    if runs is not None:
        f = f.join(runs[["finished", "label", "recorded_usd"]], on="run_id")
    else:
        f = f.assign(finished=f["recorded_finished"], label=None, recorded_usd=math.nan)
    corpus = (
        f.assign(resolved=f["label"].eq("resolved"), labelled=f["label"].notna())
        .groupby(["source", "kind"], dropna=False)
        .agg(
            runs=("run_id", "count"),
            finished=("finished", "sum"),
            labelled=("labelled", "sum"),
            resolved=("resolved", "sum"),
            cut_by_a_limit=("recorded_cut", "sum"),
            median_turns=("recorded_turns", "median"),
            median_spent=("recorded_spent", "median"),
            recorded_usd=("recorded_usd", lambda x: x.sum(min_count=1)),
        )
        .reset_index()
    )
    corpus["recorded_usd"] = corpus["recorded_usd"].map(_usd)
    corpus = corpus.rename(columns={"cut_by_a_limit": "cut by a limit", "recorded_usd": "USD"})
    main = report.findings[0]
    inv_rows = []
    for inv in main.band.invariants:
        col = f"ok: {inv.name}"
        held = (
            main.band.table[main.band.table[col]]["grant"] if col in main.band.table else pd.Series(dtype=int)
        )
        inv_rows.append(
            {
                "invariant": inv.name,
                "statement": inv.statement,
                "why": inv.why,
                "holds for grants": f"{held.min():,} to {held.max():,}" if len(held) else "none swept",
                "provenance": inv.provenance,
            }
        )
    analyst_rows = []
    pick = next(
        (
            p
            for p in report.picks
            if report.frontier is not None and p.group == headline_group(report.frontier)
        ),
        None,
    )
    row = pick.row if pick is not None and pick.row is not None else None
    for name, statement in report.config.analyst.checks():
        held = "—" if row is None else ("yes" if name not in report.config.analyst.failures(row) else "no")
        analyst_rows.append(
            {"invariant": name, "statement": statement, "holds at the recommended grant": held}
        )
    tables = {
        "corpus": corpus,
        "invariants": pd.DataFrame(inv_rows),
        "analyst_invariants": pd.DataFrame(
            analyst_rows, columns=["invariant", "statement", "holds at the recommended grant"]
        ),
        "stop_mix": report.stop_mix,
        "fires": report.fires,
        "glossary": pd.DataFrame(GLOSSARY, columns=["term", "meaning"]),
        **provenance_tables(report),
    }
    tables.update(meter_tables(report))
    if report.frontier is not None:
        tables["sweep"] = frontier_table(report)
        tables["groups"] = group_table(report)
        tables["outcomes"] = outcome_table(report)
        tables["losses"] = loss_table(report)
    if report.efficiency is not None:
        tables["efficiency"] = report.efficiency.scores
        tables["expensive_failures"] = report.efficiency.failures
    if report.context is not None:
        ctx = report.context
        near = (
            report.recommended
            if report.recommended in set(ctx["grant"])
            else sorted(set(ctx["grant"]))[len(set(ctx["grant"])) // 2]
        )
        at = ctx[ctx["grant"] == near]
        tables["context"] = (
            at.assign(outcome=ending(at), context_length=at["context_length"].fillna(0).astype(int))
            .groupby(["context_length", "outcome"])
            .size()
            .unstack("outcome", fill_value=0)
            .reset_index()
            .assign(
                context_length=lambda d: d["context_length"].map(lambda c: "none" if c == 0 else f"{c:,}")
            )
            .rename(columns={"context_length": f"context length (runs at grant {near:,})"})
        )
    if report.context_fires is not None:
        cf = report.context_fires.copy()
        cf["context_length"] = cf["context_length"].map(lambda c: "none" if pd.isna(c) else f"{int(c):,}")
        tables["context_fires"] = cf
    est = report.estimator.to_frame() if report.estimator is not None else pd.DataFrame()
    for col in ("under_rate", "cal_under_rate"):
        if col in est:
            est[col] = est[col].map(_pct)
    tables["estimator"] = est.rename(
        columns={"under_rate": "under-counted", "cal_under_rate": "under-counted after calibration"}
    )
    return tables


def _own_limit(report: CalibrationReport, group: str) -> Any:
    """The answer in the agent's own unit for a group that is one source (or one agent of it)."""
    own = getattr(report, "own_limits", None) or {}
    return own.get(group, own.get(group.split(":", 1)[0]))


def meter_tables(report: CalibrationReport) -> dict[str, pd.DataFrame]:
    """Per source with an agent's own dollar limit: the token grant and dollar cap keeping the same share."""
    out = {}
    for source, own in (getattr(report, "own_limits", None) or {}).items():
        t = own.translation
        if t is None or t.empty:
            continue
        t = t.copy()
        t["cost_limit"] = t["cost_limit"].map(lambda v: f"${v:,.2f}")
        t["grant"] = t["grant"].map(lambda v: "none swept" if v is None or pd.isna(v) else f"{int(v):,}")
        for c in ("cap_kept_share", "grant_kept_share"):
            t[c] = t[c].map(_pct)
        t["grant_kept"] = t["grant_kept"].map(lambda v: "—" if v is None or pd.isna(v) else str(int(v)))
        out[f"meters_{source}"] = t.rename(
            columns={
                "cost_limit": f"{own.rules} cost_limit",
                "cap_kept": "kept (cap)",
                "cap_kept_share": "kept % (cap)",
                "grant": f"grant ({report.config.rules[0]})",
                "grant_kept": "kept (grant)",
                "grant_kept_share": "kept % (grant)",
                "lost_by_cap_only": "lost by the cap only",
                "lost_by_grant_only": "lost by the grant only",
                "lost_by_both": "lost by both",
            }
        )
    return out


def headlines(report: CalibrationReport) -> list[dict[str, Any]]:
    """One headline per group: the recommended grant, the share of resolved runs kept with its interval, and the
    tokens and dollars it saves (against the whole recorded spend)."""
    fr = report.frontier
    if fr is None:
        return []
    out = []
    for p in report.picks:
        word = "finished" if fr.basis(p.group) == "finished" else "resolved"
        c = fr.curve(p.group, p.rules)
        item: dict[str, Any] = {"group": p.group, "basis": fr.basis(p.group), "found": p.found, "why": p.why}
        if p.found and p.row is not None:
            r = p.row
            usd = (
                ""
                if math.isnan(r["spend_saved_usd"])
                else (
                    f" and {_usd(r['spend_saved_usd'])} of {_usd(r['recorded_usd'])} "
                    f"({r['spend_saved_usd'] / r['recorded_usd']:.1%})"
                )
            )
            item["text"] = (
                f"recommended grant {p.grant:,}: it keeps {r['resolved_kept']} of {r['resolved']} {word} runs "
                f"({_pct(r['resolved_kept_share'])}; 95% Wilson interval {_ci(r['resolved_kept_low'], r['resolved_kept_high'])}), "
                f"{r['resolved_at_risk']} at risk (a landing started; the recording ended inside its allowance) "
                f"and {r['resolved_lost']} lost; it saves {_tok(r['spend_saved_tokens'])} of "
                f"{_tok(r['recorded_tokens'])} cost-meter tokens ({r['spend_saved_tokens'] / max(1, r['recorded_tokens']):.1%}){usd}, "
                f"cutting {r['unresolved_cut']} of {r['unresolved']} runs that did not succeed."
            )
            if r["usd_runs"] < r["runs"]:
                item["text"] += (
                    f" Dollars cover the {r['usd_runs']} of {r['runs']} runs whose every call has a price."
                )
        else:
            why = p.why.rstrip()
            item["text"] = why if why.endswith((".", "!", "?")) else f"{why}."  # the next sentence follows it
            wide = report.widened.get(p.group)
            if wide is not None:
                # the answer first: what the grid lacks and what would give one; the grid's own detail after it
                asked = report.config.analyst.words if report.mode == "analyst" else "the invariants"
                item["text"] = f"no swept grant up to {wide.swept_top:,} satisfies {asked}; {wide.words}."
                item["flag"] = wide.grants_flag if wide.pick.found else ""
                item["detail"] = f"Within the swept grid: {why}" + ("" if why.endswith(".") else ".")
        item.setdefault("flag", "")
        item.setdefault("detail", "")
        own = _own_limit(report, p.group)
        item["own"] = own.text if own is not None else ""
        if (c["grant"] == 220_000).any() and not p.no_success:  # 0 of 0 kept says nothing
            s = c[c["grant"] == 220_000].iloc[0]
            item["seed"] = (
                f"At the seed's 220,000: {s['resolved_kept']} kept, {s['resolved_at_risk']} at risk, "
                f"{s['resolved_lost']} lost of {s['resolved']} {word} runs."
            )
        else:
            item["seed"] = ""
        out.append(item)
    return out


def _context(report: CalibrationReport, images: dict[str, str]) -> dict[str, Any]:
    tables = report_tables(report)
    bands = []
    for f in report.findings:
        bands.append(
            {
                "rules": f.rules,
                "found": f.band.found,
                "words": f.band.words,
                "recommended": f.recommended,
                "recommended_why": f.recommended_why,
                "coverage": f.coverage.words if f.coverage else "",
                "bindings": [b.words for b in f.band.bindings],
                "notes": list(f.band.notes),
            }
        )
    facts = report.facts
    skipped = ", ".join(f"{n} {k}" for k, n in report.skipped.items())
    corpus_words = (
        f"{len(facts)} runs (leaves) from {len(report.provenance.files)} files: "
        + ", ".join(f"{n} {s}" for s, n in facts["source"].value_counts().items())
        + (f"; left out: {skipped}" if skipped else "")
        + ". Synthetic runs are generated (traces/README.md); every other source is a recording."
        + _not_loaded_words(report.provenance)
    )
    est_words = (
        report.estimator.words
        if report.estimator is not None and hasattr(report.estimator, "words")
        else "No estimator study in this report."
    )
    rec = report.recommended
    return {
        "title": report.config.title,
        "notes": [n for n in report.notes if not n.startswith("invariant probe")],
        "probe_notes": [n for n in report.notes if n.startswith("invariant probe")],
        "provenance": report.provenance,
        "mode": report.mode,
        "recommended": f"{rec:,}" if rec else "none",
        "grant_used": {k: why for k, (_, why) in report.section_grants.items()},
        "grant_focus": f"grant {section_grant_of(report, 'losses'):,}"
        if section_grant_of(report, "losses") is not None
        else "no grant",
        "focus_words": _focus_words(report),
        # the heat map outlines the recommended grant's column only where it is on the context grid
        "heatmap_marked": report.context is not None
        and rec is not None
        and rec in set(report.context["grant"]),
        "word": _word(report),
        "analyst_words": report.config.analyst.words,
        "headlines": headlines(report),
        "meters": [
            {"source": k, "key": f"meters_{k}", "rules": v.rules}
            for k, v in (getattr(report, "own_limits", None) or {}).items()
            if f"meters_{k}" in tables
        ],
        "bands": bands,
        "corpus_words": corpus_words,
        "estimator_words": est_words,
        "interval": report.frontier.interval if report.frontier is not None else "",
        "efficiency_words": report.efficiency.words if report.efficiency is not None else "",
        "frontier_words": frontier_layout(report.frontier, rules=report.config.rules[0]).words
        if report.frontier is not None
        else "",
        # Markup: the tables are built (and their cells escaped) by html_table, not re-escaped by the template.
        "tables": {k: Markup(html_table(v, css_class=k)) for k, v in tables.items()},
        "md": {k: MarkdownText(md_table(v)) for k, v in tables.items()},
        "images": images,
        "timelines": [{"name": MarkdownText(k), "title": v} for k, v in report.timeline_titles.items()],
        "bills": bill_context(report.bills, raw=MarkdownText),
        "calibration": calibration_context(report.calibration, raw=MarkdownText),
    }


def _images(
    report: CalibrationReport, pngs: dict[str, bytes], drawn: dict[str, str] | None = None
) -> tuple[dict[str, str], dict[str, Markup]]:
    """Base64 PNGs for the other charts, inline SVG for the grant charts (``drawn``: their SVGs already drawn)."""
    drawn = drawn or {}
    svgs = {
        k: Markup(drawn[k] if k in drawn else svg_text(f))
        for k, f in report.figures.items()
        if k in GRANT_CHARTS
    }
    images = {k: png_base64(v) for k, v in pngs.items() if k not in svgs}
    return {**dict.fromkeys(DRAWN, ""), **images}, svgs


# The charts the templates name, "" where a report has none.
DRAWN = ("heatmap", "estimator", "survival", "frontier", "sweep")


def render_html(report: CalibrationReport) -> str:
    pngs = {k: png_bytes(f) for k, f in report.figures.items() if k not in GRANT_CHARTS}
    images, svgs = _images(report, pngs)
    return _env().get_template("report.html.j2").render(r={**_context(report, images), "svgs": svgs})


def render_markdown(report: CalibrationReport) -> str:
    images = {**dict.fromkeys(DRAWN, ""), **{k: k for k in report.figures}}
    return _env(markdown=True).get_template("report.md.j2").render(r=_context(report, images))


def write_report(
    report: CalibrationReport, out: str | os.PathLike[str], *, force: bool = False, workers: int | None = None
) -> Written:
    """Write ``report.html``, ``report.md``, one PNG per figure and ``manifest.json`` into the folder ``out``.

    The report is written whole into a fresh folder beside ``out`` and then swapped in, so a killed write leaves
    the previous report (or nothing), never a mix. ``out`` may be absent, an empty folder or a report the
    workbench wrote before (recognised by its manifest); anything else raises ``FileExistsError`` unless
    ``force``."""
    out = Path(out)
    why = refusal(out, force=force)
    if why:
        raise FileExistsError(errno.EEXIST, why, str(out))
    read = [f.path for f in report.provenance.files if inside(f.path, out)]
    if read:
        raise FileExistsError(errno.EEXIST, f"holds the input {read[0]}; it would be replaced", str(out))
    drawn = render(
        report.figures,
        {k: ("png", "svg") if k in GRANT_CHARTS else ("png",) for k in report.figures},
        workers=workers,
    )
    pngs = {k: drawn[k, "png"] for k in report.figures}
    images, svgs = _images(report, pngs, {k: drawn[k, "svg"] for k in report.figures if k in GRANT_CHARTS})
    context = _context(report, images)  # once: its tables read every sweep row
    html_text = _env().get_template("report.html.j2").render(r={**context, "svgs": svgs})
    md_images = {**dict.fromkeys(DRAWN, ""), **{k: k for k in pngs}}
    md_text = _env(markdown=True).get_template("report.md.j2").render(r={**context, "images": md_images})
    fresh = fresh_folder(out)
    try:
        files = [fresh / f"{name}.png" for name in pngs]
        for path, data in zip(files, pngs.values(), strict=True):
            path.write_bytes(data)
        (fresh / "report.html").write_text(html_text, encoding="utf-8")
        (fresh / "report.md").write_text(md_text, encoding="utf-8")
        files += [fresh / "report.html", fresh / "report.md"]
        (fresh / MANIFEST).write_bytes(
            manifest(files, title=report.config.title, command=report.provenance.command)
        )
        swap_in(fresh, out)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    return Written(out / "report.html", out / "report.md", tuple(out / f"{name}.png" for name in pngs))


def _focus_words(report: CalibrationReport) -> str:
    """Which grants the stop and fire tables show, and why each."""
    grid = report.config.grants
    parts = [f"{grid[0]:,} and {grid[-1]:,} (the grid's ends)"]
    if 220_000 in grid:
        parts.append("220,000 (the seed's grant)")
    if report.recommended:
        parts.append(f"{report.recommended:,} (the recommended grant)")
    f = report.findings[0] if report.findings else None
    if report.mode == "seed" and f is not None and f.band.found:
        parts.append("the seed band's edges")
    return ", ".join(parts)


def _not_loaded_words(prov: Provenance) -> str:
    """The grader files read as labels, and the entries under the given paths that were not loaded, counted by
    reason (each is listed below)."""
    out = ""
    if prov.labels_read:
        out += (
            f" {len(prov.labels_read)} grader results file(s) (SWE-bench reports) were read as outcome labels, "
            "not as traces; each is listed below."
        )
    if not prov.not_loaded:
        return out
    reasons = "; ".join(f"{n} {reason}" for reason, n in prov.not_loaded_by_reason().items())
    return out + (
        f" {len(prov.not_loaded)} file(s) under the given paths were not loaded ({reasons}); each is listed below."
    )
