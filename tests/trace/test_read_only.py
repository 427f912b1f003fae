"""A corpus is read-only at every size (issue 24): an edit made in place is refused the same way at 10 runs and at
100,000, with the runs held (``retain`` above the corpus) or built on access (below it), and an edit is a new corpus
(``with_labels``, ``with_runs``) that keeps it however its runs are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.labels import Label
from workbench.scale import load
from workbench.scale.lazy import LazyRuns, RunRef
from workbench.scenarios.seed import constant_turns
from workbench.trace.corpus import Corpus, RunStore
from workbench.trace.native import write_run
from workbench.trace.schema import ReadOnlyRunError, Run

RESOLVED = Label("resolved", "test", 1.0)


def _run(i: int) -> Run:
    return constant_turns(2 + i % 3, 1_000 + i).model_copy(update={"run_id": f"r{i}"})


def _loaded(tmp_path: Path, retain: int) -> Corpus:
    folder = tmp_path / "runs"
    if not folder.exists():
        folder.mkdir()
        for i in range(10):
            write_run(_run(i), folder / f"{i}.jsonl")
    return load(folder, cache_dir=tmp_path / "cache", retain=retain)


def _lazy(n: int, retain: int) -> Corpus:
    """``n`` runs, one per file, built on access from ``_run`` (no disk): a corpus of any size in milliseconds."""
    refs = [RunRef(f"f{i}", 0, f"r{i}", None, "main", 0) for i in range(n)]
    return Corpus(LazyRuns(refs, lambda file: [_run(int(file[1:]))], retain))


def _refuses_edits_in_place(corpus: Corpus) -> None:
    runs = corpus.runs
    assert isinstance(runs, RunStore)
    with pytest.raises(TypeError, match="read-only"):
        runs[0] = runs[1]  # type: ignore[index]
    with pytest.raises(TypeError, match="read-only"):
        del runs[0]  # type: ignore[attr-defined]
    with pytest.raises(ReadOnlyRunError, match=r"Outcome\.label cannot be set"):
        runs[0].outcome.label = "resolved"
    with pytest.raises(ReadOnlyRunError, match=r"Run\.run_id cannot be set"):
        runs[0].run_id = "x"
    assert runs[0].outcome.label is None  # nothing was kept half-way


def _keeps_a_new_corpus(corpus: Corpus, others: int) -> None:
    labelled = corpus.with_labels({"r0": RESOLVED})
    assert labelled.runs[0].outcome.label == "resolved"
    for i in range(1, others):  # read past what a large store keeps: the label is not a built object's
        assert labelled.runs[i].outcome.label is None
    assert labelled.runs[0].outcome.label == "resolved" and labelled.runs[0].outcome.score == 1.0
    assert corpus.runs[0].outcome.label is None  # the corpus it came from is unchanged
    with pytest.raises(ReadOnlyRunError):
        labelled.runs[0].outcome.label = None
    kept = corpus.with_runs([corpus.runs[1]])
    assert [r.run_id for r in kept] == ["r1"] and len(corpus) > 1


@pytest.mark.parametrize("retain", [4_096, 2])
def test_a_loaded_corpus_of_10_runs_refuses_edits_in_place(tmp_path: Path, retain: int) -> None:
    corpus = _loaded(tmp_path, retain)
    _refuses_edits_in_place(corpus)
    _keeps_a_new_corpus(corpus, 10)


@pytest.mark.parametrize("retain", [4_096, 2])
def test_a_corpus_of_100_000_runs_refuses_edits_in_place_the_same_way(retain: int) -> None:
    corpus = _lazy(100_000, retain)
    _refuses_edits_in_place(corpus)
    _keeps_a_new_corpus(corpus, 5_000)
    assert corpus.summary().runs == 100_000


def test_runs_built_in_memory_refuse_edits_in_place_too() -> None:
    corpus = Corpus([_run(i) for i in range(10)])
    _refuses_edits_in_place(corpus)
    _keeps_a_new_corpus(corpus, 10)


def test_a_copy_of_a_run_is_editable() -> None:
    corpus = Corpus([_run(0)])
    copy = corpus.runs[0].model_copy(update={"outcome": corpus.runs[0].outcome.model_copy()})
    copy.outcome.label = "resolved"
    copy.run_id = "mine"
    assert (copy.run_id, copy.outcome.label) == ("mine", "resolved")
