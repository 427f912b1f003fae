"""The workspace fact of one turn, inferred from its tool calls for a format that does not record it.

An importer names its tools' roles (:class:`Tools`): shell tools (the argument holding the command), write tools
(always a mutation: ``str_replace_editor`` create/str_replace/insert, Claude Code ``Edit``/``Write``/``MultiEdit``,
``apply_patch``), read-only tools, and editors whose sub-command decides. :func:`infer` answers ``(mutated, rule)``:

* ``(True, rule)`` when any call writes (a write tool, a shell write: ``workbench.importers.shell``);
* ``(False, rule)`` when every call is known not to write;
* ``(None, rule)`` when some call's effect is unknown and none writes — unknown, never read as "no change".

``Turn.mutated_rule`` keeps the rule, so a governor's decision can say it acted on an inferred fact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from workbench.importers.shell import classify, python_effect
from workbench.trace.schema import ToolCall, Turn

EDITOR_WRITES = frozenset({"create", "str_replace", "insert", "undo_edit", "write", "edit", "append"})
EDITOR_READS = frozenset({"view", "read"})


@dataclass(frozen=True)
class Tools:
    """The roles of a format's tools, by tool name."""

    shell: Mapping[str, str] = field(default_factory=dict)
    """Shell tool -> the argument that holds the command (a string, or a list of words)."""
    writes: frozenset[str] = frozenset()
    reads: frozenset[str] = frozenset()
    editors: Mapping[str, str] = field(default_factory=dict)
    """Editor tool -> the argument naming its sub-command (``view`` reads; ``create``/``str_replace``/… write)."""
    raw_shell: frozenset[str] = frozenset()
    """Shell tools whose whole argument text is the command (no JSON)."""
    python: Mapping[str, str] = field(default_factory=dict)
    """Python tools (an IPython cell) -> the argument holding the code (read by ``shell.python_effect``)."""


def _arg(call: ToolCall, key: str) -> Any:
    """The argument ``key`` of a call whose arguments are a JSON object; ``None`` otherwise."""
    try:
        args = orjson.loads(call.arguments) if call.arguments else {}
    except orjson.JSONDecodeError:
        return None
    return args.get(key) if isinstance(args, dict) else None


def command_of(call: ToolCall, key: str) -> str | None:
    """The command line a shell call ran: the argument ``key`` (a string, or a list of words such as Codex's
    ``["bash", "-lc", "…"]``, which is joined as a shell would see it)."""
    value = _arg(call, key)
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if (
            len(value) >= 3
            and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
            and value[1] in ("-c", "-lc")
        ):
            return value[2]
        import shlex

        return shlex.join(value)
    return None


def call_effect(call: ToolCall, tools: Tools) -> tuple[bool | None, str]:
    name = call.name
    if name in tools.writes:
        return True, f"write tool {name}"
    if name in tools.reads:
        return False, f"read-only tool {name}"
    if name in tools.raw_shell:
        effect = classify(call.arguments)
    elif name in tools.shell:
        command = command_of(call, tools.shell[name])
        if command is None:
            return None, f"{name}: no command found in its arguments"
        effect = classify(command)
    elif name in tools.python:
        code = _arg(call, tools.python[name])
        if not isinstance(code, str):
            return None, f"{name}: no code found in its arguments"
        effect = python_effect(code)
    elif name in tools.editors:
        sub = _arg(call, tools.editors[name])
        if sub in EDITOR_WRITES:
            return True, f"{name} {sub}"
        if sub in EDITOR_READS:
            return False, f"{name} {sub}"
        return None, f"{name} {sub!r} is not a known sub-command"
    else:
        return None, f"tool {name} is not known to leave the workspace unchanged"
    return {"write": True, "read-only": False}.get(effect.kind), f"{name}: {effect.rule}"


def infer(calls: Sequence[ToolCall], tools: Tools) -> tuple[bool | None, str | None]:
    """``(mutated, rule)`` of a turn with these calls; ``(None, None)`` for a turn without calls."""
    if not calls:
        return None, None
    effects = [call_effect(c, tools) for c in calls]
    for decisive in (True, None):  # a write decides the turn, else an unknown effect
        for m, rule in effects:
            if m is decisive:
                return m, rule
    return False, effects[0][1] if len(effects) == 1 else "every call read-only"


def apply(turns: Sequence[Turn], tools: Tools) -> None:
    """Set ``mutated`` and ``mutated_rule`` of every tool turn from its calls (for a format that records no
    workspace fact: whatever the importer had set there was its own guess)."""
    for t in turns:
        if t.tool_calls:
            t.mutated, t.mutated_rule = infer(t.tool_calls, tools)


__all__ = ["Tools", "apply", "call_effect", "command_of", "infer"]
