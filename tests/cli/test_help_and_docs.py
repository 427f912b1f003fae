"""The command line as documented: docs/cli.md names every subcommand the parser has (and how many), every
``--help`` shows each option's default, and a mistyped flag is refused by the subcommand that was asked for."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from workbench.cli import _subparsers, build_parser, main

REPO = Path(__file__).resolve().parents[2]
NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
           "twelve", "thirteen", "fourteen", "fifteen"]  # fmt: skip
COMMANDS = _subparsers(build_parser(full=True))


def test_docs_cli_names_every_subcommand() -> None:
    text = " ".join((REPO / "docs" / "cli.md").read_text().split())
    m = re.search(r"has (\w+) subcommands \(([^)]*)\)", text)
    assert m is not None
    assert m.group(1) == NUMBERS[len(COMMANDS)]
    assert re.findall(r"`([\w-]+)`", m.group(2)) == list(COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_help_shows_the_defaults(name: str) -> None:
    parser = COMMANDS[name]
    full = " ".join(parser.format_help().split())
    text = full[full.index("options:") :]  # the option entries, not the usage line
    for action in parser._actions:
        if (
            not action.option_strings
            or action.nargs == 0
            or action.default in (None, False, argparse.SUPPRESS)
        ):
            continue
        # the option's own help entry: from its flag to the next option's
        flag = action.option_strings[-1]
        entry = text[re.search(rf"(?<=[ ,]){re.escape(flag)}\b", text).start() :]
        nxt = re.search(r" --?[a-z]", entry[len(flag) + 1 :])
        entry = entry[: len(flag) + 1 + nxt.start()] if nxt else entry
        assert "default" in entry.lower(), (
            f"workbench {name} --help: {flag} hides its default {action.default!r}"
        )


def test_a_mistyped_flag_names_its_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frontier", "traces", "--grnats", "100000"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err == "workbench frontier: unrecognized arguments: --grnats 100000 (see workbench frontier --help)"
    )


def test_the_frontier_recommends_no_grant_under_rules_that_never_read_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from workbench.scenarios.labelled import labelled_runs
    from workbench.trace import write_run

    for run in labelled_runs(8, seed=3):
        write_run(run, tmp_path / f"{run.run_id}.jsonl")
    argv = [
        "frontier",
        str(tmp_path),
        "--rules",
        "openhands,current",
        "--grants",
        "100000:400000:100000",
        "--json",
    ]
    assert main(argv) == 0
    recs = [
        json.loads(x)["recommendation"] for x in capsys.readouterr().out.splitlines() if "recommendation" in x
    ]
    by_rules = {r["rules"]: r for r in recs}
    assert by_rules["openhands"]["grant"] is None
    assert "rules openhands never read the grant" in by_rules["openhands"]["why"]
    assert by_rules["current"]["grant"] is not None  # the same runs under rules that read it: a grant
