"""mini-swe-agent's own limits: ``step_limit``, ``cost_limit`` (USD) and ``wall_time_limit_seconds``.

How it checks them, from ``src/minisweagent/agents/default.py`` (1.x and 2.x): docs/anchors.md §3 and
docs/governors.md, "Other agents' own limits".
"""

from __future__ import annotations

from workbench.govern.limit_rules import Limit, LimitRules

DEFAULT_COST_LIMIT = 3.0  # mini-swe-agent AgentConfig.cost_limit default (agents/default.py)
LIMITS_EXCEEDED = "LimitsExceeded"  # mini-swe-agent exceptions.LimitsExceeded, recorded as info.exit_status
TIME_EXCEEDED = "TimeExceeded"  # mini-swe-agent 2.x exceptions.TimeExceeded

RULES = LimitRules(
    agent="mini-swe-agent",
    limits=(
        Limit("step_limit", "calls", "before", False, "turn-cap", LIMITS_EXCEEDED, "step_limit"),
        Limit("cost_limit_usd", "usd", "before", False, "max-budget", LIMITS_EXCEEDED, "cost_limit"),
        Limit(
            "time_limit_s", "seconds", "before", False, "deadline", TIME_EXCEEDED, "wall_time_limit_seconds"
        ),
    ),
    price_source="recorded",
    source="SWE-agent/mini-swe-agent src/minisweagent/agents/default.py (query), v1.14-2.x",
)
