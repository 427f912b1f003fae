"""What-if ablations of a Policy: switch a guard off (``without``) or set any field from text (``--set``).

One vocabulary for the CLI (``--without no-progress,tool-timeout,backstop,wrap-up``, ``--set FIELD=VALUE``) and the
Python API (``Policy.named("current").without("no_progress")``). Each ablation names the fields it changes, so
a policy's label says what was switched off.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from workbench.govern.ablation_names import ABLATIONS, ablation_name, without_overrides
from workbench.govern.policy import Policy

__all__ = ["ABLATIONS", "ablation_name", "parse_setting", "settable_fields", "settings", "without_overrides"]

# Fields --set does not take: the rule set has its own option, ``extra`` is free-form data, not a setting.
NOT_SETTABLE = frozenset({"rules", "extra"})
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_NONE = {"none", "null", "off", "-"}


def settable_fields() -> dict[str, str]:
    """Every field ``--set`` takes, with its type as written in the Policy (``int | None``, ``bool``, ...)."""
    hints = typing.get_type_hints(Policy)
    return {
        f.name: _type_words(hints[f.name]) for f in dataclasses.fields(Policy) if f.name not in NOT_SETTABLE
    }


def _type_words(tp: Any) -> str:
    args = typing.get_args(tp)
    origin = typing.get_origin(tp)
    if origin is tuple:
        return "tuple[str, ...]"
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return " | ".join(_type_words(a) for a in rest) + " | None"
    return getattr(tp, "__name__", str(tp))


def parse_setting(text: str) -> tuple[str, Any]:
    """``FIELD=VALUE`` → (field, value typed as the Policy field is: int, float, bool, None, a comma list).
    A ValueError names the field and what it takes."""
    if "=" not in str(text):
        raise ValueError(f"expected FIELD=VALUE, got {text!r}")
    name, _, raw = str(text).partition("=")
    name, raw = name.strip().replace("-", "_"), raw.strip()
    fields = settable_fields()
    if name not in fields:
        raise ValueError(f"unknown policy field {name!r}; fields: {', '.join(sorted(fields))}")
    kind = fields[name]
    optional = kind.endswith(" | None")
    base = kind.removesuffix(" | None")
    low = raw.lower()
    if optional and low in _NONE:
        return name, None
    want = f"{name} takes {kind}"
    if base == "bool":
        if low in _TRUE:
            return name, True
        if low in _FALSE:
            return name, False
        raise ValueError(f"{want} (true/false), got {raw!r}")
    if base == "int":
        try:
            return name, int(raw.replace("_", "").replace(",", ""))
        except ValueError:
            raise ValueError(f"{want}, got {raw!r}") from None
    if base == "float":
        try:
            return name, float(raw)
        except ValueError:
            raise ValueError(f"{want}, got {raw!r}") from None
    if base.startswith("tuple"):
        return name, tuple(p.strip() for p in raw.split(",") if p.strip())
    return name, raw


def settings(texts: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """Several ``FIELD=VALUE`` settings (a later one wins)."""
    return dict(parse_setting(t) for t in texts)
