"""One error path for every subcommand: the exceptions a subcommand raises, the handler that prints them, the
argparse parser whose usage errors read the same way, and the argument types every subcommand validates with
(docs/cli.md: one line ``workbench CMD: what: why``, exit 2 for the command line, 1 for the data). Import-light on
purpose: ``workbench --help`` must not pull in pandas.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn, TextIO

from workbench.format import printable

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# The largest count (tokens, turns, seconds) the workbench takes: 2^53 - 1, the largest integer a float64 holds
# exactly. Every table goes through pandas/numpy, where a larger count silently loses digits or overflows int64.
MAX_COUNT = 2**53 - 1
# A sweep grid larger than this is a typo (a STEP of 1 over a token range), not a study: refuse it up front.
MAX_GRID_VALUES = 100_000


class CliError(Exception):
    """A failure the user can act on: ``what`` went wrong (a file, an option) and ``why``."""

    code = EXIT_DATA

    def __init__(self, what: str, why: str | None = None) -> None:
        self.what = what
        self.why = why
        super().__init__(f"{what}: {why}" if why else what)


class UsageError(CliError):
    """The command line is wrong; nothing was done (exit 2)."""

    code = EXIT_USAGE


class DataError(CliError):
    """The input data is missing, unreadable or holds nothing to work on (exit 1)."""

    code = EXIT_DATA


# -- printing ----------------------------------------------------------------------------------------------------


def line(command: str, what: str, why: str | None = None) -> str:
    """The one line an error reads: ``workbench CMD: what: why`` (escaped)."""
    return printable(f"workbench {command}: {what}" + (f": {why}" if why else ""))


def say(command: str, what: str, why: str | None = None, *, file: TextIO | None = None) -> None:
    """Print one ``workbench CMD: what: why`` line on stderr (warnings and notes use it too)."""
    print(line(command, what, why), file=file or sys.stderr)


# -- the top-level handler -------------------------------------------------------------------------------------


def handle(command: str, func: Callable[[argparse.Namespace], int | None], args: argparse.Namespace) -> int:
    """Run a subcommand; every failure becomes one line and an exit code. ``args.debug`` adds the traceback
    of an unexpected failure (and of an OS error)."""
    debug = bool(getattr(args, "debug", False))
    try:
        return int(func(args) or 0)
    except CliError as exc:
        say(command, exc.what, exc.why)
        return exc.code
    except BrokenPipeError:
        _silence_stdout()  # `workbench inspect | head`: the reader left; nothing to say
        return EXIT_OK
    except KeyboardInterrupt:
        say(command, "interrupted")
        return EXIT_INTERRUPTED
    except OSError as exc:
        if debug:
            traceback.print_exc()
        what = str(exc.filename) if exc.filename is not None else type(exc).__name__
        say(command, what, exc.strerror or str(exc))
        return EXIT_DATA
    except Exception as exc:  # the one place every unexpected failure is turned into a line
        if debug:
            traceback.print_exc()
        hint = "" if debug else " (run again with --debug for the traceback)"
        say(command, f"unexpected {type(exc).__name__}", f"{_first_line(exc)}{hint}")
        return EXIT_DATA


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else "no message"


def _silence_stdout() -> None:
    # Python flushes stdout again at exit and would print a second BrokenPipeError; point it at devnull.
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class Parser(argparse.ArgumentParser):
    """argparse with usage errors in the workbench's form: one line, ``workbench CMD: what: why``, exit 2."""

    def format_help(self) -> str:
        # Module docstrings double as descriptions: their RST inline markup (``code``, :func:`name`) reads plain.
        return _plain(super().format_help())

    def format_usage(self) -> str:
        return _plain(super().format_usage())

    def error(self, message: str) -> NoReturn:
        text = printable(f"{self.prog}: {message.removeprefix('argument ')}")
        self.exit(EXIT_USAGE, f"{text} (see {self.prog} --help)\n")


