"""The shape ADR-107's pruning works on: a head, then whole turns; and the pairing check.

* **Head**: the leading run of system messages plus everything up to and including the first user message.
* **Turns**: after the head, a turn starts at each assistant message and carries everything up to the next
  one (its tool results, and any user or system messages injected after them). Turns whose tool results
  answer calls in an earlier turn (a source that writes parallel calls as separate assistant messages) are
  merged, so every turn is pairing-closed and dropping whole turns can never orphan a call or a result.
  Messages between the head and the first assistant message form a turn of their own.

Call signatures (pure)::

    split(messages) -> Partition            # head end and turn boundaries, O(n)
    orphans(messages) -> Orphans            # tool results without their call, calls without results
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.estimate.content import MessageLike


@dataclass(frozen=True)
class Partition:
    """``messages[:head]`` is the head; turn ``i`` is ``messages[starts[i]:ends[i]]``."""

    head: int
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @property
    def turns(self) -> int:
        return len(self.starts)


def head_end(messages: Sequence[MessageLike]) -> int:
    i = 0
    while i < len(messages) and messages[i].role == "system":
        i += 1
    for j in range(i, len(messages)):
        if messages[j].role == "user":
            return j + 1
        if messages[j].role == "assistant":
            break
    return i


def split(messages: Sequence[MessageLike]) -> Partition:
    """Head and pairing-closed turns of a transcript, in one pass plus a merge pass."""
    n = len(messages)
    head = head_end(messages)
    starts: list[int] = []
    for i in range(head, n):
        if i == head or messages[i].role == "assistant":
            starts.append(i)
    if not starts:
        return Partition(head, (), ())
    # unit index of every message, and where each call id was issued
    unit_of_call: dict[str, int] = {}
    merge_to: list[int] = list(range(len(starts)))  # merge_to[u] = earliest unit u must join
    u = -1
    for i in range(head, n):
        if u + 1 < len(starts) and starts[u + 1] == i:
            u += 1
        m = messages[i]
        for call in m.tool_calls or ():
            cid = getattr(call, "id", None)
            if cid:
                unit_of_call[cid] = u
        if m.role == "tool":
            cid = getattr(m, "tool_call_id", None)
            if cid and cid in unit_of_call and unit_of_call[cid] < u:
                merge_to[u] = min(merge_to[u], unit_of_call[cid])
    # a unit that must join an earlier one pulls every unit in between along
    merged_starts: list[int] = []
    lowest = len(starts)
    keep = [True] * len(starts)
    for u in range(len(starts) - 1, -1, -1):
        lowest = min(lowest, merge_to[u])
        if lowest < u:
            keep[u] = False
        else:
            lowest = len(starts)
    merged_starts = [s for s, k in zip(starts, keep, strict=True) if k]
    ends = [*merged_starts[1:], n]
    return Partition(head, tuple(merged_starts), tuple(ends))


@dataclass(frozen=True)
class Orphans:
    """Tool results whose call is not in the transcript, and calls with no result."""

    results: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.results or self.calls)


def orphans(messages: Sequence[MessageLike]) -> Orphans:
    """The pairing check (ADR-107's post-fit guard): every result has its call, every call its results.

    Results and calls without an id cannot be paired and are not reported.
    """
    call_ids: list[str] = []
    result_ids: list[str] = []
    for m in messages:
        call_ids.extend(cid for call in m.tool_calls or () if (cid := getattr(call, "id", None)))
        if m.role == "tool" and (cid := getattr(m, "tool_call_id", None)):
            result_ids.append(cid)
    calls, results = set(call_ids), set(result_ids)
    return Orphans(
        tuple(r for r in dict.fromkeys(result_ids) if r not in calls),
        tuple(c for c in dict.fromkeys(call_ids) if c not in results),
    )
