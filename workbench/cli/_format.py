"""Plain-text tables for the terminal (numbers right-aligned with thousands separators, ``—`` for unknown)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from workbench.cli import errors
from workbench.cli.errors import printable
from workbench.format import cell
from workbench.outputs import csv_text, replacing, same_path


def table(
    rows: Sequence[dict[str, Any]], columns: Sequence[str], *, max_width: int = 44, full: Sequence[str] = ()
) -> str:
    """A fixed-width table of ``columns`` over ``rows``; long text is cut to ``max_width`` with ``…`` except in
    the ``full`` columns (paths a user copies); control characters are shown escaped."""
    cells = [
        [printable(cell(r.get(c))) if c in full else _cut(cell(r.get(c)), max_width) for c in columns]
        for r in rows
    ]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    numeric = [all(isinstance(r.get(c), int | float) or r.get(c) is None for r in rows) for c in columns]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    out = [line(list(columns)), line(["-" * w for w in widths])]
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def with_kept(rec: dict[str, Any]) -> dict[str, Any]:
    """A frontier curve's row with its ``kept %`` and ``95% CI`` cells (``—`` where no run succeeded)."""
    rec["kept %"] = f"{rec['resolved_kept_share']:.1%}" if rec["resolved"] else "—"
    rec["95% CI"] = (
        f"{rec['resolved_kept_low']:.1%}-{rec['resolved_kept_high']:.1%}" if rec["resolved"] else "—"
    )
    return rec


def print_jsonl(records: Iterable[dict[str, Any]], picks: Iterable[Any]) -> None:
    """A frontier's ``--json``: one line per record, then one ``{"recommendation": ...}`` line per pick."""
    for rec in records:
        print(json.dumps(rec))
    for pick in picks:
        print(json.dumps({"recommendation": pick.to_dict()}))


def _cut(text: str, width: int) -> str:
    text = printable(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def check_table_out(
    out: Path,
    inputs: Iterable[str | Path],
    suffixes: tuple[str, ...] = (".csv", ".parquet"),
    flag: str = "--out",
) -> None:
    """Refuse (a usage error, before any work) a table of another kind, a folder, or one of ``inputs``."""
    what, kinds = f"{flag} {out}", " or ".join(suffixes)
    if out.suffix.lower() not in suffixes:
        raise errors.UsageError(what, f"must end in {kinds}")
    if out.is_dir():
        raise errors.UsageError(what, f"is a folder; give a file name ending in {kinds}")
    if any(same_path(p, out) for p in inputs):
        raise errors.UsageError(what, "is one of the inputs; it would be written over")


def write_table(frame: Any, out: Path) -> None:
    """``frame`` as ``out`` (a .csv or .parquet), atomically: a killed write leaves the previous table."""
    with replacing(out) as tmp:
        if out.suffix.lower() == ".csv":
            tmp.write_text(csv_text(frame), encoding="utf-8")
        else:
            frame.to_parquet(tmp, index=False)
