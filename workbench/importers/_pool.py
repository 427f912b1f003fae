"""Storing each request's messages once: a request that repeats the previous request plus its answer reuses
those pool entries, so storage grows with messages, not calls x messages (the schema's rule).

Formats that resend the whole transcript with every call (Inspect AI model events, SWE-agent queries) are
matched on the raw records first, compared at C speed (identity, then equality) without parsing, and the spans of
the reused prefix are cut from the previous request's spans, so a long run is read in time that grows with its
messages rather than with calls x messages."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from workbench.trace.schema import Message, Span


class RequestPool:
    """The message pool of one run, built call by call."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        # the previous request plus its answer: messages, pool indices, raw records (None: compare as messages)
        self._msgs: list[Message] = []
        self._raws: list[Any] = []
        self._spans: list[Span] = []  # the pool ranges of that sequence
        self._ends: list[int] = []  # how many entries of the sequence the spans up to each one cover
        self._keyed = 0  # how many leading entries carry a raw record

    def request(self, msgs: list[Message]) -> list[Span]:
        """Add one request's messages; returns the spans that rebuild it."""
        return self.request_raw(msgs, lambda m: m, raw_keys=False)

    def request_raw(
        self, raws: list[Any], make: Callable[[Any], Message | None], *, raw_keys: bool = True
    ) -> list[Span]:
        """Add one request given as raw records (``make`` turns one into a Message, or ``None`` to drop it)."""
        n_prev = len(self._msgs)
        k = 0
        if raw_keys:
            j = min(len(raws), self._keyed)
            if j and raws[:j] == self._raws[:j]:  # identity first, then equality, in C
                k = j
        while k < len(raws) and k < n_prev:
            raw, raw_prev = raws[k], self._raws[k]
            if raw_keys and raw_prev is not None:
                if raw is not raw_prev and raw != raw_prev:
                    break
            else:
                m = make(raw)
                if m is None or (m is not self._msgs[k] and m != self._msgs[k]):
                    break
            k += 1
        keyed = self._keyed if k > self._keyed else None  # None: the whole reused prefix is keyed
        out, ends = self._cut(k)
        msgs, rawl = self._msgs[:k], self._raws[:k]
        for raw in raws[k:]:
            m = make(raw)
            if m is None:
                continue
            self.messages.append(m)
            i = len(self.messages) - 1
            msgs.append(m)
            rawl.append(raw if raw_keys else None)
            if out and out[-1][1] == i:
                out[-1] = (out[-1][0], i + 1)
                ends[-1] += 1
            else:
                out.append((i, i + 1))
                ends.append((ends[-1] if ends else 0) + 1)
        self._msgs, self._raws, self._spans, self._ends = msgs, rawl, list(out), ends
        self._keyed = (len(msgs) if keyed is None else keyed) if raw_keys else 0
        return out

    def _cut(self, k: int) -> tuple[list[Span], list[int]]:
        """The spans of the first ``k`` entries of the previous sequence, and their cumulative entry counts."""
        if k == 0:
            return [], []
        s = bisect_right(self._ends, k - 1)  # the span holding entry k-1
        before = self._ends[s - 1] if s else 0
        start = self._spans[s][0]
        return [*self._spans[:s], (start, start + (k - before))], [*self._ends[:s], k]

    def answer(self, msg: Message, raw: Any = None) -> None:
        """The call's answer: the next request is expected to repeat it after this request's messages."""
        self.messages.append(msg)
        i = len(self.messages) - 1
        if self._keyed == len(self._msgs) and raw is not None:
            self._keyed += 1
        self._msgs.append(msg)
        self._raws.append(raw)
        if self._spans and self._spans[-1][1] == i:
            self._spans[-1] = (self._spans[-1][0], i + 1)
            self._ends[-1] += 1
        else:
            self._spans.append((i, i + 1))
            self._ends.append((self._ends[-1] if self._ends else 0) + 1)
