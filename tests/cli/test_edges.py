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
    from workbench.cli import build_parser

    commands = sorted(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert {"import", "inspect", "replay", "sweep", "estimate", "run", "report"} <= set(commands)
    for command in commands:
        assert main([command, "--help"]) == 0
        text = capsys.readouterr().out
        assert "``" not in text and ":func:" not in text and ":class:" not in text, command
        if command in ("replay", "sweep"):
            assert "one of: adr, fitted, anchored, exact" in " ".join(text.split())
        if command in ("replay", "sweep", "run", "report"):
            # every rule set, sorted: the seed's four and the agents' own limits (55d18e5)
            rule_sets = "claude-code, current, ink-s9, inspect, mini-swe-agent, older, openhands, swe-agent"
            assert f"one of: {rule_sets} (default: current" in " ".join(text.split())


# -- readers are bounded --------------------------------------------------------------------------------------


def _native(tmp: Path, name: str = "good.jsonl", **changes: object) -> Path:
    from tests.samples.lines import small_run
    from workbench.trace import write_run

    run = small_run().model_copy(update=changes)
    return write_run(run, tmp / name)


@pytest.mark.timeout(30)
def test_fifos_devices_and_dangling_links_are_refused_and_the_good_files_still_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    folder = tmp_path / "corpus"
    folder.mkdir()
    _native(folder)
    os.mkfifo(folder / "pipe.jsonl")  # opening it would block forever
    (folder / "dangling.jsonl").symlink_to(folder / "nowhere.jsonl")
    (folder / "loop-a.jsonl").symlink_to(folder / "loop-b.jsonl")
    (folder / "loop-b.jsonl").symlink_to(folder / "loop-a.jsonl")
    assert main(["inspect", str(folder)]) == 1  # something could not be read: said, and not a success
    out, err = capsys.readouterr()
    assert "r1" in out  # the good run is there
    assert f"{folder / 'pipe.jsonl'}: not read: a FIFO (named pipe)" in err
    assert f"{folder / 'dangling.jsonl'}: dangling or looping symbolic link" in err
    assert f"{folder / 'loop-a.jsonl'}: dangling or looping symbolic link" in err
    assert "Traceback" not in err


@pytest.mark.timeout(120)
def test_a_report_over_a_folder_with_a_fifo_is_written_and_says_it_was_not_all_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from workbench.paths import bundled_traces

    folder = tmp_path / "corpus"
    folder.mkdir()
    for f in sorted(bundled_traces().glob("synthetic/honest-leaf-0*.jsonl"))[:4]:
        (folder / f.name).write_bytes(f.read_bytes())
    os.mkfifo(folder / "pipe.jsonl")
    out = tmp_path / "report"
    assert main(["report", str(folder), *REPORT_ARGS, "--out", str(out)]) == 1  # written, but not a success
    err = capsys.readouterr().err
    assert f"{folder / 'pipe.jsonl'}: not read: a FIFO (named pipe)" in err
    assert (out / "report.html").is_file() and "Traceback" not in err


@pytest.mark.timeout(30)
def test_dev_zero_is_refused_without_being_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "/dev/zero"]) == 1
    err = capsys.readouterr().err
    assert "workbench inspect: /dev/zero: not read: a device" in err


def test_the_line_cap_applies_while_reading() -> None:
    import io

    from workbench.trace.limits import TooLong, bounded_lines

    class Zeros(io.RawIOBase):
        """A line of 10 MB of zero bytes, then one good line; counts the most any read asked for."""

        def __init__(self) -> None:
            self.left = 10_000_000
            self.tail = b'\n{"ok": 1}\n'
            self.largest = 0

        def readable(self) -> bool:
            return True

        def readinto(self, b: bytearray) -> int:  # type: ignore[override]
            self.largest = max(self.largest, len(b))
            if self.left:
                n = min(len(b), self.left)
                b[:n] = b"\0" * n
                self.left -= n
                return n
            n = min(len(b), len(self.tail))
            b[:n], self.tail = self.tail[:n], self.tail[n:]
            return n

    raw = Zeros()
    lines = list(bounded_lines(io.BufferedReader(raw), max_line=1_000))
    assert lines == [(1, TooLong(10_000_001, complete=True)), (2, b'{"ok": 1}\n')]
    assert raw.largest <= 1 << 20  # never asked for more than a chunk at a time


