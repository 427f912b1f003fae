"""Storing each request's messages once: a request that repeats the previous request plus its answer reuses
those pool entries, so storage grows with messages, not calls x messages (the schema's rule).

Formats that resend the whole transcript with every call (Inspect AI model events, SWE-agent 1.x queries) are
matched on the raw records first (a dict comparison, no parsing), so a long run is read in time that grows with
its messages rather than with calls x messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.trace.schema import Message, Span


def spans(indices: list[int]) -> list[Span]:
    """Pool indices as ``[start, stop)`` ranges (consecutive indices merged)."""
    out: list[Span] = []
    for i in indices:
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


class RequestPool:
    """The message pool of one run, built call by call."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._previous: list[tuple[Message, int, Any]] = []  # (message, pool index, raw record or None)
        self._keyed = 0  # how many leading entries of _previous carry a raw record

    def request(self, msgs: list[Message]) -> list[Span]:
        """Add one request's messages; returns the spans that rebuild it."""
        return self.request_raw(msgs, lambda m: m, raw_keys=False)

    def request_raw(
        self, raws: list[Any], make: Callable[[Any], Message | None], *, raw_keys: bool = True
    ) -> list[Span]:
        """Add one request given as raw records (``make`` turns one into a Message, or ``None`` to drop it)."""
        prev = self._previous
        k = 0
        if raw_keys:
            # the longest prefix of raw records, compared at C speed (identity first, then equality)
            j = min(len(raws), self._keyed)
            if j and raws[:j] == [e[2] for e in prev[:j]]:
                k = j
        seq: list[tuple[Message, int, Any]] = prev[:k]
        while k < len(raws) and k < len(prev):
            m_prev, idx, raw_prev = prev[k]
            raw = raws[k]
            if raw_keys and raw_prev is not None:
                if raw is not raw_prev and raw != raw_prev:
                    break
                seq.append((m_prev, idx, raw_prev))
            else:
                m = make(raw)
                if m is None or (m is not m_prev and m != m_prev):
                    break
                seq.append((m_prev, idx, raw if raw_keys else None))
            k += 1
        for raw in raws[k:]:
            m = make(raw)
            if m is None:
                continue
            self.messages.append(m)
            seq.append((m, len(self.messages) - 1, raw if raw_keys else None))
        self._previous = seq
        self._keyed = next((i for i, e in enumerate(seq) if e[2] is None), len(seq)) if raw_keys else 0
        return spans([e[1] for e in seq])

    def answer(self, msg: Message, raw: Any = None) -> None:
        """The call's answer: the next request is expected to repeat it after this request's messages."""
        self.messages.append(msg)
        self._previous.append((msg, len(self.messages) - 1, raw))
