"""Render a CalibrationReport section by section (``render_section``: one section's HTML or Markdown, from its
``view`` and templates ``templates/sections/<name>.{html,md}.j2``) into the page shell ``report.{html,md}.j2``: a
self-contained ``report.html`` (charts inlined: SVG for the grant charts, base64 PNG for the rest) and a
``report.md`` beside its PNGs."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from workbench.format import md_code, md_inline
from workbench.outputs import MANIFEST, fresh_folder, inside, manifest, refusal, swap_in
from workbench.report.context import CalibrationReport
from workbench.report.figures import GRANT_CHARTS, Kind, draw, png_base64, render
from workbench.report.sections import SECTIONS
from workbench.report.tables import MarkdownText, html_table, md_table
from workbench.report.views import page

Format = Literal["html", "md"]


@dataclass(frozen=True)
class Written:
    """What ``write_report`` wrote."""

    html: Path
    markdown: Path
    images: tuple[Path, ...]


def _md_finalize(value: Any) -> Any:
    # Every value the Markdown template prints is literal text (run ids, sources, notes): escaped, so a newline
    # or a '#' from a trace cannot open a heading or end a table row. Tables arrive as MarkdownText.
    if isinstance(value, MarkdownText):
        return value
    return md_inline(value)


@cache
def _env(fmt: Format) -> Environment:
    env = Environment(
        loader=PackageLoader("workbench.report", "templates"),
        autoescape=fmt == "html",
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_md_finalize if fmt == "md" else None,
    )
    env.filters["md_code"] = lambda v: MarkdownText(md_code(v))
    return env


class _Drawn(dict[str, Any]):
    """Charts drawn when a template first reads one, so a section alone draws its own only."""

    def __init__(self, charts: dict[str, Callable[[], Any]]) -> None:
        super().__init__()
        self.charts = charts

    def __missing__(self, name: str) -> Any:
        self[name] = got = self.charts[name]()  # KeyError: no such chart (``is defined`` is false)
        return got


def _charts(
    report: CalibrationReport, fmt: Format, drawn: Mapping[tuple[str, Kind], Any] | None = None
) -> dict[str, Any]:
    """``images`` and ``svgs`` as the templates read them: in Markdown each chart's PNG file name; in HTML the grant
    charts as inline SVG and the rest as base64 PNG, from ``drawn`` (``write_report`` draws them all at once) or
    drawn here when read."""
    figures = report.figures
    if fmt == "md":
        return {"images": {k: k for k in figures}, "svgs": {}}

    def chart(name: str, kind: Kind) -> Any:
        got: Any = drawn[name, kind] if drawn is not None else draw(figures[name], kind)
        return png_base64(got) if kind == "png" else Markup(got)

    return {
        "images": _Drawn({k: partial(chart, k, "png") for k in figures if k not in GRANT_CHARTS}),
        "svgs": _Drawn({k: partial(chart, k, "svg") for k in figures if k in GRANT_CHARTS}),
    }


def _fragment(
    report: CalibrationReport, name: str, view: dict[str, Any], fmt: Format, charts: dict[str, Any]
) -> str:
    r = {**page(report), **view, **charts}
    tables: dict[str, pd.DataFrame] = r.pop("tables", {})
    if fmt == "html":  # Markup: the tables are built (and their cells escaped) by html_table, not re-escaped
        r["tables"] = {k: Markup(html_table(v, css_class=k)) for k, v in tables.items()}
    else:
        r["md"] = {k: MarkdownText(md_table(v)) for k, v in tables.items()}
    return _env(fmt).get_template(f"sections/{name}.{fmt}.j2").render(r=r)


def render_section(report: CalibrationReport, name: str, fmt: Format = "html") -> str:
    """One section (``SECTIONS``' names) as the page shows it, its charts drawn here: in a notebook,
    ``Markdown(render_section(rep, "answer", "md"))``."""
    section = next((s for s in SECTIONS if s.name == name), None)
    if section is None:
        raise KeyError(f"no section {name!r} (sections: {', '.join(s.name for s in SECTIONS)})")
    return _fragment(report, name, section.view(report), fmt, _charts(report, fmt))


def _page(
    report: CalibrationReport, views: dict[str, dict[str, Any]], fmt: Format, charts: dict[str, Any]
) -> str:
    mark = Markup if fmt == "html" else MarkdownText
    parts = [mark(_fragment(report, s.name, views[s.name], fmt, charts)) for s in SECTIONS]
    return _env(fmt).get_template(f"report.{fmt}.j2").render(r=page(report), sections=parts)


def _views(report: CalibrationReport) -> dict[str, dict[str, Any]]:
    return {s.name: s.view(report) for s in SECTIONS}


def report_tables(report: CalibrationReport) -> dict[str, pd.DataFrame]:
    """The report's tables as DataFrames (what both renderings show), from every section's view."""
    return {k: v for view in _views(report).values() for k, v in view.get("tables", {}).items()}


def render_html(report: CalibrationReport) -> str:
    return _page(report, _views(report), "html", _charts(report, "html"))


def render_markdown(report: CalibrationReport) -> str:
    return _page(report, _views(report), "md", _charts(report, "md"))


def write_report(
    report: CalibrationReport, out: str | os.PathLike[str], *, force: bool = False, workers: int | None = None
) -> Written:
    """Write ``report.html``, ``report.md``, one PNG per figure and ``manifest.json`` into the folder ``out``.

    The report is written whole into a fresh folder beside ``out`` and then swapped in, so a killed write leaves
    the previous report (or nothing), never a mix. ``out`` may be absent, an empty folder or a report the
    workbench wrote before (recognised by its manifest); else ``FileExistsError``, unless ``force``."""
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
    views = _views(report)  # once: their tables read every sweep row
    html_text = _page(report, views, "html", _charts(report, "html", drawn))
    md_text = _page(report, views, "md", _charts(report, "md"))
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
