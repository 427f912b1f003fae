"""The seed loop's content-addressed observation memo (``observations.admit``, docs/governors.md §5.13) and the
older loop's call-keyed memo it replaced (§5.21), for replaying the ``older`` rule set. Per-run state, sharing the
run's :class:`~workbench.context.decay.Decayer`::

    memo = ObservationMemo(decayer)
    text = memo.admit(turn, call_id, name, arguments, content, is_error=False, multimodal=False, report=None)
    # append a tool message with `text`; after the turn: decayer.observe(sum of admitted bytes)

``report`` is a trailing background-job report the caller split off the content (kept after a pointer).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from workbench.context.decay import Decayer, label, nbytes


@dataclass
class _Copy:
    turn: int
    key: str
    label: str
    path: str | None = None


def pointer(lbl: str, turn: int, path: str) -> str:
    return f"[identical to the result of {lbl} at turn {turn} — read it above, or from {path}]"


@dataclass
class ObservationMemo:
    decayer: Decayer
    earliest: dict[str, _Copy] = field(default_factory=dict)
    pointers: int = 0

    def admit(
        self,
        turn: int,
        call_id: str | None,
        name: str,
        arguments: str,
        content: str,
        *,
        is_error: bool = False,
        multimodal: bool = False,
        report: str | None = None,
    ) -> str:
        """The text the transcript carries for this result (the body, or a pointer to an identical one)."""
        body = f"ERROR: {content}" if is_error else content
        whole = body + (report or "")
        if is_error or multimodal or not call_id or (report and not body):
            return whole
        digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
        lbl = label(name, arguments)
        earlier = self.earliest.get(digest)
        if earlier is None:
            self.earliest[digest] = _Copy(turn, call_id, lbl, self.decayer.preserved.get(call_id))
            return whole
        if earlier.key in self.decayer.stubs:
            # the earlier copy is gone from the prompt: this copy becomes canonical, inheriting its file
            self.earliest[digest] = _Copy(turn, call_id, lbl, earlier.path)
            if earlier.path:
                self.decayer.preserved.setdefault(call_id, earlier.path)
            return whole
        if earlier.path is None:
            earlier.path = self.decayer.spill.preserve(earlier.key, body)
            if earlier.path is not None:
                self.decayer.preserved.setdefault(earlier.key, earlier.path)
        if earlier.path is not None:
            text = pointer(earlier.label, earlier.turn, earlier.path)
            if nbytes(text) < nbytes(body):
                self.decayer.mark_used(earlier.key)
                self.pointers += 1
                return text + (report or "")
        return whole


# docs/governors.md §5.21 "Call-keyed memo": the cache was cleared on any write/edit/sh/media call.
CALL_MEMO_CLEARING_TOOLS = frozenset({"write", "edit", "sh", "media"})


@dataclass
class CallKeyedMemo:
    """The older loop's memo (docs/governors.md §5.21, loop f8a804c5): a call whose (name, arguments) equals an
    earlier one since the last clearing call is answered with the earlier result, without running. The cache is
    cleared by any write/edit/sh/media call, and (in replay, where other agents' tools have other names) by a
    turn that changed the workspace. Same ``admit`` signature as :class:`ObservationMemo`."""

    cache: dict[tuple[str, str], str] = field(default_factory=dict)
    pointers: int = 0
    """Calls answered from the cache (named like the content memo's count, for the replay's tables)."""

    def clear(self) -> None:
        self.cache.clear()

    def admit(
        self,
        turn: int,
        call_id: str | None,
        name: str,
        arguments: str,
        content: str,
        *,
        is_error: bool = False,
        multimodal: bool = False,
        report: str | None = None,
    ) -> str:
        body = f"ERROR: {content}" if is_error else content
        whole = body + (report or "")
        if name.lower() in CALL_MEMO_CLEARING_TOOLS:
            self.cache.clear()
            return whole
        key = (name, arguments)
        if key in self.cache:
            self.pointers += 1
            return self.cache[key]
        if not is_error and not multimodal:
            self.cache[key] = whole
        return whole
