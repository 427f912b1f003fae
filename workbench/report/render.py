"""Render a CalibrationReport to a self-contained ``report.html`` (charts inlined as base64 PNG), a
``report.md`` beside its PNGs, through jinja2 templates shipped in the package."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from workbench.report.build import CalibrationReport, focus_grants
from workbench.report.figures import png_base64, png_bytes
from workbench.report.provenance import Provenance
from workbench.report.tables import html_table, md_table


@dataclass(frozen=True)
class Written:
    """What ``write_report`` wrote."""

    html: Path
    markdown: Path
    images: tuple[Path, ...]


def _env() -> Environment:
    return Environment(
        loader=PackageLoader("workbench.report", "templates"),
        autoescape=lambda name: bool(name) and name.endswith(".html.j2"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.0%}"


def report_tables(report: CalibrationReport) -> dict[str, pd.DataFrame]:
    """The report's tables as DataFrames (what both renderings show)."""
    facts = report.facts
    corpus = (
        facts.assign(kind=facts["generator"].fillna("recorded"))
        .groupby(["source", "kind"], dropna=False)
        .agg(
            runs=("run_id", "count"),
            finished=("recorded_finished", "sum"),
            cut_by_a_limit=("recorded_cut", "sum"),
            median_turns=("recorded_turns", "median"),
            median_prompt=("median_prompt", "median"),
            median_spent=("recorded_spent", "median"),
        )
        .reset_index()
    )
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
    focus = focus_grants(report)
    t = main.band.table
    sweep = t[t["grant"].isin(focus) | (t["grant"] % 10_000 == 0)].copy()
    sweep["share_finished"] = sweep["share_finished"].map(_pct)
    keep = [
        "grant",
        "finished_runs",
        "finished_inside",
        "share_finished",
        "landed_mid_work",
        "censored",
        "spend",
        "spend_saved",
        "cut_turns",
        "cut_tool_calls",
        "cut_mutations",
        "all_hold",
    ]
    sweep = sweep[[c for c in keep if c in sweep.columns]]
    tables = {
        "corpus": corpus,
        "invariants": pd.DataFrame(inv_rows),
        "sweep": sweep,
        "stop_mix": report.stop_mix,
        "fires": report.fires,
        "files": report.provenance.to_frame(),
        "policies": pd.DataFrame(
            [
                {k: (str(v) if k == "parameters" else v) for k, v in p.items()}
                for p in report.provenance.policies
            ]
        ),
    }
    if report.context is not None:
        ctx = report.context
        reason = ctx["stop_reason"].where(~ctx["censored"].astype(bool), "censored")
        tables["context"] = (
            ctx.assign(outcome=reason, context_length=ctx["context_length"].fillna(0).astype(int))
            .groupby(["context_length", "outcome"])
            .size()
            .unstack("outcome", fill_value=0)
            .reset_index()
            .assign(
                context_length=lambda d: d["context_length"].map(lambda c: "none" if c == 0 else f"{c:,}")
            )
        )
    if report.context_fires is not None:
        cf = report.context_fires.copy()
        cf["context_length"] = cf["context_length"].map(lambda c: "none" if pd.isna(c) else f"{int(c):,}")
        tables["context_fires"] = cf
    surv_rows = []
    for label, s in report.survivals.items():
        cov = s.coverage(report.config.coverage_share)
        surv_rows.append(
            {
                "runs": label,
                "n": s.runs,
                "censored": s.censored,
                "grant covering": cov.grant,
                "CI low": cov.lower,
                "CI high": cov.upper,
            }
        )
    tables["survival"] = pd.DataFrame(surv_rows)
    est = report.estimator.to_frame() if report.estimator is not None else pd.DataFrame()
    for col in ("under_rate", "cal_under_rate"):
        if col in est:
            est[col] = est[col].map(_pct)
    tables["estimator"] = est
    return tables


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
    surv = report.survival
    label = next(iter(report.survivals), "honest runs")
    survival_words = (
        f"{label.capitalize()}: {surv.coverage(report.config.coverage_share).words}."
        if surv
        else "No honest run finished."
    )
    if surv is not None and surv.censored:
        survival_words += (
            f" {surv.censored} run(s) were cut by a limit in their recording and count as censored."
        )
    est_words = (
        report.estimator.words
        if report.estimator is not None and hasattr(report.estimator, "words")
        else "No estimator study in this report."
    )
    return {
        "title": report.config.title,
        "notes": list(report.notes),
        "provenance": report.provenance,
        "bands": bands,
        "corpus_words": corpus_words,
        "survival_words": survival_words,
        "estimator_words": est_words,
        # Markup: the tables are built (and their cells escaped) by html_table, not re-escaped by the template.
        "tables": {k: Markup(html_table(v)) for k, v in tables.items()},
        "md": {k: md_table(v) for k, v in tables.items()},
        "images": images,
        "timelines": [{"name": k, "title": v} for k, v in report.timeline_titles.items()],
    }


def render_html(report: CalibrationReport) -> str:
    images = {k: png_base64(png_bytes(f)) for k, f in report.figures.items()}
    images.setdefault("heatmap", "")
    images.setdefault("estimator", "")
    images.setdefault("survival", "")
    return _env().get_template("report.html.j2").render(r=_context(report, images))


def render_markdown(report: CalibrationReport) -> str:
    images = {k: k for k in report.figures}
    images.setdefault("heatmap", "")
    images.setdefault("estimator", "")
    return _env().get_template("report.md.j2").render(r=_context(report, images))


def write_report(report: CalibrationReport, out: str | os.PathLike[str]) -> Written:
    """Write ``report.html``, ``report.md`` and one PNG per figure into ``out`` (created if needed)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    pngs = {k: png_bytes(f) for k, f in report.figures.items()}
    paths = []
    for name, data in pngs.items():
        p = out / f"{name}.png"
        p.write_bytes(data)
        paths.append(p)
    images = {k: png_base64(v) for k, v in pngs.items()}
    for k in ("heatmap", "estimator", "survival"):
        images.setdefault(k, "")
    html_path = out / "report.html"
    html_path.write_text(
        _env().get_template("report.html.j2").render(r=_context(report, images)), encoding="utf-8"
    )
    md_images = {k: k for k in pngs} | {k: "" for k in ("heatmap", "estimator") if k not in pngs}
    md_path = out / "report.md"
    md_path.write_text(
        _env().get_template("report.md.j2").render(r=_context(report, md_images)), encoding="utf-8"
    )
    return Written(html_path, md_path, tuple(paths))


def _not_loaded_words(prov: Provenance) -> str:
    """The entries under the given paths that were not loaded, counted by reason (each is listed below)."""
    if not prov.not_loaded:
        return ""
    reasons = "; ".join(f"{n} {reason}" for reason, n in prov.not_loaded_by_reason().items())
    return f" {len(prov.not_loaded)} file(s) under the given paths were not loaded ({reasons}); each is listed below."
