"""SWE-agent's own limits: ``per_instance_cost_limit``, ``per_instance_call_limit`` and ``total_cost_limit``.

Source: SWE-agent/SWE-agent ``sweagent/agent/models.py`` (``LiteLLMModel._update_stats``, 1.x) and
``sweagent/agent/agents.py`` (``DefaultAgent.forward_with_handling``):

* checked **after** each call, once its cost (LiteLLM's ``completion_cost``) is added to ``instance_cost`` and the
  call to ``api_calls``: the crossing call is made and billed, but ``_update_stats`` raises before its output is
  returned, so its action never runs;
* only a value **above** the limit stops: ``0 < per_instance_cost_limit < instance_cost``,
  ``0 < per_instance_call_limit < api_calls`` (so a call limit of N allows N calls' actions; call N+1 is made and
  discarded); 0 means no limit; ``total_cost_limit`` is checked first, on the process-wide total over instances;
* ``InstanceCostLimitExceededError`` and ``InstanceCallLimitExceededError`` are ``CostLimitExceededError``s: the
  agent exits ``exit_cost`` and **autosubmits** (``attempt_autosubmission_after_error``: ``git add -A && git diff
  --cached`` is submitted; the exit status becomes ``submitted (exit_cost)`` when the diff is not empty);
  ``TotalCostLimitExceededError`` is re-raised instead and ends the whole batch;
* per_instance_cost_limit defaults to 3.0 (``GenericAPIModelConfig``), the others to 0.

SWE-agent's trajectories keep only run totals (``info.model_stats``), so a recorded SWE-agent run has no per-call
usage and cannot be replayed in dollars (the replay says so); its call limit replays on the recorded calls. The
dollar meter prices calls with genai-prices where usage is known (``price_source = "genai-prices"``: SWE-agent
logs no per-call cost). ``total_cost_limit`` spans a batch of instances, not one run: it is not replayed per run.
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
