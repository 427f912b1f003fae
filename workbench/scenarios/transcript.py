"""Building synthetic transcripts whose recorded usage and recorded messages agree.

A synthetic run is append-only: every turn sends the whole pool so far (one ``[0, n)`` span), so
``run.request(i)`` rebuilds exactly what turn ``i`` sent, and its prompt tokens are the base prompt plus
every earlier assistant reply and tool result. Text is *sized* to a token count with the per-class
characters-per-token ratios of :mod:`workbench.scenarios.shapes`; it is not tokenized.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np

from workbench.scenarios.shapes import CHARS_PER_TOKEN, SYNTHETIC_EPOCH
from workbench.trace.schema import Message, ToolCall, ToolResult, Turn, Usage

_WORDS = np.array(["the", "leaf", "reads", "a", "file", "and", "edits", "one", "function", "then", "runs",
                   "the", "check", "it", "keeps", "what", "passes", "frame", "law", "surface",
                   "parameter", "package", "caller", "budget", "grant", "landing", "context", "window",
                   "token", "prompt", "return", "value", "error", "nil", "struct", "field", "method",
                   "interface", "test", "case", "fixture", "module", "import"])  # fmt: skip
_CODE = np.array(["func", "return", "if", "else", "for", "range", ":=", "err", "nil", "ctx", "struct",
                  "type", "int", "string", "bool", "map", "append", "len", "defer", "go", "chan",
                  "select", "case", "break", "continue", "var", "const", "package", "import"])  # fmt: skip


def sized_text(rng: np.random.Generator, tokens: int, kind: str = "prose") -> str:
    """Text of about ``tokens`` tokens (by the class's chars/token), unique with overwhelming odds."""
    chars = max(1, round(tokens * CHARS_PER_TOKEN[kind]))
    vocab = _CODE if kind in {"code", "tool"} else _WORDS
    words = rng.choice(vocab, size=chars // 5 + 8)
    tag = f"[{int(rng.integers(0, 2**62)):x}] "
    text = tag + " ".join(words.tolist())
    return text[:chars]


@dataclass
class Transcript:
    """An append-only conversation whose turns carry usage consistent with their messages."""

    rng: np.random.Generator
    base_prompt: int
    messages: list[Message] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    prompt: int = 0
    seconds: float = 0.0

    def __post_init__(self) -> None:
        system = max(1, self.base_prompt * 3 // 4)
        self.messages.append(Message(role="system", content=sized_text(self.rng, system, "prose")))
        self.messages.append(
            Message(role="user", content=sized_text(self.rng, self.base_prompt - system, "prose"))
        )
        self.prompt = self.base_prompt

    def turn(
        self,
        *,
        completion: int,
        cached: int,
        result_tokens: int | None,
        tool: str = "read_file",
        mutated: bool = False,
        timed_out: bool = False,
        finish_reason: str | None = None,
        text: str | None = None,
        arguments: str | None = None,
        result: str | None = None,
        seconds: float = 20.0,
    ) -> Turn:
        """Record one model call sending the whole pool; with ``result_tokens`` None it calls no tool."""
        index = len(self.turns)
        started = SYNTHETIC_EPOCH + timedelta(seconds=self.seconds)
        self.seconds += seconds
        sent = [(0, len(self.messages))]
        reply_text = text if text is not None else sized_text(self.rng, max(1, completion // 4), "prose")
        calls: list[ToolCall] = []
        results: list[ToolResult] = []
        if result_tokens is not None:
            args = arguments if arguments is not None else f'{{"path": "pkg/file_{index:03d}.go"}}'
            calls = [ToolCall(id=f"call_{index}", name=tool, arguments=args)]
            content = result if result is not None else sized_text(self.rng, max(1, result_tokens), "tool")
            results = [ToolResult.of(content, call_id=f"call_{index}", timed_out=timed_out)]
        turn = Turn(
            index=index,
            started_at=started,
            ended_at=SYNTHETIC_EPOCH + timedelta(seconds=self.seconds),
            usage=Usage(prompt=self.prompt, cached=min(cached, self.prompt), completion=completion),
            finish_reason=finish_reason or ("tool_calls" if calls else "stop"),
            text=reply_text,
            tool_calls=calls,
            tool_results=results,
            mutated=mutated if calls else False,
            sent=sent,
        )
        self.turns.append(turn)
        self.messages.append(Message(role="assistant", content=reply_text, tool_calls=calls))
        for r in results:
            self.messages.append(Message(role="tool", content=r.content, tool_call_id=r.call_id))
        self.prompt += completion + (result_tokens or 0)
        return turn
