"""Storing each request's messages once: a request that repeats the previous request plus its answer reuses
those pool entries, so storage grows with messages, not calls x messages (the schema's rule)."""

from __future__ import annotations

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
        self._previous: list[tuple[Message, int]] = []

    def request(self, msgs: list[Message]) -> list[Span]:
        """Add one request's messages; returns the spans that rebuild it."""
        indices: list[int] = []
        k = 0
        while k < len(msgs) and k < len(self._previous) and msgs[k] == self._previous[k][0]:
            indices.append(self._previous[k][1])
            k += 1
        seq = list(self._previous[:k])
        for m in msgs[k:]:
            self.messages.append(m)
            indices.append(len(self.messages) - 1)
            seq.append((m, len(self.messages) - 1))
        self._previous = seq
        return spans(indices)

    def answer(self, msg: Message) -> None:
        """The call's answer: the next request is expected to repeat it after this request's messages."""
        self.messages.append(msg)
        self._previous.append((msg, len(self.messages) - 1))
