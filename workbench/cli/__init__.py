"""The ``workbench`` command. Each subcommand lives in its own module with ``add_parser(subparsers)``;
the parser it adds sets ``func(args) -> int``. This file only wires them together."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from workbench import __version__

# (module, what it is) in the order `workbench --help` lists them.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "workbench.cli.import_cmd",
    "workbench.cli.label_cmd",
    "workbench.cli.inspect_cmd",
    "workbench.cli.replay_cmd",
    "workbench.cli.sweep_cmd",
    "workbench.cli.estimate_cmd",
    "workbench.cli.run_cmd",
    "workbench.cli.frontier_cmd",
    "workbench.cli.report_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Budget workbench: load recorded agent runs, replay them under other budgets, report.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
