"""The leaf's own endings (seed step J; docs/loop.md, "The rest of the seed's loop"): a reflex's ``promote`` and the
cooperative ``request_split``.

The seed's tool definitions (``reflexPromotionDefinition``, ``requestSplitDefinition``) and their argument parsers are
not in linear.go; the argument names here (``partial``; ``parts``, ``reason``) are the workbench's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

PROMOTE = "promote"
REQUEST_SPLIT = "request_split"
# seed 001 linear.go Run (the reflex arm): the outcome text when neither the partial nor the reply says anything.
DEFAULT_PROMOTION_TEXT = "The quick pass found that this needs a full job."

# seed 001 linear.go reflexSystemPrompt, verbatim: appended to a reflex micro-leaf's system prompt.
REFLEX_SYSTEM_PROMPT = """

This assignment is a reflex: one obvious, reversible action with a deliberately
small budget. Do the action directly and finish as soon as its result is known.
Do not widen it into research, a sequence of independent changes, or a project.
If inspection reveals that the request is ambiguous, needs several real steps,
or cannot be landed safely in this short run, stop and call promote with the
useful partial you have so the same request can continue as a normal job. A
correct promotion is better than stretching a reflex until its budget cuts it
off."""
# A reflex's grant and turn cap. The seed's linear.go gives a reflex "a deliberately small budget" but sets it in its
# scheduler, not here: the workbench's choice is a tenth of DefaultLeafTokens and 12 turns.
REFLEX_GRANT = 22_000
REFLEX_MAX_TURNS = 12

PROMOTE_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": PROMOTE,
        "description": "Stop this quick reflex and hand the request on as a normal job. Call it when the request "
        "is ambiguous, needs several real steps, or cannot be landed safely in this short run.",
        "parameters": {
            "type": "object",
            "properties": {
                "partial": {
                    "type": "string",
                    "description": "The useful partial you have: what you found and did, for the full job.",
                }
            },
        },
    },
}

SPLIT_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": REQUEST_SPLIT,
        "description": "Hand this assignment back to be divided into parts that run separately. This ends your "
        "work on it: do not continue after calling it. Your reply text is the partial the parts start from.",
        "parameters": {
            "type": "object",
            "properties": {
                "parts": {"type": "array", "items": {"type": "string"}, "description": "One brief per part."},
                "reason": {"type": "string", "description": "Why one worker should not do it all."},
            },
        },
    },
}


def _args(arguments: str) -> dict[str, Any]:
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def promotion(calls: Sequence[Any]) -> str | None:
    """The partial of the first ``promote`` call ("" when it gave none), or None when no call promotes."""
    for call in calls:
        if call.name == PROMOTE:
            partial = _args(call.arguments).get("partial")
            return partial.strip() if isinstance(partial, str) else ""
    return None


def split_parts(calls: Sequence[Any]) -> list[str] | None:
    """The parts of the first ``request_split`` call (possibly none), or None when no call asks to divide."""
    for call in calls:
        if call.name == REQUEST_SPLIT:
            parts = _args(call.arguments).get("parts")
            if not isinstance(parts, list):
                return []
            return [str(p).strip() for p in parts if isinstance(p, str | int | float) and str(p).strip()]
    return None


def ending_schemas(*, reflex: bool, swarm: bool) -> tuple[dict[str, Any], ...]:
    """The ending tools a leaf holds: ``promote`` for a reflex; ``request_split`` when the swarm is armed and the
    leaf is not a reflex."""
    if reflex:
        return (PROMOTE_SCHEMA,)
    if swarm:
        return (SPLIT_SCHEMA,)
    return ()
