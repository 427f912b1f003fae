"""Loading through the corpus index: a folder loads again without hashing or parsing an unchanged file, answers
as without a cache, and a changed, added or removed file is seen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.scale import cache as corpus_cache
from workbench.scale import load
from workbench.scale.lazy import LazyRuns
from workbench.scenarios.seed import mixed_run
from workbench.trace.native import write_run


def _folder(root: Path, n: int) -> Path:
    root.mkdir()
    for i in range(n):
        write_run(mixed_run(i, max_turns=12), root / f"{i:03d}.jsonl")
    return root


def _same(a, b) -> None:
    assert list(a.runs) == list(b.runs)
    assert a.summary() == b.summary()
    assert a.files == b.files and a.sizes == b.sizes and a.renamed == b.renamed
    assert [str(s) for s in a.skipped] == [str(s) for s in b.skipped]


def test_a_second_load_hashes_and_parses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _folder(tmp_path / "runs", 6)
    (runs / "notes.txt").write_text("not a trace\n")
    cold = load(runs, cache_dir=tmp_path / "cache")

    def refuse(*_a: object, **_k: object) -> str:
        raise AssertionError("an unchanged file was hashed again")

    monkeypatch.setattr(corpus_cache, "file_key", refuse)
    warm = load(runs, cache_dir=tmp_path / "cache", retain=2)
    assert isinstance(warm.runs, LazyRuns) and len(warm.runs) == 6
    _same(warm, cold)
    _same(warm, load(runs, cache=False))


def test_a_changed_added_or_removed_file_is_seen(tmp_path: Path) -> None:
    runs = _folder(tmp_path / "runs", 4)
    cache = tmp_path / "cache"
    load(runs, cache_dir=cache)
    write_run(mixed_run(99, max_turns=5).model_copy(update={"run_id": "edited"}), runs / "001.jsonl")
    os.utime(runs / "001.jsonl", ns=(1, 1))  # even with an old modification time: the size and inode changed
    write_run(mixed_run(50, max_turns=5), runs / "009.jsonl")
    (runs / "002.jsonl").unlink()
    got = load(runs, cache_dir=cache, retain=1)
    _same(got, load(runs, cache=False))
    assert [got.runs.run_id(i) for i in range(len(got.runs))][1] == "edited"  # type: ignore[attr-defined]
    read = got.runs.sheet()
    assert read is not None and list(read[0].run_id) == [leaf.run_id for leaf in got.leaves()]


def test_a_damaged_index_or_facts_entry_is_a_miss(tmp_path: Path) -> None:
    runs = _folder(tmp_path / "runs", 3)
    cache = tmp_path / "cache"
    load(runs, cache_dir=cache)
    for f in cache.rglob("*.pickle"):
        if "facts-" in f.name or f.parent.parent.name == "index" or "index" in f.parts:
            f.write_bytes(b"\x80\x05garbage")
    _same(load(runs, cache_dir=cache, retain=1), load(runs, cache=False))


def test_a_large_corpus_keeps_only_recent_files_runs(tmp_path: Path) -> None:
    runs = _folder(tmp_path / "runs", 12)
    corpus = load(runs, cache_dir=tmp_path / "cache", retain=3)
    assert isinstance(corpus.runs, LazyRuns)
    seen = [r.run_id for r in corpus.runs]  # every run built once, in order
    assert seen == [r.run_id for r in load(runs, cache=False).runs]
    assert sum(len(v) for v in corpus.runs._files.values()) <= 3  # bounded, whatever the corpus size
    assert corpus.runs[5] == corpus.runs[5]
    assert corpus.by_id(seen[7]).run_id == seen[7]


def test_a_small_corpus_holds_one_object_per_run(tmp_path: Path) -> None:
    runs = _folder(tmp_path / "runs", 3)
    corpus = load(runs, cache_dir=tmp_path / "cache")
    assert corpus.runs[1] is corpus.runs[1]


def test_a_cold_load_on_workers_is_the_same_corpus(tmp_path: Path) -> None:
    runs = _folder(tmp_path / "runs", 9)
    lines = (runs / "000.jsonl").read_text().splitlines(keepends=True)
    (runs / "broken.jsonl").write_text("".join([*lines[:3], "{not json\n", *lines[3:]]))  # a corrupt line
    (runs / "empty.jsonl").write_text("")  # a file that fails: reported, the rest loads
    (runs / "notes.txt").write_text("not a trace\n")
    alone = load(runs, cache=False)
    for retain in (2, 100):  # a large corpus (runs not pickled on the workers) and a small one
        cache = tmp_path / f"cache-{retain}"
        got = load(runs, cache_dir=cache, retain=retain, workers=2)
        _same(got, alone)
        assert [str(p) for p in got.problems] == [str(p) for p in alone.problems]
        assert any(r.diagnostics for r in got.runs) and [str(s) for s in got.skipped]
        _same(load(runs, cache_dir=cache, retain=retain, workers=1), alone)  # the index the workers wrote


@pytest.mark.parametrize("processes", [False, True])
def test_a_cold_load_on_dask_workers_is_the_same_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: bool
) -> None:
    distributed = pytest.importorskip("dask.distributed")
    from workbench.scale.indexed import _Walk

    runs = _folder(tmp_path / "runs", 9)
    (runs / "empty.jsonl").write_text("")  # the worker leaves it to the load, which skips it
    (runs / "notes.txt").write_text("not a trace\n")  # skipped, as the worker found
    alone = load(runs, cache=False)
    here: list[str] = []
    real = _Walk._read

    def read(walk: _Walk, f: Path):  # type: ignore[no-untyped-def]
        here.append(f.name)
        return real(walk, f)

    monkeypatch.setattr(_Walk, "_read", read)
    cache = tmp_path / "cache"
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        got = load(runs, cache_dir=cache, retain=2, client=client)
    assert here == []  # every file was read on the cluster
    _same(got, alone)
    assert [str(p) for p in got.problems] == [str(p) for p in alone.problems]
    assert sorted(Path(str(s).split(":")[0]).name for s in got.skipped) == ["empty.jsonl", "notes.txt"]
    _same(load(runs, cache_dir=cache, retain=2), alone)  # the index and entries the workers wrote
    assert here == []
    load(runs, cache_dir=tmp_path / "cache-here", retain=2)
    assert len(here) == 11  # where this process reads each file itself


def test_a_file_no_importer_reads_is_not_opened_again_while_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workbench.importers as importers

    runs = _folder(tmp_path / "runs", 3)
    (runs / "notes.txt").write_text("not a trace\n")
    first = load(runs, cache_dir=tmp_path / "cache")
    looked: list[str] = []
    real = importers.detect

    def detect(path: Path):  # type: ignore[no-untyped-def]
        looked.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(importers, "detect", detect)
    again = load(runs, cache_dir=tmp_path / "cache")
    assert looked == [] and [str(s) for s in again.skipped] == [str(s) for s in first.skipped] != []
    (runs / "notes.txt").write_text(
        '{"schema": "budget-workbench/trace", "version": 1, "run": {}}\n'
    )  # now a run?
    changed = load(runs, cache_dir=tmp_path / "cache")
    assert looked == ["notes.txt"] and not any("notes.txt" in str(s) for s in changed.skipped)
