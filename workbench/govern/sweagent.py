"""SWE-agent's own limits: ``per_instance_cost_limit``, ``per_instance_call_limit`` and ``total_cost_limit``.

How it checks them, from ``sweagent/agent/models.py`` (``_update_stats``) and ``agents.py`` (1.x), and why its
runs have no dollar replay: docs/anchors.md §3 and docs/governors.md, "Other agents' own limits".
"""

from __future__ import annotations

from workbench.govern.limit_rules import Limit, LimitRules

DEFAULT_PER_INSTANCE_COST_LIMIT = 3.0  # SWE-agent GenericAPIModelConfig.per_instance_cost_limit default
EXIT_COST = "exit_cost"  # SWE-agent forward_with_handling: CostLimitExceededError -> "exit_cost"

RULES = LimitRules(
    agent="swe-agent",
    limits=(
        Limit("cost_limit_usd", "usd", "after", True, "max-budget", EXIT_COST, "per_instance_cost_limit"),
        Limit("call_limit", "calls", "after", True, "max-budget", EXIT_COST, "per_instance_call_limit"),
    ),
    price_source="genai-prices",
    autosubmit=True,
    source="SWE-agent/SWE-agent sweagent/agent/models.py (_update_stats), agents.py (forward_with_handling), 1.x",
)
