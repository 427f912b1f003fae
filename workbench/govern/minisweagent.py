"""mini-swe-agent's own limits: ``step_limit``, ``cost_limit`` (USD) and ``wall_time_limit_seconds``.

Source: ``src/minisweagent/agents/default.py`` of SWE-agent/mini-swe-agent, the same check in 1.x (v1.14-v1.15.0,
the shared SWE-bench runs: ``query()``, "if 0 < step_limit <= model.n_calls or 0 < cost_limit <= model.cost:
raise LimitsExceeded()") and in 2.x (``DefaultAgent.query``, the same condition on the agent's own ``n_calls`` and
``cost``, then ``wall_time_limit_seconds <= int(elapsed)`` raising ``TimeExceeded``):

* checked at the top of every step, **before** the model call, on the calls made so far: the call that crosses
  the cost limit is made, billed and its action executed; the run stops before the next call;
* reaching the limit stops (``<=``); 0 means no limit;
* the run's exit status is ``LimitsExceeded`` with an empty submission (2.x: an ``exit`` message with
  ``extra.exit_status = "LimitsExceeded"``, ``submission = ""``); no final submission step;
* the dollar meter is the cost the model class recorded for each call — LiteLLM's ``completion_cost`` (1.x
  ``litellm_model.py``, 2.x ``extra.cost``) or OpenRouter's ``usage.cost`` (1.x ``openrouter_model.py``) — which
  the importer keeps as ``Usage.cost``: ``price_source = "recorded"``. A 2.x format error still bills its call
  (``run()`` adds the ``FormatError``'s cost), so every recorded call counts.

The shared runs' ``config.agent`` recorded ``step_limit: 250`` and ``cost_limit: 3.0`` (``cost_limit``'s default is
3.0; ``step_limit``'s default is 0, no limit).
"""

from __future__ import annotations

from workbench.govern.limit_rules import Limit, LimitRules

DEFAULT_COST_LIMIT = 3.0  # mini-swe-agent AgentConfig.cost_limit default (agents/default.py)
DEFAULT_STEP_LIMIT = 0  # mini-swe-agent AgentConfig.step_limit default: 0 = no limit (agents/default.py)
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
