"""The ``workbench`` command. Each subcommand lives in its own module with ``add_parser(subparsers)``;
the parser it adds sets ``func(args) -> int``. This file only wires them together.

How a subcommand fails (``workbench.cli.errors``; docs/cli.md has the conventions):

* Validate every argument in the parser with the shared types, so a bad value stops before any work::

      from workbench.cli import errors
      p.add_argument("--grant", type=errors.positive_int, help="cost grant in tokens")
      p.add_argument("--estimator", choices=ESTIMATORS, help=f"token estimator ({errors.one_of(ESTIMATORS)})")

  (also ``non_negative_int``, ``positive_float``, ``calibration_factor``, ``grant_range``, ``context_lengths``,
  ``choice_list``). A bad value prints ``workbench CMD: --grant: why`` and exits 2.
* Checks argparse cannot make (an ``--out`` that exists, paths that conflict) raise
  ``errors.UsageError(what, why)`` (exit 2) before any work; bad or missing data raises
  ``errors.DataError(what, why)`` (exit 1). Warnings use ``errors.say(CMD, what, why)``.
* Never catch-and-print a traceback: :func:`errors.handle` turns anything unexpected into one line
  (``workbench CMD: unexpected KeyError: ...``, exit 1); ``workbench --debug CMD ...`` adds the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from workbench import __version__
from workbench.cli import errors

# (module, what it is) in the order `workbench --help` lists them.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "workbench.cli.import_cmd",
    "workbench.cli.label_cmd",
    "workbench.cli.inspect_cmd",
    "workbench.cli.replay_cmd",
    "workbench.cli.sweep_cmd",
    "workbench.cli.estimate_cmd",
    "workbench.cli.calibrate_cmd",
    "workbench.cli.run_cmd",
    "workbench.cli.report_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = errors.Parser(
        prog="workbench",
        description="Budget workbench: load recorded agent runs, replay them under other budgets, report.",
        epilog="Errors are one line, 'workbench COMMAND: what: why'; exit 2 for a wrong command line, "
        "1 for bad data or a failure. --debug adds the traceback of an unexpected failure.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    errors.add_debug(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=errors.Parser)
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.add_parser(sub)
    for subparser in sub.choices.values():
        errors.add_debug(subparser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version or a usage error (already printed): a code, not an exit
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else errors.EXIT_USAGE)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return errors.handle(args.command, args.func, args)


if __name__ == "__main__":
    sys.exit(main())
