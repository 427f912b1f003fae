from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from workbench.cli import main
from workbench.scenarios.seed import constant_turns, warm_runaway
from workbench.trace import write_run


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    write_run(warm_runaway(), tmp_path / "runaway.jsonl")
    write_run(constant_turns(5, 1_000), tmp_path / "small.jsonl")
    return tmp_path


def test_replay_json(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(traces / "runaway.jsonl"), "--grant", "250000", "--json"]) == 0
    (line,) = capsys.readouterr().out.strip().splitlines()
    row = json.loads(line)
    for key in (
        "run_id",
        "rules",
        "grant",
        "stop_reason",
        "stop_turn",
        "verdict",
        "spent",
        "raw",
        "landing_started_at",
        "wrapup_at",
        "concluded_at",
        "diverges_at",
        "censored",
        "cut_turns",
        "events",
    ):
        assert key in row
    assert (row["grant"], row["raw"], row["stop_reason"]) == (250_000, 1_442_112, "budget")
    assert row["events"][-1]["action"] == "stop"


def test_replay_text_rules_turns_and_deadline(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["replay", str(traces), "--rules", "ink-s9", "--max-turns", "3", "--deadline", "60", "--segments"]
    assert main(args) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 2 and all("turn-cap at turn 2" in line for line in out)


def test_replay_context_length_turns_the_manager_on(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --context-length there is no manager (no context figures); with one too small for the opening
    request, CONTEXT_TRUNCATED ends the run before any provider call."""
    assert main(["replay", str(traces / "small.jsonl"), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out.strip().splitlines()[0])
    assert plain["stop_reason"] == "done" and plain["policy"]["context_length"] is None
    assert main(["replay", str(traces / "small.jsonl"), "--context-length", "10", "--json"]) == 0
    tight = json.loads(capsys.readouterr().out.strip().splitlines()[0])
    assert (tight["stop_reason"], tight["stop_turn"], tight["verdict"]) == (
        "context-truncated",
        -1,
        "context_truncated",
    )
    assert tight["policy"]["context_length"] == 10


def test_sweep_writes_csv_and_parquet(
    traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "out" / "grants.csv"
    assert (
        main(
            [
                "sweep",
                str(traces),
                "--grant",
                "100000:300000:100000",
                "--out",
                str(csv),
                "--workers",
                "1",
                "--quiet",
            ]
        )
        == 0
    )
    frame = pd.read_csv(csv)
    assert len(frame) == 6 and sorted(frame.grant.unique()) == [100_000, 200_000, 300_000]
    pq = tmp_path / "grants.parquet"
    assert (
        main(
            [
                "sweep",
                str(traces),
                "--grant",
                "220000",
                "--rules",
                "ink-s9",
                "--out",
                str(pq),
                "--quiet",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    frame = pd.read_parquet(pq)
    assert set(frame.rules) == {"ink-s9"} and set(frame.grant) == {220_000}
    assert "6 rows" in capsys.readouterr().out


def test_sweep_rejects_bad_output_and_ranges(traces: Path) -> None:
    assert main(["sweep", str(traces), "--grant", "1:2:3", "--out", "x.txt"]) == 2
    assert main(["sweep", str(traces), "--grant", "5:1:1", "--out", "x.csv"]) == 2
