"""Copies of real runs answer alike: the sweep, the bills, the ledger, the context sweep and the estimator study
give a copy its original's answers under its own run_id (the bills' draws are seeded by content, not by name), and
the study keeps a run's copies out of its prefix and fold. The copies are files copied into a temporary folder and
loaded (the corpus renames them ``<run_id>~2``), so they are other objects with equal content — what a copied
folder gives."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.scale import load
from workbench.trace.fingerprint import fingerprint
from workbench.trace.schema import Run

pytestmark = pytest.mark.real

# small real files of three harnesses (the whole mini-swe-agent folder is the report test's)
PICK = ("codex-cli", "openhands", "claude-code/short.jsonl", "claude-code/tool_heavy.jsonl")


@pytest.fixture(scope="module")
def copies(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Run], list[Run]]:
    """(the leaves of one copy, the leaves of two copies)."""
    from workbench.report.build import report_leaves

    root = tmp_path_factory.mktemp("copies")
    for k in (0, 1):
        for rel in PICK:
            src = shared / rel
            if not src.exists():
                pytest.skip(f"../shared/traces/{rel} is absent")
            dst = root / f"copy{k}" / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    one, _ = report_leaves(load(root / "copy0"))
    two, _ = report_leaves(load(root))
    return one, two


def test_copies_fingerprint_alike(copies: tuple[list[Run], list[Run]]) -> None:
    one, two = copies
    assert len(two) == 2 * len(one) and len({r.run_id for r in two}) == len(two)
    prints = [fingerprint(r) for r in two]
    assert prints[: len(one)] == prints[len(one) :] and len(set(prints)) == len(one)
    assert all(a is not b for a, b in zip(two[: len(one)], two[len(one) :], strict=True))


def _renamed(frame: pd.DataFrame, one: list[Run], two: list[Run]) -> pd.DataFrame:
    """One copy's rows, as the other copy's: run_id renamed."""
    names = {a.run_id: b.run_id for a, b in zip(one, two[len(one) :], strict=True)}
    return frame.assign(run_id=frame["run_id"].map(names))


def _halves(frame: pd.DataFrame, one: list[Run], two: list[Run]) -> None:
    """The second copy's rows are the first copy's, renamed."""
    half = len(frame) // 2
    first = frame.iloc[:half].reset_index(drop=True)
    second = frame.iloc[half:].reset_index(drop=True)
    assert len(second) == len(first) > 0
    pd.testing.assert_frame_equal(second, _renamed(first, one, two), check_exact=True)


def test_sweep(copies: tuple[list[Run], list[Run]]) -> None:
    from workbench.scale.sweep import sweep

    one, two = copies
    grid = {"grant": list(range(60_000, 400_001, 20_000)), "max_turns": [30, 400]}
    _halves(sweep(two, grid, progress=False, segments=False), one, two)


def test_bills(copies: tuple[list[Run], list[Run]]) -> None:
    from workbench.replay.bill_sweep import bill_grid

    one, two = copies
    frame = bill_grid(two, governed=False, context_lengths=[None, 32_768], masks=[None, 10])
    draws = frame.pop("cf_usd_draws")
    _halves(frame.drop(columns=["cf_cached_in_draws", "cf_rest_draws"]), one, two)
    half = len(draws) // 2
    for a, b in zip(draws.iloc[:half], draws.iloc[half:], strict=True):  # a copy draws as its original
        np.testing.assert_array_equal(a, b)
    _halves(
        bill_grid(two, context_lengths=[None, 65_536], grants=[80_000, None])[
            ["run_id", "cf_usd", "cf_spent"]
        ],
        one,
        two,
    )


def test_ledger(copies: tuple[list[Run], list[Run]]) -> None:
    from workbench.analysis.frontier import ledger

    one, two = copies
    got = ledger(two)
    _halves(got.table, one, two)
    for a, b in zip(one, two[len(one) :], strict=True):
        np.testing.assert_array_equal(got.cum_usd[a.run_id], got.cum_usd[b.run_id])


def test_context_sweep(copies: tuple[list[Run], list[Run]]) -> None:
    from workbench.report.sweeps import context_sweep

    one, two = copies
    frame = context_sweep(two, "current", (120_000, 300_000), (None, 16_384, 65_536))
    assert frame["events"].map(len).sum() > 0  # some prune or truncation to compare
    _halves(frame, one, two)


def test_estimator_study(copies: tuple[list[Run], list[Run]]) -> None:
    """Copies change no estimate: the study over two copies gives each copy the estimates, prefix and fold fit the
    study over one copy gives the original (a run's copies share its fold and are left out of its prefix with it),
    and its fits count every copy. The fits over two copies weigh each call twice, the same optimum: equal to the
    solver's tolerance."""
    from workbench.estimate.study import study

    one, two = copies
    alone, both = study(one), study(two)
    names = {b.run_id: a.run_id for a, b in zip(one, two[len(one) :], strict=True)}
    first = both.turns[~both.turns["run_id"].isin(names)].reset_index(drop=True)
    pd.testing.assert_frame_equal(first, alone.turns, check_exact=False, rtol=1e-7)
    exact = first["strategy"] != "fitted"
    pd.testing.assert_frame_equal(first[exact], alone.turns[exact], check_exact=True)
    prefixes = both.prefixes.set_index("run_id")
    originals = prefixes.loc[alone.prefixes["run_id"]].reset_index()
    pd.testing.assert_frame_equal(originals, alone.prefixes, check_exact=True)
    copied = prefixes.loc[list(names)].reset_index().assign(run_id=lambda d: d["run_id"].map(names))
    pd.testing.assert_frame_equal(
        copied.set_index("run_id").loc[alone.prefixes["run_id"]].reset_index(), alone.prefixes
    )
    fits = both.fits.set_index("family")
    base = alone.fits.set_index("family")
    assert (fits["runs"] == 2 * base["runs"]).all() and (fits["calls"] == 2 * base["calls"]).all()
    for col in ("prose_chars_per_token", "dense_chars_per_token"):
        np.testing.assert_allclose(fits[col], base[col], rtol=1e-7)


def test_copies_share_a_fold_and_their_estimates(copies: tuple[list[Run], list[Run]]) -> None:
    from workbench.estimate.study import study

    one, two = copies
    turns = study(two, strategies=("fitted",)).turns
    names = {b.run_id: a.run_id for a, b in zip(one, two[len(one) :], strict=True)}
    first = turns[~turns["run_id"].isin(names)].reset_index(drop=True)
    second = turns[turns["run_id"].isin(names)].reset_index(drop=True)
    pd.testing.assert_frame_equal(first, second.assign(run_id=second["run_id"].map(names)), check_exact=True)


def test_study_calls_alone(copies: tuple[list[Run], list[Run]]) -> None:
    # the calibration's seed row reads the calls only: skipping the whole-corpus fits leaves them as they were
    from workbench.estimate.study import study

    _, two = copies
    full, calls = study(two, strategies=("adr",)), study(two, strategies=("adr",), tables=False)
    pd.testing.assert_frame_equal(full.turns, calls.turns, check_exact=True)
    assert calls.fits.empty and calls.classes.empty and not full.fits.empty
