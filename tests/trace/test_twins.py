"""A large corpus read for a report builds a copy of a run from its twin (``LazyRuns.read_only``): the copy equals
the run built from its own file, field for field, and the prints the index stored are the fingerprints of its
leaves — so a report over copies neither reads nor fingerprints them again."""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path

import pytest

from workbench.report.build import report_leaves
from workbench.scale import load
from workbench.scale.index import NO_SEGMENT_OF, RunNames
from workbench.scale.lazy import LazyRuns
from workbench.scenarios.seed import mixed_run
from workbench.trace import distinct as distinct_module
from workbench.trace.distinct import fingerprint
from workbench.trace.native import write_run


def _check(corpus) -> int:  # type: ignore[no-untyped-def]
    runs = corpus.runs
    assert isinstance(runs, LazyRuns)
    twins = 0
    seen: dict[bytes, object] = {}
    for i, (run, leaf_prints) in enumerate(runs.read_only()):
        own = runs[i]  # built from its own file
        assert run == own and run.loaded_from == own.loaded_from
        assert leaf_prints is not None
        assert list(leaf_prints) == [fingerprint(leaf) for leaf in own.leaves()]
        key = fingerprint(own)
        if key in seen:
            twins += 1
            assert run.turns is seen[key]  # built from the twin: nothing read again
        else:
            seen[key] = run.turns
    return twins


def test_copies_of_synthetic_runs(tmp_path: Path) -> None:
    one = tmp_path / "c" / "one"
    one.mkdir(parents=True)
    for i in range(5):
        write_run(mixed_run(i, max_turns=9), one / f"{i:02d}.jsonl")
    shutil.copytree(one, tmp_path / "c" / "two")
    shutil.copytree(one, tmp_path / "c" / "three")
    corpus = load(tmp_path / "c", cache_dir=tmp_path / "cache", retain=3)
    assert _check(corpus) == 10
    # and again from the index alone (every fact read back from its Arrow tables)
    assert _check(load(tmp_path / "c", cache_dir=tmp_path / "cache", retain=3)) == 10


@pytest.mark.real
def test_copies_of_real_runs_with_sessions_and_diagnostics(shared: Path, tmp_path: Path) -> None:
    picks = ("codex-cli", "openhands", "claude-code")
    for k in (0, 1):
        for rel in picks:
            src = shared / rel
            if not src.exists():
                pytest.skip(f"../shared/traces/{rel} is absent")
            shutil.copytree(src, tmp_path / "c" / f"copy{k}" / rel)
        # a file with a corrupt line: its run carries a diagnostic naming its own file
        short = (shared / "claude-code" / "short.jsonl").read_text()
        (tmp_path / "c" / f"copy{k}" / "broken.jsonl").write_text(short + "{not json\n")
    corpus = load(tmp_path / "c", cache_dir=tmp_path / "cache", retain=8)
    n = len(corpus.runs)
    assert _check(corpus) == n // 2
    built = list(corpus.runs)
    assert any(r.diagnostics for r in built) and any(len(r.segments) > 1 for r in built)

    def refuse(_run: object) -> bytes:
        raise AssertionError("a leaf of a large corpus was fingerprinted again")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(distinct_module, "fingerprint", refuse)
        leaves, _ = report_leaves(corpus)
    known = [distinct_module._KNOWN.get(id(leaf)) for leaf in leaves]  # remembered from the index
    assert len(leaves) > n and known == [distinct_module._fingerprint(leaf) for leaf in leaves]


def test_a_part_of_the_runs_reads_as_that_part_of_the_whole(tmp_path: Path) -> None:
    """What a report's bill share reads on its worker (``report_leaves(corpus, rows)``): the leaves of those runs,
    equal to the whole pass's, with the index's prints, however the runs are cut into parts — even where a run's
    twin lies in another part (it is then built from its own file)."""
    one = tmp_path / "c" / "one"
    one.mkdir(parents=True)
    for i in range(6):
        write_run(mixed_run(i, max_turns=9), one / f"{i:02d}.jsonl")
    shutil.copytree(one, tmp_path / "c" / "two")
    lazy = load(tmp_path / "c", cache_dir=tmp_path / "cache", retain=3)
    held = lazy.with_runs(list(lazy.runs))  # in memory: no prints
    for corpus in (lazy, held):
        whole, skipped = report_leaves(corpus)
        n = len(corpus.runs)
        for cuts in ((0, n), (0, 5, n), (0, 1, 7, 8, n), tuple(range(n + 1))):
            parts = [report_leaves(corpus, range(a, b)) for a, b in pairwise(cuts)]
            leaves = [leaf for got, _ in parts for leaf in got]
            assert leaves == whole and [leaf.run_id for leaf in leaves] == [leaf.run_id for leaf in whole]
            assert [fingerprint(leaf) for leaf in leaves] == [fingerprint(leaf) for leaf in whole]
            assert sum(sum(s.values()) for _, s in parts) == sum(skipped.values())
        assert report_leaves(corpus, range(0)) == ([], {})
    printed = [distinct_module._KNOWN.get(id(leaf)) for leaf in report_leaves(lazy, range(6, 12))[0]]
    assert None not in printed  # a twin built from its own file keeps the prints the index stored
    fresh = load(tmp_path / "c", cache_dir=tmp_path / "cache", retain=3)
    report_leaves(fresh)
    assert not fresh.runs._files  # type: ignore[attr-defined]  # a pass keeps the file it is on, not the last few
    assert fresh.runs[4] == whole[4]  # and a read by place reads its file again


def test_names_put_back_what_the_fingerprint_leaves_out() -> None:
    run = mixed_run(3, max_turns=6).model_copy(update={"source_file": "/a/x.jsonl"})
    run = run.model_copy(update={"metadata": {**run.metadata, "segment_of": "s"}})
    names = RunNames("/b/x.jsonl", (), NO_SEGMENT_OF)
    other = names.apply(run, "x~2", None)
    assert other.source_file == "/b/x.jsonl" and "segment_of" not in other.metadata
    assert other.run_id == "x~2" and fingerprint(other) == fingerprint(run)
    assert RunNames.of(other) == names
    weird = run.model_copy(update={"metadata": {"segment_of": 3}})
    assert not RunNames.of(weird).namable  # never built from a twin
