"""Claude Code's own limits: ``--max-turns`` and the Agent SDK's ``max_budget_usd`` (``--max-budget-usd``).

The workbench's reading of claude-agent-sdk-python's statements (the CLI ships as a binary): docs/anchors.md §6 and
docs/governors.md, "Other agents' own limits".
"""

from __future__ import annotations

from workbench.govern.limit_rules import Limit, LimitRules

ERROR_MAX_TURNS = "error_max_turns"  # claude-agent-sdk ResultMessage.subtype
ERROR_MAX_BUDGET = "error_max_budget_usd"  # claude-agent-sdk ResultMessage.subtype

RULES = LimitRules(
    agent="claude-code",
    limits=(
        Limit("step_limit", "calls", "before", False, "turn-cap", ERROR_MAX_TURNS, "max_turns"),
        Limit("cost_limit_usd", "usd", "before", False, "max-budget", ERROR_MAX_BUDGET, "max_budget_usd"),
    ),
    price_source="genai-prices",
    source="anthropics/claude-agent-sdk-python types.py (max_turns, max_budget_usd), examples/max_budget_usd.py",
)
