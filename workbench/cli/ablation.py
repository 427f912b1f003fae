"""The what-if options every policy-taking command shares: ``--without GUARD,...`` and ``--set FIELD=VALUE``.

One place adds them to a parser (``add_ablation_arguments``) and turns them into Policy overrides
(``ablation_overrides``), validated against the rule set before any work: a bad name or value is a usage error
naming the option. Kept import-light (no pandas): ``workbench --help`` lists the fields.
"""

from __future__ import annotations

import argparse
from typing import Any

from workbench.cli import errors
from workbench.govern.ablation import ABLATIONS, ablation_name, parse_setting, settable_fields


def _without(text: str) -> tuple[str, ...]:
    try:
        return tuple(ablation_name(p) for p in str(text).split(",") if p.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _setting(text: str) -> tuple[str, Any]:
    try:
        return parse_setting(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_ablation_arguments(p: argparse.ArgumentParser) -> None:
    """``--without`` and ``--set`` (repeatable), in their own help group listing every field."""
    g = p.add_argument_group("what-if ablations (applied to every policy the command replays)")
    g.add_argument(
        "--without",
        type=_without,
        action="extend",
        default=None,
        metavar="GUARD,...",
        help="switch guards off: " + ", ".join(f"{k} ({v[1]})" for k, v in ABLATIONS.items()),
    )
    fields = settable_fields()
    g.add_argument(
        "--set",
        dest="settings",
        type=_setting,
        action="append",
        default=None,
        metavar="FIELD=VALUE",
        help="set any Policy field (repeatable; 'none' for an optional one). Fields: "
        + ", ".join(f"{k} ({v})" for k, v in fields.items()).replace("%", "%%"),
    )


def ablation_overrides(
    args: argparse.Namespace, rules: str | tuple[str, ...] | list[str] = "current"
) -> dict[str, Any]:
    """The Policy overrides ``--without`` and ``--set`` ask for (``--set`` wins over ``--without``), checked by
    building each rule set's policy with them: an impossible value is a usage error before any work."""
    from workbench.govern.ablation import without_overrides
    from workbench.govern.policy import Policy

    over: dict[str, Any] = without_overrides(*(getattr(args, "without", None) or ()))
    over.update(getattr(args, "settings", None) or ())
    for r in (rules,) if isinstance(rules, str) else rules:
        try:
            Policy.named(r, **over)
        except (TypeError, ValueError) as exc:
            raise errors.UsageError(
                "--set" if getattr(args, "settings", None) else "--without", str(exc)
            ) from exc
    return over


def words(over: dict[str, Any]) -> str:
    """The ablations in one phrase for a heading (empty when none)."""
    return ", ".join(f"{k}={v}" for k, v in over.items())
