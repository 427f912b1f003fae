"""A call's price from its tier's exact rates (``pricing._linear``) is genai-prices' own figure, to the bit: on
every call of the shared traces, and on random usages of tiered, time-of-day and cached models, tier edges
included. The reference is genai-prices' ``calc_price`` itself, called as the workbench called it before."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import pricing
from workbench.pricing import Price


def reference(
    model: str,
    provider: str | None,
    when: datetime | None,
    prompt: int,
    completion: int,
    cached: int | None,
    write: int | None,
    write_1h: int | None,
) -> Price | None:
    """genai-prices' general pricing of the same usage (the path ``_price`` took for every call before)."""
    found = pricing._resolve(model, provider)
    if found is None:
        return None
    return pricing._general(*found, when, pricing._gusage(prompt, completion, cached, write, write_1h))


fast = pricing._price.__wrapped__

# Tiered on the whole prompt (Anthropic's and Google's long-context prices), priced by time of day (DeepSeek's
# off-peak hours), cached writes of both lifetimes, and the models of the shared traces.
MODELS = ("claude-sonnet-4-5", "claude-opus-4-6", "claude-haiku-4-5", "gemini-2.5-pro", "gemini-3-pro-preview",
          "gpt-5", "gpt-5.1-codex", "gpt-4o", "deepseek-chat", "llama-4-maverick")  # fmt: skip
EDGES = (1, 2, 128_000, 128_001, 200_000, 200_001, 272_000, 272_001)


@st.composite
def usages(draw: st.DrawFn) -> tuple[int, int, int | None, int | None, int | None]:
    prompt = draw(st.one_of(st.sampled_from(EDGES), st.integers(1, 400_000)))
    cached = draw(st.one_of(st.none(), st.integers(0, prompt)))
    write = draw(st.one_of(st.none(), st.integers(0, prompt - (cached or 0))))
    write_1h = draw(st.one_of(st.none(), st.integers(0, write or 0)))
    return prompt, draw(st.integers(0, 100_000)), cached, write, write_1h


@settings(max_examples=400, deadline=None)
@given(
    model=st.sampled_from(MODELS),
    provider=st.sampled_from((None, "anthropic", "google", "openai", "openrouter")),
    hour=st.integers(0, 23),
    usage=usages(),
)
def test_a_tiers_rates_give_genai_prices_own_figure(
    model: str, provider: str | None, hour: int, usage: tuple[int, int, int | None, int | None, int | None]
) -> None:
    when = datetime(2025, 11, 20, hour, 30, tzinfo=UTC)
    assert fast(model, provider, when, *usage) == reference(model, provider, when, *usage)


@pytest.mark.parametrize(
    "usage",
    [
        (0, 10, None, None, None),  # no prompt: not a tier's linear form, genai-prices prices it
        (100, 10, 80, 40, None),  # reads and writes beyond the prompt: genai-prices refuses it
        (100, 10, None, 50, 90),  # a one-hour part beyond the write: taken as the whole write
    ],
)
def test_a_usage_outside_the_linear_form_is_priced_as_genai_prices_does(
    usage: tuple[int, int, int | None, int | None, int | None],
) -> None:
    when = datetime(2025, 11, 20, tzinfo=UTC)
    for model in ("claude-sonnet-4-5", "gpt-5", "unknown-model-xyz"):
        assert fast(model, None, when, *usage) == reference(model, None, when, *usage)


def test_every_shared_call_is_priced_as_genai_prices_prices_it(shared: Path) -> None:
    import workbench as wb
    from workbench.trace.route import price_provider, route_of

    corpus = wb.load(shared)
    calls = {
        (
            t.model or run.model,
            price_provider(route_of(run, t)),
            t.started_at or run.started_at,
            t.usage.prompt,
            t.usage.completion,
            t.usage.cached,
            t.usage.cache_write,
            t.usage.cache_write_1h,
        )
        for run in corpus.runs
        for t in run.turns
        if (t.model or run.model) and t.usage.prompt is not None and t.usage.completion is not None
    }
    assert len(calls) == 4_964
    priced = [fast(*c) for c in calls]
    assert priced == [reference(*c) for c in calls]
    assert all(p is not None for p in priced)
