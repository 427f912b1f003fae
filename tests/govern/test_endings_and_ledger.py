"""The seed loop's remaining mechanisms in the Governor, pinned in the seed's own orderings: reflex promotion and
the cooperative split end the leaf before the no-tool answer path and before the length-stopped batch, dropping the
turn's other calls; a reflex never splits; steering at the finish reopens the answer outside a landing and never inside
one; the closer reopens at most once per kind and only with room left; tool-side spend reaches the node row, not
Σsent, and spend before any turn invents no turn row."""

from __future__ import annotations

import pytest

from workbench.govern import Governor, GovernorError, Policy, Reply
from workbench.govern.cost import LedgerRow, ledger_total
from workbench.govern.endings import (
    DEFAULT_PROMOTION_TEXT,
    PROMOTE_SCHEMA,
    SPLIT_SCHEMA,
    ending_schemas,
)
from workbench.govern.noprogress import CallFact


def call(name: str, args: str = "{}", cid: str = "c") -> CallFact:
    return CallFact(name, args, cid)


def first_reply(gov: Governor, reply: Reply, **kw):  # type: ignore[no-untyped-def]
    gov.begin_turn(0.0)
    return gov.after_response(reply, 0.0, **kw)


def test_a_promote_call_ends_a_reflex_with_its_partial_and_drops_the_other_calls() -> None:
    gov = Governor(Policy.named("current", reflex=True, grant=22_000))
    step = first_reply(
        gov,
        Reply(
            100,
            0,
            20,
            "tool_calls",
            "looking",
            (call("sh", '{"command": "ls"}'), call("promote", '{"partial": " needs 3 steps "}')),
        ),
    )
    assert step.next == "stop" and gov.tool_calls == 0  # nothing runs: the sh call is dropped
    stop = step.stop
    assert stop is not None
    assert (stop.kind, stop.text, stop.reason, stop.verdict) == (
        "promote",
        "needs 3 steps",
        "promoted",
        "unverified_success",
    )


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        ("my words", "{}", "my words"),
        ("", "{}", DEFAULT_PROMOTION_TEXT),
        ("", "not json", DEFAULT_PROMOTION_TEXT),
    ],
)
def test_the_promotion_text_is_the_partial_else_the_reply_else_the_seed_sentence(
    text: str, args: str, expected: str
) -> None:
    gov = Governor(Policy.named("current", reflex=True))
    assert (
        first_reply(gov, Reply(10, 0, 5, "tool_calls", text, (call("promote", args),))).stop.text == expected
    )  # type: ignore[union-attr]


def test_promotion_comes_before_the_length_stopped_batch() -> None:
    gov = Governor(Policy.named("current", reflex=True))
    step = first_reply(gov, Reply(10, 0, 5, "length", "", (call("write", '{"path": "a'), call("promote"))))
    assert step.stop is not None and step.stop.kind == "promote"


def test_promote_is_nothing_to_a_leaf_that_is_not_a_reflex() -> None:
    gov = Governor(Policy.named("current"))
    assert first_reply(gov, Reply(10, 0, 5, "tool_calls", "", (call("promote"),))).next == "run-tools"


def test_a_split_records_its_parts_and_the_leafs_own_words() -> None:
    gov = Governor(Policy.named("current", swarm=True))
    step = first_reply(
        gov,
        Reply(
            100,
            0,
            20,
            "tool_calls",
            "two jobs here",
            (call("request_split", '{"parts": ["fix a", "fix b"]}'), call("sh")),
        ),
    )
    stop = step.stop
    assert stop is not None and gov.tool_calls == 0
    assert (stop.kind, stop.text, stop.reason, stop.verdict) == (
        "split", "two jobs here", "asked to divide into 2 parts", "unverified_success",
    )  # fmt: skip
    assert stop.data == {"parts": ["fix a", "fix b"]}


def test_a_split_without_words_takes_the_last_thing_said_and_without_parts_still_divides() -> None:
    gov = Governor(Policy.named("current", swarm=True))
    first_reply(gov, Reply(10, 0, 5, "tool_calls", "I read the tree", (call("sh"),)))
    gov.after_tools([], False, 1.0)
    gov.begin_turn(1.0)
    step = gov.after_response(
        Reply(20, 0, 5, "tool_calls", "", (call("request_split", '{"parts": "oops"}'),)), 2.0
    )
    assert step.stop is not None
    assert (step.stop.kind, step.stop.text, step.stop.data) == ("split", "I read the tree", {"parts": []})


def test_split_comes_before_the_length_stopped_batch_and_is_absent_when_the_swarm_is_off() -> None:
    on = Governor(Policy.named("current", swarm=True))
    assert first_reply(on, Reply(10, 0, 5, "length", "x", (call("request_split"),))).stop.kind == "split"  # type: ignore[union-attr]
    off = Governor(Policy.named("current"))
    assert first_reply(off, Reply(10, 0, 5, "tool_calls", "x", (call("request_split"),))).next == "run-tools"
    assert ending_schemas(reflex=False, swarm=False) == ()


def test_a_reflex_never_splits_even_with_the_swarm_armed() -> None:
    assert ending_schemas(reflex=True, swarm=True) == (PROMOTE_SCHEMA,)
    assert ending_schemas(reflex=False, swarm=True) == (SPLIT_SCHEMA,)
    gov = Governor(Policy.named("current", reflex=True, swarm=True))
    assert first_reply(gov, Reply(10, 0, 5, "tool_calls", "x", (call("request_split"),))).next == "run-tools"


