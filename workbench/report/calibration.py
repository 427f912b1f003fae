"""The report's calibration section: every constant's row (``workbench.analysis.calibration``) as a table, and one
evidence chart per constant. Kept in its own module and templates (``sections/calibration.html.j2``, ``.md.j2``)
so the rest of the report can change around it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from markupsafe import Markup
from matplotlib.figure import Figure

from workbench.report.tables import MarkdownText, html_table, md_table

if TYPE_CHECKING:
    from workbench.analysis.calibration import Calibration

FIGURE_PREFIX = "calibration-"
TABLE_COLUMNS = ["constant", "seed", "in_use", "unit", "status", "recommended", "band_low", "band_high"]
TABLE_COLUMNS += ["extrapolated", "runs", "calls"]


def figure_name(constant: str) -> str:
    return FIGURE_PREFIX + re.sub(r"[^a-z0-9]+", "-", constant.lower()).strip("-")


def calibration_figures(cal: Calibration) -> dict[str, Figure]:
    """One chart per constant, keyed ``calibration-<constant>`` (the report writes each as a PNG)."""
    from workbench.charts.calibration import constant_chart

    return {figure_name(r.name): constant_chart(r) for r in cal.rows}


def calibration_context(cal: Calibration | None) -> dict[str, Any]:
    """What the templates read: ``present``, the summary ``words``, the table (HTML and Markdown) and per row its
    words, effect, rule, provenance, notes and figure name (the table and the names as ``MarkdownText``: not
    escaped again)."""
    if cal is None:
        return {"present": False}
    frame = cal.to_frame()[TABLE_COLUMNS]
    rows = [
        {
            "name": r.name,
            "home": r.home,
            "provenance": r.provenance,
            "recommendation": r.recommendation_words,
            "effect": r.effect,
            "rule": r.rule,
            "evidence": f"{r.runs:,} runs, {r.calls:,} calls",
            "notes": [*(f"flag: {f}" for f in r.flags), *r.notes],  # a flag first: never lost among the notes
            "figure": MarkdownText(figure_name(r.name)),
        }
        for r in cal.rows
    ]
    return {
        "present": True,
        "words": f"Under {cal.policy_label}: {cal.corpus}.",
        "notes": list(cal.notes[1:]),
        "table": Markup(html_table(frame)),  # cells escaped by html_table
        "table_md": MarkdownText(md_table(frame)),
        "rows": rows,
    }
