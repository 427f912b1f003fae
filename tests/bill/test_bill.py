"""The counterfactual bill on hand-built runs: no policy is the recording; removing content never raises a prompt;
one policy change moves the bill the way the cache model says."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bill._runs import tool_loop
from workbench.govern.policy import Policy
from workbench.replay.bill import MASK_PLACEHOLDER, ContextPolicy, counterfactual_bill, replay_with_bill

SIZES = [4000, 300, 6000, 200, 5000, 800, 7000, 100, 3000, 2500, 900, 6000]


def test_no_policy_is_the_recording() -> None:
    run = tool_loop(SIZES)
    bill = counterfactual_bill(run)
    assert bill.first_change is None
    assert bill.counterfactual() == bill.recorded()
    assert [r.prompt for r in bill.rows] == [t.usage.prompt for t in run.turns]
    assert [r.cache_write for r in bill.rows] == [t.usage.cache_write for t in run.turns]


def test_masking_replaces_old_results_with_the_placeholder() -> None:
    run = tool_loop(SIZES)
    bill = counterfactual_bill(run, mask_observations=2)
    # turn 3 is the first request carrying three tool results: the oldest is masked
    assert bill.first_change == 3
    row = next(r for r in bill.rows if r.turn == 3)
    assert row.removed_tokens > 0 and row.prompt == run.turns[3].usage.prompt - row.removed_tokens
    assert MASK_PLACEHOLDER.format(lines=800 + 1).startswith("Old environment output")


def test_masking_moves_the_cache_as_the_model_says() -> None:
    """Masking the oldest kept result each turn rewrites the prompt from that result on: fewer tokens are sent,
    fewer are read from the cache and more are written than the recording."""
    run = tool_loop(SIZES)
    bill = counterfactual_bill(run, mask_observations=2)
    cf, rec = bill.counterfactual(), bill.recorded()
    assert cf["prompt_tokens"] < rec["prompt_tokens"]
    assert cf["cache_write_tokens"] > rec["cache_write_tokens"]
    assert cf["cached_tokens"] < rec["cached_tokens"]


def test_a_smaller_window_sends_fewer_tokens_but_writes_more_cache() -> None:
    """One policy change only — the context length — on an Anthropic-cached run: each prune drops the oldest turns
    from the front of the transcript, so every later call rewrites what it keeps."""
    run = tool_loop(SIZES * 2)
    bills = {
        n: counterfactual_bill(run, Policy.named("current", context_length=n, reserve=0, safety=0))
        for n in (None, 16_000, 10_000)
    }
    sent = {n: b.counterfactual()["prompt_tokens"] for n, b in bills.items()}
    written = {n: b.counterfactual()["cache_write_tokens"] for n, b in bills.items()}
    assert bills[None].first_change is None
    assert sent[10_000] < sent[16_000] < sent[None]
    assert written[10_000] > written[None] and written[16_000] > written[None]
    # a call whose cut moved reads only the head the manager never drops (the first request, cached at its
    # breakpoint: 3,037 tokens) and writes the rest but the 3-token fresh tail; the next call reads it back
    rows = bills[10_000].rows
    moved = [b for a, b in itertools.pairwise(rows) if b.removed_tokens != a.removed_tokens]
    assert [r.turn for r in moved] == [5, 7, 9, 12, 13, 15, 17, 19, 21]
    assert all(r.cached == 3037 and r.cache_write == r.prompt - 3 - 3037 for r in moved)


def test_the_governors_read_the_counterfactual_meter() -> None:
    run = tool_loop(SIZES * 2, model="llama-3-70b", cached=False)  # a provider that caches nothing
    policy = Policy.named("current", grant=10**9, no_progress=False, tool_timeouts=False)
    plain, _ = replay_with_bill(run, policy)
    masked, bill = replay_with_bill(run, policy, mask_observations=2)
    assert plain.spent == counterfactual_bill(run).counterfactual()["spent"] == 278_339
    assert masked.spent == bill.counterfactual()["spent"] < plain.spent
    assert masked.diverges_at == bill.first_change == 3
    # a grant between the two bills: the recording runs out of it, the masked run lasts longer
    grant = (masked.spent + plain.spent) // 2
    tight = policy.replace(grant=grant)
    assert (
        replay_with_bill(run, tight)[0].stop_turn
        < replay_with_bill(run, tight, mask_observations=2)[0].stop_turn
    )


def test_bad_policy_values_are_refused() -> None:
    with pytest.raises(ValueError, match="mask_observations"):
        ContextPolicy(mask_observations=-1)
    with pytest.raises(ValueError, match="context_length"):
        ContextPolicy(context_length=0)


sizes = st.lists(st.integers(min_value=0, max_value=9000), min_size=2, max_size=14)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=sizes, keep=st.integers(min_value=0, max_value=6), more=st.integers(min_value=1, max_value=4))
def test_removing_content_never_raises_the_prompt(sizes: list[int], keep: int, more: int) -> None:
    run = tool_loop(sizes)
    tight = counterfactual_bill(run, mask_observations=keep)
    loose = counterfactual_bill(run, mask_observations=keep + more)
    for a, b in zip(tight.rows, loose.rows, strict=True):
        assert a.prompt <= b.prompt <= b.recorded_prompt
        assert a.cached + a.cache_write <= a.prompt


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=sizes, window=st.integers(min_value=6_000, max_value=60_000))
def test_pruning_never_raises_the_prompt(sizes: list[int], window: int) -> None:
    run = tool_loop(sizes)
    bill = counterfactual_bill(run, Policy.named("current", context_length=window, reserve=0, safety=0))
    for r in bill.rows:
        assert r.prompt <= r.recorded_prompt
        assert r.removed_tokens >= 0


def test_a_masked_call_recomputes_by_hand() -> None:
    """Call 6 under mask 2, from the run alone: the recorded prompt, minus the anchored tokens of each replaced
    result, plus its placeholder's estimate at the run's rate."""
    from workbench.context.request_tokens import anchor

    run = tool_loop(SIZES)
    bill = counterfactual_bill(run, mask_observations=2)
    row = next(r for r in bill.rows if r.turn == 6)
    counts = anchor(run)
    # results answer assistant turns 0..5 in request 6; the last two (4, 5) are kept
    ids = [i for a, b in run.turns[6].sent for i in range(a, b)]
    results = [i for i in ids if run.messages[i].role == "tool"]
    assert row.replaced == tuple(results[:-2])
    expected = run.turns[6].usage.prompt
    for i in results[:-2]:
        content = run.messages[i].content
        placeholder = run.messages[i].model_copy(
            update={"content": MASK_PLACEHOLDER.format(lines=content.count("\n") + 1)}
        )
        expected += max(1, round(counts.estimate(placeholder))) - counts.tokens[i]
    assert row.prompt == expected
    assert row.sent == tuple(ids)


def test_decay_stubs_old_results_and_never_raises_a_prompt() -> None:
    run = tool_loop([9000] * 14)
    bill = counterfactual_bill(run, decay=True)
    assert bill.first_change is not None
    assert any(r.replaced for r in bill.rows)
    assert all(r.prompt <= r.recorded_prompt for r in bill.rows)


def test_recorded_totals_are_the_whole_recording_even_when_truncated() -> None:
    run = tool_loop(SIZES)
    bill = counterfactual_bill(run, Policy.named("current", context_length=3_500, reserve=0, safety=0))
    assert bill.truncated_at is not None and len(bill.rows) == bill.truncated_at
    assert bill.recorded() == counterfactual_bill(run).recorded()
