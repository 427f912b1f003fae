"""``workbench import`` and ``workbench inspect``: outputs, exit codes, clear one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.samples.lines import openai_log_lines
from workbench.cli import main
from workbench.trace import read_run


def log_file(tmp_path: Path) -> Path:
    path = tmp_path / "calls.jsonl"
    path.write_bytes(b"".join(openai_log_lines()))
    return path


def test_import_writes_one_native_file_per_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = log_file(tmp_path)
    assert main(["import", str(src), "--out", str(tmp_path / "out")]) == 0
    (written,) = sorted((tmp_path / "out").glob("*.jsonl"))
    run = read_run(written)
    assert (run.run_id, run.source, len(run.turns)) == ("r", "openai-log", 2)
    out = capsys.readouterr().out
    assert "openai-log" in out and "1 runs from 1 files" in out


def test_inspect_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = log_file(tmp_path)
    assert main(["inspect", str(src), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (r,) = doc["runs"]
    assert (r["run_id"], r["calls"], r["prompt_tokens"], r["completion_tokens"]) == ("r", 2, 30, 3)
    assert r["lossy"] and doc["problems"] == []


def test_bad_lines_are_warned_and_the_rest_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = log_file(tmp_path)
    src.write_bytes(src.read_bytes() + b'{"request": {"messages": [')
    assert main(["inspect", str(src)]) == 0
    out = capsys.readouterr().out
    assert f"{src}:4: truncated line" in out


def test_nothing_readable_exits_non_zero_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "junk.jsonl"
    bad.write_text('{"hello": 1}\n')
    assert main(["inspect", str(bad)]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "no importer recognises" in err
    assert main(["import", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")]) == 1
    assert "no such file or folder" in capsys.readouterr().err


def test_inspect_without_paths_reads_bundled_and_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects" / "p"
    projects.mkdir(parents=True)
    from tests.samples.lines import claude_code_lines

    (projects / "s1.jsonl").write_bytes(b"".join(claude_code_lines()))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr("workbench.cli.inspect_cmd.bundled_traces", lambda: tmp_path / "no-traces")
    assert main(["inspect", "--json"]) == 0
    (r,) = json.loads(capsys.readouterr().out)["runs"]
    assert (r["source"], r["calls"]) == ("claude-code", 2)


def test_import_all_shared_traces(shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(shared), "--out", str(tmp_path)]) == 0
    # 25 Claude Code / OpenHands / Codex runs from 23 files, and 100 mini-swe-agent runs, one file each
    assert len(list(tmp_path.glob("*.jsonl"))) == 125
    assert "125 runs from 123 files" in capsys.readouterr().out


def test_inspect_all_shared_traces(shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(shared), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    runs = {r["run_id"]: r for r in doc["runs"]}
    assert len(runs) == 125 and doc["problems"] == []
    assert sum(1 for r in runs.values() if r["label"] == "resolved") == 60
    assert runs["ponylang__ponyc-4588"]["stop"] == "max-iterations"
    assert runs["019a93b9-f380-7600-98ff-940e6b99603c"]["context_length"] == 258400
    assert runs["ae4a77f8-aedd-4bc1-888f-c94edc91af04"]["events"] == "compaction x1"
    assert all(r["lossy"] for r in runs.values())


def test_unrecognised_files_in_a_folder_are_counted_not_hidden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "calls.jsonl").write_bytes(b"".join(openai_log_lines()))
    (folder / "notes.json").write_text('{"hello": 1}\n')
    assert main(["inspect", str(folder), "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert len(doc["runs"]) == 1
    assert [s["path"] for s in doc["skipped"]] == [str(folder / "notes.json")]
    assert doc["skipped"][0]["reason"].startswith("unrecognised format: no importer recognises this file")
    assert "(1 skipped, in no supported format)" in captured.err
