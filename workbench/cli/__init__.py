"""The ``workbench`` command. Each subcommand lives in its own module with ``add_parser(subparsers)``;
the parser it adds sets ``func(args) -> int``. This file only wires them together.

Start-up is kept cheap: a subcommand's module (and whatever it imports: pydantic, pandas, httpx, ...) is
imported only when that subcommand runs. ``workbench --help`` lists every subcommand from the table below
without importing any of them.

Adding a subcommand:

1. write ``workbench/cli/<name>_cmd.py`` with ``add_parser(sub)`` that calls
   ``sub.add_parser("<name>", help=..., ...)`` and ``set_defaults(func=run)``, as the others do;
2. add one line to ``SUBCOMMANDS``: ``Subcommand("<name>", "workbench.cli.<name>_cmd", "<the same help>")``.

``tests/cli/test_startup.py`` holds each line's name and help equal to what its module declares and holds
``workbench --help`` free of heavy imports. A bare module path in ``SUBCOMMANDS`` also works (it is imported
eagerly to learn its name, so it costs start-up time): convert it to a ``Subcommand`` line.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NamedTuple

from workbench import __version__


class Subcommand(NamedTuple):
    """A subcommand as ``--help`` lists it; ``module`` is imported only when the subcommand runs."""

    name: str
    module: str
    help: str


# In the order `workbench --help` lists them.
SUBCOMMANDS: tuple[Subcommand | str, ...] = (
    Subcommand(
        "import",
        "workbench.cli.import_cmd",
        "convert recorded runs (Claude Code, OpenHands, Codex CLI, OpenAI-style logs, native) to native traces",
    ),
    Subcommand(
        "label",
        "workbench.cli.label_cmd",
        "attach resolved/unresolved labels from a results file to runs, by instance id",
    ),
    Subcommand(
        "inspect",
        "workbench.cli.inspect_cmd",
        "summarise recorded runs: calls, tokens, segments, stop, events, what the import lost",
    ),
    Subcommand("replay", "workbench.cli.replay_cmd", "replay recorded runs under a policy"),
    Subcommand("sweep", "workbench.cli.sweep_cmd", "replay runs under a range of grants into a table"),
    Subcommand(
        "estimate",
        "workbench.cli.estimate_cmd",
        "the estimator study: under-/over-count of ADR-107 and alternatives against reported usage",
    ),
    Subcommand(
        "run",
        "workbench.cli.run_cmd",
        "run a task live against an OpenAI-compatible endpoint, governed, recording a native trace",
    ),
    Subcommand(
        "report",
        "workbench.cli.report_cmd",
        "write a calibration report (grant band, survival, stop reasons, charts)",
    ),
)

# Kept for callers that iterate module paths (every registered subcommand's module, in order).
SUBCOMMAND_MODULES: tuple[str, ...] = tuple(s.module if isinstance(s, Subcommand) else s for s in SUBCOMMANDS)


def _add_module(sub: argparse._SubParsersAction, module_name: str) -> None:  # type: ignore[type-arg]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:  # a subcommand not (yet) on this branch
            return
        raise
    module.add_parser(sub)


def chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option (the top level takes no values)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None, *, full: bool = False) -> argparse.ArgumentParser:
    """The parser for ``argv``: the subcommand it names is built from its module, the others are one-line
    stubs (enough for ``--help`` and for argparse's choice check). ``full=True`` builds every subcommand."""
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Budget workbench: load recorded agent runs, replay them under other budgets, report.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = chosen_command(sys.argv[1:] if argv is None else argv)
    for entry in SUBCOMMANDS:
        if not isinstance(entry, Subcommand):
            _add_module(sub, entry)
        elif full or entry.name == wanted:
            _add_module(sub, entry.module)
        else:
            sub.add_parser(entry.name, help=entry.help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
