"""Inspect AI's sample limits: ``message_limit``, ``token_limit``, ``cost_limit`` and ``time_limit``.

Source: UKGovernmentBEIS/inspect_ai ``src/inspect_ai/util/_limit.py`` and ``src/inspect_ai/model/_model.py``:

* ``message_limit``: ``Model.generate`` calls ``check_message_limit(len(input), raise_for_equal=True)`` **before**
  the call — a conversation already holding ``message_limit`` messages is not sent (``count >= limit``);
* ``token_limit``: ``record_model_usage`` then ``check_token_limit`` **after** each call; ``_TokenLimit`` raises when
  ``total > limit`` (strict), total = the call's ``total_tokens`` summed (prompt, cache reads and writes included,
  plus output): the crossing call is billed, its output is not added to the conversation;
* ``cost_limit``: ``record_model_cost`` then ``check_cost_limit`` **after** each call, ``cost > limit`` (strict);
  the cost is Inspect's own price of the call (``compute_model_cost`` over its model-info prices), which the log
  keeps per call only as ``ModelUsage.total_cost`` where set: the dollar meter reads that recorded cost and falls
  back to genai-prices (``price_source = "recorded"``);
* ``time_limit``: a cancel scope over the sample's wall clock: a call still running at the limit is cancelled
  (its end after the limit), and no call starts after it (``>=``);
* each raises ``LimitExceededError``; the sample ends with ``limit`` = ``{type: message|token|cost|time}`` and is
  still scored (no error).
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
