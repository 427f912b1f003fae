"""An incremental index of an append-mostly transcript, so a send costs the messages added since the last
(docs/context.md, "In the workbench"): the manager keeps one per run.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from workbench.context.transcript import Orphans
from workbench.estimate.content import MessageLike
from workbench.estimate.estimator import MessageCosts


class TranscriptIndex:
    def __init__(self, costs: MessageCosts) -> None:
        self.costs = costs
        self._reset()

    def _reset(self) -> None:
        self.msgs: list[MessageLike] = []
        self.cum: list[float] = [0.0]
        self.sys_end = 0
        self.head = 0
        self.closed = False  # the head is known for good (a user or an assistant message was seen)
        self.starts: list[int] = []
        self.unit_calls: list[list[str]] = []
        self.unit_of_call: dict[str, int] = {}
        self.call_at: dict[str, int] = {}
        self.unmatched_results: dict[str, int] = {}
        self.cross: list[tuple[int, int, str]] = []  # (index of call, index of result, id)

    # -- maintenance -------------------------------------------------------------------------------------

    def sync(self, messages: Sequence[MessageLike]) -> None:
        known = len(self.msgs)
        if len(messages) < known or not all(map(operator.is_, messages[:known], self.msgs)):
            self._reset()
            self.costs.forget_except(messages)  # rewritten originals need not stay cached
            known = 0
        for i in range(known, len(messages)):
            self._append(i, messages[i])

    def _append(self, i: int, m: MessageLike) -> None:
        self.msgs.append(m)
        self.cum.append(self.cum[-1] + self.costs.cost(m))
        if self.closed:
            self._place(i, m)
            return
        role = m.role
        if role == "system" and self.sys_end == i:
            self.sys_end = self.head = i + 1
            self._track_ids(i, m)
        elif role == "user":  # the head ends at the first user message
            self.head = i + 1
            self.closed = True
            for j in range(self.sys_end, i + 1):
                self._track_ids(j, self.msgs[j])
        elif role == "assistant":  # no user message before the first assistant: the head is the system run
            self.closed = True
            for j in range(self.sys_end, i + 1):
                self._place(j, self.msgs[j])
        # anything else waits: it joins the head if a user message follows, else the first turn

    def _place(self, i: int, m: MessageLike) -> None:
        if not self.starts or m.role == "assistant":
            self.starts.append(i)
            self.unit_calls.append([])
        u = len(self.starts) - 1
        if m.role == "tool":
            cid = m.tool_call_id
            if cid:
                owner = self.unit_of_call.get(cid)
                if owner is None:
                    if cid in self.call_at:  # its call is in the head
                        self.cross.append((self.call_at[cid], i, cid))
                    else:
                        self.unmatched_results[cid] = i
                elif owner < u:
                    self._merge(owner)
        else:
            for call in m.tool_calls or ():
                cid = call.id
                if not cid:
                    continue
                self.call_at[cid] = i
                self.unit_of_call[cid] = len(self.starts) - 1
                self.unit_calls[-1].append(cid)
                if cid in self.unmatched_results:  # its result came first: no turn can hold both
                    self.cross.append((i, self.unmatched_results.pop(cid), cid))

    def _track_ids(self, i: int, m: MessageLike) -> None:
        """Ids of a head message (never dropped): later results of its calls are cross pairs."""
        if m.role == "tool":
            if m.tool_call_id and m.tool_call_id not in self.call_at:
                self.unmatched_results[m.tool_call_id] = i
        else:
            for call in m.tool_calls or ():
                if call.id:
                    self.call_at[call.id] = i
                    if call.id in self.unmatched_results:
                        self.cross.append((i, self.unmatched_results.pop(call.id), call.id))

    def _merge(self, into: int) -> None:
        """Units ``into+1 .. last`` join unit ``into`` (a result answered a call of an earlier unit)."""
        for u in range(into + 1, len(self.starts)):
            for cid in self.unit_calls[u]:
                self.unit_of_call[cid] = into
            self.unit_calls[into].extend(self.unit_calls[u])
        del self.starts[into + 1 :]
        del self.unit_calls[into + 1 :]

    # -- queries -----------------------------------------------------------------------------------------

    @property
    def total(self) -> float:
        return self.cum[-1]

    def cost_between(self, i: int, j: int) -> float:
        return self.cum[j] - self.cum[i]

    def created_orphans(self, cut: int) -> Orphans:
        """What dropping ``msgs[head:cut]`` would orphan (only cross pairs can be split by a turn cut)."""
        lo = self.head
        results, calls = [], []
        for call_i, result_i, cid in self.cross:
            call_dropped = lo <= call_i < cut
            result_dropped = lo <= result_i < cut
            if call_dropped and not result_dropped:
                results.append(cid)
            elif result_dropped and not call_dropped:
                calls.append(cid)
        return Orphans(tuple(sorted(results)), tuple(sorted(calls)))
