"""The ADR-107 estimator over message columns: one vectorised pass (Arrow string lengths, numpy arithmetic) for a
whole corpus's messages, equal bit for bit to :meth:`Estimator.message` (docs/scale.md, "The batch estimator").

    message_columns(messages) -> pyarrow.Table       # role, content, chars, call_chars, tool_calls
    estimate_columns(table, estimator=Estimator()) -> numpy.ndarray   # tokens per message (no prefix)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from workbench.estimate.content import MessageLike
from workbench.estimate.estimator import Estimator


def message_columns(messages: Iterable[MessageLike]) -> Any:
    """The columns the batch estimator reads, one row per message (build once, e.g. at import; a text that is
    not valid Unicode — a lone surrogate — is stored with it replaced, which keeps its length)."""
    import pyarrow as pa

    roles, texts, chars, call_chars, calls = [], [], [], [], []
    for m in messages:
        tc = m.tool_calls or ()
        roles.append(m.role)
        texts.append(m.content or "")
        chars.append(len(texts[-1]))  # Python keeps a str's length: counting here costs nothing, later a scan
        call_chars.append(sum(len(c.name) + len(c.arguments or "") for c in tc) if tc else 0)
        calls.append(len(tc))
    try:
        content = pa.array(texts, type=pa.large_string())
    except UnicodeEncodeError:
        # one code point for one: U+FFFD in place of a lone surrogate leaves every length as it was
        content = pa.array(
            [t.encode("utf-8", "replace").decode("utf-8") if _unpaired(t) else t for t in texts],
            type=pa.large_string(),
        )
    return pa.table(
        {
            "role": pa.array(roles, type=pa.string()).dictionary_encode(),
            "content": content,
            "chars": pa.array(chars, type=pa.int64()),
            "call_chars": pa.array(call_chars, type=pa.int64()),
            "tool_calls": pa.array(calls, type=pa.int64()),
        }
    )


def _unpaired(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def estimate_columns(table: Any, estimator: Estimator | None = None) -> np.ndarray:
    """Tokens per message (no prefix), equal to ``estimator.message(m)`` for each row's message."""
    import pyarrow as pa
    import pyarrow.compute as pc

    est = estimator or Estimator()
    if est.counter is not None:
        raise ValueError(
            "the batch estimator divides characters; an exact counter tokenizes one text at a time"
        )
    if "chars" in table.column_names:  # counted when the columns were built (code points, as ``len``)
        text = table.column("chars").to_numpy().astype(np.int64, copy=False)
    else:  # columns from elsewhere: count the code points of the text now
        text = pc.utf8_length(table.column("content")).to_numpy(zero_copy_only=False).astype(np.int64)
    role = table.column("role")
    if isinstance(role.type, pa.DictionaryType) or (
        isinstance(role, pa.ChunkedArray) and isinstance(role.type, pa.DictionaryType)
    ):
        role = role.cast(pa.string())
    is_tool = pc.equal(role, "tool").to_numpy(zero_copy_only=False).astype(bool)
    args = table.column("call_chars").to_numpy().astype(np.int64)
    calls = table.column("tool_calls").to_numpy().astype(np.int64)
    prose = np.where(is_tool, 0, text)
    dense = np.where(is_tool, text + args, args)
    return prose / est.prose_divisor + dense / est.dense_divisor + est.per_message + calls * est.per_tool_call
