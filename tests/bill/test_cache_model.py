"""The prompt-cache model's rules, family by family, on hand-built requests."""

from __future__ import annotations

import pytest

from workbench.context.cache_model import (
    CacheRequest,
    CacheRules,
    CacheSplit,
    CacheState,
    cache_note,
    predict,
    rules_for,
)
from workbench.trace.schema import Route, Run, Turn


def req(*blocks: tuple[str, int], at: float | None = None, tail: int = 0, bps: tuple[int, ...] | None = None):
    return CacheRequest(
        blocks=tuple(blocks), breakpoints=bps if bps is not None else (0, len(blocks) - 1), tail=tail, at=at
    )


ANTHROPIC = CacheRules.anthropic("claude-sonnet-4-5")


def test_anthropic_append_only_reads_the_previous_request_and_writes_the_growth() -> None:
    splits = predict(
        ANTHROPIC,
        [req(("sys", 2000), ("a", 500), tail=3), req(("sys", 2000), ("a", 500), ("b", 700), tail=3)],
    )
    assert splits == [CacheSplit(2500, 0, 2497, 3), CacheSplit(3200, 2497, 700, 3)]


def test_anthropic_a_changed_block_breaks_the_prefix_after_it() -> None:
    # the second request replaces block "a": only the system prefix (its own breakpoint) is read
    splits = predict(
        ANTHROPIC, [req(("sys", 2000), ("a", 500), ("b", 700)), req(("sys", 2000), ("a2", 100), ("b", 700))]
    )
    assert splits[1] == CacheSplit(2800, 2000, 800, 0)


def test_anthropic_entries_expire_after_their_lifetime() -> None:
    first = req(("sys", 2000), ("a", 500), at=0.0)
    within = req(("sys", 2000), ("a", 500), ("b", 10), at=299.0)
    late = req(("sys", 2000), ("a", 500), ("b", 10), ("c", 10), at=299.0 + 301.0)
    splits = predict(ANTHROPIC, [first, within, late])
    assert [s.cached for s in splits] == [0, 2500, 0]
    hour = predict(CacheRules.anthropic("claude-sonnet-4-5", one_hour=True), [first, within, late])
    assert [s.cached for s in hour] == [0, 2500, 2510]
    opus = predict(CacheRules.anthropic("claude-opus-4-6", one_hour=True), [first, within, late])
    assert [s.cached for s in opus] == [0, 0, 0]  # opus 4.6's minimum cacheable prompt is 4,096 tokens


def test_anthropic_lookback_is_twenty_blocks() -> None:
    base = [("sys", 2000)] + [(f"m{i}", 10) for i in range(5)]
    far = base + [(f"n{i}", 10) for i in range(25)]
    near = base + [(f"n{i}", 10) for i in range(15)]
    split_far = predict(ANTHROPIC, [req(*base), req(*far)])[1]
    split_near = predict(ANTHROPIC, [req(*base), req(*near)])[1]
    assert split_near.cached == 2050  # the previous end is within 20 blocks of the new breakpoint
    assert split_far.cached == 2000  # too far back: only the system breakpoint's entry is found


def test_openai_reads_from_1024_tokens_in_128_token_steps() -> None:
    rules = CacheRules.openai()
    splits = predict(
        rules,
        [
            req(("sys", 1000)),
            req(("sys", 1000), ("a", 20)),
            req(("sys", 1000), ("a", 100)),
            req(("sys", 1000), ("a", 100), ("b", 400)),
        ],
    )
    # 1,000 and 1,020 shared tokens are under the 1,024 minimum; 1,100 reads as 1,024 (8 x 128)
    assert [s.cached for s in splits] == [0, 0, 0, 1024]
    assert all(s.cache_write == 0 for s in splits)


def test_openai_reads_through_the_previous_reply() -> None:
    rules = CacheRules.openai()
    first = CacheRequest(blocks=(("sys", 2000),), reply=("r", 300))
    second = CacheRequest(blocks=(("sys", 2000), ("r", 290), ("t", 100)))
    assert predict(rules, [first, second])[1].cached == 2300 // 128 * 128


def test_none_caches_nothing() -> None:
    splits = predict(CacheRules.none(), [req(("sys", 5000)), req(("sys", 5000))])
    assert splits[1] == CacheSplit(5000, 0, 0, 5000)


@pytest.mark.parametrize(
    ("model", "source", "route", "family"),
    [
        ("claude-opus-4-6", "claude-code", None, "anthropic"),
        (
            "gpt-5.1-codex",
            "codex-cli",
            Route(provider="openai", rule="session_meta.model_provider"),
            "openai",
        ),
        (
            "google/gemini-3-pro-preview",
            "mini-swe-agent",
            Route(provider="google", via="openrouter"),
            "gemini",
        ),
        # a LiteLLM alias for an OpenAI-compatible client, through OpenRouter to an untold provider (issue 21)
        (
            "openai/openrouter-llama-4-maverick",
            "openhands",
            Route(via="openrouter", basis="inferred"),
            "none",
        ),
        ("openai/openrouter-llama-4-maverick", "openhands", None, "none"),
        ("anthropic/claude-sonnet-4", "openai-log", Route(provider="aws"), "anthropic"),
        ("gpt-4o", "openai-log", Route(provider="deepseek"), "none"),
    ],
)
def test_rules_for_a_run_follow_its_route(model: str, source: str, route: Route | None, family: str) -> None:
    run = Run(run_id="r", source=source, model=model, turns=[Turn(index=0, model=model, route=route)])
    assert rules_for(run).family == family
    assert (cache_note(run) is None) == (family != "none")


def test_claude_code_writes_one_hour_entries() -> None:
    for source, ttl in (("claude-code", 3600.0), ("native", 300.0)):
        run = Run(run_id="r", source=source, model="claude-opus-4-6", turns=[Turn(index=0)])
        assert rules_for(run).ttl_s == ttl


def test_state_is_explicit() -> None:
    state = CacheState()
    predict(ANTHROPIC, [req(("sys", 2000), ("a", 10))], state)
    assert predict(ANTHROPIC, [req(("sys", 2000), ("a", 10), ("b", 5))], state)[0].cached == 2010
