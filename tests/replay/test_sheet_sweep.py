"""A corpus loaded through the index is swept from its columnar sheet — and gives exactly the rows of the same
runs swept in memory, which ``test_fast.py`` holds equal to the governor path."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.scale import load
from workbench.scale.sweep import corpus_sheet, sweep
from workbench.scenarios.seed import TurnSpec, build_run, mixed_run
from workbench.trace.native import write_run

from .test_fast import GRID  # the fast path's own grid: every guard setting it answers


def _rows(corpus, grid, **kw) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sweep(corpus, grid, **{"workers": 1, "progress": False, **kw})


def _corpus(folder: Path, seeds: list[int], max_turns: int = 40) -> None:
    for i, seed in enumerate(seeds):
        write_run(mixed_run(seed, max_turns=max_turns), folder / f"{i:04d}.jsonl")


def test_a_large_corpus_is_swept_from_its_sheet_with_no_run_built(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    _corpus(runs, list(range(40)))
    cache = tmp_path / "cache"
    load(runs, cache_dir=cache)  # fills the cache and the index
    lazy = load(runs, cache_dir=cache, retain=5)
    assert corpus_sheet(lazy) is not None
    fast = _rows(lazy, GRID)
    assert (fast.path == "fast").all()
    assert lazy.runs._files == {}  # type: ignore[attr-defined]  # no file's runs were read to answer it
    memory = _rows(load(runs, cache=False), GRID)
    pd.testing.assert_frame_equal(fast, memory)
    governor = _rows(load(runs, cache=False), GRID, fast=False)
    cols = [c for c in fast.columns if c != "path"]
    pd.testing.assert_frame_equal(fast[cols], governor[cols])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seeds=st.lists(st.integers(0, 10**6), min_size=1, max_size=8),
    grants=st.lists(st.integers(500, 500_000), min_size=1, max_size=4),
    share=st.sampled_from([None, 0.0, 0.1, 0.3]),
    weight=st.sampled_from([0, 10, 100]),
    caps=st.sampled_from([[400], [2, 30]]),
    base=st.sampled_from(["current", "ink-s9", "older"]),
)
def test_the_sheet_equals_the_governor_on_random_corpora(
    tmp_path_factory: pytest.TempPathFactory,
    seeds: list[int],
    grants: list[int],
    share: float | None,
    weight: int,
    caps: list[int],
    base: str,
) -> None:
    root = tmp_path_factory.mktemp("random")
    runs = root / "runs"
    runs.mkdir()
    _corpus(runs, seeds)
    grid = {
        "grant": grants,
        "landing_token_share": [share],
        "cache_weight_percent": [weight],
        "max_turns": caps,
    }
    lazy = load(runs, cache_dir=root / "cache", retain=1)
    got = _rows(lazy, grid, base=base)
    want = _rows(load(runs, cache=False), grid, base=base, fast=False)
    cols = [c for c in got.columns if c != "path"]
    pd.testing.assert_frame_equal(got[cols], want[cols])


def test_an_edited_run_is_swept_from_the_run_not_the_sheet(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    _corpus(runs, [3, 4, 5])
    lazy = load(runs, cache_dir=tmp_path / "cache", retain=1)
    first = lazy.runs[0]
    edited = lazy.with_runs([first.model_copy(update={"turns": first.turns[:1]}), *lazy.runs[1:]])
    assert corpus_sheet(edited) is None and corpus_sheet(lazy) is not None
    got = _rows(edited, {"grant": [50_000]})
    assert got.loc[got.run_id == first.run_id, "turns"].tolist() == [1]


def test_copies_are_renamed_in_the_sheet_as_in_the_runs(tmp_path: Path) -> None:
    for k in ("a", "b"):
        (tmp_path / k).mkdir()
        _corpus(tmp_path / k, [7, 8])
    lazy = load(tmp_path / "a", tmp_path / "b", cache_dir=tmp_path / "cache", retain=1)
    rows = _rows(lazy, {"grant": [40_000]})
    assert rows.run_id.tolist() == [r.run_id for r in lazy.runs]
    assert len(lazy.renamed) == 2
    pd.testing.assert_frame_equal(
        rows, _rows(load(tmp_path / "a", tmp_path / "b", cache=False), {"grant": [40_000]})
    )


def test_workers_answer_from_the_files_facts_as_this_process_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    _corpus(runs, list(range(100, 112)))
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    corpus = load(runs, retain=2)
    for base in ("current", "older"):  # from the sheet, and (other guard settings) from the runs
        here = _rows(corpus, GRID, base=base)
        there = _rows(corpus, GRID, base=base, workers=2, chunk_size=3)
        pd.testing.assert_frame_equal(here, there)
    assert (here.path == "governor").all()


@pytest.mark.parametrize("retain", [1, 4_096])
def test_a_label_is_a_new_corpus_swept_as_labelled_at_any_size(tmp_path: Path, retain: int) -> None:
    """Labelling in place is refused and ``with_labels`` is seen by the sweep, whether the corpus holds its Runs
    (retain 4,096) or builds them on access (retain 1): the sheet answers the corpus as loaded, the labelled one is
    swept from its runs."""
    from workbench.labels import Label
    from workbench.trace.schema import ReadOnlyRunError

    runs = tmp_path / "runs"
    runs.mkdir()
    _corpus(runs, [11, 12])
    corpus = load(runs, cache_dir=tmp_path / "cache", retain=retain)
    assert corpus_sheet(corpus) is not None
    before = _rows(corpus, {"grant": [1_000]})
    with pytest.raises(ReadOnlyRunError):
        corpus.runs[0].outcome.label = "resolved"
    labelled = corpus.with_labels({r.run_id: Label("resolved", "test") for r in corpus.runs})
    assert corpus_sheet(labelled) is None
    after = _rows(labelled, {"grant": [1_000]})
    cut = after.cut_turns > 0
    assert cut.any() and after.good_outcome_after_cut[cut].all()
    assert not before.good_outcome_after_cut.equals(after.good_outcome_after_cut)
    pd.testing.assert_frame_equal(_rows(corpus, {"grant": [1_000]}), before)  # the loaded corpus is unchanged


def test_groups_sharing_guard_settings_each_read_their_own_runs() -> None:
    """Two groups with the same guard settings (here: landing turns differ) and a run only the governor answers
    (timed, under a deadline): every group's fast rows land on their own runs."""
    timed = build_run(
        "timed",
        [TurnSpec(prompt=10, text="", seconds=5)] * 3 + [TurnSpec(prompt=10, text="done", seconds=5)],
        generator="test",
        params={},
    )
    runs = [timed, *(mixed_run(s, max_turns=40) for s in range(12))]
    grid = {"grant": [20_000, 80_000], "landing_turns": [1, 2, 3], "deadline_s": [600.0]}
    got = _rows(runs, grid)
    want = _rows(runs, grid, fast=False)
    assert set(got.path) == {"fast", "governor"}
    cols = [c for c in got.columns if c != "path"]
    pd.testing.assert_frame_equal(got[cols], want[cols])
