"""The no-progress guard (four signals; docs/governors.md §5.8, CodeAF internal/exec/noprogress.go).

A result is identified by its content hash (``ToolResult.digest()``); one whose content and hash were both withheld
counts as new information. An unknown ``mutated`` is never read as "no change" (docs/governors.md §1.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from workbench.govern.landing import LANDING_TURNS


class GuardSettings(Protocol):
    """The thresholds a guard is built from (a :class:`~workbench.govern.policy.Policy` has them). A protocol,
    not the Policy type: policy.py reads this module's constants, so this module must not import it."""

    @property
    def repeat_cap(self) -> int: ...
    @property
    def stagnant_cap(self) -> int: ...
    @property
    def recon_turns(self) -> int: ...
    @property
    def turn_floor(self) -> int: ...
    @property
    def floor_window(self) -> int: ...
    @property
    def floor_min_productive(self) -> int: ...
    @property
    def conclude_grace(self) -> int: ...


NO_PROGRESS_REPEAT_CAP = 4  # docs/governors.md §2 noProgressRepeatCap (noprogress.go)
NO_PROGRESS_STAGNANT_CAP = 6  # docs/governors.md §2 noProgressStagnantCap (noprogress.go)
NO_PROGRESS_RECON_TURNS = 10  # docs/governors.md §2 noProgressReconTurns (noprogress.go)
NO_PROGRESS_TURN_FLOOR = 60  # docs/governors.md §2 noProgressTurnFloor (noprogress.go)
NO_PROGRESS_FLOOR_WINDOW = 20  # docs/governors.md §2 noProgressFloorWindow (noprogress.go)
NO_PROGRESS_MIN_PRODUCTIVE = 5  # docs/governors.md §2 noProgressFloorMinProductive (noprogress.go)
MUTATION_TOOLS = frozenset({"write", "edit", "apply_patch"})  # docs/governors.md §1.3 / §5.8 mutationTools


class Signal(StrEnum):
    CONTINUE = "continue"
    PACE = "pace"
    CONCLUDE = "conclude"
    TERMINATE = "terminate"


@dataclass(frozen=True, slots=True)
class CallFact:
    """A tool call as the guards see it."""

    name: str
    arguments: str
    id: str | None = None

    @property
    def signature(self) -> Signature:
        return (self.name, self.arguments)


Signature = tuple[str, str]
"""A call's identity for the repeat and timeout counts: its name and exact argument text (the pair refers to the
recorded strings: a joined copy of every call's arguments was kept per tool turn by the fast path's reading)."""


def signature(name: str, arguments: str) -> Signature:
    return (name, arguments)


@dataclass(frozen=True, slots=True)
class ResultFact:
    """A tool result as the guards see it: its content hash (None when withheld), error and timeout flags."""

    digest: str | None
    is_error: bool = False
    timed_out: bool = False
    content: str | None = None

    @property
    def key(self) -> str | None:
        if self.digest is None:
            return None
        return ("E:" if self.is_error else "R:") + self.digest


@dataclass(frozen=True, slots=True)
class ProgressReading:
    signal: Signal
    reason: str
    turns: int
    repeat: int
    stagnant: int
    recon: int
    productive: int
    fired: str = ""
    """The signal that concluded or terminated: ``repeat``, ``stagnant``, ``floor`` or ``grace`` ("" otherwise)."""
    basis: str = ""
    """What the firing signal read: ``recorded`` facts, or an ``inferred`` workspace fact ("" when none fired)."""
    unjudged: bool = False
    """A signal would have fired had an unknown workspace fact been read as "no change" — it did not fire."""


