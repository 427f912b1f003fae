"""Tables for the report: one DataFrame rendered to HTML and to Markdown with the same number formatting."""

from __future__ import annotations

import html
import re

import pandas as pd

from workbench.format import cell, md_inline


class MarkdownText(str):
    """Markdown the report built itself (a table whose cells are already escaped): not escaped again."""


def _cells(frame: pd.DataFrame) -> list[list[str]]:
    return [
        [cell(v.item() if hasattr(v, "item") else v) for v in row] for row in frame.itertuples(index=False)
    ]


# A number already written as text: money (``$1,234.56``, ``-$0.50``), a count (``1,234``, ``17.11M``), a share
# (``+1.5%``); an interval of two (``27.0%–47.4%``) or a count with its share (``13 (68.4%)``).
_NUMBER = r"[+\-\u2212]?\$?\d[\d,]*(\.\d+)?(%|[kMB])?"
_NUMBER_TEXT = re.compile(rf"{_NUMBER}(\s?[\u2013-]\s?{_NUMBER})?( \(({_NUMBER}|\u2014)\))?")
_MISSING = ("", "\u2014")  # "—": unknown


def _numeric_text(column: pd.Series) -> bool:
    """Whether a text column holds only numbers written as text (and unknowns), at least one of them."""
    if not (pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)):
        return False
    cells = [str(v).strip() for v in column if isinstance(v, str)]
    if len(cells) != column.notna().sum():
        return False  # a non-text object among them
    shown = [c for c in cells if c not in _MISSING]
    return bool(shown) and all(_NUMBER_TEXT.fullmatch(c) for c in shown)


def _numeric(frame: pd.DataFrame) -> list[bool]:
    """Per column, whether it aligns right: numbers, and numbers already formatted as text (money, shares)."""
    return [
        (pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]))
        or _numeric_text(frame[c])
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
