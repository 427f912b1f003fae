"""Every subcommand that reads runs says plainly that a path does not exist (no traceback) and exits non-zero."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.cli import main

COMMANDS = {
    "inspect": [],
    "import": ["--out", "{tmp}/out"],
    "replay": [],
    "sweep": ["--grant", "100000:200000:100000", "--out", "{tmp}/s.csv"],
    "estimate": [],
    "calibrate": [],
    "report": ["--out", "{tmp}/report"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_missing_path_is_a_clear_error(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-trace.jsonl"
    extra = [a.format(tmp=tmp_path) for a in COMMANDS[command]]
    code = main([command, str(missing), *extra])
    err = capsys.readouterr().err
    assert code != 0
    assert f"{missing}: no such file or folder" in err
    assert "Traceback" not in err
