"""Trust at the edges (issue 13): every bad command line and bad input is one clear line and a non-zero exit, or
a correct result; outputs are atomic; nothing the workbench read is written over."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.cli import errors, main

# -- the one error path ---------------------------------------------------------------------------------------

REJECTED = [
    (["replay", "x", "--grant", "-5"], "workbench replay: --grant: must be a whole number > 0, got '-5'"),
    (["replay", "x", "--grant", "0"], "workbench replay: --grant: must be a whole number > 0, got '0'"),
    (
        ["replay", "x", "--max-turns", "0"],
        "workbench replay: --max-turns: must be a whole number > 0, got '0'",
    ),
    (
        ["replay", "x", "--deadline", "-10"],
        "workbench replay: --deadline: must be a finite number > 0, got '-10'",
    ),
    (
        ["replay", "x", "--deadline", "inf"],
        "workbench replay: --deadline: must be a finite number > 0, got 'inf'",
    ),
    (
        ["replay", "x", "--calibration", "nan"],
        "workbench replay: --calibration: must be a finite number >= 1",
    ),
    (
        ["replay", "x", "--calibration", "-1"],
        "workbench replay: --calibration: must be a finite number between 1",
    ),
    (
        ["replay", "x", "--calibration", "0.5"],
        "workbench replay: --calibration: must be a finite number between 1",
    ),
    (["replay", "x", "--estimator", "bogus"], "workbench replay: --estimator: invalid choice: 'bogus'"),
    (
        ["sweep", "x", "--grants", "1:2:1", "--estimator", "bogus", "--out", "s.csv"],
        "workbench sweep: --estimator: invalid choice: 'bogus'",
    ),
    (["sweep", "x", "--grants", "5:1:1", "--out", "s.csv"], "STOP must be >= START, got '5:1:1'"),
    (
        ["sweep", "x", "--grant", "0:10:1", "--out", "s.csv"],
        "workbench sweep: --grants/--grant: expected START",
    ),
    (["report", "--grants", "1:10000000:1", "--out", "r"], "10,000,000 grants; at most 100,000"),
    (["report", "--rules", "current,bogus", "--out", "r"], "workbench report: --rules: unknown 'bogus'"),
    (["report", "--context-lengths", "none,-3", "--out", "r"], "'-3' is not a context length"),
    (
        ["run", "--base-url", "u", "--model", "m", "--deadline", "-10", "--out", "t.jsonl", "task"],
        "workbench run: --deadline: must be a finite number > 0, got '-10'",
    ),
    (
        ["run", "--base-url", "u", "--model", "m", "--max-turns", "0", "--out", "t.jsonl", "task"],
        "workbench run: --max-turns: must be a whole number > 0, got '0'",
    ),
    (["estimate", "x", "--seed", "inf"], "workbench estimate: --seed: must be a finite number >= 1"),
    (["estimate", "x", "--strategy", "magic"], "workbench estimate: --strategy: invalid choice: 'magic'"),
    (["replay", "x", "--grant", str(2**63)], "of at most 9,007,199,254,740,991"),
    (["nosuch"], "workbench: COMMAND: invalid choice: 'nosuch'"),
]


@pytest.mark.parametrize(("argv", "expected"), REJECTED, ids=[" ".join(a) for a, _ in REJECTED])
def test_a_bad_value_is_one_line_and_exit_2_before_any_work(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # "x" does not exist: had any work started, the error would be about the missing path instead.
    assert main(argv) == errors.EXIT_USAGE
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert expected in lines[0]
    assert lines[0].startswith("workbench")
    assert "Traceback" not in captured.err


def test_the_handler_turns_anything_unexpected_into_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    def boom(args: argparse.Namespace) -> int:
        raise KeyError("leaf-7")

    assert errors.handle("replay", boom, argparse.Namespace()) == errors.EXIT_DATA
    err = capsys.readouterr().err
    assert err == (
        "workbench replay: unexpected KeyError: 'leaf-7' (run again with --debug for the traceback)\n"
    )
    assert errors.handle("replay", boom, argparse.Namespace(debug=True)) == errors.EXIT_DATA
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.splitlines()[-1] == "workbench replay: unexpected KeyError: 'leaf-7'"


def test_the_handler_says_what_and_why_for_usage_data_and_os_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def usage(args: argparse.Namespace) -> int:
        raise errors.UsageError("--out report.md", "exists and is not a report folder; give --force")

    def data(args: argparse.Namespace) -> int:
        raise errors.DataError("traces/", "no runs found")

    def os_error(args: argparse.Namespace) -> int:
        raise PermissionError(13, "Permission denied", "/root/x.jsonl")

    assert errors.handle("report", usage, argparse.Namespace()) == 2
    assert errors.handle("inspect", data, argparse.Namespace()) == 1
    assert errors.handle("import", os_error, argparse.Namespace()) == 1
    assert capsys.readouterr().err.splitlines() == [
        "workbench report: --out report.md: exists and is not a report folder; give --force",
        "workbench inspect: traces/: no runs found",
        "workbench import: /root/x.jsonl: Permission denied",
    ]


def test_debug_is_accepted_before_and_after_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "none")
    assert main(["--debug", "inspect", missing]) == 1
    assert main(["inspect", missing, "--debug"]) == 1
    err = capsys.readouterr().err
    assert err.count(f"workbench inspect: {missing}: no such file or folder") == 2


def test_control_characters_are_shown_escaped() -> None:
    assert (
        errors.printable("gpt\x1b[31m-red\x1b[0m\r\n\u202eevil")
        == "gpt\\x1b[31m-red\\x1b[0m\\r\\n\\u202eevil"
    )
    assert errors.printable("a\tb\nc\x07", multiline=True) == "a\tb\nc\\x07"
    assert errors.line("inspect", "run\nid", "bad\x1b") == "workbench inspect: run\\nid: bad\\x1b"


# -- the argument types, over every value hypothesis can think of ---------------------------------------------


@given(st.integers())
def test_positive_int_accepts_exactly_the_counts(n: int) -> None:
    if 0 < n <= errors.MAX_COUNT:
        assert errors.positive_int(str(n)) == n
        assert errors.positive_int(f"{n:_}") == n
        assert errors.positive_int(f"{n:,}") == n
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=repr(str(n))):
            errors.positive_int(str(n))


@given(st.integers())
def test_non_negative_int_accepts_zero(n: int) -> None:
    if 0 <= n <= errors.MAX_COUNT:
        assert errors.non_negative_int(str(n)) == n
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            errors.non_negative_int(str(n))


@given(st.text(max_size=30))
def test_no_text_crashes_a_type(text: str) -> None:
    for parse in (
        errors.positive_int,
        errors.non_negative_int,
        errors.positive_float,
        errors.calibration_factor,
        errors.grant_range,
        errors.context_lengths,
        errors.choice_list(("adr", "exact")),
    ):
        try:
            value = parse(text)
        except argparse.ArgumentTypeError as exc:
            assert str(exc) and "\n" not in str(exc).replace(repr(text), "")
            continue
        assert value is not None


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_calibration_is_a_finite_factor_of_at_least_one(x: float) -> None:
    if math.isfinite(x) and 1 <= x <= 1000:
        assert errors.calibration_factor(repr(x)) == x
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            errors.calibration_factor(repr(x))


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_seconds_are_finite_and_positive(x: float) -> None:
    if math.isfinite(x) and 0 < x <= errors.MAX_COUNT:
        assert errors.positive_float(repr(x)) == x
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            errors.positive_float(repr(x))


@settings(max_examples=200)
@given(st.integers(-5, 400_000), st.integers(-5, 400_000), st.integers(-5, 50_000))
def test_grant_ranges_are_inclusive_positive_and_bounded(start: int, stop: int, step: int) -> None:
    text = f"{start}:{stop}:{step}"
    if start > 0 and step > 0 and stop >= start and (stop - start) // step + 1 <= errors.MAX_GRID_VALUES:
        grants = errors.grant_range(text)
        assert grants == tuple(range(start, stop + 1, step))
        assert grants[0] == start and grants[-1] <= stop < grants[-1] + step
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=f"got '{text}'"):
            errors.grant_range(text)


def test_grant_lists_and_single_grants() -> None:
    assert errors.grant_range("220_000,150_000,150000") == (150_000, 220_000)
    assert errors.grant_range("200000") == (200_000,)
    assert errors.context_lengths("none,32768,none,131_072") == (None, 32_768, 131_072)


@pytest.mark.parametrize("command", ["sweep", "report"])
def test_grants_is_one_spelling_for_sweep_and_report_with_the_old_one_kept(command: str) -> None:
    from workbench.cli import build_parser

    parser = build_parser()
    for flag in ("--grants", "--grant"):
        argv = [command, "p", flag, "100:300:100", "--out", "o.csv"]
        assert parser.parse_args(argv).grants == (100, 200, 300)


def test_help_lists_choices_and_reads_plain(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("import", "inspect", "replay", "sweep", "estimate", "run", "report"):
        assert main([command, "--help"]) == 0
        text = capsys.readouterr().out
        assert "``" not in text and ":func:" not in text, command
        if command in ("replay", "sweep"):
            assert "one of: adr, fitted, anchored, exact" in " ".join(text.split())
        if command in ("replay", "sweep", "run", "report"):
            assert "one of: current, ink-s9, older, openhands" in " ".join(text.split())
