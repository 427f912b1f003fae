"""Claude Code's own limits: ``--max-turns`` and the Agent SDK's ``max_budget_usd`` (``--max-budget-usd``).

Source: anthropics/claude-agent-sdk-python ``src/claude_agent_sdk/types.py`` (``ClaudeAgentOptions.max_turns``,
``max_budget_usd``: "The query will stop if this budget is exceeded, returning an ``error_max_budget_usd``
result"), ``_internal/transport/subprocess_cli.py`` (both passed to the CLI as ``--max-turns`` /
``--max-budget-usd``) and ``examples/max_budget_usd.py`` ("the cost may exceed the budget by up to one API call's
worth"). The CLI that enforces them ships as a bundled binary, not as source; the rules below are this workbench's
reading of those statements, stated as such:

* both are checked **between** calls, before the next one: the call that reaches ``max_turns`` (or crosses the
  budget) is made and its tools run; a run whose last allowed call still asks for tools ends ``error_max_turns``
  (``error_max_budget_usd``) instead of calling again; a call that answers without tools ends the run as usual;
* reaching the limit stops (``>=``);
* the dollar meter is Claude Code's own price of each call, which a transcript does not record: calls are priced
  by genai-prices at their date (``price_source = "genai-prices"``).
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
