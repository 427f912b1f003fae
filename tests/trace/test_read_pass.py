"""A corpus read for a report (``LazyRuns.read_only``): each run equals the run built from its own file, field for
field, and the prints the index stored are the fingerprints of its leaves, so a report over a large corpus never
fingerprints a leaf again."""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path

import pytest

from workbench.report.build import report_leaves
from workbench.scale import load
from workbench.scale.lazy import LazyRuns
from workbench.scenarios.seed import mixed_run
from workbench.trace import fingerprint as fingerprints
from workbench.trace.fingerprint import fingerprint
from workbench.trace.native import write_run


def _check(corpus) -> None:  # type: ignore[no-untyped-def]
    runs = corpus.runs
    assert isinstance(runs, LazyRuns)
    for i, (run, leaf_prints) in enumerate(runs.read_only()):
        own = runs[i]  # built by place
        assert run == own and run.loaded_from == own.loaded_from
        assert leaf_prints is not None
        assert list(leaf_prints) == [fingerprint(leaf) for leaf in own.leaves()]


def test_synthetic_runs(tmp_path: Path) -> None:
    one = tmp_path / "c" / "one"
    one.mkdir(parents=True)
    for i in range(5):
        write_run(mixed_run(i, max_turns=9), one / f"{i:02d}.jsonl")
    shutil.copytree(one, tmp_path / "c" / "two")
    _check(load(tmp_path / "c", cache_dir=tmp_path / "cache", retain=3))
    # and again from the index alone (every fact read back from its Arrow tables)
    _check(load(tmp_path / "c", cache_dir=tmp_path / "cache", retain=3))


@pytest.mark.real
def test_real_runs_with_sessions_and_diagnostics(shared: Path, tmp_path: Path) -> None:
    for rel in ("codex-cli", "openhands", "claude-code"):
        if not (shared / rel).exists():
            pytest.skip(f"../shared/traces/{rel} is absent")
        shutil.copytree(shared / rel, tmp_path / "c" / rel)
    # a file with a corrupt line: its run carries a diagnostic naming its own file
    short = (shared / "claude-code" / "short.jsonl").read_text()
    (tmp_path / "c" / "broken.jsonl").write_text(short + "{not json\n")
    corpus = load(tmp_path / "c", cache_dir=tmp_path / "cache", retain=8)
    _check(corpus)
    built = list(corpus.runs)
    assert any(r.diagnostics for r in built) and any(len(r.segments) > 1 for r in built)

    def refuse(_run: object) -> bytes:
        raise AssertionError("a leaf of a large corpus was fingerprinted again")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fingerprints, "_fingerprint", refuse)
        leaves, _ = report_leaves(corpus)
    known = [fingerprints._KNOWN.get(id(leaf)) for leaf in leaves]  # remembered from the index
    assert len(leaves) > len(built) and known == [fingerprints._fingerprint(leaf) for leaf in leaves]


def test_a_part_of_the_runs_reads_as_that_part_of_the_whole(tmp_path: Path) -> None:
    """What a report's bill share reads on its worker (``report_leaves(corpus, rows)``): the leaves of those runs,
    equal to the whole pass's, with the index's prints, however the runs are cut into parts."""
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
    printed = [fingerprints._KNOWN.get(id(leaf)) for leaf in report_leaves(lazy, range(6, 12))[0]]
    assert None not in printed  # a part keeps the prints the index stored
    fresh = load(tmp_path / "c", cache_dir=tmp_path / "cache", retain=3)
    report_leaves(fresh)
    assert not fresh.runs._files  # type: ignore[attr-defined]  # a pass keeps the file it is on, not the last few
    assert fresh.runs[4] == whole[4]  # and a read by place reads its file again