class _ShowsDefaults:
    """Help that names every option's default (argparse's ArgumentDefaultsHelpFormatter), except where the help
    already says it, or where there is none to say (a flag, no default)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            action.option_strings
            and action.nargs != 0
            and action.default not in (None, False, argparse.SUPPRESS)
            and "default" not in text.lower()
        ):
            shown = (
                ",".join(map(str, action.default))
                if isinstance(action.default, tuple | list)
                else "%(default)s"
            )
            text = f"{text} (default: {shown})"
        return text


def show_defaults(parser: argparse.ArgumentParser) -> None:
    """Make ``parser``'s help name every default, keeping its own formatter's layout."""
    base = parser.formatter_class
    if not (isinstance(base, type) and issubclass(base, _ShowsDefaults)):
        parser.formatter_class = type(f"Defaults{base.__name__}", (_ShowsDefaults, base), {})  # type: ignore[arg-type]


_RST_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_RST_LITERAL = re.compile(r"``([^`]+)``")


def _plain(text: str) -> str:
    """RST inline markup as plain text: ``x`` -> x, :func:`a.b` -> a.b."""
    return _RST_LITERAL.sub(r"\1", _RST_ROLE.sub(r"\1", text))


# -- argument types: each validates one value before any work is done -------------------------------------------


def _integer(text: str, what: str, least: int) -> int:
    s = str(text).strip().replace("_", "").replace(",", "")
    try:
        value = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
    if value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"{what} of at most {MAX_COUNT:,}, got {text!r}")
    if value < least:
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number > 0 (``200_000`` and ``200,000`` read as 200000), at most :data:`MAX_COUNT`."""
    return _integer(text, "must be a whole number > 0", 1)


def non_negative_int(text: str) -> int:
    """A whole number >= 0, at most :data:`MAX_COUNT`."""
    return _integer(text, "must be a whole number >= 0", 0)


