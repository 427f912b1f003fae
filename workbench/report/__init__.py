"""Calibration reports: ``build_report(paths)`` → :class:`CalibrationReport`; ``write_report(report, out)``.

In a notebook::

    from workbench.report import ReportConfig, build_report, write_report
    rep = build_report(["traces/synthetic"], config=ReportConfig(grants=tuple(range(150_000, 300_001, 5_000))))
    rep                      # summary; rep.band() is the GrantBand, rep.survival the Kaplan-Meier fit
    rep.figures["sweep"]     # any chart, as a matplotlib Figure
    write_report(rep, "out") # out/report.html (self-contained), out/report.md, out/*.png
"""

from typing import TYPE_CHECKING

from workbench._lazy import attach

if TYPE_CHECKING:  # imported on first use (workbench/_lazy.py)
    from workbench.report.build import (
        BandFinding,
        CalibrationReport,
        ReportConfig,
        build_report,
        corpus_leaves,
        load_leaves,
    )
    from workbench.report.render import render_html, render_markdown, report_tables, write_report
    from workbench.report.sweeps import context_sweep, grant_sweep, policy_sweep

__getattr__, __dir__ = attach(__name__, __file__)

__all__ = [
    "BandFinding",
    "CalibrationReport",
    "ReportConfig",
    "build_report",
    "context_sweep",
    "corpus_leaves",
    "grant_sweep",
    "load_leaves",
    "policy_sweep",
    "render_html",
    "render_markdown",
    "report_tables",
    "write_report",
]
