"""The report over two copies of real runs: every count doubles and every share and recommendation is the
report over one copy's. The runs are a dozen of the shared SWE-bench
runs (``../shared/traces/mini-swe-agent``), copied with their grader reports into a temporary folder."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from workbench.analysis.frontier import SHARES, TABLE
from workbench.report import CalibrationReport, ReportConfig, build_report

pytestmark = pytest.mark.real

RUNS = 12
CONFIG = ReportConfig(
    grants=tuple(range(100_000, 600_001, 10_000)), context_lengths=(None, 65_536), context_grant_points=3
)
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def folder(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = shared / "mini-swe-agent"
    if not src.is_dir():
        pytest.skip("../shared/traces/mini-swe-agent is absent")
    ids = sorted(p.name for p in (src / "trajs").iterdir() if p.is_dir() and "__" in p.name)[:RUNS]
    root = tmp_path_factory.mktemp("copies")
    for k in (0, 1):
        dst = root / f"copy{k}" / "mini-swe-agent"
        shutil.copytree(src / "trajs" / "sb-cli-reports", dst / "trajs" / "sb-cli-reports")
        for i in ids:
            shutil.copytree(src / "trajs" / i, dst / "trajs" / i)
            if (src / "logs" / i).is_dir():
                shutil.copytree(src / "logs" / i, dst / "logs" / i)
    return root


@pytest.fixture(scope="module")
def once(folder: Path) -> CalibrationReport:
    return build_report([folder / "copy0"], config=CONFIG, now=NOW)


@pytest.fixture(scope="module")
def twice(folder: Path) -> CalibrationReport:
    return build_report([folder], config=CONFIG, now=NOW)


def test_every_count_doubles_and_every_share_holds(once: CalibrationReport, twice: CalibrationReport) -> None:
    assert len(once.facts) == RUNS and len(twice.facts) == 2 * RUNS
    assert len(twice.sweep) == 2 * len(once.sweep) and len(twice.context) == 2 * len(once.context)
    assert twice.recommended == once.recommended is not None
    assert [(p.group, p.grant) for p in twice.picks] == [(p.group, p.grant) for p in once.picks]
    for by, fr in once.frontiers.items():
        a, b = fr.table, twice.frontiers[by].table
        keys = ["group", "rules", "grant", "context_length", "basis"]
        pd.testing.assert_frame_equal(a[keys], b[keys])
        for col in (c.name for c in TABLE if c.dtype == "int64" and c.name not in ("grant", "max_raw")):
            assert (b[col] == 2 * a[col]).all(), (by, col)
        for stem in SHARES:
            pd.testing.assert_series_equal(a[f"{stem}_share"], b[f"{stem}_share"], check_exact=True)
        pd.testing.assert_series_equal(a["max_raw"], b["max_raw"])
        for col in ("spend_usd", "spend_saved_usd", "recorded_usd"):
            assert b[col].to_numpy() == pytest.approx(2 * a[col].to_numpy(), rel=1e-12, nan_ok=True)
    bills_a, bills_b = once.bills.totals, twice.bills.totals
    for col in ("cf_spent", "recorded_spent", "saved_spent", "cf_prompt_tokens", "cf_cache_write_tokens"):
        assert (bills_b[col] == 2 * bills_a[col]).all(), col
    for col in ("saved_usd_share", "saved_spent_share"):
        assert bills_b[col].tolist() == bills_a[col].tolist()
    assert once.bills.runs * 2 == twice.bills.runs
