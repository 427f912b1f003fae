"""The distinct-copy benchmark's ``--leaves`` accounting: the text the report's leaves hold, and what CPython's two or
four bytes a character add to a string with a character past Latin-1 (benchmarks/distinct_bench.py, ``leaf_memory``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.distinct_bench import leaf_memory
from workbench.scenarios.seed import constant_turns
from workbench.trace.native import write_run

# One arrow makes every character two bytes: about 1 MB more than one byte each.
WIDE = "x" * 1_000_000 + "\u2192"


def test_the_leaves_text_and_its_wide_characters_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = constant_turns(3, 1_000)
    first_user = next(i for i, m in enumerate(run.messages) if m.role == "user")
    messages = list(run.messages)
    messages[first_user] = messages[first_user].model_copy(update={"content": WIDE})
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write_run(run.model_copy(update={"messages": messages}), corpus / "wide.jsonl")

    leaf_memory(corpus, tmp_path)

    line = capsys.readouterr().out
    got = re.search(r"(\d+) runs, (\d+) leaves hold [\d,]+ MB .*text ([\d,]+) MB \(of it ([\d,]+) MB", line)
    assert got is not None, line
    runs, leaves, text, wide = (int(g.replace(",", "")) for g in got.groups())
    assert (runs, leaves) == (1, 1)
    assert wide == 1  # the arrow's string: 2 bytes a character where 1 would do
    assert text >= 2  # that string itself
    assert not (tmp_path / "cache-leaves").exists()  # its cache is removed after
