"""The batch estimator over message columns gives Estimator.message's answer for every message, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.estimate import Estimator
from workbench.estimate.batch import estimate_columns, message_columns
from workbench.estimate.tokenizers import counters
from workbench.trace import Message, ToolCall

calls = st.lists(
    st.builds(
        ToolCall, id=st.just("c"), name=st.text(min_size=1, max_size=8), arguments=st.text(max_size=40)
    ),
    max_size=3,
)
messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=st.one_of(st.none(), st.text(max_size=200)),
    tool_calls=calls,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(messages, max_size=20), st.floats(1.0, 6.0), st.floats(1.0, 6.0))
def test_batch_equals_one_at_a_time(msgs: list[Message], prose: float, dense: float) -> None:
    est = Estimator(prose_divisor=prose, dense_divisor=dense)
    got = estimate_columns(message_columns(msgs), est)
    assert got.tolist() == [est.message(m) for m in msgs]


def test_a_lone_surrogate_keeps_its_length() -> None:
    msgs = [Message(role="user", content="a\ud800b"), Message(role="tool", content="x" * 10)]
    assert estimate_columns(message_columns(msgs)).tolist() == [Estimator().message(m) for m in msgs]


def test_an_exact_counter_is_refused() -> None:
    if not counters():
        pytest.skip("no exact tokenizer installed")
    with pytest.raises(ValueError, match="exact counter"):
        estimate_columns(
            message_columns([Message(role="user", content="hi")]), Estimator(counter=counters()[0])
        )


def test_known_figures() -> None:
    msgs = [
        Message(role="user", content="x" * 35),
        Message(role="tool", content="y" * 25, tool_calls=[]),
        Message(role="assistant", content=None, tool_calls=[ToolCall(id="1", name="sh", arguments="z" * 23)]),
    ]
    est = Estimator()
    assert np.allclose(
        estimate_columns(message_columns(msgs)),
        [10 + est.per_message, 10 + est.per_message, 10 + est.per_message + est.per_tool_call],
    )


def test_counted_characters_equal_a_scan_of_the_text() -> None:
    """The ``chars`` column counted when the columns are built gives the answer a scan of the text gives (code
    points, a lone surrogate counted as one)."""
    msgs = [
        Message(role="user", content="héllo wörld ✓ 𝔘"),
        Message(role="tool", content="x" * 1000 + "\ud800"),
        Message(
            role="assistant", content=None, tool_calls=[ToolCall(name="sh", arguments='{"cmd": "ls ü"}')]
        ),
    ]
    table = message_columns(msgs)
    scanned = table.drop_columns(["chars"])
    np.testing.assert_array_equal(estimate_columns(table), estimate_columns(scanned))
    assert table.column("chars").to_pylist() == [len(m.content or "") for m in msgs]