def test_an_over_long_line_is_one_diagnostic_and_the_rest_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.samples.lines import openai_log_lines
    from workbench.scale import load_file
    from workbench.trace import limits

    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 2_000)
    lines = openai_log_lines()
    path = tmp_path / "log.jsonl"
    path.write_bytes(lines[0] + lines[1] + b'{"pad": "' + b"x" * 5_000 + b'"}\n' + lines[2])
    (run,) = load_file(path)
    assert len(run.turns) == 2
    assert [str(d) for d in run.diagnostics] == [
        f"{path}:3: line of 5,012 bytes skipped: longer than the 2,000-byte limit"
    ]


def test_past_a_thousand_problems_a_file_counts_them(tmp_path: Path) -> None:
    from tests.samples.lines import openai_log_lines
    from workbench.scale import load_file

    lines = openai_log_lines()
    path = tmp_path / "log.jsonl"
    path.write_bytes(lines[0] + lines[1] + b"not json\n" * 5_000 + lines[2])
    (run,) = load_file(path)
    assert len(run.turns) == 2
    assert len(run.diagnostics) == 1_001
    assert str(run.diagnostics[0]).startswith(f"{path}:3: not JSON")
    assert run.diagnostics[-1].message == "4,000 more problems not kept (the first 1,000 are listed)"
    assert run.diagnostics.total == 5_000  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", [2**53, 2**63, 2**63 + 5, 10**30])
