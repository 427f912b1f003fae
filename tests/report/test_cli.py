"""``workbench report``: arguments, bad input, and the report over the real traces."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.cli.errors import context_lengths as parse_context_lengths
from workbench.cli.errors import grant_range as parse_grants


def test_grant_ranges_are_inclusive() -> None:
    assert parse_grants("200000:202000:1000") == (200_000, 201_000, 202_000)
    assert parse_grants("220_000,150_000") == (150_000, 220_000)
    for bad in ("300000:200000:1000", "1:2:0", "a:b:c", "0:10:1", "-5", "1:2", ""):
        with pytest.raises(argparse.ArgumentTypeError, match=repr(bad).replace("(", r"\(")):
            parse_grants(bad)


def test_context_lengths_take_none() -> None:
    assert parse_context_lengths("none,32768,131_072") == (None, 32_768, 131_072)
    with pytest.raises(argparse.ArgumentTypeError, match="'big'"):
        parse_context_lengths("none,big")


def test_missing_path_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 1
    assert "nope" in capsys.readouterr().err


def test_a_folder_with_nothing_to_replay_is_named_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """40 runs with no calls (enough for the bills to start on the workers before the leaves are read): one line
    naming the folder given, not each of its files, and no report written."""
    from workbench.scenarios.seed import mixed_run
    from workbench.trace.native import write_run

    (tmp_path / "runs").mkdir()
    for i in range(40):
        write_run(
            mixed_run(i, max_turns=4).model_copy(update={"turns": []}), tmp_path / "runs" / f"{i:02d}.jsonl"
        )
    assert main(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "o"), "--workers", "2"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"workbench report: no replayable runs under {tmp_path / 'runs'}"
    assert not (tmp_path / "o").exists()


@pytest.mark.real
def test_report_over_shared_traces(shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rep"
    code = main(
        [
            "report",
            str(shared),
            "--grants",
            "150000:300000:10000",
            "--context-lengths",
            "none,65536",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    # No runaway among real recordings: the invariants read the seed's synthetic probe, and the report says so.
    assert (
        "grant band 200,000 to 240,000 tokens of billed work (edges to the token: 192,097 to 241,349)" in text
    )
    html = (out / "report.html").read_text()
    assert "invariant probe seed-warm-runaway was generated" in html
    assert "claude-code" in html and "openhands" in html and "codex-cli" in html
    assert (out / "report.md").is_file() and (out / "sweep.png").is_file() and (out / "heatmap.png").is_file()
    # every file under the folder that was not loaded is listed with its reason (nothing silently dropped)
    manifest = next(shared.glob("MANIFEST.*"))  # the corpus's own notes: not a trace
    assert f"<li><code>{manifest}</code>: unrecognised format: no importer recognises this file" in html
    assert f"- `{manifest}`: unrecognised format" in (out / "report.md").read_text()
    assert "file(s) under the given paths were not loaded" in html
    # the grader's files were read for their labels: listed as labels read, never as "not loaded"
    labels_at, missing_at = html.index("Read as outcome labels ("), html.index("<summary>Not loaded (")
    grader = next(shared.glob("mini-swe-agent/logs/*/report.json"))
    assert labels_at < html.index(f"<li><code>{grader}</code>") < missing_at
    assert "grader results file(s) (SWE-bench reports) were read as outcome labels" in html
