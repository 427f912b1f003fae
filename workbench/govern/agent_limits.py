"""Other agents' own limits, replayed as those agents apply them (docs/governors.md, "Other agents' own limits").

``before`` checks run at the top of a step on what the calls so far used (the crossing call was acted on);
``after`` checks run once a call is billed (its answer is discarded); ``strict``: only a value above the limit
stops. A call priced neither way makes the dollar meter unknown from that call on — never a guess of 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.govern import claudecode, inspectai, minisweagent, openhands, sweagent
from workbench.govern.limit_rules import Check, Limit, LimitRules
from workbench.govern.verdict import StopReason


@dataclass(frozen=True, slots=True)
class LimitHit:
    limit: Limit
    value: float
    allowed: float
    autosubmit: bool = False

    @property
    def reason(self) -> str:
        v, a = self.value, self.allowed
        if self.limit.meter == "usd":
            shown = f"${v:,.4f} of ${a:,.4f}"
        elif self.limit.meter == "seconds":
            shown = f"{v:,.1f} s of {a:,.1f} s"
        else:
            shown = f"{int(v):,} of {int(a):,} {self.limit.meter}"
        words = f"{self.limit.knob} {'exceeded' if self.limit.strict else 'reached'}: {shown} — {self.limit.exit_status}"
        if self.autosubmit:
            words += " (autosubmitted: the workspace diff at the stop is the submission)"
        return words


def crossed(value: float, allowed: float, strict: bool) -> bool:
    return value > allowed if strict else value >= allowed


class AgentLimits:
    """One run's meters under an agent's limits: calls, dollars, tokens, messages, seconds."""

    def __init__(self, rules: LimitRules, values: dict[str, float | int | None]) -> None:
        self.rules = rules
        self.active = tuple(
            (lim, float(v)) for lim in rules.limits if (v := values.get(lim.field)) is not None and v > 0
        )
        self.calls = 0
        self.usd: float | None = 0.0
        self.tokens = 0

    @property
    def caps_dollars(self) -> bool:
        return any(lim.meter == "usd" for lim, _ in self.active)

    def _reading(self, lim: Limit, messages: int | None, elapsed_s: float | None) -> float | None:
        if lim.meter == "calls":
            return float(self.calls)
        if lim.meter == "usd":
            return self.usd
        if lim.meter == "tokens":
            return float(self.tokens)
        if lim.meter == "messages":
            return None if messages is None else float(messages)
        return elapsed_s

    def _first(self, check: Check, messages: int | None, elapsed_s: float | None) -> LimitHit | None:
        for lim, allowed in self.active:
            if lim.check != check:
                continue
            value = self._reading(lim, messages, elapsed_s)
            if value is not None and crossed(value, allowed, lim.strict):
                auto = self.rules.autosubmit and lim.stop == StopReason.MAX_BUDGET
                return LimitHit(lim, value, allowed, auto)
        return None

    def before_call(self, *, messages: int | None = None, elapsed_s: float | None = None) -> LimitHit | None:
        """At the top of a step: the limits checked before the model is called (in the agent's own order)."""
        return self._first("before", messages, elapsed_s)

    def after_call(
        self, usd: float | None, tokens: int | None, *, elapsed_s: float | None = None
    ) -> LimitHit | None:
        """Once a call is billed: count it, add its dollars and tokens, and check the after-call limits."""
        self.calls += 1
        if self.usd is not None:
            if usd is None:
                self.usd = None
            else:
                self.usd += usd
        self.tokens += tokens or 0
        return self._first("after", None, elapsed_s)


SOURCE_RULES = {
    "mini-swe-agent": "mini-swe-agent",
    "swe-agent": "swe-agent",
    "openhands": "openhands",
    "claude-code": "claude-code",
    "inspect-ai": "inspect",
}
"""The rule set of each importer's agent (``Run.source``)."""


def rules_for(name: str) -> LimitRules | None:
    """The agent limit semantics of a rule set, or ``None`` for the seed's own rule sets."""
    return {
        "mini-swe-agent": minisweagent.RULES,
        "swe-agent": sweagent.RULES,
        "openhands": openhands.LIMIT_RULES,
        "claude-code": claudecode.RULES,
        "inspect": inspectai.RULES,
    }.get(name)
