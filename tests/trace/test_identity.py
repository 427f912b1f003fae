"""Copies of a run loaded from several files keep one identity each: later copies are renamed ``~k`` and
their subagents follow their own copy of the session."""

from __future__ import annotations

import shutil
from pathlib import Path

from workbench.scale import load
from workbench.trace import Message, Run, Turn, Usage
from workbench.trace.native import write_run


def _run(run_id: str, parent: str | None = None) -> Run:
    return Run(
        run_id=run_id,
        source="synthetic",
        role="subagent" if parent else "main",
        parent_run_id=parent,
        messages=[Message(role="user", content="hi")],
        turns=[Turn(index=0, sent=[(0, 1)], usage=Usage(prompt=10, completion=2))],
    )


def test_copies_of_a_folder_are_renamed_and_relinked(tmp_path: Path) -> None:
    one = tmp_path / "c1"
    one.mkdir()
    write_run(_run("sess"), one / "a.jsonl")
    write_run(_run("agent", parent="sess"), one / "b.jsonl")
    shutil.copytree(one, tmp_path / "c2")
    shutil.copytree(one, tmp_path / "c3")
    corpus = load(tmp_path)
    assert [r.run_id for r in corpus.runs] == ["sess", "agent", "sess~2", "agent~2", "sess~3", "agent~3"]
    assert [r.parent_run_id for r in corpus.runs] == [None, "sess", None, "sess~2", None, "sess~3"]
    assert corpus.renamed["agent~3"] == ("agent", tmp_path / "c3" / "b.jsonl")
    assert [r.run_id for r in corpus.children("sess~2")] == ["agent~2"]
    assert len(corpus.renamed) == 4


def test_a_corpus_without_repeats_is_untouched(tmp_path: Path) -> None:
    write_run(_run("a"), tmp_path / "a.jsonl")
    write_run(_run("b", parent="a"), tmp_path / "b.jsonl")
    corpus = load(tmp_path)
    assert [r.run_id for r in corpus.runs] == ["a", "b"] and corpus.renamed == {}