def _finite(text: str, what: str) -> float:
    try:
        value = float(str(text).strip().replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{what}, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (seconds, for instance)."""
    value = _finite(text, "must be a finite number > 0")
    if value <= 0 or value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def calibration_factor(text: str) -> float:
    """A finite factor >= 1: ADR-107's calibration only grows from a seed above 1.0, so a factor below 1 would
    make the estimator under-count — the overflow direction it exists to avoid."""
    value = _finite(text, "must be a finite number >= 1")
    if value < 1 or value > 1_000:
        raise argparse.ArgumentTypeError(f"must be a finite number between 1 and 1000, got {text!r}")
    return value


def grant_range(text: str) -> tuple[int, ...]:
    """Grants as ``START:STOP:STEP`` (STOP inclusive), one number, or a comma list; every grant > 0, at most
    :data:`MAX_GRID_VALUES` of them, in increasing order without repeats."""
    s = str(text).strip().replace("_", "")
    usage = "expected START:STOP:STEP (STOP inclusive), one number or a comma list of grants > 0"
    if ":" in s:
        parts = s.split(":")
        if len(parts) != 3:
            raise argparse.ArgumentTypeError(f"{usage}, got {text!r}")
        try:
            start, stop, step = (positive_int(p.replace(",", "")) for p in parts)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{usage}, got {text!r}") from None
        if stop < start:
            raise argparse.ArgumentTypeError(f"STOP must be >= START, got {text!r}")
        count = (stop - start) // step + 1
        if count > MAX_GRID_VALUES:
            raise argparse.ArgumentTypeError(
                f"{count:,} grants; at most {MAX_GRID_VALUES:,} (use a larger STEP), got {text!r}"
            )
        return tuple(range(start, stop + 1, step))
    parts = [p for p in s.split(",") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"{usage}, got {text!r}")
    if len(parts) > MAX_GRID_VALUES:
        raise argparse.ArgumentTypeError(f"at most {MAX_GRID_VALUES:,} grants, got {len(parts):,}")
    try:
        return tuple(sorted({positive_int(p) for p in parts}))
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{usage}, got {text!r}") from None


GRANTS_FORM = "START:STOP:STEP (STOP inclusive), one number or a comma list"


def add_grants(
    p: argparse.ArgumentParser, what: str, *flags: str, default: str = "", required: bool = False
) -> None:
    """``--grants`` (and ``flags``, its other names) read by :func:`grant_range`; the help is ``what: FORM``, with
    ``default`` (the words for the command's own default) after it."""
    p.add_argument(
        "--grants",
        *flags,
        dest="grants",
        required=required,
        type=grant_range,
        metavar="START:STOP:STEP",
        help=f"{what}: {GRANTS_FORM}" + (f" ({default})" if default else ""),
    )


def add_rules(
    p: argparse.ArgumentParser, *, many: bool = False, metavar: str | None = None, more: str = ""
) -> None:
    """``--rules``: one rule set, or (``many``) a comma list of them; ``current`` by default."""
    # imported when a subcommand's parser is built, not for workbench --help
    from workbench.govern.policy import RULE_SETS

    names = sorted(RULE_SETS)
    if many:
        help = f"comma list of rule sets, each {one_of(names)} (default: current{more})"
        p.add_argument("--rules", type=choice_list(names), default=("current",), metavar=metavar, help=help)
    else:
        help = f"rule set, {one_of(names)} (default: current{more})"
        p.add_argument("--rules", choices=names, default="current", metavar=metavar, help=help)


def optional_counts(
    text: str, parse: Callable[[str], int], what: str, rule: str, limit: int = MAX_GRID_VALUES
) -> tuple[int | None, ...]:
    """A comma list of counts, each read by ``parse``, where ``none`` (or ``off``, ``-``) stands for "no such
    setting"; at most ``limit`` values, duplicates dropped in order. ``what``/``rule`` word the errors."""
    out: list[int | None] = []
    for part in str(text).split(","):
        part = part.strip().lower()
        if not part:
            continue
        if part in {"none", "off", "-"}:
            out.append(None)
            continue
        try:
            out.append(parse(part))
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{part!r} is not a {what} ({rule}) or 'none'") from None
    if not out:
        raise argparse.ArgumentTypeError(f"expected a comma list of {what}s or 'none', got {text!r}")
    if len(out) > limit:
        raise argparse.ArgumentTypeError(f"at most {limit:,} {what}s, got {len(out):,}")
    return tuple(dict.fromkeys(out))


def context_lengths(text: str) -> tuple[int | None, ...]:
    """A comma list of context lengths (tokens > 0); ``none`` means no context-window manager."""
    return optional_counts(text, positive_int, "context length", "a whole number > 0")


def one_of(choices: Iterable[str]) -> str:
    """``one of: a, b, c`` — for a help text that lists its choices."""
    return "one of: " + ", ".join(choices)


def choice_list(choices: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    """An argument type for a comma list whose every item is one of ``choices`` (e.g. ``--rules current,older``)."""
    known = tuple(choices)

    def parse(text: str) -> tuple[str, ...]:
        items = tuple(dict.fromkeys(x.strip() for x in str(text).split(",") if x.strip()))
        if not items:
            raise argparse.ArgumentTypeError(f"expected a comma list ({one_of(known)}), got {text!r}")
        bad = [x for x in items if x not in known]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {', '.join(map(repr, bad))} ({one_of(known)})")
        return items

    parse.__name__ = "choice_list"
    return parse


def add_debug(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--debug``: show the traceback of an unexpected failure. On subcommands it defaults to SUPPRESS so the
    top-level value (``workbench --debug CMD``) is not overwritten."""
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="on an unexpected failure, print the traceback too",
    )


@contextmanager
def library_warnings(command: str, *, debug: bool = False) -> Iterator[list[str]]:
    """Warnings of the libraries underneath captured while a subcommand runs (the list yielded); with ``--debug``
    each distinct one is said once at the end, escaped (docs/cli.md: why none reaches stderr raw)."""
    seen: list[str] = []

    def show(message, category, filename, lineno, file=None, line=None):  # type: ignore[no-untyped-def]
        text = f"{category.__name__}: {str(message).splitlines()[0] if str(message) else ''}"
        if text not in seen:
            seen.append(text)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = show
        try:
            yield seen
        finally:
            if debug:
                for text in seen:
                    say(command, "library warning", printable(text))
