"""The analyst's invariants on the command line: the flags ``frontier``, ``calibrate`` and ``report`` share, and
the invariants they make. One module below those commands, so the limit frontier (``limit_frontier_cmd``) reads them
without importing ``frontier_cmd``, which imports it (docs/architecture.md, "Layers")."""

from __future__ import annotations

import argparse

from workbench.cli import errors

# The flags that set one invariant each (their dests), beside --invariants.
INVARIANT_FLAGS = ("keep_resolved", "keep_bound", "max_lost", "max_raw", "min_saved_usd", "min_saved_tokens")


def _share(text: str) -> float:
    value = errors.positive_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"must be a share in (0, 1], got {text!r}")
    return value


def add_invariant_arguments(p: argparse.ArgumentParser) -> None:
    """The analyst's invariants as flags (``frontier`` and ``report`` share them)."""
    g = p.add_argument_group(
        "invariants the analyst sets (the recommended grant is the smallest where all hold)"
    )
    g.add_argument(
        "--keep-resolved", type=_share, default=None, help="share of resolved runs kept (default 0.95)"
    )
    g.add_argument("--keep-bound", choices=("point", "lower"), default=None, help="which end must reach it")
    g.add_argument(
        "--max-lost", type=errors.non_negative_int, default=None, help="resolved runs a grant may lose"
    )
    g.add_argument("--max-raw", type=errors.positive_int, default=None, help="raw tokens no run may reach")
    g.add_argument(
        "--min-saved-usd", type=errors.positive_float, default=None, help="dollars a grant must save"
    )
    g.add_argument(
        "--min-saved-tokens", type=errors.positive_int, default=None, help="tokens a grant must save"
    )
    g.add_argument(
        "--invariants", default=None, metavar="FILE.toml|seed", help="an [invariants] TOML file, or 'seed'"
    )


def invariants_from_args(args: argparse.Namespace):  # -> AnalystInvariants | str
    """The analyst's invariants from a file and flags (flags win), or ``"seed"``. A bad file is a usage error
    naming it."""
    from workbench.analysis.targets import SEED_SET, AnalystInvariants

    if args.invariants == SEED_SET:
        return SEED_SET
    try:
        inv = AnalystInvariants.from_toml(args.invariants) if args.invariants else AnalystInvariants()
        over = {k: getattr(args, k) for k in INVARIANT_FLAGS if getattr(args, k) is not None}
        return inv.replace(**over) if over else inv
    except ValueError as exc:
        raise errors.UsageError("--invariants" if args.invariants else "invariants", str(exc)) from exc
