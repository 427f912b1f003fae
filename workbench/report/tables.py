"""Tables for the report: one DataFrame rendered to HTML and to Markdown with the same number formatting."""

from __future__ import annotations

import html

import pandas as pd

from workbench.format import cell, md_inline


def _cells(frame: pd.DataFrame) -> list[list[str]]:
    return [
        [cell(v.item() if hasattr(v, "item") else v) for v in row] for row in frame.itertuples(index=False)
    ]


def _numeric(frame: pd.DataFrame) -> list[bool]:
    return [
        pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
        for c in frame.columns
    ]


def html_table(frame: pd.DataFrame, css_class: str = "") -> str:
    num = _numeric(frame)
    head = "".join(
        f"<th class='{'' if n else 'l'}'>{html.escape(str(c))}</th>"
        for c, n in zip(frame.columns, num, strict=True)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='{'' if n else 'l'}'>{html.escape(v)}</td>" for v, n in zip(r, num, strict=True)
        )
        + "</tr>"
        for r in _cells(frame)
    )
    cls = f" class='{html.escape(css_class)}'" if css_class else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def md_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "_(none)_"
    num = _numeric(frame)
    esc = [md_inline(c) for c in frame.columns]
    lines = ["| " + " | ".join(esc) + " |", "| " + " | ".join("---:" if n else "---" for n in num) + " |"]
    # every cell literal and on one line: a newline or a | in a run id cannot end the row
    lines += ["| " + " | ".join(md_inline(v) for v in r) + " |" for r in _cells(frame)]
    return "\n".join(lines)
