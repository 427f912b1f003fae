"""The no-progress guard (four signals; docs/governors.md §5.8, CodeAF internal/exec/noprogress.go).

Observed once per tool-calling turn that reaches the end of the turn, only while no landing is active:

1. repeat — the LAST call's (name, exact arguments) and its result key equal the previous observed turn's, with no
   error in the turn: ``repeat`` += 1, else 1. Conclude at 4.
2. stagnant — a turn with no mutation and no new information (an unseen result hash; an error is always new):
   +1, else 0. Conclude at 6.
3. floor — at 60 observed turns or more with fewer than 5 productive turns in the last 20: conclude.
4. recon — consecutive turns without a mutation (new information does not reset it): a notice at every multiple of 10
   (advisory only).

After the conclude directive a grace of 4 observed turns follows; a repeat or stagnant reading during the grace, or
its end, terminates the leaf.

Replay inputs: a result is identified by its content hash (``ToolResult.digest()``); a result whose content and hash
were both withheld counts as new information (repetition cannot be shown). ``mutated`` is the recorded workspace fact;
unrecorded (``None``) is treated as "no change seen", and — as the seed does anyway — any call named write, edit or
apply_patch counts as a mutation.
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

    repeat_cap: int
    stagnant_cap: int
    recon_turns: int
    turn_floor: int
    floor_window: int
    floor_min_productive: int
    conclude_grace: int


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
    def signature(self) -> str:
        return signature(self.name, self.arguments)


def signature(name: str, arguments: str) -> str:
    """A call's identity for the repeat and timeout counts: its name and exact argument text."""
    return name + "\x00" + arguments


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


class ProgressGuard:
    """One leaf's no-progress state. No I/O, no clock; ``observe`` is the only mutator."""

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
        self.turn_floor, self.floor_window, self.min_productive, self.grace = (
            turn_floor,
            floor_window,
            min_productive,
            grace,
        )
        self.last_call: str | None = None
        self.last_result: str | None = None
        self.repeat = 0
        self.stagnant = 0
        self.recon = 0
        self.turns = 0
        self.window = [False] * max(floor_window, 1)
        self.productive = 0
        self.seen: set[str] = set()
        self.concluded = False
        self.conclude_left = 0
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

    def silent_over(self, mutated: Sequence[bool], last_calls: Sequence[str]) -> bool:
        """Whether this fresh guard, observing turns whose mutation facts (the recorded one or a mutation tool's
        name) and last calls' ``signature`` are these, can only ever answer CONTINUE — so a caller that needs only
        its signals may skip reading the turns in full. Every signal needs a long enough run of unmutated turns
        (stagnant, recon), of one repeated last call (repeat) or the turn floor; this checks there is none."""
        if self.turns or self.repeat_cap < 2 or self.stagnant_cap < 1 or self.recon_turns < 1:
            return False
        if len(mutated) >= self.turn_floor:
            return False
        quiet = min(self.stagnant_cap, self.recon_turns)
        run_quiet = run_same = 0
        previous: str | None = None
        for m, sig in zip(mutated, last_calls, strict=True):
            run_quiet = 0 if m else run_quiet + 1
            run_same = run_same + 1 if sig == previous else 1
            previous = sig
            if run_quiet >= quiet or run_same >= self.repeat_cap:
                return False
        return True

    def reason(self) -> str:
        """``noProgressReason``: which signal is speaking, in the guard's own words."""
        if self.repeat >= self.repeat_cap:
            return f"no-progress guard: the same tool call repeated {self.repeat - 1} times with identical results"
        if self.stagnant >= self.stagnant_cap:
            return (
                f"no-progress guard: {self.stagnant} consecutive turns with no filesystem mutations "
                "and no new information"
            )
        return f"no-progress guard: ran past {self.turn_floor} turns with no forward progress"

    def recon_note(self) -> str:
        return (
            f"reading pace — {self.recon} consecutive tool-calling turns with no workspace mutation, "
            "result asked for"
        )

    def observe(
        self, calls: Sequence[CallFact], results: Sequence[ResultFact], world_mutated: bool
    ) -> ProgressReading:
        self.turns += 1
        if not calls:
            return self._reading(Signal.CONTINUE)
        mutated = world_mutated
        new_info = any_error = False
        for call, result in zip(calls, results, strict=False):
            if call.name in MUTATION_TOOLS:
                mutated = True
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
        if any(c.name in MUTATION_TOOLS for c in calls[len(results) :]):
            mutated = True
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
        self.stagnant = 0 if (mutated or new_info) else self.stagnant + 1
        self.recon = 0 if mutated else self.recon + 1
        slot = (self.turns - 1) % len(self.window)
        productive = mutated or new_info
        if self.window[slot]:
            self.productive -= 1
        self.window[slot] = productive
        if productive:
            self.productive += 1
        if self.concluded:
            if self.repeat >= self.repeat_cap or self.stagnant >= self.stagnant_cap:
                return self._reading(Signal.TERMINATE)
            self.conclude_left -= 1
            if self.conclude_left <= 0:
                return self._reading(Signal.TERMINATE)
            return self._reading(Signal.CONTINUE)
        if (
            self.repeat >= self.repeat_cap
            or self.stagnant >= self.stagnant_cap
            or (self.turns >= self.turn_floor and self.productive < self.min_productive)
        ):
            return self._reading(Signal.CONCLUDE)
        if self.recon > 0 and self.recon % self.recon_turns == 0:
            return self._reading(Signal.PACE)
        return self._reading(Signal.CONTINUE)

    def mark_concluded(self) -> None:
        self.concluded = True
        self.conclude_left = self.grace

    def _reading(self, signal: Signal) -> ProgressReading:
        return ProgressReading(
            signal=signal,
            reason=self.reason() if signal in (Signal.CONCLUDE, Signal.TERMINATE) else "",
            turns=self.turns,
            repeat=self.repeat,
            stagnant=self.stagnant,
            recon=self.recon,
            productive=self.productive,
        )