def test_steering_at_the_finish_reopens_outside_a_landing_and_never_inside_one() -> None:
    gov = Governor(Policy.named("current"))
    step = first_reply(gov, Reply(10, 0, 5, "stop", "answer"), steered=True)
    assert step.next == "continue" and [d.kind for d in step.decisions] == ["steered"]
    landing = Governor(Policy.named("current", grant=1_000))
    first_reply(landing, Reply(2_000, 0, 5, "tool_calls", "", (call("write", '{"path": "a"}'),)))
    landing.after_tools([], True, 1.0)
    assert landing.landing > 0
    landing.begin_turn(1.0)
    step = landing.after_response(Reply(10, 0, 5, "stop", "answer"), 2.0, steered=True)
    assert step.stop is not None and step.stop.kind == "done"


def test_the_closer_reopens_once_per_kind_and_clears_the_verdict() -> None:
    gov = Governor(Policy.named("current"))
    done = first_reply(gov, Reply(10, 0, 5, "stop", "all green"))
    assert done.stop is not None and done.stop.verdict == "unverified_success"
    again = gov.reopen("check-red", "the check failed: 1 failed", 1.0)
    assert again.next == "continue" and gov.stopped is None and done.stop not in gov.decisions
    assert [(d.action, d.kind, d.text) for d in again.decisions] == [
        ("inject", "self-close", "the check failed: 1 failed")
    ]
    gov.begin_turn(2.0)
    gov.after_response(Reply(10, 0, 5, "stop", "fixed"), 3.0)
    stands = gov.reopen("check-red", "the check failed again", 3.0)
    assert stands.next == "stop" and gov.stopped is not None and gov.stopped.text == "fixed"
    assert [d.kind for d in stands.decisions] == ["standing-finding"]
    assert (
        gov.reopen("lost-name", "a public name was deleted", 3.0).next == "continue"
    )  # another kind: once more


def test_the_closer_needs_room_turns_tokens_wall_and_no_exhaustion() -> None:
    no_turns = Governor(Policy.named("current", max_turns=1))
    first_reply(no_turns, Reply(10, 0, 5, "stop", "a"))
    assert no_turns.reopen("check-red", "x").next == "stop"
    no_tokens = Governor(Policy.named("current", grant=10))
    first_reply(no_tokens, Reply(10, 0, 5, "stop", "a"))
    assert no_tokens.reopen("check-red", "x").next == "stop"
    wall = Governor(Policy.named("current", deadline_s=100.0))
    first_reply(wall, Reply(10, 0, 5, "stop", "a"))
    assert wall.reopen("check-red", "x", elapsed_s=95.0).next == "stop"  # 5 s left is inside the 10 s reserve
    roomy = Governor(Policy.named("current", deadline_s=100.0))
    first_reply(roomy, Reply(10, 0, 5, "stop", "a"))
    assert roomy.reopen("check-red", "x", elapsed_s=50.0).next == "continue"


def test_reopen_is_only_for_a_final_answer() -> None:
    gov = Governor(Policy.named("current"))
    with pytest.raises(GovernorError):
        gov.reopen("check-red", "x")


def test_three_turn_ledger_with_tool_spend_sums_to_the_node_row_and_sent_excludes_it() -> None:
    gov = Governor(Policy.named("current"))
    prompts = [1_000, 1_500, 2_000]
    for i, prompt in enumerate(prompts):
        gov.begin_turn(float(i))
        gov.after_response(
            Reply(prompt, 0, 50, "tool_calls", "", (call("sh", f'{{"command": "x{i}"}}'),)), float(i)
        )
        gov.tool_spend(7, 0, 3, calls=1)
        gov.after_tools([], False, float(i))
    node = gov.totals
    assert (node.prompt, node.completion, node.calls, node.sent) == (4_521, 159, 6, 4_500)
    assert ledger_total(gov.ledger) == node
    assert [(r.kind, r.turn) for r in gov.ledger] == [
        ("turn", 0), ("tool", 0), ("turn", 1), ("tool", 1), ("turn", 2), ("tool", 2),
    ]  # fmt: skip
    assert gov.spent == 4_521 + 159


def test_tool_spend_before_any_turn_reaches_the_row_and_invents_no_turn() -> None:
    gov = Governor(Policy.named("current"))
    gov.tool_spend(40, 10, 6, calls=2)
    assert gov.calls == 0 and gov.ledger == [LedgerRow("tool", None, 40, 10, 6, 2)]
    assert (
        gov.totals.prompt,
        gov.totals.cached,
        gov.totals.completion,
        gov.totals.calls,
        gov.totals.sent,
    ) == (40, 10, 6, 2, 0)
    first_reply(gov, Reply(100, 0, 5, "stop", "done"))
    assert [r.kind for r in gov.ledger] == ["tool", "turn"] and ledger_total(gov.ledger) == gov.totals
    assert gov.spent == (140 - 10) + 10 * 10 // 100 + 11


def test_promotion_and_split_come_before_the_empty_reply_rules() -> None:
    # an empty text that burned most of what was left would be abandoned on the no-tool path (K.2); a promote or a
    # split call is read first (J), so the leaf ends on its own word
    reflex = Governor(Policy.named("current", reflex=True, grant=1_000))
    assert first_reply(reflex, Reply(10, 0, 900, "tool_calls", "", (call("promote"),))).stop.kind == "promote"  # type: ignore[union-attr]
    swarm = Governor(Policy.named("current", swarm=True, grant=1_000))
    assert (
        first_reply(swarm, Reply(10, 0, 900, "tool_calls", "", (call("request_split"),))).stop.kind == "split"
    )  # type: ignore[union-attr]
