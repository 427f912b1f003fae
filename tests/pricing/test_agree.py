"""One price everywhere: ``inspect``, the frontier, ``bills --ungoverned`` and the report give every shared Claude
Code run the same dollars (one-hour cache writes at 2x input in all four), and model names group by route-free
names with the raw name kept beside."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.pricing import normalise_model

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, cwd=REPO, check=True
    )
    return out.stdout


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("@google/gemini-3-pro-preview", "gemini-3-pro-preview"),
        ("google/gemini-3-pro-preview", "gemini-3-pro-preview"),
        ("openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-opus-4@20250514", "claude-opus-4"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4.1", "gpt-4.1"),  # only Claude's dotted versions are Anthropic's hyphens
        ("GPT-5", "gpt-5"),
        ("claude-opus-4-6", "claude-opus-4-6"),
    ],
)
def test_model_names_normalise_per_route(raw: str, name: str) -> None:
    assert normalise_model(raw) == name


def test_an_unrecorded_model_stays_unknown() -> None:
    assert normalise_model(None) is None


@given(st.text(min_size=1, max_size=40))
def test_normalising_is_idempotent(raw: str) -> None:
    once = normalise_model(raw)
    assert once is not None and normalise_model(once) == once


@pytest.mark.real
def test_inspect_frontier_bills_and_report_agree(shared: Path, tmp_path: Path) -> None:
    from workbench.report import ReportConfig, build_report
    from workbench.report.render import report_tables

    root = shared / "claude-code"
    if not root.is_dir():
        pytest.skip("../shared/traces/claude-code is absent")
    inspect = {r["run_id"]: r for r in json.loads(_cli("inspect", "--json", str(root)))["runs"]}
    _cli("bills", "--ungoverned", str(root), "--out", str(tmp_path / "bills.csv"))
    with (tmp_path / "bills.csv").open() as fh:
        bills = {r["run_id"]: float(r["recorded_usd"]) for r in csv.DictReader(fh)}
    report = build_report(
        [root],
        config=ReportConfig(grants=(100_000, 600_000), context_lengths=(None,), context_grant_points=2),
    )
    frontier: dict[str, float] = defaultdict(float)  # the frontier works on leaves (a session's segments)
    for leaf, usd in zip(report.frontier.runs["run_id"], report.frontier.runs["recorded_usd"], strict=True):
        frontier[leaf.split("#")[0]] += usd
    assert set(bills) == set(inspect)
    for run_id, r in inspect.items():
        assert bills[run_id] == pytest.approx(r["cost_usd"], rel=1e-9), run_id
    # the frontier (and so the report) reads every run but Claude Code's own compaction calls
    compactions = {k for k, r in inspect.items() if r["role"] == "compaction"}
    assert set(frontier) == set(inspect) - compactions
    for run_id, usd in frontier.items():
        assert usd == pytest.approx(inspect[run_id]["cost_usd"], rel=1e-9), run_id
    (row,) = report_tables(report)["corpus"].to_dict("records")
    assert row["USD"] == f"${sum(frontier.values()):,.2f}"
    assert row["USD"] == "$50.48"  # $51.70 in inspect, less $1.23 of compaction calls
    assert f"${sum(r['cost_usd'] for r in inspect.values()):,.2f}" == "$51.70"


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("/ 0", "0"),
        ("x-20250101-20250102", "x"),
        ("openrouter/ claude-sonnet-4.5 ", "claude-sonnet-4-5"),
        ("/", "/"),
    ],
)
def test_a_name_that_one_pass_leaves_unfinished_is_normalised_to_the_end(raw: str, name: str) -> None:
    assert normalise_model(raw) == name
