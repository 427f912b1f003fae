"""Inspect AI's sample limits: ``message_limit``, ``token_limit``, ``cost_limit`` and ``time_limit``.

How it checks them, from inspect_ai ``util/_limit.py`` and ``model/_model.py``: docs/anchors.md §4 and
docs/governors.md, "Other agents' own limits".
"""

from __future__ import annotations

from workbench.govern.limit_rules import Limit, LimitRules

LIMIT_EXCEEDED = "LimitExceededError"  # inspect_ai.util._limit.LimitExceededError

RULES = LimitRules(
    agent="inspect",
    limits=(
        Limit(
            "message_limit",
            "messages",
            "before",
            False,
            "turn-cap",
            f"{LIMIT_EXCEEDED} (message)",
            "message_limit",
        ),
        Limit(
            "time_limit_s", "seconds", "before", False, "deadline", f"{LIMIT_EXCEEDED} (time)", "time_limit"
        ),
        Limit(
            "token_limit", "tokens", "after", True, "max-tokens", f"{LIMIT_EXCEEDED} (token)", "token_limit"
        ),
        Limit("cost_limit_usd", "usd", "after", True, "max-budget", f"{LIMIT_EXCEEDED} (cost)", "cost_limit"),
        Limit("time_limit_s", "seconds", "after", True, "deadline", f"{LIMIT_EXCEEDED} (time)", "time_limit"),
    ),
    price_source="recorded",
    source="UKGovernmentBEIS/inspect_ai src/inspect_ai/util/_limit.py, model/_model.py (generate, record usage)",
)
