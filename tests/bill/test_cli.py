"""``workbench replay`` with a context policy: the counterfactual bill in --json and on the line; bad values are
a usage error naming the flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bill._runs import tool_loop
from workbench.cli import main
from workbench.replay.bill import counterfactual_bill
from workbench.trace.native import write_run

SIZES = [4000, 300, 6000, 200, 5000, 800, 7000, 100, 3000, 2500, 900, 6000]


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    return write_run(tool_loop(SIZES), tmp_path / "loop.jsonl")


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    out = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert len(out) == 1
    return json.loads(out[0])


def test_json_carries_the_counterfactual_beside_the_recording(trace: Path, capsys) -> None:
    args = ["replay", str(trace), "--grant", "100000000", "--json"]
    assert main(args) == 0
    d = _json(capsys)
    keys = {
        "prompt_tokens",
        "cached_tokens",
        "cache_write_tokens",
        "completion_tokens",
        "spent",
        "usd",
        "calls",
    }
    assert set(d["counterfactual"]) == keys
    for k in ("prompt", "cached", "cache_write"):
        assert f"recorded_{k}_tokens" in d
    assert d["bill"]["first_change"] is None and d["bill"]["cache_family"] == "anthropic"
    calls = d["counterfactual"]["calls"]
    bill = counterfactual_bill(tool_loop(SIZES))
    assert d["counterfactual"]["prompt_tokens"] == bill.counterfactual(calls)["prompt_tokens"]


def test_mask_moves_the_bill_and_the_divergence(trace: Path, capsys) -> None:
    assert main(["replay", str(trace), "--grant", "100000000", "--mask-observations", "2", "--json"]) == 0
    d = _json(capsys)
    assert d["bill"]["first_change"] == 3 and d["diverges_at"] == 3
    assert d["counterfactual"]["prompt_tokens"] < d["recorded_prompt_tokens"]
    assert d["bill"]["context_policy"] == "mask 2"


def test_readable_line_names_the_bill(trace: Path, capsys) -> None:
    assert main(["replay", str(trace), "--mask-observations", "2"]) == 0
    assert "bill under mask 2 (anthropic cache)" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["-1", "two", "1.5"])
def test_bad_mask_is_a_usage_error(trace: Path, capsys, value: str) -> None:
    assert main(["replay", str(trace), "--mask-observations", value]) == 2
    err = capsys.readouterr().err
    assert "--mask-observations" in err and "Traceback" not in err


def test_bills_grid_writes_rows_and_prints_totals(trace: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "bills.csv"
    args = [
        "bills",
        str(trace),
        "--context-lengths",
        "none,16000",
        "--masks",
        "none,2",
        "--grants",
        "none,40000",
    ]
    assert main([*args, "--out", str(out)]) == 0
    import pandas as pd

    rows = pd.read_csv(out)
    assert len(rows) == 8  # 1 run x 2 lengths x 2 grants x 2 masks
    base = rows[rows["context_length"].isna() & rows["mask"].isna() & rows["grant"].isna()].iloc[0]
    assert base["cf_spent"] == base["recorded_spent"] and base["saved_spent"] == 0
    text = capsys.readouterr().out.splitlines()
    # the recorded bill first, exactly; then each cell labelled as the policy's governed bill, money as $1,234.56
    assert text[2].startswith("recorded (as the runs were billed)")
    assert f"{int(base['recorded_spent']):,}" in text[2]
    assert all(line.startswith("current, governed") for line in text[3:11]) and not text[11].strip()


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--masks", "5,x"), ("--masks", "-1"), ("--context-lengths", "0"), ("--grants", "1:5:1,7")],
)
def test_bills_bad_values_are_usage_errors(trace: Path, capsys, flag: str, value: str) -> None:
    assert main(["bills", str(trace), flag, value]) == 2
    err = capsys.readouterr().err
    assert flag in err and "Traceback" not in err


def test_bills_refuses_an_out_that_is_not_a_table(trace: Path, tmp_path: Path, capsys) -> None:
    assert main(["bills", str(trace), "--out", str(tmp_path / "x.txt")]) == 2
    assert "--out" in capsys.readouterr().err
