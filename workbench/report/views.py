"""What each section's templates read (``Section.view``, workbench.report.sections): its tables as DataFrames and
its words, from the assembled ``CalibrationReport``; ``page`` is what every section's templates share."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.analysis.frontier import ALL_GROUP, share_interval
from workbench.analysis.recommendation import recommendations
from workbench.analysis.targets import SEED_SET
from workbench.charts.frontier import frontier_layout
from workbench.report.bill_section import bill_context
from workbench.report.calibration import calibration_context
from workbench.report.context import _focus, ending, headline_group
from workbench.report.glossary import GLOSSARY
from workbench.report.provenance import Provenance
from workbench.report.tables import MarkdownText

if TYPE_CHECKING:
    from workbench.report.context import CalibrationReport


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
    band = report.findings[0].band if report.mode == "seed" else None
    focus = set(_focus(report.config.grants, report.recommended, band))  # the stop tables' grants
    pick = next((p for p in report.picks if p.group == group), None)
    if pick is not None and pick.grant:
        focus.add(pick.grant)
    c = c[c["grant"].isin(focus) | (c["grant"] % step == 0)]
    holds = dict(zip(pick.grants, pick.holds, strict=True)) if pick is not None else {}
    word = _word(report, group)
    rows = [
        {
            "grant": f"{r['grant']:,}" + (" ◀ recommended" if r["grant"] == report.recommended else ""),
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
        for r in c.to_dict("records")
    ]
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


def meter_tables(report: CalibrationReport) -> dict[str, pd.DataFrame]:
    """Per source with an agent's own dollar limit: the token grant and dollar cap keeping the same share."""
    out = {}
    for source, own in report.own_limits.items():
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
        # a group that is one source (or one agent of it): the answer in the agent's own unit
        own = report.own_limits.get(p.group, report.own_limits.get(p.group.split(":", 1)[0]))
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


def page(report: CalibrationReport) -> dict[str, Any]:
    """What every section's templates (and the page's) may read."""
    rec = report.recommended
    return {
        "title": report.config.title,
        "provenance": report.provenance,
        "mode": report.mode,
        "recommended": f"{rec:,}" if rec else "none",
        "grant_used": {k: why for k, (_, why) in report.section_grants.items()},
        "word": _word(report),
        "bands": report.findings,
        "notes": [n for n in report.notes if not n.startswith("invariant probe")],
        "probe_notes": [n for n in report.notes if n.startswith("invariant probe")],
    }


def answer(report: CalibrationReport) -> dict[str, Any]:
    return {"analyst_words": report.config.analyst.words, "headlines": headlines(report)}


def reading(report: CalibrationReport) -> dict[str, Any]:
    return {
        "interval": report.frontier.interval if report.frontier is not None else "",
        "tables": {"glossary": pd.DataFrame(GLOSSARY, columns=["term", "meaning"])},
    }


def grant_charts(report: CalibrationReport) -> dict[str, Any]:
    tables = meter_tables(report)
    meters = [
        {"source": k, "key": f"meters_{k}", "rules": v.rules}
        for k, v in report.own_limits.items()
        if f"meters_{k}" in tables
    ]
    if report.frontier is None:
        return {"tables": tables, "meters": meters}
    tables.update(sweep=frontier_table(report), groups=group_table(report), outcomes=outcome_table(report))
    words = frontier_layout(report.frontier, rules=report.config.rules[0]).words
    return {"tables": tables, "meters": meters, "frontier_words": words}


def losses(report: CalibrationReport) -> dict[str, Any]:
    """The resolved runs the section grant loses: cause, stop turn, the decisions that cut them, and what the
    recording did after the cut (``workbench frontier --explain GRANT`` prints the same)."""
    at = section_grant_of(report, "losses")
    cols = ["run", "cause", "stop turn", "evidence", "after the cut"]
    rows = [(x.run_id, x.cause, x.stop_turn, " · ".join(x.evidence), x.after) for x in report.losses]
    return {
        "grant_focus": f"grant {at:,}" if at is not None else "no grant",
        "tables": {"losses": pd.DataFrame(rows, columns=cols)} if report.frontier is not None else {},
    }


def efficiency(report: CalibrationReport) -> dict[str, Any]:
    eff = report.efficiency
    tables = {} if eff is None else {"efficiency": eff.scores, "expensive_failures": eff.failures}
    return {"efficiency_words": eff.words if eff is not None else "", "tables": tables}


