"""The report's calibration section: every constant's row, its rule and its evidence chart, in HTML and Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.paths import bundled_traces
from workbench.report import ReportConfig, build_report, render_html, render_markdown, write_report
from workbench.report.calibration import calibration_context, figure_name

SYNTHETIC = bundled_traces() / "synthetic"


@pytest.fixture(scope="module")
def report():
    if not SYNTHETIC.is_dir():
        pytest.skip("traces/synthetic is absent")
    config = ReportConfig(grants=(200_000, 220_000, 240_000), context_lengths=(None,), estimate_study=False)
    return build_report([SYNTHETIC], config=config, command="test")


def test_section_holds_every_row(report) -> None:
    cal = report.calibration
    assert cal is not None and len(cal.rows) == 16
    html = render_html(report)
    md = render_markdown(report)
    assert "Every constant, recalibrated" in html and "## Every constant, recalibrated" in md
    for row in cal.rows:
        assert f"<h3>{row.name}</h3>" in html and f"### {row.name}" in md
        assert figure_name(row.name) in report.figures
        assert f"({figure_name(row.name)}.png)" in md
    assert html.index("Every constant, recalibrated") < html.index("Provenance</h2>")
    # the grant row is swept over the report's own grid
    assert set(cal.row("leaf grant").evidence["grant"]) == {200_000, 220_000, 240_000}


def test_section_written_with_its_charts(report, tmp_path: Path) -> None:
    written = write_report(report, tmp_path)
    names = {p.name for p in written.images}
    assert f"{figure_name('turn backstop')}.png" in names
    assert "data:image/png;base64," in written.html.read_text()


def test_no_calibration_no_section(report) -> None:
    assert calibration_context(None) == {"present": False}
