"""Each section renders itself (``render_section``): the page is its shell around the sections in ``SECTIONS``
order, so a section alone is exactly its slice of the page."""

from __future__ import annotations

import re

import pytest

from workbench.paths import bundled_traces
from workbench.report import ReportConfig, build_report, render_html, render_markdown, render_section
from workbench.report import render as render_module
from workbench.report.sections import SECTIONS

SYNTHETIC = bundled_traces() / "synthetic"


@pytest.fixture(scope="module")
def report():
    if not SYNTHETIC.is_dir():
        pytest.skip("traces/synthetic is absent")
    config = ReportConfig(grants=(200_000, 220_000, 240_000), context_lengths=(None, 32_768))
    return build_report([SYNTHETIC], config=config, command="test")


def _charts_out(html: str) -> str:
    # a chart inlined is per drawing (matplotlib names an SVG's clip paths anew, and a figure's first drawing can
    # differ from later ones): the page and a section alone each draw theirs (write_report draws each once)
    html = re.sub(r"<svg.*?</svg>", "<svg/>", html, flags=re.S)
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:image/png;base64,", html)


def test_the_markdown_page_is_its_sections_in_order(report) -> None:
    page = render_markdown(report)
    parts = [render_section(report, s.name, "md") for s in SECTIONS]
    head = f"# {report.config.title}\n\nworkbench {report.provenance.version}"
    assert page.startswith(head) and page.endswith("".join(parts))
    assert parts[0].startswith("## The answer") and parts[-1].startswith("## Provenance")
    assert all(parts)  # every section shows something on this corpus


def test_the_html_page_is_its_sections_in_order(report) -> None:
    page = render_html(report)
    parts = [render_section(report, s.name, "html") for s in SECTIONS]
    body = page[: page.rindex("</body>")]
    assert _charts_out(body).endswith(_charts_out("".join(parts)))
    assert body.count("<svg") == "".join(parts).count("<svg") == 4  # the grant charts
    assert parts[0].startswith('<h2 id="answer">') and parts[-1].startswith("<h2>Provenance</h2>")
    assert page.endswith("</body>\n</html>\n")


def test_a_section_alone_draws_its_own_charts_only(report, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[tuple[str, str]] = []
    names = {id(f): k for k, f in report.figures.items()}
    real = render_module.draw

    def counted(fig, kind):
        drawn.append((names[id(fig)], kind))
        return real(fig, kind)

    monkeypatch.setattr(render_module, "draw", counted)
    assert "data:image" not in render_section(report, "answer", "html") and drawn == []
    assert "data:image/png;base64," in render_section(report, "estimator", "html")
    assert drawn == [("estimator", "png")]
    drawn.clear()
    assert render_section(report, "context", "html").count("<svg") == 1 and drawn == [("heatmap", "svg")]
    drawn.clear()
    assert "![runs per stop reason heat map](heatmap.png)" in render_section(report, "context", "md")
    assert drawn == []  # Markdown names the PNG files write_report writes


def test_an_unknown_section_is_refused(report) -> None:
    with pytest.raises(KeyError, match="no section 'nope'"):
        render_section(report, "nope")
