"""Sweeps: columns, grids, and the same rows on every backend (this process, local processes, Dask)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from workbench.govern import Policy
from workbench.replay.grid import expand, parse_range
from workbench.replay.sweep import COLUMNS
from workbench.scale import load
from workbench.scale.sweep import file_partition, sweep
from workbench.scenarios.seed import mixed_corpus, warm_runaway
from workbench.trace import Corpus
from workbench.trace.native import write_run

GRID = {"grant": [50_000, 220_000], "max_turns": [20, 400]}


def test_rows_and_columns() -> None:
    out = sweep([warm_runaway()], GRID, workers=1, progress=False)
    assert list(out.columns) == [*COLUMNS, "max_turns"]
    assert len(out) == 4
    row = out[(out.grant == 220_000) & (out.max_turns == 400)].iloc[0]
    assert (row.stop_reason, row.raw, row.stop_turn) == ("budget", 1_273_216, 97)
    assert str(out.dtypes["diverges_at"]) == "Int64"


def test_grid_expansion() -> None:
    policies, keys = expand({"rules": ["current", "ink-s9"], "grant": [1, 2]})
    assert keys == ["rules", "grant"]
    assert [(p.rules, p.grant) for p in policies] == [
        ("current", 1),
        ("current", 2),
        ("ink-s9", 1),
        ("ink-s9", 2),
    ]
    policies, _ = expand({"grant": [5]}, base=Policy.named("ink-s9", landing_turns=2))
    assert (policies[0].rules, policies[0].landing_turns, policies[0].grant) == ("ink-s9", 2, 5)
    with pytest.raises(ValueError, match="unknown policy parameter"):
        expand({"grants": [1]})
    with pytest.raises(TypeError):
        expand([1, 2])  # type: ignore[list-item]


def test_parse_range() -> None:
    assert parse_range("100000:300000:100000") == [100_000, 200_000, 300_000]
    assert parse_range("150_000") == [150_000]
    for bad in ("1:2", "a:b:c", "5:1:1", "1:5:0"):
        with pytest.raises(ValueError, match="range"):
            parse_range(bad)


def _on_disk(tmp_path: Path, n: int, copies: int = 1) -> Corpus:
    """``n`` synthetic runs written as native traces (``copies`` folders of them), loaded back."""
    for c in range(copies):
        folder = tmp_path / f"copy{c}"
        folder.mkdir()
        for i, run in enumerate(mixed_corpus(n)):
            write_run(run, folder / f"{i:03d}.jsonl")
    return load(tmp_path)


def test_local_processes_load_their_files_and_give_the_same_rows(tmp_path: Path) -> None:
    corpus = _on_disk(tmp_path, 6, copies=2)  # the second copy's runs are renamed ~2 in both
    assert file_partition(corpus) is not None
    one = sweep(corpus, GRID, workers=1, progress=False)
    two = sweep(corpus, GRID, workers=2, chunk_size=3, progress=False)
    pd.testing.assert_frame_equal(one, two)
    assert one["run_id"].str.endswith("~2").sum() == len(one) // 2


def test_runs_built_in_memory_are_swept_in_this_process() -> None:
    runs = mixed_corpus(6)
    assert file_partition(runs) is None
    pd.testing.assert_frame_equal(
        sweep(runs, GRID, workers=1, progress=False), sweep(runs, GRID, workers=2, progress=False)
    )
    with pytest.raises(ValueError, match="never Runs"):
        sweep(runs, GRID, client=object(), progress=False)


def test_an_edited_corpus_is_not_reloaded_from_its_files(tmp_path: Path) -> None:
    corpus = _on_disk(tmp_path, 4)
    corpus = corpus.with_runs(corpus.runs[:-1])  # a whole file left out: the others still reload as they were
    assert [len(rs) for _, rs in file_partition(corpus) or []] == [1, 1, 1]
    first = corpus.runs[0]
    corpus = corpus.with_runs([first.model_copy(update={"turns": first.turns[:3]}), *corpus.runs[1:]])
    assert file_partition(corpus) is None
    edited = sweep(corpus, GRID, workers=2, progress=False)
    assert edited[edited["run_id"] == "mixed-0"]["turns"].tolist() == [3, 3, 3, 3]


def test_dask_loads_on_the_workers_and_gives_the_same_rows(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    corpus = _on_disk(tmp_path, 8)
    one = sweep(corpus, GRID, workers=1, progress=False)
    governed = sweep(corpus, GRID, workers=1, fast=False, progress=False)
    with (
        distributed.LocalCluster(
            n_workers=1, processes=False, threads_per_worker=2, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        via_dask = sweep(corpus, GRID, client=client, chunk_size=3, fast=False, progress=False)
        here = sweep(corpus, GRID, client=client, progress=False)  # the sheet's fast path: in this process
    pd.testing.assert_frame_equal(governed, via_dask)
    pd.testing.assert_frame_equal(one, here)


def test_sessions_are_swept_per_segment() -> None:
    from workbench.trace.schema import Segment

    run = warm_runaway(turns=10)
    run = run.model_copy(
        update={"segments": [Segment(index=0, start=0, stop=5), Segment(index=1, start=5, stop=10)]}
    )
    out = sweep([run], {"grant": [10**6]}, workers=1, progress=False)
    assert out.run_id.tolist() == ["seed-warm-runaway#s0", "seed-warm-runaway#s1"]
    whole = sweep([run], {"grant": [10**6]}, workers=1, progress=False, segments=False)
    assert whole.run_id.tolist() == ["seed-warm-runaway"]