class ProgressGuard:
    """One leaf's no-progress state. No I/O, no clock; ``observe`` is the only mutator.

    The workspace fact of a turn is True, False or unknown (``None``), recorded or inferred. Unknown is never read
    as "no change": a turn whose change is unknown and that read nothing new breaks the stagnant and recon streaks
    and counts as productive in the floor's window (a signal never fires from it); the reading says ``unjudged``
    where reading it as "no change" would have fired. A signal that fired on an inferred "no change" says so
    (``basis``)."""

    def __init__(
        self,
        repeat_cap: int = NO_PROGRESS_REPEAT_CAP,
        stagnant_cap: int = NO_PROGRESS_STAGNANT_CAP,
        recon_turns: int = NO_PROGRESS_RECON_TURNS,
        turn_floor: int = NO_PROGRESS_TURN_FLOOR,
        floor_window: int = NO_PROGRESS_FLOOR_WINDOW,
        min_productive: int = NO_PROGRESS_MIN_PRODUCTIVE,
        grace: int = LANDING_TURNS,
    ) -> None:
        self.repeat_cap, self.stagnant_cap, self.recon_turns = repeat_cap, stagnant_cap, recon_turns
        self.turn_floor, self.floor_window = turn_floor, floor_window
        self.min_productive, self.grace = min_productive, grace
        self.last_call: Signature | None = None
        self.last_result: str | None = None
        self.repeat = 0
        self.stagnant = 0
        self.stagnant_inferred = 0  # turns of the stagnant streak whose "no change" was inferred
        # the streak with unknown read as "no change" (only to say what was not judged)
        self.shadow_stagnant = 0
        self.recon = 0
        self.turns = 0
        size = max(floor_window, 1)
        self.window: list[bool | None] = [False] * size
        self.window_inferred = [False] * size
        self.productive = 0
        self.unknown_slots = 0
        self.seen: set[str] = set()
        self.concluded = False
        self.conclude_left = 0
        self.conclusion: tuple[str, str, str] | None = None  # (fired, basis, reason) of the conclude
        self._unknown = 0

    @classmethod
    def from_policy(cls, policy: GuardSettings) -> ProgressGuard:
        """A fresh guard with the policy's thresholds (whether the policy runs one at all is ``policy.no_progress``)."""
        return cls(
            policy.repeat_cap,
            policy.stagnant_cap,
            policy.recon_turns,
            policy.turn_floor,
            policy.floor_window,
            policy.floor_min_productive,
            policy.conclude_grace,
        )

    def silent_over(self, mutated: Sequence[bool | None], last_calls: Sequence[Signature]) -> bool:
        """Whether this fresh guard, observing turns whose mutation facts (the recorded one or a mutation tool's
        name; ``None`` unknown) and last calls' ``signature`` are these, can only ever answer CONTINUE and never
        say ``unjudged`` — so a caller that needs only its signals may skip reading the turns in full. Every
        signal needs a long enough run of turns not known to mutate (stagnant, recon; unknown ones count here, as
        the unjudged reading reads them), of one repeated last call (repeat) or the turn floor; this checks there
        is none."""
        if self.turns or self.repeat_cap < 2 or self.stagnant_cap < 1 or self.recon_turns < 1:
            return False
        if len(mutated) >= self.turn_floor:
            return False
        quiet = min(self.stagnant_cap, self.recon_turns)
        run_quiet = run_same = 0
        previous: Signature | None = None
        for m, sig in zip(mutated, last_calls, strict=True):
            run_quiet = 0 if m is True else run_quiet + 1
            run_same = run_same + 1 if sig == previous else 1
            previous = sig
            if run_quiet >= quiet or run_same >= self.repeat_cap:
                return False
        return True

    def reason(self, fired: str) -> str:
        """``noProgressReason``, worded from the numbers of the signal that fired (never a threshold that did not)."""
        if fired == "repeat":
            return f"no-progress guard: the same tool call repeated {self.repeat - 1} times with identical results"
        if fired == "stagnant":
            return (
                f"no-progress guard: {self.stagnant} consecutive turns with no filesystem mutations "
                "and no new information"
            )
        if fired == "floor":
            return (
                f"no-progress guard: ran past {self.turn_floor} turns with no forward progress "
                f"({self.productive} productive of the last {len(self.window)}, fewer than {self.min_productive})"
            )
        if fired == "grace" and self.conclusion is not None:
            return (
                f"{self.conclusion[2]}; the {self.grace} turns after the conclude directive passed "
                "without a final answer"
            )
        return "no-progress guard"

    def recon_note(self) -> str:
        return (
            f"reading pace — {self.recon} consecutive tool-calling turns with no workspace mutation, "
            "result asked for"
        )

    def observe(
        self,
        calls: Sequence[CallFact],
        results: Sequence[ResultFact],
        world_mutated: bool | None,
        inferred: bool = False,
    ) -> ProgressReading:
        """One observed turn. ``world_mutated``: the workspace fact (``None`` unknown); ``inferred``: it was
        inferred (``Turn.mutated_rule``), not recorded."""
        return self._reading(*self.step(calls, results, world_mutated, inferred))

    def step(
        self,
        calls: Sequence[CallFact],
        results: Sequence[ResultFact],
        world_mutated: bool | None,
        inferred: bool = False,
    ) -> tuple[Signal, str, bool]:
        """``observe`` as (signal, what fired, unjudged): the fast path reads ``reason``/``basis`` only on a stop."""
        self.turns += 1
        if not calls:
            return Signal.CONTINUE, "", False
        mutated = world_mutated
        by_tool = False
        new_info = any_error = False
        for call, result in zip(calls, results, strict=False):
            if call.name in MUTATION_TOOLS:
                by_tool = True
            if result.is_error:
                any_error = new_info = True
                continue
            key = result.key
            if key is None:
                new_info = True
                continue
            if key not in self.seen:
                self.seen.add(key)
                new_info = True
        if by_tool or any(c.name in MUTATION_TOOLS for c in calls[len(results) :]):
            mutated, inferred = True, False
        last_sig = calls[-1].signature
        last_res = results[-1].key if results else None
        if last_res is None:
            self._unknown += 1
            last_res = f"?{self._unknown}"  # withheld content never equals anything
        if not any_error and last_sig == self.last_call and last_res == self.last_result:
            self.repeat += 1
        else:
            self.repeat = 1
        self.last_call, self.last_result = last_sig, last_res
        quiet_known = mutated is False and not new_info
        self.shadow_stagnant = 0 if (mutated or new_info) else self.shadow_stagnant + 1
        if quiet_known:
            self.stagnant += 1
            self.stagnant_inferred += int(inferred)
        else:
            self.stagnant = self.stagnant_inferred = 0
        self.recon = self.recon + 1 if mutated is False else 0
        slot = (self.turns - 1) % len(self.window)
        productive: bool | None = True if (mutated or new_info) else (None if mutated is None else False)
        old = self.window[slot]
        self.productive -= old is True
        self.unknown_slots -= old is None
        self.window[slot] = productive
        self.window_inferred[slot] = productive is False and inferred
        self.productive += productive is True
        self.unknown_slots += productive is None
        floor_due = self.turns >= self.turn_floor
        if self.concluded:
            if self.repeat >= self.repeat_cap:
                return Signal.TERMINATE, "repeat", False
            if self.stagnant >= self.stagnant_cap:
                return Signal.TERMINATE, "stagnant", False
            self.conclude_left -= 1
            if self.conclude_left <= 0:
                return Signal.TERMINATE, "grace", False
            return Signal.CONTINUE, "", False
        if self.repeat >= self.repeat_cap:
            return self._conclude("repeat")
        if self.stagnant >= self.stagnant_cap:
            return self._conclude("stagnant")
        if floor_due and self.productive + self.unknown_slots < self.min_productive:
            return self._conclude("floor")
        unjudged = self.shadow_stagnant >= self.stagnant_cap or (
            floor_due and self.productive < self.min_productive
        )
        if self.recon > 0 and self.recon % self.recon_turns == 0:
            return Signal.PACE, "", unjudged
        return Signal.CONTINUE, "", unjudged

    def mark_concluded(self) -> None:
        self.concluded = True
        self.conclude_left = self.grace

    def basis(self, fired: str) -> str:
        """What the signal ``fired`` read, now: ``recorded`` facts, or an ``inferred`` workspace fact."""
        if fired == "stagnant":
            return "inferred" if self.stagnant_inferred else "recorded"
        if fired == "floor":
            return "inferred" if any(self.window_inferred) else "recorded"
        if fired == "grace" and self.conclusion is not None:
            return self.conclusion[1]
        return "recorded"

    def _conclude(self, fired: str) -> tuple[Signal, str, bool]:
        self.conclusion = (fired, self.basis(fired), self.reason(fired))
        return Signal.CONCLUDE, fired, False

    def _reading(self, signal: Signal, fired: str = "", unjudged: bool = False) -> ProgressReading:
        return ProgressReading(
            signal=signal,
            reason=self.reason(fired) if fired else "",
            turns=self.turns,
            repeat=self.repeat,
            stagnant=self.stagnant,
            recon=self.recon,
            productive=self.productive,
            fired=fired,
            basis=self.basis(fired) if fired else "",
            unjudged=unjudged,
        )
