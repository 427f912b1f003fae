"""Per-turn request features of a recorded run, computed once per message (prefix sums over the pool).

A run's requests share one message pool and each turn's request is a few ``[start, stop)`` ranges into it, so every
request's character (and exact token) counts come from one cumulative sum: O(messages + turns × spans).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from workbench.estimate.content import CONTENT_CLASSES, count_message, count_schemas, schema_text, segments
from workbench.estimate.tokenizers import TokenCounter, encoding_for_model
from workbench.trace.schema import Run, Span

# Column order of RequestFeatures.counts.
COUNT_COLUMNS: tuple[str, ...] = (*CONTENT_CLASSES, "messages", "tool_calls")


def family_of(model: str | None) -> str:
    """The tokenizer family a model belongs to (what divisors are fitted per)."""
    name = (model or "").lower()
    if "claude" in name:
        return "claude"
    enc = encoding_for_model(model)
    if enc:
        return enc
    for fam in ("llama", "qwen", "deepseek", "mistral", "gemini", "glm"):
        if fam in name:
            return fam
    return "unknown"


@dataclass(frozen=True)
class RequestFeatures:
    """One row per turn: chars per class + message/call counts of what the turn sent; its reported prompt."""

    run: Run
    turns: np.ndarray  # turn index
    counts: np.ndarray  # (T, 6) in COUNT_COLUMNS order
    exact: np.ndarray | None  # (T, 4) exact tokens per content class, when a counter was given
    prompt: np.ndarray  # (T,) reported prompt tokens, NaN when unknown
    completion: np.ndarray  # (T,) reported completion tokens, NaN when unknown
    reply: (
        np.ndarray
    )  # (T, 6) counts of the previous call's reply: the assistant messages opening what t added
    extends: np.ndarray  # (T,) bool: this request is the previous one plus appended messages
    models: list[str | None]

    @cached_property  # read per fold by every fit (docs/scale.md, "The estimator study, linear")
    def comparable(self) -> np.ndarray:
        """Turns whose request was recorded and whose prompt tokens were reported (read-only: it is shared)."""
        out = ~np.isnan(self.prompt)
        out.flags.writeable = False
        return out

    @cached_property
    def group(self) -> str:
        """``source/role``, with ``+system`` / ``+tools`` when the run records its system prompt / tool schemas
        (runs that record them hide less, so they cannot share an unseen prefix with runs that do not)."""
        run = self.run
        head = next((r for t in run.turns if (r := run.request(t))), [])
        system = "+system" if head and head[0].role == "system" else ""
        return f"{run.source}/{run.role}{system}{'+tools' if run.tool_schemas else ''}"

    def __len__(self) -> int:
        return len(self.turns)


def _is_extension(prev: list[Span] | None, cur: list[Span]) -> bool:
    if not prev or not cur or len(cur) < len(prev):
        return False
    for i, (a, b) in enumerate(prev):
        c, d = cur[i]
        last = i == len(prev) - 1
        if c != a or (d != b if not last else d < b):
            return False
    return True


def features(run: Run, counter: TokenCounter | None = None) -> RequestFeatures:
    pool = run.messages
    per = np.zeros((len(pool) + 1, len(COUNT_COLUMNS)), dtype=np.int64)
    for i, m in enumerate(pool):
        c = count_message(m)
        per[i + 1] = (c.prose, c.tool_args, c.tool_result, c.tool_schema, c.messages, c.tool_calls)
    cum = np.cumsum(per, axis=0)
    schema = count_schemas(run.tool_schemas)
    schema_row = np.array([0, 0, 0, schema.tool_schema, 0, 0], dtype=np.int64)

    ex_cum = None
    schema_exact = 0
    if counter is not None:
        ex = np.zeros((len(pool) + 1, len(CONTENT_CLASSES)), dtype=np.int64)
        col = {c: k for k, c in enumerate(CONTENT_CLASSES)}
        for i, m in enumerate(pool):
            for cls, text in segments(m):
                ex[i + 1, col[cls]] += counter.count(text)
        ex_cum = np.cumsum(ex, axis=0)
        schema_exact = counter.count(schema_text(run.tool_schemas))

    rows, exact_rows, prompts, extends, turns, models = [], [], [], [], [], []
    completions, replies = [], []
    prev: list[Span] | None = None
    for t in run.turns:
        if t.sent is None:
            prev = None
            continue
        spans = [(int(a), int(b)) for a, b in t.sent]
        row = sum((cum[b] - cum[a] for a, b in spans), np.zeros(len(COUNT_COLUMNS), dtype=np.int64))
        rows.append(row + schema_row)
        if ex_cum is not None:
            erow = sum(
                (ex_cum[b] - ex_cum[a] for a, b in spans), np.zeros(len(CONTENT_CLASSES), dtype=np.int64)
            )
            erow[3] += schema_exact
            exact_rows.append(erow)
        prompts.append(np.nan if t.usage.prompt is None else float(t.usage.prompt))
        completions.append(np.nan if t.usage.completion is None else float(t.usage.completion))
        grew = _is_extension(prev, spans)
        extends.append(grew)
        reply = np.zeros(len(COUNT_COLUMNS), dtype=np.int64)
        if grew and prev is not None:
            i = prev[-1][1]  # the first message this request added
            while i < spans[-1][1] and pool[i].role == "assistant":
                reply += per[i + 1]
                i += 1
        replies.append(reply)
        turns.append(t.index)
        models.append(t.model or run.model)
        prev = spans
    n = len(rows)
    return RequestFeatures(
        run=run,
        turns=np.array(turns, dtype=np.int64),
        counts=np.array(rows, dtype=np.int64).reshape(n, len(COUNT_COLUMNS)),
        exact=np.array(exact_rows, dtype=np.int64).reshape(n, len(CONTENT_CLASSES)) if counter else None,
        prompt=np.array(prompts, dtype=float),
        completion=np.array(completions, dtype=float),
        reply=np.array(replies, dtype=np.int64).reshape(n, len(COUNT_COLUMNS)),
        extends=np.array(extends, dtype=bool),
        models=models,
    )
