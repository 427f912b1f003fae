"""Calibrations computed once for every test that only reads them: the shared mini-swe-agent runs' (each family's
rows come from the same evidence alone, so a test of one family reads that family's rows here) and the bundled
synthetic runs' (also the answer to the calibrate CLI's same call)."""

from __future__ import annotations

from pathlib import Path

import pytest

import workbench as wb
from workbench.analysis import calibrate
from workbench.paths import bundled_traces


@pytest.fixture(scope="session")
def msa(shared: Path) -> Path:
    return shared / "mini-swe-agent"


@pytest.fixture(scope="session")
def cal_msa(msa: Path):  # type: ignore[no-untyped-def]
    return calibrate(wb.load(msa), "current")


SYNTHETIC = bundled_traces() / "synthetic"


@pytest.fixture(scope="session")
def synthetic_cal():  # type: ignore[no-untyped-def]
    if not SYNTHETIC.is_dir():
        pytest.skip("traces/synthetic is absent: regenerate it with python -m workbench.scenarios")
    return calibrate(wb.load(SYNTHETIC))


@pytest.fixture
def synthetic_calls(synthetic_cal, monkeypatch: pytest.MonkeyPatch) -> list[object]:  # type: ignore[no-untyped-def]
    """The calibrate CLI's calibrations, each checked to be the one ``synthetic_cal`` made (the synthetic corpus,
    current rules, default grants and invariants; None invariants are ``AnalystInvariants()``) and answered with
    it: the CLI's own work on its result, without computing it again."""
    from workbench.analysis import calibration
    from workbench.analysis.targets import AnalystInvariants
    from workbench.govern import Policy

    same = (
        sorted(r.run_id for r in wb.load(SYNTHETIC).runs),
        Policy.named("current"),
        None,
        AnalystInvariants(),
    )
    calls: list[object] = []

    def computed(runs, policy, *, grants, invariants):  # type: ignore[no-untyped-def]
        assert (sorted(r.run_id for r in runs.runs), policy, grants, invariants) == same
        calls.append(runs)
        return synthetic_cal

    monkeypatch.setattr(calibration, "calibrate", computed)
    return calls