def test_implausible_token_counts_become_diagnostics_everywhere(
    value: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from tests.samples.lines import openai_log_lines, small_run
    from workbench.scale import load_file
    from workbench.trace import write_run

    run = small_run()
    run.turns[1].usage.prompt = 777_777
    native = write_run(run, tmp_path / "n" / "big.jsonl")
    native.write_bytes(native.read_bytes().replace(b'"prompt":777777', f'"prompt":{value}'.encode()))
    (back,) = load_file(native)
    assert back.turns[1].usage.prompt is None and back.turns[1].usage.cached == 10
    assert "implausible token count" in str(back.diagnostics[0])
    lines = openai_log_lines()
    call = json.loads(lines[2])
    call["response"]["usage"]["prompt_tokens"] = value
    log = tmp_path / "n" / "log.jsonl"
    log.write_bytes(lines[0] + lines[1] + json.dumps(call).encode() + b"\n")
    (imported,) = load_file(log)
    assert imported.turns[1].usage.prompt is None
    assert "implausible token count" in str(imported.diagnostics[0])
    # the commands that once crashed on them: a sweep and a report's sweep over int64 columns
    assert (
        main(
            [
                "sweep",
                str(tmp_path / "n"),
                "--grants",
                "10:20:10",
                "--out",
                str(tmp_path / "s.csv"),
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()


def test_deeply_nested_values_do_not_crash_a_reader(tmp_path: Path) -> None:
    import json

    from tests.samples.lines import claude_code_lines
    from workbench.scale import load_file

    base = {"sessionId": "s1", "type": "system", "level": "error", "uuid": "e1", "content": "x"}
    deep = json.dumps({**base, "timestamp": json.loads("[" * 300 + "]" * 300)}).encode()
    medium = json.dumps({**base, "uuid": "e2", "timestamp": json.loads("[" * 150 + "]" * 150)}).encode()
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b"".join(claude_code_lines()) + deep + b"\n" + medium + b"\n")
    (run,) = load_file(path)
    assert len(run.turns) == 2
    messages = [str(d) for d in run.diagnostics]
    assert f"{path}:7: nested deeper than 200 levels" in messages


def test_one_bad_character_does_not_drop_a_call(tmp_path: Path) -> None:
    import json

    from tests.samples.lines import openai_log_lines
    from workbench.scale import load_file
    from workbench.trace import read_run, write_run

    lines = openai_log_lines()
    call = json.loads(lines[2])
    call["request"]["messages"][1]["content"] = "bad \udc80 value"
    path = tmp_path / "log.jsonl"
    path.write_bytes(lines[0] + lines[1] + json.dumps(call).encode() + b"\n")
    (run,) = load_file(path)
    assert len(run.turns) == 2  # the call is kept
    assert [str(d) for d in run.diagnostics] == [
        f"{path}:3: request.messages[1].content: invalid text (a lone UTF-16 surrogate) replaced with U+FFFD; "
        "the rest of the line kept"
    ]
    assert "bad \ufffd value" in [m.content for m in run.messages]
    assert read_run(write_run(run, tmp_path / "back.jsonl")).turns == run.turns  # and it writes back


# -- outputs are atomic and never over an input ------------------------------------------------------------------


def test_colliding_and_over_long_run_ids_get_distinct_safe_files(tmp_path: Path) -> None:
    from workbench.cli.import_cmd import NAME_MAX, file_name, plan

    ids = ["a/b", "a__b", "A__B", "a__b-1", "x" * 300, "x" * 300 + "y", "", "..", "evil\n# id"]
    paths = plan(ids, tmp_path)
    names = [p.name for p in paths]
    assert len({n.casefold() for n in names}) == len(ids)
    assert all(len(n.encode()) <= NAME_MAX and "/" not in n and "\n" not in n for n in names)
    assert names[:4] == ["a__b.jsonl", "a__b-1.jsonl", "A__B-2.jsonl", "a__b-1-1.jsonl"]
    assert file_name("") == file_name("..") == "run.jsonl" and names[6:8] == ["run.jsonl", "run-1.jsonl"]
    # long ids keep their start and differ by a hash of the whole id
    assert names[4].startswith("x" * 100) and names[4] != names[5]


def test_import_writes_every_colliding_and_long_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.scale import load

    src = tmp_path / "src"
    for i, run_id in enumerate(["a/b", "a__b", "x" * 300, "x" * 300 + "y"]):
        _native(src, f"f{i}.jsonl", run_id=run_id)
    out = tmp_path / "out"
    assert main(["import", str(src), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    back = load(out)
    assert sorted(r.run_id for r in back.runs) == sorted(["a/b", "a__b", "x" * 300, "x" * 300 + "y"])
    assert all(not r.diagnostics for r in back.runs)
    for f in back.files:
        assert str(f) in text  # the table shows the whole path written
    assert "…" not in text.split("written")[-1]


def test_import_never_writes_over_an_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.samples.lines import claude_code_lines

    folder = tmp_path / "project"
    folder.mkdir()
    session = folder / "s1.jsonl"  # a Claude Code session: its run id is the file's stem
    session.write_bytes(b"".join(claude_code_lines()))
    before = session.read_bytes()
    for extra in ([], ["--force"]):
        assert main(["import", str(folder), "--out", str(folder), *extra]) == 2
        err = capsys.readouterr().err
        assert f"workbench import: --out {folder}: would write over the input {session}" in err
        assert session.read_bytes() == before


def test_import_refuses_existing_traces_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    _native(src)
    out = tmp_path / "out"
    assert main(["import", str(src), "--out", str(out)]) == 0
    assert main(["import", str(src), "--out", str(out)]) == 2
    assert f"{out / 'r1.jsonl'} already exist; give --force to replace" in capsys.readouterr().err
    assert main(["import", str(src), "--out", str(out), "--force"]) == 0
    assert main(["import", str(src), "--out", str(src / "good.jsonl")]) == 2  # a file is not a folder


def test_a_failed_write_leaves_no_file_that_looks_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.samples.lines import small_run
    from workbench.trace import native

    calls = {"n": 0}
    real = native.TraceWriter.add_turn

    def dying(self: native.TraceWriter, turn: object) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        real(self, turn)  # type: ignore[arg-type]

    monkeypatch.setattr(native.TraceWriter, "add_turn", dying)
    target = tmp_path / "run.jsonl"
    with pytest.raises(OSError, match="No space"):
        native.write_run(small_run(), target)
    assert list(tmp_path.iterdir()) == []  # neither the trace nor its temporary file


def _cpu_seconds(pid: int) -> float:
    """The CPU time ``pid`` itself has used: how far its work has gone, whatever the machine's load."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _kill_when(argv: list[str], signals: list[object], check: object, cwd: Path) -> int:
    """Run the CLI in a subprocess once per readiness signal (a fresh process each time), SIGKILL it as soon as
    ``signal(pid)`` holds, call ``check`` after every kill; the number of runs killed while still working.

    A signal is a state of the work (a folder appeared, N files are complete, N CPU-seconds done), polled, so
    each kill lands at the same point of the work under any load and a run lasts only as long as its work."""
    import os
    import subprocess
    import sys
    import time

    killed = 0
    for ready in signals:
        proc = subprocess.Popen(
            [sys.executable, "-m", "workbench", *argv],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )
        while proc.poll() is None:
            try:
                hit = ready(proc.pid)  # type: ignore[operator]
            except FileNotFoundError:  # the process ended (its /proc entry) or a file went while listed
                hit = False
            if hit and proc.poll() is None:
                proc.kill()
                killed += 1
                break
            time.sleep(0.002)
        proc.wait()
        check()  # type: ignore[operator]
    return killed


@pytest.mark.timeout(300)
def test_a_killed_import_leaves_only_complete_traces(tmp_path: Path) -> None:
    from tests.samples.lines import small_run
    from workbench.scale import load
    from workbench.trace import Turn, Usage, write_run

    src = tmp_path / "src"
    base = small_run()
    turns = [
        Turn(index=i, usage=Usage(prompt=100 + i, completion=5), sent=[(0, 3)], text="x" * 2_000)
        for i in range(400)
    ]
    expected = {}
    for i in range(60):
        run = base.model_copy(update={"run_id": f"run-{i:02d}", "turns": turns})
        write_run(run, src / f"run-{i:02d}.jsonl")
        expected[f"run-{i:02d}"] = len(turns)
    out = tmp_path / "out"

    def check() -> None:
        if not out.exists():
            return
        visible = [p for p in out.iterdir() if not p.name.startswith(".")]
        assert all(p.suffix == ".jsonl" for p in visible)
        corpus = load(out)
        for run in corpus.runs:
            assert not run.diagnostics, run.diagnostics[:1]
            assert len(run.turns) == expected[run.run_id]  # complete, never a truncated file that loads
        assert len(corpus.runs) == len(visible)

    def visible(n: int) -> object:
        return lambda pid: out.is_dir() and sum(not p.name.startswith(".") for p in out.iterdir()) >= n

    def writing(pid: int) -> bool:  # the first file's temporary is there: killed in the middle of a write
        return out.is_dir() and any(p.name.startswith(".") for p in out.iterdir())

    argv = ["import", str(src), "--out", str(out), "--force"]
    killed = _kill_when(argv, [writing, visible(1), visible(20), visible(45)], check, tmp_path)
    assert killed >= 3  # the kills landed mid-import (the last file is written long after the 45th)
    assert main(["import", str(src), "--out", str(out), "--force"]) == 0
    check()
    assert len(load(out).runs) == 60


def _report_files(folder: Path) -> dict[str, str]:
    import hashlib

    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _manifest_matches(folder: Path) -> bool:
    import json

    manifest = json.loads((folder / "manifest.json").read_text())
    files = _report_files(folder)
    files.pop("manifest.json")
    return manifest["kind"] == "budget-workbench/report" and files == {
        k: v["sha256"] for k, v in manifest["files"].items()
    }


REPORT_ARGS = ["--grants", "100000:300000:100000", "--context-lengths", "none"]


@pytest.mark.timeout(600)
def test_a_killed_report_leaves_the_old_report_or_the_new_one_never_a_mix(tmp_path: Path) -> None:
    import shutil

    from workbench.paths import bundled_traces

    src = tmp_path / "traces"
    src.mkdir()
    for f in sorted(bundled_traces().glob("synthetic/honest-leaf-0*.jsonl"))[:6]:
        shutil.copy(f, src / f.name)
    out = tmp_path / "report"
    assert main(["report", str(src), *REPORT_ARGS, "--title", "FIRST-TITLE", "--out", str(out)]) == 0
    assert _manifest_matches(out)
    first = _report_files(out)

    def check() -> None:
        assert out.is_dir() and _manifest_matches(out)  # whole: every file the manifest lists, nothing else
        current = _report_files(out)
        # a report's text says "first" of its own (a run's first call): the titles are what tell them apart
        assert current == first or "FIRST-TITLE" not in (out / "report.md").read_text()
        leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".report.") and p.suffix == ".old"]
        assert not leftovers or current == first

    argv = ["report", str(src), *REPORT_ARGS, "--title", "SECOND-TITLE", "--out", str(out)]

    def staged(pid: int) -> bool:  # the new report's folder beside the old one: killed while writing it
        return any(p.name.startswith(".report.") for p in tmp_path.iterdir())

    def worked(seconds: float) -> object:
        return lambda pid: _cpu_seconds(pid) >= seconds

    # mid-load and mid-compute (the parent's own CPU: it has done about 3 s when it writes), then mid-write
    killed = _kill_when(argv, [worked(1), worked(2), staged], check, tmp_path)
    assert killed >= 2
    assert main(argv) == 0  # running the main job again just works: the old report is replaced whole
    assert _manifest_matches(out) and "SECOND-TITLE" in (out / "report.md").read_text()


def test_report_out_is_checked_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_work(*a: object, **k: object) -> None:
        raise AssertionError("the corpus was loaded before --out was checked")

    monkeypatch.setattr("workbench.cli._load.load_runs", no_work)  # report imports it when it runs
    src = tmp_path / "src"
    good = _native(src)
    existing_file = tmp_path / "report.md"
    existing_file.write_text("mine")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    cases = [
        (existing_file, "exists and is not a folder; give --force to replace it"),
        (mine, "is a folder the workbench did not write (no manifest.json); give --force to replace it"),
        (src, f"would replace the input {src}; choose another folder"),
        (tmp_path, f"would replace the input {src}; choose another folder"),
    ]
    for out, why in cases:
        assert main(["report", str(src), "--out", str(out)]) == 2
        assert capsys.readouterr().err == f"workbench report: --out {out}: {why}\n"
    assert existing_file.read_text() == "mine" and (mine / "notes.txt").read_text() == "keep"
    assert good.exists()


def test_report_force_replaces_a_folder_but_never_one_that_holds_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "traces"
    inner = src / "synthetic"
    good = _native(inner)
    assert main(["report", str(src), *REPORT_ARGS, "--out", str(inner), "--force"]) == 2
    assert f"--out {inner}: holds the input {good}" in capsys.readouterr().err
    assert good.exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("old")
    assert main(["report", str(src), *REPORT_ARGS, "--out", str(mine), "--force"]) == 0
    assert not (mine / "notes.txt").exists() and _manifest_matches(mine)


def test_run_out_refuses_an_existing_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _native(tmp_path)
    before = trace.read_bytes()
    argv = ["run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--out", str(trace), "task"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"workbench run: --out {trace}: already exists; give --force to replace it\n"
    )
    assert trace.read_bytes() == before


def test_sweep_never_writes_over_an_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "runs.csv"
    src.write_text("not a trace")
    trace = _native(tmp_path)
    assert main(["sweep", str(trace), str(src), "--grants", "10:20:10", "--out", str(src)]) == 2
    assert "is one of the inputs; it would be written over" in capsys.readouterr().err
    assert src.read_text() == "not a trace"


# -- one corpus line --------------------------------------------------------------------------------------------


def test_every_command_that_reads_a_folder_prints_the_same_corpus_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    _native(src, "a.jsonl", run_id="a")
    _native(src, "b.jsonl", run_id="b")
    (src / "notes.json").write_text('{"not": "a trace"}')
    head = "corpus: 2 files read (1 skipped, in no supported format), 2 runs, 2 leaves; works on "
    commands = {
        "inspect": ([], "runs (one row each)"),
        "replay": ([], "runs (a session whole)"),
        "sweep": (
            ["--grants", "10:20:10", "--out", str(tmp_path / "s.csv"), "--quiet"],
            "leaves (sessions split",
        ),
        "estimate": ([], "the model calls of every run"),
        "import": (["--out", str(tmp_path / "o")], "runs"),
    }
    for command, (extra, works_on) in commands.items():
        main([command, str(src), *extra])
        err = capsys.readouterr().err
        assert f"workbench {command}: {head}{works_on}" in err, (command, err)


# -- honest numbers -------------------------------------------------------------------------------------------


def test_the_estimator_study_prints_no_impossible_number(capsys: pytest.CaptureFixture[str]) -> None:
    import re

    from workbench.estimate.study import study
    from workbench.paths import bundled_traces
    from workbench.scale import load

    s = study(load(bundled_traces()).runs)
    frame = s.to_frame()
    ratios = frame[
        [c for c in frame.columns if c.endswith(("_rate", "_p50", "_p90", "_max")) or c == "over_mean"]
    ]
    assert len(ratios.columns) == 11
    assert (ratios >= 0).all().all() and ratios.notna().all().all()
    assert (ratios.abs() < float("inf")).all().all()
    assert (s.prefixes["prefix_adr"] >= 0).all()
    assert main(["estimate", str(bundled_traces())]) == 0
    text = capsys.readouterr().out
    for bad in ("nan", "NaN", "<NA>", "inf", ".prefixes", "Claude", "None"):
        assert bad not in text, bad
    assert not re.search(r"(?<![\w-])-\d", text)  # no negative figure
    assert (
        "synthetic/main+system: first calls over-counted by 23,705 tokens (median): no unseen prefix (0)"
        in text
    )
    assert "chars per token not identifiable from these runs for: tool_args" in text


def test_a_family_with_too_little_data_says_so_instead_of_being_fitted() -> None:
    from tests.estimate.test_study_synthetic import TRUE, synthetic
    from workbench.estimate.constants import DENSE_CHARS_PER_TOKEN, PROSE_CHARS_PER_TOKEN
    from workbench.estimate.fit import fit_family
    from workbench.estimate.requests import features

    fit = fit_family("m", [features(synthetic("r", [20, 30, 40, 50], TRUE))])
    assert (fit.prose_divisor, fit.dense_divisor) == (PROSE_CHARS_PER_TOKEN, DENSE_CHARS_PER_TOKEN)
    assert (
        fit.notes[0] == "too little data to fit divisors (3 call-to-call deltas, 10 needed): ADR-107's kept"
    )
    assert fit.class_chars_per_token == {}


# -- escaping ---------------------------------------------------------------------------------------------------


def test_terminal_output_shows_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _native(tmp_path, run_id="evil\x1b]0;title\x07", model="gpt\x1b[31mRED\x1b[0m")
    assert main(["inspect", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "\x1b" not in captured.out + captured.err and "\x07" not in captured.out
    assert "gpt\\x1b[31mRED\\x1b[0m" in captured.out


def test_markdown_and_html_keep_trace_text_literal(tmp_path: Path) -> None:
    import re

    from workbench.report import ReportConfig, build_report, write_report
    from workbench.scale import load

    src = tmp_path / "src"
    evil = "evil\n# Heading | x |\n<script>alert(1)</script>"
    _native(src, "a.jsonl", run_id=evil, source="synthetic")
    _native(src, "b.jsonl", run_id="b", source="src\n## injected | y")
    corpus = load(src)
    report = build_report(
        corpus=corpus, config=ReportConfig(grants=(10, 20, 30), context_lengths=(None,), estimate_study=False)
    )
    written = write_report(report, tmp_path / "out")
    md = written.markdown.read_text()
    assert not re.search(r"^#+ (Heading|injected)", md, flags=re.M)
    # every row of every table has as many unescaped cell separators as its header
    tables = re.findall(r"((?:^\|.*\n)+)", md, flags=re.M)
    for table in tables:
        counts = {len(re.findall(r"(?<!\\)\|", row)) for row in table.strip().splitlines()}
        assert len(counts) == 1, table
    html = written.html.read_text()
    assert "<script>alert(1)</script>" not in html


def test_every_repr_html_escapes_trace_text() -> None:
    import pandas as pd

    from workbench.estimate.study import EstimatorStudy
    from workbench.loop.loop import LoopResult
    from workbench.trace import Outcome

    empty = pd.DataFrame()
    study = EstimatorStudy(
        turns=empty, classes=empty, fits=empty, prefixes=empty, notes=("model <script>x</script>",)
    )
    assert "<script>" not in study._repr_html_() and "&lt;script&gt;x&lt;/script&gt;" in study._repr_html_()
    result = LoopResult(
        run_id="<b>run</b>",
        outcome=Outcome(stop_reason="error", detail="x"),
        turns=0,
        spent=0,
        raw=0,
        grant=1,
        decisions=(),
        retries=0,
        error="<img src=x onerror=alert(1)>",
    )
    html = result._repr_html_()
    assert "<b>run</b>" not in html and "<img" not in html and "&lt;img src=x" in html


# -- declared fields act; impossible policies are refused --------------------------------------------------------


def test_the_older_rule_sets_window_and_memo_act_in_decay_replay() -> None:
    from tests.context.test_decay_replay import run_reading
    from workbench.context.decay_replay import replay_decay
    from workbench.govern import Policy

    older = Policy.named("older")
    files = ["a.py", "b.py", "a.py", "c.py"]
    run = run_reading(files)
    # the second read of a.py finds a changed file: a content memo sends it, a call-keyed memo the old answer
    second = run.messages[7]
    assert second.role == "tool"
    run.messages[7] = second.model_copy(update={"content": second.content.replace("contents", "CHANGED")})
    current = replay_decay(run, window=None)
    old = replay_decay(run, window=None, policy=older)
    assert (current.working, current.safety, current.pointers) == (32_768, 32_768, 0)
    assert (old.working, old.safety, old.pointers) == (
        25_000,
        25_000,
        1,
    )  # grant 150,000 / 6; one cached answer
    assert replay_decay(run, policy=older.replace(grant=1_000_000)).working == 65_536  # clamped to 64 KiB
    assert replay_decay(run, policy=older.replace(grant=60_000)).working == 24_576  # and to 24 KiB


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("grant", -5, "grant must be a token count >= 0, got -5"),
        ("deadline_s", -10.0, "deadline_s must be None or a finite number of seconds > 0, got -10.0"),
        ("deadline_s", float("nan"), "deadline_s must be None or a finite number of seconds > 0, got nan"),
        ("context_length", 0, "context_length must be None or a whole number of tokens > 0, got 0"),
        ("calibration", 0.5, "calibration must be None or a finite factor >= 1"),
        ("estimator", "bogus", "estimator must be one of adr, fitted, anchored, exact, got 'bogus'"),
        (
            "observation_window",
            "grant/7",
            "observation_window must be one of context, grant/6, got 'grant/7'",
        ),
        ("memo", "magic", "memo must be one of content, call-keyed, got 'magic'"),
    ],
)
def test_a_policy_no_run_could_be_governed_by_is_refused(field: str, value: object, message: str) -> None:
    from workbench.govern import Policy

    with pytest.raises(ValueError) as err:
        Policy.named("current", **{field: value})
    assert str(err.value).startswith(message)
