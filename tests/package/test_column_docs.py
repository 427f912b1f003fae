"""Every frame's docs table is generated from its column spec: a column cannot change without its documentation.

To regenerate a table: ``workbench.trace.columns.with_table(text, key, spec)`` over the page's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.analysis import frontier, limit_frontier
from workbench.analysis.frames import FACTS
from workbench.replay.columns import SWEEP_COLUMNS
from workbench.trace.columns import FRAMES, Column, docs_block, markdown

ROOT = Path(__file__).resolve().parents[2]
TABLES: list[tuple[str, str, tuple[Column, ...]]] = [
    *(("trace-format.md", key, spec) for key, spec in FRAMES.items()),
    ("frames.md", "sweep", SWEEP_COLUMNS),
    ("frames.md", "run_facts", FACTS),
    ("frames.md", "frontier", frontier.TABLE),
    ("frames.md", "frontier_runs", frontier.LEDGER),
    ("frames.md", "limit_frontier", limit_frontier.TABLE),
]


@pytest.mark.parametrize(("page", "key", "spec"), TABLES, ids=[f"{p}:{k}" for p, k, _ in TABLES])
def test_the_docs_table_is_the_spec(page: str, key: str, spec: tuple[Column, ...]) -> None:
    text = (ROOT / "docs" / page).read_text()
    assert docs_block(text, key) == markdown(spec), f"regenerate docs/{page}'s {key} table"
