"""How an agent applies its own limits, as data (``Limit``, ``LimitRules``): the small piece each agent's module
(``workbench.govern.minisweagent``, ``sweagent``, ``openhands``, ``claudecode``, ``inspectai``) states and
``workbench.govern.agent_limits`` reads. It lives below both, so the meter's registry of rule sets can import
the agents' modules without their importing it back (docs/architecture.md, "Layers")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from workbench.govern.verdict import StopReason

Check = Literal["before", "after"]


@dataclass(frozen=True, slots=True)
class Limit:
    """How one agent applies one of its limits."""

    field: str
    """The ``Policy`` field holding the limit's value (``None`` or <= 0: no limit, as every agent here reads 0)."""
    meter: Literal["calls", "usd", "tokens", "messages", "seconds"]
    check: Check
    strict: bool
    stop: str
    """The workbench stop reason (``turn-cap``, ``max-budget``, ``max-tokens``, ``deadline``): a
    :class:`~workbench.govern.verdict.StopReason`'s word, checked on construction."""
    exit_status: str
    """What the agent itself records as the run's ending."""
    knob: str
    """The agent's own name for the setting."""

    def __post_init__(self) -> None:
        StopReason(self.stop)  # an unknown word fails here, at import, not in a replay


@dataclass(frozen=True, slots=True)
class LimitRules:
    agent: str
    limits: tuple[Limit, ...]
    price_source: str
    """Where its dollar meter reads a call's price: ``recorded`` (the cost the source logged, the agent's own meter)
    or ``genai-prices`` (``workbench.pricing`` at the call's date: the agent priced calls itself and logged none)."""
    autosubmit: bool = False
    """A cost stop still submits the workspace as it stands (SWE-agent's ``attempt_autosubmission_after_error``)."""
    source: str = ""
