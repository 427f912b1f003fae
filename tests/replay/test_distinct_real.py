"""Copies of real runs computed once, against every copy computed on its own: the sweep, the bills, the ledger,
the context sweep and the calibration give the same answers, each copy under its own run_id. The copies are
files copied into a temporary folder and loaded (the corpus renames them ``<run_id>~2``), so they are other
objects with equal content — what a copied folder gives."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.govern import Policy
from workbench.scale import load
from workbench.trace.distinct import distinct
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
    d = distinct(two)
    assert len(d.uniques) == len(one)
    assert d.index.tolist() == [*range(len(one)), *range(len(one))]
    assert all(a is not b for a, b in zip(two[: len(one)], two[len(one) :], strict=True))


def _renamed(frame: pd.DataFrame, one: list[Run], two: list[Run]) -> pd.DataFrame:
    """One copy's rows, as the other copy's: run_id renamed."""
    names = {a.run_id: b.run_id for a, b in zip(one, two[len(one) :], strict=True)}
    return frame.assign(run_id=frame["run_id"].map(names))


def test_sweep(copies: tuple[list[Run], list[Run]]) -> None:
    from workbench.scale.sweep import sweep

    one, two = copies
    grid = {"grant": list(range(60_000, 400_001, 20_000)), "max_turns": [30, 400]}
    merged = sweep(two, grid, progress=False, segments=False)
    pd.testing.assert_frame_equal(merged, sweep(two, grid, progress=False, segments=False, dedup=False))
    half = len(merged) // 2
    second = merged.iloc[half:].reset_index(drop=True)
    first = merged.iloc[:half].reset_index(drop=True)
    pd.testing.assert_frame_equal(second, _renamed(first, one, two), check_exact=True)


def test_bills(copies: tuple[list[Run], list[Run]]) -> None:
    from workbench.replay.bill_sweep import bill_grid

    _, two = copies
    kw = {"context_lengths": [None, 32_768], "masks": [None, 10]}
    pd.testing.assert_frame_equal(
        bill_grid(two, governed=False, **kw),
        bill_grid(two, governed=False, dedup=False, **kw),
        check_exact=True,
    )
    kw = {"context_lengths": [None, 65_536], "grants": [80_000, None]}
    pd.testing.assert_frame_equal(bill_grid(two, **kw), bill_grid(two, dedup=False, **kw), check_exact=True)


def test_ledger(copies: tuple[list[Run], list[Run]]) -> None:
    from workbench.analysis.frontier import ledger

    _, two = copies
    merged, each = ledger(two), ledger(two, dedup=False)
    pd.testing.assert_frame_equal(merged.table, each.table, check_exact=True)
    assert merged.cum_usd.keys() == each.cum_usd.keys()
    for rid, cum in each.cum_usd.items():
        np.testing.assert_array_equal(merged.cum_usd[rid], cum)


def test_context_sweep(copies: tuple[list[Run], list[Run]]) -> None:
    from workbench.report.sweeps import context_sweep, policy_for, policy_sweep

    _, two = copies
    args = (two, "current", (120_000, 300_000), (None, 16_384, 65_536))
    merged = context_sweep(*args)
    each = policy_sweep(two, [policy_for("current", g, c) for g in args[2] for c in args[3]], dedup=False)
    pd.testing.assert_frame_equal(merged, each, check_exact=True)


def test_calibration(
    copies: tuple[list[Run], list[Run]], request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.analysis.calibration import calibrate
    from workbench.estimate import study as study_module

    _, two = copies
    grants = tuple(range(100_000, 400_001, 20_000))
    merged = calibrate(two, Policy.named("current"), grants=grants)
    request.getfixturevalue("no_dedup")
    # the study knows copies by content to keep them out of each other's prefix and folds (its own test below)
    monkeypatch.setattr(study_module, "distinct", distinct)
    each = calibrate(two, Policy.named("current"), grants=grants)
    assert merged.to_dicts() == each.to_dicts()
    pd.testing.assert_frame_equal(merged.to_frame(), each.to_frame(), check_exact=True)


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
