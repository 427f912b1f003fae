"""The ``workbench`` command: each subcommand's module has ``add_parser(subparsers)``, imported only when that
subcommand runs (``workbench --help`` lists ``SUBCOMMANDS`` without importing any). Adding a subcommand and the
error conventions: docs/cli.md, "For developers"."""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple

from workbench import __version__
from workbench.cli import errors


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
        "bills",
        "workbench.cli.bills_cmd",
        "what runs would have cost under context lengths, grants and observation masking",
    ),
    Subcommand(
        "estimate",
        "workbench.cli.estimate_cmd",
        "the estimator study: under-/over-count of ADR-107 and alternatives against reported usage",
    ),
    Subcommand(
        "calibrate",
        "workbench.cli.calibrate_cmd",
        "every constant against a corpus: seed value, effect, recommendation and band, or not enough data",
    ),
    Subcommand(
        "run",
        "workbench.cli.run_cmd",
        "run a task live against an OpenAI-compatible endpoint, governed, recording a native trace",
    ),
    Subcommand(
        "frontier", "workbench.cli.frontier_cmd", "which grant keeps the runs that succeed, and what it saves"
    ),
    Subcommand(
        "report",
        "workbench.cli.report_cmd",
        "write a calibration report (grant band, survival, stop reasons, charts)",
    ),
)


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
    stubs (enough for ``--help`` and for argparse's choice check). Without ``argv``, or with ``full=True``,
    every subcommand is built (what a caller inspecting the parser expects)."""
    parser = errors.Parser(
        prog="workbench",
        description="Budget workbench: load recorded agent runs, replay them under other budgets, report.",
        epilog="Errors are one line, 'workbench COMMAND: what: why'; exit 2 for a wrong command line, "
        "1 for bad data or a failure. --debug adds the traceback of an unexpected failure.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    errors.add_debug(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=errors.Parser)
    full = full or argv is None
    wanted = None if argv is None else chosen_command(argv)
    for entry in SUBCOMMANDS:
        if not isinstance(entry, Subcommand):
            _add_module(sub, entry)
        elif full or entry.name == wanted:
            _add_module(sub, entry.module)
        else:
            sub.add_parser(entry.name, help=entry.help)
    for subparser in sub.choices.values():
        errors.add_debug(subparser)
        errors.show_defaults(subparser)
    return parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # said by the subcommand's own parser, so the error names it and its --help
            command = getattr(args, "command", None)
            chosen = _subparsers(parser).get(command) if command else None
            (chosen or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # --help, --version or a usage error (already printed): a code, not an exit
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else errors.EXIT_USAGE)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    with (
        errors.library_warnings(args.command, debug=bool(getattr(args, "debug", False))),
        _collector_paused(),
    ):
        return errors.handle(args.command, _with_sources, args)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for one command, the only place the workbench touches it, and
    restored after (why, and what it saves: docs/scale.md, "The garbage collector"; ``benchmarks/gc_bench.py``)."""
    was = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if was:
            gc.enable()


def _with_sources(args: argparse.Namespace) -> int:
    """The subcommand, after ``--phoenix``/``--project`` became a PATH (workbench.cli._sources)."""
    if hasattr(args, "phoenix"):
        from workbench.cli._sources import fold_sources

        fold_sources(args)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
