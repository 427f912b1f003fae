"""OpenHands' stuck detection, iteration cap and budget, so OpenHands runs can be replayed under their own rules.

The four stuck scenarios, the N − 1 iteration cap (ponyc-4588) and the before-step budget check: docs/anchors.md §2.
Equality is on the exact argument text and the result's content hash: stricter than OpenHands' (command and exit
code), so this fires no earlier than OpenHands would. The context-window error loop (scenario 5) is not modelled.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.govern.limit_rules import Limit, LimitRules
from workbench.govern.noprogress import CallFact, ResultFact

OH_MAX_ITERATIONS = 500  # docs/anchors.md §2 (OpenHands core/config/config_utils.py OH_MAX_ITERATIONS)
STUCK_ACTION_OBSERVATION = (
    4  # docs/anchors.md §2 (StuckDetectionThresholds.action_observation / loop_repeat_times)
)
STUCK_ACTION_ERROR = 3  # docs/anchors.md §2 (StuckDetectionThresholds.action_error)
STUCK_MONOLOGUE = 3  # docs/anchors.md §2 (StuckDetectionThresholds.monologue)
STUCK_ALTERNATING = 6  # docs/anchors.md §2 (StuckDetectionThresholds.alternating_pattern)
OPENHANDS_TURN_CAP_OFFSET = 1  # inferred from ponyc-4588: 49 calls at max_iterations 50 (docs/anchors.md §2)
FINISH_TOOLS = ("finish",)  # OpenHands AgentFinishAction's tool name
BUDGET_ERROR = (
    "RuntimeError: Agent reached maximum budget for conversation"  # OpenHands BudgetControlFlag.step
)
LIMIT_RULES = LimitRules(
    agent="openhands",
    limits=(
        Limit("cost_limit_usd", "usd", "before", False, "max-budget", BUDGET_ERROR, "max_budget_per_task"),
    ),
    price_source="recorded",
    source="All-Hands-AI/OpenHands openhands/controller/state/control_flags.py (BudgetControlFlag), V0",
)


def finish_text(call: CallFact) -> str:
    """The answer a ``finish`` call carries (its ``message``, or ``final_thought``/``thought``), "" when none."""
    try:
        args = json.loads(call.arguments)
    except (ValueError, TypeError):
        return call.arguments.strip()
    if isinstance(args, dict):
        for key in ("message", "final_thought", "thought", "outputs"):
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return ""


@dataclass(frozen=True, slots=True)
class StuckReading:
    scenario: str
    reason: str


def _all_equal(xs: Sequence[object]) -> bool:
    return len(xs) > 0 and all(x == xs[0] for x in xs)


class StuckDetector:
    def __init__(
        self,
        action_observation: int = STUCK_ACTION_OBSERVATION,
        action_error: int = STUCK_ACTION_ERROR,
        monologue: int = STUCK_MONOLOGUE,
        alternating: int = STUCK_ALTERNATING,
        scan_events: int | None = None,
    ) -> None:
        self.action_observation, self.action_error = action_observation, action_error
        self.monologue, self.alternating, self.scan_events = monologue, alternating, scan_events
        # ("a", signature) | ("o", key, is_error) | ("m", text)
        self.events: list[tuple[object, ...]] = []
        self._unknown = 0

    def observe_message(self, text: str) -> StuckReading | None:
        self.events.append(("m", text))
        return self._check()

    def observe_tools(self, calls: Sequence[CallFact], results: Sequence[ResultFact]) -> StuckReading | None:
        for call, result in zip(calls, results, strict=False):
            self.events.append(("a", call.signature))
            key = result.key
            if key is None:
                self._unknown += 1
                key = f"?{self._unknown}"
            self.events.append(("o", key, result.is_error))
        return self._check()

    def _check(self) -> StuckReading | None:
        events = self.events if self.scan_events is None else self.events[-self.scan_events :]
        if len(events) < 3:
            return None
        actions = [e[1] for e in events if e[0] == "a"]
        obs = [(e[1], e[2]) for e in events if e[0] == "o"]
        n = self.action_observation
        if len(actions) >= n and len(obs) >= n and _all_equal(actions[-n:]) and _all_equal(obs[-n:]):
            return StuckReading(
                "repeating-action-observation", f"stuck: the same action and observation {n} times"
            )
        n = self.action_error
        if len(actions) >= n and len(obs) >= n and _all_equal(actions[-n:]) and all(o[1] for o in obs[-n:]):
            return StuckReading("repeating-action-error", f"stuck: the same action failed {n} times")
        n = self.monologue
        tail: list[object] = []
        for e in reversed(events):
            if e[0] == "o":
                break
            if e[0] == "m":
                tail.append(e[1])
                if len(tail) == n:
                    break
        if len(tail) == n and _all_equal(tail):
            return StuckReading("monologue", f"stuck: the same message {n} times with nothing in between")
        n = self.alternating
        if len(events) >= n and len(actions) >= n and len(obs) >= n:
            a, o = actions[-n:], obs[-n:]
            if (
                _all_equal(a[0::2])
                and _all_equal(a[1::2])
                and _all_equal(o[0::2])
                and _all_equal(o[1::2])
                and a[0] != a[1]
            ):
                return StuckReading("alternating-pattern", f"stuck: an A/B alternation over {n} steps")
        return None
