"""`workbench --help` imports no subcommand: every line of the registry matches the module it names, and the
parser for one subcommand builds only that subcommand's module."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from workbench.cli import SUBCOMMANDS, Subcommand, build_parser, chosen_command, main

HEAVY = ("pydantic", "pandas", "numpy", "httpx", "pyarrow", "scipy", "matplotlib", "workbench.trace")


def _imported_by(args: list[str]) -> list[str]:
    code = (
        "import sys, contextlib, io\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({args!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return eval(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [["--help"], [], ["--version"]])
def test_the_top_level_help_imports_nothing_heavy(args: list[str]) -> None:
    assert _imported_by(args) == []


# What a subcommand's parser may not import (issue 24: `inspect --help` took 28x a bare interpreter because it
# imported pandas and pydantic): the readers, the replay, the live loop and every library under them are imported by
# the subcommand's run function, never while its parser is built.
HELP_HEAVY = (*HEAVY, "lifelines", "jinja2", "workbench.replay", "workbench.loop", "workbench.report")


@pytest.mark.parametrize("entry", [s for s in SUBCOMMANDS if isinstance(s, Subcommand)], ids=lambda s: s.name)
def test_each_subcommand_help_imports_nothing_heavy(entry: Subcommand) -> None:
    code = (
        "import sys, contextlib, io\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    code = main([{entry.name!r}, '--help'])\n"
        f"print(code, 'usage: workbench {entry.name}' in out.getvalue())\n"
        f"print(sorted(m for m in {HELP_HEAVY!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    said, imported = result.stdout.strip().splitlines()[-2:]
    assert said == "0 True"  # the help was printed, by that subcommand's own parser
    assert eval(imported) == []


def test_a_subcommand_help_imports_its_own_module_only() -> None:
    # `report` keeps its heavy imports inside run(); its --help must not load the report stack either.
    assert "matplotlib" not in _imported_by(["report", "--help"])


@pytest.mark.parametrize("entry", [s for s in SUBCOMMANDS if isinstance(s, Subcommand)], ids=lambda s: s.name)
def test_each_registry_line_matches_its_module(entry: Subcommand) -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    importlib.import_module(entry.module).add_parser(sub)
    assert list(sub.choices) == [entry.name]
    helps = {a.dest: a.help for a in sub._choices_actions}
    assert helps == {entry.name: entry.help}
    assert sub.choices[entry.name].get_default("func") is not None


def test_the_full_parser_and_the_lazy_one_list_the_same_subcommands() -> None:
    full = build_parser()  # no argv: every subcommand built
    lazy = build_parser([])
    full_sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    lazy_sub = next(a for a in lazy._actions if isinstance(a, argparse._SubParsersAction))
    assert list(full_sub.choices) == list(lazy_sub.choices)
    assert full.format_help() == lazy.format_help()


def test_the_chosen_command_is_the_first_word_that_is_not_an_option() -> None:
    assert chosen_command(["sweep", "x", "--grant", "1:2:1"]) == "sweep"
    assert chosen_command(["--version"]) is None
    assert chosen_command([]) is None
    assert chosen_command(["--", "sweep"]) is None


def test_an_unknown_subcommand_is_refused_by_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    err = capsys.readouterr().err
    assert "no-such-command" in err and err.count("\n") == 1
    assert "Traceback" not in err
