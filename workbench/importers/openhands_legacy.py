"""OpenHands histories of 2024, before function calling: no model responses on the events. :func:`flatten` turns
the ``[action, observation]`` pairs and the first resolver's flat events into the event list the V0 reader walks;
every action the agent emitted is one call (:func:`counted_call`), its observation paired by ``cause``
(:func:`counted_result`). docs/importers/openhands.md, "V0 events"."""

from __future__ import annotations

from typing import Any

from workbench.importers._common import Fields, dumps_args, words
from workbench.importers.transcript import TranscriptBuilder
from workbench.trace.schema import ToolCall, ToolResult, Turn

# V0 actions that no model call produced (state changes, memory recall, condensation, placeholders).
NOT_MODEL_ACTIONS = words("""
    system recall change_agent_state null condensation condensation_request pause resume
""")
# Top-level keys of a V0 event (openhands/events/serialization/event.py TOP_KEYS); in 2024's flat events every
# other key is an argument (of an action) or an extra (of an observation).
_TOP_KEYS = words("id timestamp source message cause action observation tool_call_metadata llm_metrics")

# Fields of a V0 action that are bookkeeping, not what the model asked for.
_ACTION_BOOKKEEPING = words("""
    thought is_confirmed action_risk security_risk keep_prompt kernel_init_code blocking hidden
    confirmation_state
""")


def flatten(history: list[Any], line: int, f: Fields) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The history as ``(field path, event)`` in order, whatever its shape: a list of events; 2024's list of
    ``[action, observation]`` pairs; or 2024's flat events (arguments and extras beside ``action``/``observation``,
    as the first resolver wrote them), normalised to ``args`` / ``content`` + ``extras``."""
    out: list[tuple[str, dict[str, Any]]] = []
    shapes: set[str] = set()
    for i, e in enumerate(history):
        where = f"history[{i}]"
        if isinstance(e, list):
            shapes.add("[action, observation] pairs")
            for j, part in enumerate(e[:2]):
                if isinstance(part, dict):
                    out.append((f"{where}[{j}]", _normalise(part, shapes)))
                else:
                    f.bad(line, f"{where}[{j}]", f"event is {type(part).__name__}")
            continue
        if not isinstance(e, dict):
            f.bad(line, where, f"event is {type(e).__name__}")
            continue
        out.append((where, _normalise(e, shapes)))
    shape = ", ".join(sorted(shapes)) or "an event list"
    return out, shape


def _normalise(e: dict[str, Any], shapes: set[str]) -> dict[str, Any]:
    if "action" in e and not isinstance(e.get("args"), dict) and any(k not in _TOP_KEYS for k in e):
        shapes.add("flat events")
        return {
            **{k: v for k, v in e.items() if k in _TOP_KEYS},
            "args": {k: v for k, v in e.items() if k not in _TOP_KEYS},
        }
    if "observation" in e and "extras" not in e and any(k not in _TOP_KEYS and k != "content" for k in e):
        shapes.add("flat events")
        rest = {k: v for k, v in e.items() if k not in _TOP_KEYS and k != "content"}
        return {**{k: v for k, v in e.items() if k in _TOP_KEYS or k == "content"}, "extras": rest}
    return e


def counted_call(
    e: dict[str, Any], args: dict[str, Any], action: str, when: Any, b: TranscriptBuilder
) -> Turn:
    """One agent action of a history without model responses, as one call (usage unknown): its thought is the
    text; a tool action is a tool call named after the action with the remaining arguments."""
    thought = args.get("thought") if isinstance(args.get("thought"), str) else None
    text = thought
    if action in ("message", "finish"):
        said = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
        said = args.get("final_thought") if action == "finish" and args.get("final_thought") else said
        text = "\n".join(t for t in (thought, said if isinstance(said, str) else None) if t) or None
    calls = []
    if action not in ("message", "finish"):
        rest = {k: v for k, v in args.items() if k not in _ACTION_BOOKKEEPING}
        ident = e.get("id")
        cid = f"event-{ident}" if ident is not None else f"call-{len(b.turns)}"
        calls.append(ToolCall(id=cid, name=action, arguments=dumps_args(rest)))
    return b.reply(ended_at=when, text=text, tool_calls=calls, mutated=False)


def counted_result(
    e: dict[str, Any],
    observation: str,
    content: str,
    extras: dict[str, Any],
    when: Any,
    pending: list[tuple[str, Turn]],
) -> None:
    """Pair an observation with its action (``cause`` names the action's event id, else the oldest pending)."""
    cause = e.get("cause")
    index = next(
        (i for i, (cid, _) in enumerate(pending) if cause is not None and cid == f"event-{cause}"),
        0 if pending else None,
    )
    if index is None:
        return  # an observation no action asked for (e.g. an environment message): kept in the messages only
    call_id, turn = pending.pop(index)
    meta = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else extras
    exit_code = meta.get("exit_code")
    is_error = observation == "error" or (
        isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code not in (0, -1)
    )
    took = (when - turn.ended_at).total_seconds() if when and turn.ended_at else None
    turn.tool_results.append(
        ToolResult.of(content, call_id=call_id or None, is_error=is_error, duration_s=took)
    )
    if observation == "edit" and not is_error:
        turn.mutated = True
