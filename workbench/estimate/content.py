"""Content classes: how many characters of each kind a message carries (docs/estimator.md, "What ADR-107 decides").
Dense is three classes here so the study can report them apart: tool-call arguments, tool-result payloads and the
tool-schema block. A message is anything with ``role``, ``content`` and ``tool_calls`` (each with ``name`` and
``arguments``): :class:`workbench.trace.Message` or a live loop's own message object.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

ContentClass = Literal["prose", "tool_args", "tool_result", "tool_schema"]
CONTENT_CLASSES: tuple[ContentClass, ...] = ("prose", "tool_args", "tool_result", "tool_schema")


class MessageLike(Protocol):
    role: str
    content: str | None
    tool_calls: Sequence[Any]


@dataclass(frozen=True, slots=True)
class Counts:
    """Characters per content class, and the message and tool-call counts the overheads are charged on."""

    prose: int = 0
    tool_args: int = 0
    tool_result: int = 0
    tool_schema: int = 0
    messages: int = 0
    tool_calls: int = 0

    @property
    def dense(self) -> int:
        return self.tool_args + self.tool_result + self.tool_schema

    @property
    def chars(self) -> int:
        return self.prose + self.dense

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.prose + other.prose,
            self.tool_args + other.tool_args,
            self.tool_result + other.tool_result,
            self.tool_schema + other.tool_schema,
            self.messages + other.messages,
            self.tool_calls + other.tool_calls,
        )

    def __sub__(self, other: Counts) -> Counts:
        return Counts(
            self.prose - other.prose,
            self.tool_args - other.tool_args,
            self.tool_result - other.tool_result,
            self.tool_schema - other.tool_schema,
            self.messages - other.messages,
            self.tool_calls - other.tool_calls,
        )

    def of(self, cls: ContentClass) -> int:
        return int(getattr(self, cls))


def segments(message: MessageLike) -> Iterable[tuple[ContentClass, str]]:
    """The message's text, split by content class (tool calls: name and argument text are dense)."""
    text = message.content or ""
    if message.role == "tool":
        yield "tool_result", text
    elif text:
        yield "prose", text
    for call in message.tool_calls or ():
        yield "tool_args", f"{call.name}{call.arguments or ''}"


def count_message(message: MessageLike) -> Counts:
    """Characters per class of one message (plus one message and its tool calls for the overheads)."""
    text = message.content or ""
    calls = message.tool_calls or ()
    args = sum(len(c.name) + len(c.arguments or "") for c in calls)
    if message.role == "tool":
        return Counts(tool_result=len(text), tool_args=args, messages=1, tool_calls=len(calls))
    return Counts(prose=len(text), tool_args=args, messages=1, tool_calls=len(calls))


def schema_text(schemas: Sequence[dict[str, Any]] | None) -> str:
    """The tool-schema block as the provider would receive it (compact JSON); empty when no tools."""
    if not schemas:
        return ""
    return json.dumps(list(schemas), separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def count_schemas(schemas: Sequence[dict[str, Any]] | None) -> Counts:
    return Counts(tool_schema=len(schema_text(schemas)))
