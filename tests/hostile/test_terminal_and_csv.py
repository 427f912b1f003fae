"""Red team, terminal and files (issue 25): a hostile run id — a newline, an ESC sequence, a spreadsheet formula —
reaches neither the terminal raw (``replay``, ``inspect``) nor a spreadsheet as a formula (every CSV the tool
writes). Each test first holds that the hostile text really is in the loaded run (the control: without the
escaping, the asserted line counts and cells are exactly what breaks)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pytest

from workbench.cli import main
from workbench.outputs import csv_cell, csv_text
from workbench.scale import load
from workbench.scenarios.seed import constant_turns
from workbench.trace import write_run

HOSTILE_ID = '=HYPERLINK("http://evil/")\nforged-run under current: done at turn 0\x1b]0;owned\x07\x1b[2J'


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    run = constant_turns(5, 1_000).model_copy(update={"run_id": HOSTILE_ID})
    path = tmp_path / "hostile.jsonl"
    write_run(run, path)
    (loaded,) = load(path, cache=False).runs
    assert loaded.run_id == HOSTILE_ID  # the control: the id arrives intact, newline and ESC included
    return path


def test_replay_prints_a_hostile_run_id_escaped_on_one_line(
    hostile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(hostile), "--grant", "250000"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) == 1, lines  # one run, one row: the id's newline did not forge a second one
    assert "\x1b" not in out and "\x07" not in out
    assert lines[0].startswith(
        '=HYPERLINK("http://evil/")\\nforged-run under current: done at turn 0\\x1b]0;owned'
    )


def test_inspect_prints_no_literal_backslash_n_and_escapes_ids(
    hostile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["inspect", str(hostile)])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert not any(line.startswith("\\n") for line in out.splitlines())  # was "\n1 runs from 1 files (...)"
    assert any(line.startswith("1 runs from 1 files (") for line in out.splitlines())
    assert not any(line.startswith("forged-run") for line in out.splitlines())


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cell_prefixes_every_formula_start(start: str) -> None:
    assert csv_cell(f"{start}1+1") == f"'{start}1+1"


def test_csv_cell_leaves_plain_text_and_numbers() -> None:
    assert csv_cell("run-1") == "run-1"
    assert csv_cell(-5) == -5 and csv_cell(-0.5) == -0.5  # a negative number is a number, not a formula
    assert csv_cell(None) is None


def test_csv_text_prefixes_text_columns_only() -> None:
    frame = pd.DataFrame({"run_id": ["=cmd|' /C calc'!A0", "ok"], "spent": [-3, 4]})
    rows = list(csv.reader(io.StringIO(csv_text(frame))))
    assert rows == [["run_id", "spent"], ["'=cmd|' /C calc'!A0", "-3"], ["ok", "4"]]
    assert frame["run_id"][0].startswith("=")  # the caller's frame is not changed


def test_sweep_csv_cells_are_not_formulas(hostile: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep.csv"
    assert (
        main(["sweep", str(hostile), "--grants", "100000:200000:100000", "--out", str(out), "--quiet"]) == 0
    )
    frame = pd.read_csv(out)
    assert len(frame) == 2
    assert set(frame["run_id"]) == {"'" + HOSTILE_ID}
    for column in frame.columns:
        for value in frame[column]:
            assert not (isinstance(value, str) and value.startswith(("=", "+", "-", "@", "\t", "\r"))), column


def test_bills_csv_cells_are_not_formulas(hostile: Path, tmp_path: Path) -> None:
    out = tmp_path / "bills.csv"
    main(["bills", str(hostile), "--grants", "250000", "--out", str(out)])
    frame = pd.read_csv(out)
    assert len(frame) >= 1
    assert set(frame["run_id"]) == {"'" + HOSTILE_ID}


def test_every_csv_the_tool_writes_goes_through_csv_text() -> None:
    # A new writer calling pandas' to_csv (or the csv module) directly would skip the prefixing.
    import workbench

    root = Path(workbench.__file__).parent
    direct = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if p.name != "outputs.py" and (".to_csv(" in p.read_text() or "csv.writer(" in p.read_text())
    ]
    assert direct == []
