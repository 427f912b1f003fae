"""How OpenHands V0's CodeActAgent turns an observation event into the text it sends (and is billed for): cut to
``max_message_chars`` and rendered per observation type. The upstream rules, file by file:
docs/importers/openhands.md, "How V0 sent observations"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# openhands/events/serialization/event.py truncate_content: the notice between the kept halves.
TRUNCATION_NOTICE = "\n[... Observation truncated due to length ...]\n"
# openhands/memory/conversation_memory.py _process_observation (ErrorObservation): appended after the content.
ERROR_SUFFIX = "\n[Error occurred in processing last action]"
# openhands/memory/conversation_memory.py _process_observation (UserRejectObservation): around the content.
REJECTED_PREFIX = "OBSERVATION:\n"
REJECTED_SUFFIX = "\n[Last action has been rejected by the user]"
# openhands/memory/conversation_memory.py _process_observation (CmdOutputObservation without a tool call).
USER_COMMAND_PREFIX = "\nObserved result of command executed by user:\n"
# openhands/memory/conversation_memory.py _process_observation (IPythonRunCellObservation): image lines.
IPYTHON_IMAGE_MARK = "![image](data:image/png;base64,"
IPYTHON_IMAGE_PLACEHOLDER = "![image](data:image/png;base64, ...) already displayed to user"
# openhands/events/observation/files.py FileEditSource.OH_ACI: the editor whose str(obs) is its content.
OH_ACI = "oh_aci"

# Observation types rendered as their content truncated, exactly as CodeActAgent does (AgentThinkObservation).
_TRUNCATED_AS_IS = frozenset({"think"})


@dataclass(frozen=True, slots=True)
class Rendering:
    """The text CodeActAgent sent for one observation, and how it was made."""

    text: str
    rule: str
    """Which rendering applied: ``command``, ``file-read``, ``edit``, ``error``, ``think``, ``ipython``,
    ``rejected`` or ``content`` (the fallback)."""
    truncated: bool
    exact: bool
    """False where OpenHands' rendering of this type is not reproduced (the content stands in for it)."""


def truncate_content(content: str, max_chars: int | None) -> str:
    """OpenHands' ``truncate_content``: keep the first and last ``max_chars // 2`` characters of a long
    observation around :data:`TRUNCATION_NOTICE`; ``None`` or a negative limit keeps it whole."""
    if max_chars is None or len(content) <= max_chars or max_chars < 0:
        return content
    half = max_chars // 2
    # content[-0:] is the whole content: OpenHands keeps it all (plus the notice) for a limit of 0 or 1
    return content[:half] + TRUNCATION_NOTICE + content[-half:]


def agent_observation(content: str, extras: Mapping[str, Any]) -> str:
    """``CmdOutputObservation.to_agent_observation()`` from the event's content and ``extras``."""
    meta = extras.get("metadata") if isinstance(extras.get("metadata"), Mapping) else {}
    prefix = meta.get("prefix") if isinstance(meta.get("prefix"), str) else ""
    suffix = meta.get("suffix") if isinstance(meta.get("suffix"), str) else ""
    exit_code = meta.get("exit_code", extras.get("exit_code", -1))  # legacy events keep it in extras
    out = f"{prefix}{content}{suffix}"
    if isinstance(meta.get("working_dir"), str) and meta["working_dir"]:
        out += f"\n[Current working directory: {meta['working_dir']}]"
    if isinstance(meta.get("py_interpreter_path"), str) and meta["py_interpreter_path"]:
        out += f"\n[Python interpreter: {meta['py_interpreter_path']}]"
    if exit_code != -1 and exit_code is not None:
        out += f"\n[Command finished with exit code {exit_code}]"
    return out


def render(
    observation: str, content: str, extras: Mapping[str, Any], *, by_tool: bool, max_chars: int | None
) -> Rendering:
    """What CodeActAgent sent for an observation event of type ``observation`` (``by_tool``: it answers a
    tool call, i.e. it has ``tool_call_metadata``)."""

    def cut(text: str, rule: str, exact: bool = True, before: str = "", after: str = "") -> Rendering:
        out = truncate_content(text, max_chars)
        return Rendering(before + out + after, rule, out != text, exact)

    if observation == "run":
        body = agent_observation(content, extras)
        return cut(body if by_tool else USER_COMMAND_PREFIX + body, "command")
    if observation == "read":
        return Rendering(content, "file-read", truncated=False, exact=True)
    if observation == "edit":
        return cut(content, "edit", exact=extras.get("impl_source") == OH_ACI)
    if observation == "error":
        return cut(content, "error", after=ERROR_SUFFIX)
    if observation == "user_rejected":
        return cut(content, "rejected", before=REJECTED_PREFIX, after=REJECTED_SUFFIX)
    if observation == "run_ipython":
        lines = [IPYTHON_IMAGE_PLACEHOLDER if IPYTHON_IMAGE_MARK in x else x for x in content.split("\n")]
        return cut("\n".join(lines), "ipython")
    if observation in _TRUNCATED_AS_IS:
        return cut(content, observation)
    return cut(content, "content", exact=False)
