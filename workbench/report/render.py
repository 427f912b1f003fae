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

from workbench.format import md_code, md_inline
from workbench.outputs import MANIFEST, fresh_folder, inside, manifest, refusal, swap_in
from workbench.report.bill_section import bill_context
from workbench.report.build import CalibrationReport, focus_grants
from workbench.report.calibration import calibration_context
from workbench.report.figures import png_base64, png_bytes
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
        "md": {k: MarkdownText(md_table(v)) for k, v in tables.items()},
        "images": images,
        "timelines": [{"name": MarkdownText(k), "title": v} for k, v in report.timeline_titles.items()],
        "bills": bill_context(report.bills, raw=MarkdownText),
        "calibration": calibration_context(report.calibration, raw=MarkdownText),
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
    return _env(markdown=True).get_template("report.md.j2").render(r=_context(report, images))


def write_report(report: CalibrationReport, out: str | os.PathLike[str], *, force: bool = False) -> Written:
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
    pngs = {k: png_bytes(f) for k, f in report.figures.items()}
    images = {k: png_base64(v) for k, v in pngs.items()}
    for k in ("heatmap", "estimator", "survival"):
        images.setdefault(k, "")
    html_text = _env().get_template("report.html.j2").render(r=_context(report, images))
    md_images = {k: k for k in pngs} | {k: "" for k in ("heatmap", "estimator") if k not in pngs}
    md_text = _env(markdown=True).get_template("report.md.j2").render(r=_context(report, md_images))
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