def invariants(report: CalibrationReport) -> dict[str, Any]:
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
    fr = report.frontier
    pick = next((p for p in report.picks if fr is not None and p.group == headline_group(fr)), None)
    row = pick.row if pick is not None and pick.row is not None else None
    analyst = report.config.analyst
    analyst_rows = [
        (name, statement, "—" if row is None else ("yes" if name not in analyst.failures(row) else "no"))
        for name, statement in analyst.checks()
    ]
    columns = ["invariant", "statement", "holds at the recommended grant"]
    tables = {
        "invariants": pd.DataFrame(inv_rows),
        "analyst_invariants": pd.DataFrame(analyst_rows, columns=columns),
    }
    return {"tables": tables}


def corpus(report: CalibrationReport) -> dict[str, Any]:
    facts = report.facts
    runs = report.frontier.runs.set_index("run_id") if report.frontier is not None else None
    f = facts.assign(kind=facts["generator"].fillna("recorded"))
    if runs is not None:
        f = f.join(runs[["finished", "label", "recorded_usd"]], on="run_id")
    else:
        f = f.assign(finished=f["recorded_finished"], label=None, recorded_usd=math.nan)
    table = (
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
    table["recorded_usd"] = table["recorded_usd"].map(_usd)
    skipped = ", ".join(f"{n} {k}" for k, n in report.skipped.items())
    words = (
        f"{len(facts)} runs (leaves) from {len(report.provenance.files)} files: "
        + ", ".join(f"{n} {s}" for s, n in facts["source"].value_counts().items())
        + (f"; left out: {skipped}" if skipped else "")
        + ". Synthetic runs are generated (traces/README.md); every other source is a recording."
        + _not_loaded_words(report.provenance)
    )
    renamed = table.rename(columns={"cut_by_a_limit": "cut by a limit", "recorded_usd": "USD"})
    return {"corpus_words": words, "tables": {"corpus": renamed}}


def stops(report: CalibrationReport) -> dict[str, Any]:
    return {
        "focus_words": _focus_words(report),
        "tables": {"stop_mix": report.stop_mix, "fires": report.fires},
    }


def context(report: CalibrationReport) -> dict[str, Any]:
    ctx, rec = report.context, report.recommended
    if ctx is None:
        return {}
    grid = set(ctx["grant"])
    near = rec if rec in grid else sorted(grid)[len(grid) // 2]
    at = ctx[ctx["grant"] == near]
    tables = {
        "context": at.assign(outcome=ending(at), context_length=at["context_length"].fillna(0).astype(int))
        .groupby(["context_length", "outcome"])
        .size()
        .unstack("outcome", fill_value=0)
        .reset_index()
        .assign(context_length=lambda d: d["context_length"].map(lambda c: "none" if c == 0 else f"{c:,}"))
        .rename(columns={"context_length": f"context length (runs at grant {near:,})"})
    }
    if report.context_fires is not None:
        cf = report.context_fires.copy()
        cf["context_length"] = cf["context_length"].map(lambda c: "none" if pd.isna(c) else f"{int(c):,}")
        tables["context_fires"] = cf
    # the heat map outlines the recommended grant's column only where it is on the context grid
    return {"heatmap_marked": rec is not None and rec in grid, "tables": tables}


def estimator(report: CalibrationReport) -> dict[str, Any]:
    found = report.estimator
    est = found.to_frame() if found is not None else pd.DataFrame()
    for col in ("under_rate", "cal_under_rate"):
        if col in est:
            est[col] = est[col].map(_pct)
    renamed = est.rename(
        columns={"under_rate": "under-counted", "cal_under_rate": "under-counted after calibration"}
    )
    words = (
        found.words if found is not None and hasattr(found, "words") else "No estimator study in this report."
    )
    return {"estimator_words": words, "tables": {"estimator": renamed}}


def timelines(report: CalibrationReport) -> dict[str, Any]:
    return {"timelines": [{"name": MarkdownText(k), "title": v} for k, v in report.timeline_titles.items()]}


def bills(report: CalibrationReport) -> dict[str, Any]:
    return {"bills": bill_context(report.bills)}


def calibration(report: CalibrationReport) -> dict[str, Any]:
    return {"calibration": calibration_context(report.calibration)}


def provenance(report: CalibrationReport) -> dict[str, Any]:
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
    return {"tables": {"about": about, "files": files, "policies": pd.DataFrame(policies)}}
