"""The shape ADR-107's pruning works on: a head, then whole pairing-closed turns (docs/context.md, "Turn-atomic
pruning"); and the pairing check.

    split(messages) -> Partition            # head end and turn boundaries, O(n)
    orphans(messages) -> Orphans            # tool results without their call, calls without results
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

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
    starts = [i for i in range(head, n) if i == head or messages[i].role == "assistant"]
    if not starts:
        return Partition(head, (), ())
    # unit index of every message, and where each call id was issued
    unit_of_call: dict[str, int] = {}
    merge_to: list[int] = list(range(len(starts)))  # merge_to[u] = earliest unit u must join
    u = -1
    next_start = starts[0]
    for i in range(head, n):
        if i == next_start:
            u += 1
            next_start = starts[u + 1] if u + 1 < len(starts) else n
        m = messages[i]
        if m.role == "tool":
            cid = m.tool_call_id
            if cid:
                owner = unit_of_call.get(cid)
                if owner is not None and owner < u and owner < merge_to[u]:
                    merge_to[u] = owner
        else:
            for call in m.tool_calls or ():
                if call.id:
                    unit_of_call[call.id] = u
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


def created_orphans(messages: Sequence[MessageLike], head: int, cut: int) -> Orphans:
    """The orphans that dropping ``messages[head:cut]`` would create: results kept whose call is dropped,
    calls kept whose results are dropped. Costs the dropped range plus what is kept, not the transcript twice.
    """
    dropped_calls, dropped_results = _ids(messages[head:cut])
    if not dropped_calls and not dropped_results:
        return Orphans()
    kept_calls, kept_results = _ids(chain(messages[:head], messages[cut:]))
    return Orphans(
        tuple(sorted((kept_results & dropped_calls) - kept_calls)),
        tuple(sorted((kept_calls & dropped_results) - kept_results)),
    )


def _ids(messages: Iterable[MessageLike]) -> tuple[set[str], set[str]]:
    """The call ids the assistant messages issue and the ids the tool results answer."""
    calls: set[str] = set()
    results: set[str] = set()
    for m in messages:
        if m.role == "tool":
            if m.tool_call_id:
                results.add(m.tool_call_id)
        else:
            calls.update(c.id for c in m.tool_calls or () if c.id)
    return calls, results


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
