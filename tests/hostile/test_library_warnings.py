"""Warnings from the libraries underneath (pandas, matplotlib) never reach stderr raw: a command keeps them, and
``--debug`` says each distinct one once, escaped."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from workbench import cli
from workbench.cli import errors

HOSTILE = "\x1b]0;owned\x07\x1b[2J values from a file"


def warn_twice(args: object) -> int:
    warnings.warn(HOSTILE, FutureWarning, stacklevel=1)
    warnings.warn(HOSTILE, FutureWarning, stacklevel=1)
    return 0


def test_a_command_keeps_library_warnings_off_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "_with_sources", warn_twice)
    assert cli.main(["inspect", "traces"]) == 0
    assert capsys.readouterr().err == ""
    assert cli.main(["--debug", "inspect", "traces"]) == 0
    err = capsys.readouterr().err
    assert err.count("library warning") == 1  # each distinct warning once
    assert "\x1b" not in err and "\x07" not in err and "\\x1b[2J" in err


def test_control_without_capture_the_warning_is_raw() -> None:
    """What Python does with the same warning when nothing captures it: the bytes reach stderr as they are."""
    done = subprocess.run(
        [sys.executable, "-c", f"import warnings; warnings.warn({HOSTILE!r}, FutureWarning)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "\x1b[2J" in done.stderr


def test_the_capture_yields_what_it_kept() -> None:
    with errors.library_warnings("report") as kept:
        warn_twice(None)
        warnings.warn("second", UserWarning, stacklevel=1)
    assert kept == [f"FutureWarning: {HOSTILE}", "UserWarning: second"]
