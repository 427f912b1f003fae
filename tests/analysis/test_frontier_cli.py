"""``workbench frontier``: the JSON lines, the text answer, the invariants flags and file, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.analysis.frontier import COLUMNS, frontier
from workbench.cli import main
from workbench.scenarios.labelled import labelled_runs
from workbench.trace.native import write_run


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("labelled")
    for run in labelled_runs(12, seed=3):
        write_run(run, out / f"{run.run_id}.jsonl")
    return out


def test_json_lines_carry_every_column(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frontier", str(corpus), "--grants", "100000:300000:100000", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    rows = [x for x in lines if "recommendation" not in x]
    recs = [x["recommendation"] for x in lines if "recommendation" in x]
    assert [r["grant"] for r in rows] == [100_000, 200_000, 300_000]
    assert all(list(r) == list(COLUMNS) for r in rows)
    assert {r["group"] for r in rows} == {"synthetic"} and {r["rules"] for r in rows} == {"current"}
    assert all(r["context_length"] is None for r in rows)
    # the same figures as the Python API
    fr = frontier(labelled_runs(12, seed=3), grants=[100_000, 200_000, 300_000])
    for r in rows:
        p = fr.point(r["grant"]).row
        for key in ("resolved", "resolved_kept", "resolved_at_risk", "resolved_lost", "spend_saved_tokens"):
            assert r[key] == p[key]
    assert len(recs) == 1 and recs[0]["invariants"]["keep_resolved"] == 0.95


def test_text_answer_and_flags(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["frontier", str(corpus), "--grants", "100000:600000:50000"]
    assert main([*args, "--keep-resolved", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "Wilson score interval" in out and "recommended grant" in out and "success = resolved" in out
    f = tmp_path / "inv.toml"
    f.write_text("[invariants]\nmax_lost = 0\n")
    assert main([*args, "--invariants", str(f), "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    (rec,) = [x["recommendation"] for x in lines if "recommendation" in x]
    lost = {x["grant"]: x["resolved_lost"] for x in lines if "grant" in x and "recommendation" not in x}
    assert rec["grant"] == min(g for g, n in lost.items() if n == 0)
    assert rec["invariants"]["keep_resolved"] is None and rec["invariants"]["max_lost"] == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--grants", "3:1:1"], "--grants: STOP must be >= START"),
        (["--rules", "nonsense"], "--rules: unknown 'nonsense'"),
        (["--context-lengths", "big"], "--context-lengths: 'big' is not a context length"),
        (
            ["--invariants", "/no/such/inv.toml"],
            "--invariants: /no/such/inv.toml: cannot read invariants file",
        ),
        (["--keep-resolved", "2"], "--keep-resolved: must be a share in (0, 1]"),
        (["--confidence", "1.2"], "--confidence: must be between 0 and 1"),
    ],
)
def test_bad_arguments_are_one_line(
    corpus: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["frontier", str(corpus), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.startswith("workbench frontier: ")


def test_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.jsonl"
    assert main(["frontier", str(missing)]) != 0
    err = capsys.readouterr().err
    assert f"{missing}: no such file or folder" in err and "Traceback" not in err


@pytest.mark.real
def test_on_the_shared_swe_bench_runs(shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = shared / "mini-swe-agent"
    assert main(["frontier", str(root), "--grants", "200000:360000:20000"]) == 0
    out = capsys.readouterr().out
    assert "recommended grant 340,000" in out
    assert "57 of 60 resolved runs kept (95.0%, 95% Wilson score interval 86.3% to 98.3%)" in out
