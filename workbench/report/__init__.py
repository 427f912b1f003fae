"""Calibration reports: ``build_report(paths)`` → :class:`CalibrationReport`; ``write_report(report, out)`` writes
``report.html`` (self-contained), ``report.md`` and the PNGs; ``render_section(report, name, fmt)`` one section. In a
notebook: docs/report.md, "In a notebook".
"""

from typing import TYPE_CHECKING

from workbench._lazy import attach

if TYPE_CHECKING:  # imported on first use (workbench/_lazy.py)
    from workbench.report.build import (
        BandFinding,
        CalibrationReport,
        ReportConfig,
        build_report,
        load_leaves,
        report_leaves,
    )
    from workbench.report.render import (
        render_html,
        render_markdown,
        render_section,
        report_tables,
        write_report,
    )
    from workbench.report.sweeps import context_sweep, grant_sweep, policy_sweep

__getattr__, __dir__ = attach(__name__, __file__)

__all__ = ["BandFinding", "CalibrationReport", "ReportConfig", "build_report", "context_sweep",
           "grant_sweep", "load_leaves", "policy_sweep", "render_html", "render_markdown",
           "render_section", "report_leaves", "report_tables", "write_report"]  # fmt: skip
