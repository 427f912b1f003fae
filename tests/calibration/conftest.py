"""The shared mini-swe-agent runs' calibration, computed once for every test that only reads it (each family's
rows come from the same evidence alone, so a test of one family reads that family's rows here)."""

from __future__ import annotations

from pathlib import Path

import pytest

import workbench as wb
from workbench.analysis import calibrate


@pytest.fixture(scope="session")
def msa(shared: Path) -> Path:
    return shared / "mini-swe-agent"


@pytest.fixture(scope="session")
def cal_msa(msa: Path):  # type: ignore[no-untyped-def]
    return calibrate(wb.load(msa), "current")
