"""The seed loop's observation decayer (``decayWithin``) and fold of aged assistant text (``foldWithin``).

docs/governors.md §5.14-5.15: both run at the top of every turn, decay first, and only ever shorten messages.
State is per run (one ``Decayer`` per run)::

    dec = Decayer(spill=MemorySpill())
    working, safety = observation_bytes(W), observation_safety_bytes(W)     # the context law
    # top of turn:
    messages, n = dec.decay_within(messages, working, safety)             # step E
    messages, f = dec.fold_within(messages, working, safety)              # step F
    # after the tools ran (tool-calling, non-length-stopped turns):
    dec.observe(admitted_bytes)                                           # inflow sample (after the memo)
    if mutated: dec.acted_past(history_before)                            # index just after the assistant msg

Shortened messages are new objects in a new list, the others the same objects (MessageCosts re-estimates only those).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from workbench.context.spill import MemorySpill, SpillStore
from workbench.trace.schema import Message

# docs/governors.md §2, context.go decayLowWaterPercent: the low-water mark before inflow is measured.
DECAY_LOW_WATER_PERCENT = 75
# docs/governors.md §2, context.go decayHeadroomTurns: K quiet turns the mark is solved for.
DECAY_HEADROOM_TURNS = 7
# docs/governors.md §2, context.go minInflowSamples: turns of inflow before the measured mean is used.
MIN_INFLOW_SAMPLES = 3
# docs/governors.md §2, context.go decayHeadroomFloorPercent / decayHeadroomCeilingPercent: clamp of the solved mark.
DECAY_HEADROOM_FLOOR_PERCENT = 50
DECAY_HEADROOM_CEILING_PERCENT = 90
# docs/governors.md §2, context.go foldKeepAssistantTurns: the newest assistant messages never folded.
FOLD_KEEP_ASSISTANT_TURNS = 3
# docs/governors.md §5.13: the label carries the first 60 characters of the arguments.
LABEL_ARGUMENT_CHARS = 60

DecayClass = Literal["spent", "needed", "fresh"]


def nbytes(text: str | None) -> int:
    return len(text.encode("utf-8", "surrogatepass")) if text else 0


def label(name: str, arguments: str) -> str:
    """``"<tool name> <first 60 chars of arguments>…"`` (the ellipsis only if clipped)."""
    clipped = arguments[:LABEL_ARGUMENT_CHARS]
    return f"{name} {clipped}{'…' if len(arguments) > LABEL_ARGUMENT_CHARS else ''}"


def result_stub(lbl: str, size: int, path: str | None = None) -> str:
    if path:
        return f"[{lbl} — {size} bytes, spilled to {path}]"
    return f"[{lbl} — {size} bytes, superseded]"


def fold_stub(ordinal: int, size: int, path: str) -> str:
    return (
        f"[my turn {ordinal} — {size} bytes of my own earlier reasoning, folded; the full text is in {path} "
        f"— read it with sh if it matters]"
    )


def low_water(budget: int, samples: int, inflow_total: int) -> int:
    """The mark retirement aims for: 75% of the budget until 3 inflow samples, then budget − 7 × mean inflow
    clamped to [50%, 90%] of the budget."""
    mean = inflow_total // samples if samples else 0
    if samples < MIN_INFLOW_SAMPLES or mean <= 0:
        return budget * DECAY_LOW_WATER_PERCENT // 100
    mark = budget - DECAY_HEADROOM_TURNS * mean
    lo = budget * DECAY_HEADROOM_FLOOR_PERCENT // 100
    hi = budget * DECAY_HEADROOM_CEILING_PERCENT // 100
    return max(lo, min(hi, mark))


@dataclass
class _Candidate:
    index: int
    key: str
    cls: DecayClass
    body: str
    label: str


@dataclass
class Decayer:
    """Per-run decay and fold state: what has been acted on, what the memo marked used, the stubs written."""

    spill: SpillStore = field(default_factory=MemorySpill)
    consumed_from: int = 0
    used: set[str] = field(default_factory=set)
    preserved: dict[str, str] = field(default_factory=dict)
    """key -> durable path of a result's bytes (written by the memo or by a spill now)."""
    stubs: dict[str, str] = field(default_factory=dict)
    """key -> the stub written for it (write-once)."""
    folds: dict[int, str] = field(default_factory=dict)
    """assistant ordinal -> the fold stub written for it (write-once)."""
    samples: int = 0
    inflow_total: int = 0
    decayed: int = 0
    folded: int = 0

    # -- inputs from the loop --------------------------------------------------------------------------

    def observe(self, admitted_bytes: int) -> None:
        """One inflow sample: the admitted bytes of a tool-calling, non-length-stopped turn."""
        self.samples += 1
        self.inflow_total += admitted_bytes

    def acted_past(self, history_before: int) -> None:
        """A turn mutated the workspace: everything before ``history_before`` has been acted on."""
        self.consumed_from = max(self.consumed_from, history_before)

    def mark_used(self, key: str) -> None:
        self.used.add(key)

    def low_water(self, budget: int) -> int:
        return low_water(budget, self.samples, self.inflow_total)

    # -- decay (§5.14) -----------------------------------------------------------------------------------

    def classify(self, messages: Sequence[Message]) -> list[_Candidate]:
        """Every tool message with its key and class (fresh / spent / needed)."""
        boundary = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
        calls = {c.id: c for m in messages if m.role == "assistant" for c in m.tool_calls if c.id}
        out = []
        for i, m in enumerate(messages):
            if m.role != "tool":
                continue
            key = m.tool_call_id or f"#{i}"
            call = calls.get(m.tool_call_id) if m.tool_call_id else None
            lbl = label(call.name, call.arguments) if call else label(m.name or "tool", "")
            if i > boundary:
                cls: DecayClass = "fresh"
            elif i < self.consumed_from or key in self.used:
                cls = "spent"
            else:
                cls = "needed"
            out.append(_Candidate(i, key, cls, m.content or "", lbl))
        return out

    def _stub_for(self, c: _Candidate, *, spill_now: bool) -> str | None:
        """The stub for a candidate, or None if not eligible (its pathless stub must be shorter)."""
        size = nbytes(c.body)
        plain = result_stub(c.label, size)
        if nbytes(plain) >= size:
            return None
        path = self.preserved.get(c.key)
        if path is None and spill_now:
            path = self.spill.preserve(c.key, c.body)
            if path is not None:
                self.preserved[c.key] = path
        if path:
            with_path = result_stub(c.label, size, path)
            if nbytes(with_path) < size:
                return with_path
        return plain

    def _eligible(self, cands: Iterable[_Candidate], classes: Sequence[DecayClass]) -> list[_Candidate]:
        ordered = [c for cls in classes for c in cands if c.cls == cls and c.key not in self.stubs]
        return [c for c in ordered if nbytes(result_stub(c.label, nbytes(c.body))) < nbytes(c.body)]

    def _can_retire_to(
        self, live: int, target: int, cands: list[_Candidate], classes: Sequence[DecayClass]
    ) -> bool:
        eligible = self._eligible(cands, classes)
        if live - sum(nbytes(c.body) for c in eligible) > target:  # cheap upper bound
            return False
        for c in eligible:  # exact pricing (may spill; never edits the prompt)
            stub = self._stub_for(c, spill_now=True)
            if stub is not None:
                live -= nbytes(c.body) - nbytes(stub)
            if live <= target:
                return True
        return live <= target

    def _retire_to(
        self,
        out: list[Message],
        live: int,
        target: int,
        cands: list[_Candidate],
        classes: Sequence[DecayClass],
    ) -> tuple[int, int]:
        n = 0
        for c in self._eligible(cands, classes):
            if live <= target:
                break
            stub = self._stub_for(c, spill_now=True)
            if stub is None:
                continue
            self.stubs[c.key] = stub
            out[c.index] = out[c.index].model_copy(update={"content": stub})
            live -= nbytes(c.body) - nbytes(stub)
            n += 1
        return n, live

    def decay_within(
        self, messages: Sequence[Message], working: int, safety: int
    ) -> tuple[list[Message], int]:
        """Step E: returns the (possibly shortened) transcript and how many results were stubbed now."""
        out = list(messages)
        self._reapply_stubs(out)
        cands = self.classify(out)
        live = sum(nbytes(c.body) for c in cands)
        if live <= working:
            return out, 0
        target = self.low_water(working)
        if self._can_retire_to(live, target, cands, ["spent"]):
            n, _ = self._retire_to(out, live, target, cands, ["spent"])
            self.decayed += n
            return out, n
        if safety > working and live <= safety:
            return out, 0  # hold: unused material stays byte-identical (cache-friendly)
        n, live = self._retire_to(out, live, self.low_water(safety), cands, ["spent", "needed"])
        if live > safety:
            fresh_n, live = self._retire_to(out, live, safety, cands, ["fresh"])
            n += fresh_n
        self.decayed += n
        return out, n

    def _reapply_stubs(self, out: list[Message]) -> None:
        """Write-once: a key stubbed before keeps exactly that stub even if handed the original again."""
        if not self.stubs:
            return
        for i, m in enumerate(out):
            if m.role == "tool":
                key = m.tool_call_id or f"#{i}"
                stub = self.stubs.get(key)
                if stub is not None and m.content != stub:
                    out[i] = m.model_copy(update={"content": stub})

    # -- fold (§5.15) ------------------------------------------------------------------------------------

    def fold_within(
        self, messages: Sequence[Message], working: int, safety: int
    ) -> tuple[list[Message], int]:
        """Step F: fold aged assistant text (never the newest 3 assistant messages); tool calls are kept."""
        out = list(messages)
        assistants = [i for i, m in enumerate(out) if m.role == "assistant"]
        for ordinal, i in enumerate(assistants, start=1):
            stub = self.folds.get(ordinal)
            if stub is not None and out[i].content != stub:
                out[i] = out[i].model_copy(update={"content": stub})
        live = sum(nbytes(m.content) for m in out if m.role in ("tool", "assistant"))
        if live <= working:
            return out, 0
        target = self.low_water(working)
        if self._fold_to(out, live, target, assistants, consumed_only=True, dry=True):
            n = self._fold_to(out, live, target, assistants, consumed_only=True, dry=False)
            self.folded += n
            return out, n
        if safety > working and live <= safety:
            return out, 0
        n = self._fold_to(out, live, self.low_water(safety), assistants, consumed_only=False, dry=False)
        self.folded += n
        return out, n

    def _fold_to(
        self,
        out: list[Message],
        live: int,
        target: int,
        assistants: list[int],
        *,
        consumed_only: bool,
        dry: bool,
    ) -> int:
        """Fold oldest-first until ``live <= target``. ``dry``: only say (1/0) whether the target is reachable."""
        foldable = len(assistants) - FOLD_KEEP_ASSISTANT_TURNS
        n = 0
        for ordinal, i in enumerate(assistants, start=1):
            if live <= target or ordinal > foldable:
                break
            if ordinal in self.folds or (consumed_only and i >= self.consumed_from):
                continue
            text = out[i].content or ""
            size = nbytes(text)
            path = self.spill.preserve(f"turn-{ordinal}", text) if text else None
            if path is None:
                continue
            stub = fold_stub(ordinal, size, path)
            if nbytes(stub) >= size:
                continue
            live -= size - nbytes(stub)
            if not dry:
                self.folds[ordinal] = stub
                out[i] = out[i].model_copy(update={"content": stub})
            n += 1
        if dry:
            return int(live <= target)
        return n
