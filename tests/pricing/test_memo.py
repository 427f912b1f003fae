"""The price memo holds a large corpus's calls: a second pass over them is priced from memory, every figure the
same (before, 32,768 entries held fewer calls than 10 copies of the shared traces, and each pass evicted the last's).
"""

from __future__ import annotations

from datetime import UTC, datetime

from workbench import pricing
from workbench.trace.schema import Usage

CALLS = 40_000  # more than the 32,768 the memo held before


def test_a_second_pass_over_40000_distinct_calls_is_priced_from_memory() -> None:
    when = datetime(2025, 6, 1, tzinfo=UTC)
    usages = [Usage(prompt=10_000 + k, completion=100 + k % 7, cached=k % 5_000) for k in range(CALLS)]
    pricing._price.cache_clear()
    first = [pricing.price_usage("claude-sonnet-4-20250514", u, when) for u in usages]
    after_first = pricing._price.cache_info()
    second = [pricing.price_usage("claude-sonnet-4-20250514", u, when) for u in usages]
    after_second = pricing._price.cache_info()
    assert after_first.misses == CALLS
    assert after_second.misses == CALLS  # the second pass missed nothing
    assert after_second.hits - after_first.hits == CALLS
    assert second == first
    assert all(p is not None and p.usd > 0 for p in first)
    # the figures are genai-prices': the first call, priced with the memo bypassed, is the same
    u = usages[0]
    fresh = pricing._price.__wrapped__(
        "claude-sonnet-4-20250514", None, when, u.prompt, u.completion, u.cached, None, None
    )
    assert fresh == first[0]
