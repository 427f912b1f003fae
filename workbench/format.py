"""How one value reads in a table, the same in the terminal, the report's HTML and its Markdown."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any


def cell(value: Any) -> str:
    """Integers with thousands separators, floats to three significant figures (whole numbers as integers),
    ``None``/NaN as ``—``, infinity as "not reached" (a quantile a survival curve never reaches)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return "not reached"
        if value.is_integer() and abs(value) >= 1:
            return f"{int(value):,}"
        return f"{value:,.3g}" if abs(value) < 10 else f"{value:,.0f}"
    return str(value)


# C0/C1 controls (ESC starts terminal escape sequences), DEL, and the Unicode bidi and line-separator marks that
# reorder or break what a terminal shows. Tab and newline are kept only where a caller asks for multi-line text.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b"}


def _escape_char(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, *, multiline: bool = False) -> str:
    """``text`` safe to print on a terminal or put in one line of a document: control characters (ANSI escapes,
    carriage returns, bidi marks) shown escaped, e.g. ``\\x1b[31m``; newlines and tabs kept if ``multiline``."""
    s = str(text)
    if multiline:
        return "\n".join(
            "\t".join(_UNSAFE.sub(_escape_char, part) for part in line.split("\t")) for line in s.split("\n")
        )
    return _UNSAFE.sub(_escape_char, s.replace("\n", "\\n").replace("\t", "\\t"))


def printable_lines(lines: Iterable[object]) -> str:
    """Several lines for the terminal, each made :func:`printable` on its own and joined by newlines: a newline
    inside one item (a run id, a path) is shown as ``\\n`` and cannot start a forged line of its own."""
    return "\n".join(printable(line) for line in lines)


# Every ASCII punctuation mark CommonMark gives a meaning to; a backslash before it makes it literal.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")


def md_inline(text: object) -> str:
    """``text`` as literal Markdown on one line: control characters and newlines shown escaped (so a run id
    cannot open a heading or leave a table row), Markdown punctuation backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", printable(text))


def md_code(text: object) -> str:
    """``text`` as an inline code span, fenced with more backticks than it contains."""
    s = printable(text)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def usd(value: float | int | None) -> str:
    """Dollars as every text output prints them: ``$1,234.56`` (a minus before the sign: ``-$0.50``); ``—`` when
    unknown (None or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    v = float(value)
    if abs(v) < 0.005:
        v = 0.0  # no "-$0.00"
    return f"-${-v:,.2f}" if v < 0 else f"${v:,.2f}"
