"""The names of the guards a Policy can switch off (``Policy.without``, ``--without``) and the fields each sets.

The small vocabulary ``workbench.govern.policy`` needs, kept below it so that ``workbench.govern.ablation`` (which
reads the Policy's fields for ``--set``) can import the Policy without the Policy importing it back
(docs/architecture.md, "Layers").
"""

from __future__ import annotations

from typing import Any

# name -> (the fields it sets, in words). Both the CLI's dashed spelling and the field's own name are accepted.
ABLATIONS: dict[str, tuple[dict[str, Any], str]] = {
    "no-progress": ({"no_progress": False}, "the no-progress guard (repeat, stagnant, turn floor)"),
    "tool-timeout": ({"tool_timeouts": False}, "the tool-timeout guard"),
    "backstop": ({"turn_backstop": None}, "the turn backstop"),
    "wrap-up": ({"wrapup_at": None}, "the wrap-up warning"),
}
_ALIASES = {
    "no_progress": "no-progress",
    "noprogress": "no-progress",
    "tool_timeouts": "tool-timeout",
    "tool-timeouts": "tool-timeout",
    "tool_timeout": "tool-timeout",
    "turn_backstop": "backstop",
    "turn-backstop": "backstop",
    "wrapup": "wrap-up",
    "wrap_up": "wrap-up",
    "wrapup_at": "wrap-up",
}


def ablation_name(name: str) -> str:
    """The canonical name of an ablation (``no_progress`` → ``no-progress``); a ValueError lists the known ones."""
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in ABLATIONS:
        raise ValueError(f"unknown ablation {name!r}; known: {', '.join(ABLATIONS)}")
    return key


def without_overrides(*names: str) -> dict[str, Any]:
    """The field overrides that switch off each named guard."""
    out: dict[str, Any] = {}
    for n in names:
        out.update(ABLATIONS[ablation_name(n)][0])
    return out
