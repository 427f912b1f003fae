"""The decayer, the fold and the memo against the worked rules of docs/governors.md §5.13-5.15."""

from __future__ import annotations

from workbench.context.decay import Decayer, fold_stub, label, low_water, nbytes, result_stub
from workbench.context.memo import ObservationMemo, pointer
from workbench.context.spill import MemorySpill
from workbench.trace import Message, ToolCall


def tool_turn(cid: str, size: int, text: str = "") -> list[Message]:
    return [
        Message(role="assistant", content=text, tool_calls=[ToolCall(id=cid, name="sh", arguments="ls")]),
        Message(role="tool", tool_call_id=cid, content="x" * size),
    ]


def transcript(*sizes: int) -> list[Message]:
    msgs = [Message(role="user", content="task")]
    for i, s in enumerate(sizes):
        msgs += tool_turn(f"c{i}", s)
    return msgs


def tool_bytes(msgs: list[Message]) -> int:
    return sum(nbytes(m.content) for m in msgs if m.role == "tool")


# -- low-water mark ---------------------------------------------------------------------------------------


def test_low_water_is_75_percent_until_three_samples() -> None:
    assert low_water(32_768, 0, 0) == 24_576
    assert low_water(32_768, 2, 20_000) == 24_576
    assert low_water(1_000, 0, 0) == 750


def test_low_water_solves_for_seven_quiet_turns_clamped_to_50_90_percent() -> None:
    assert low_water(32_768, 3, 3_000) == 32_768 - 7 * 1_000  # mean 1,000 -> 25,768
    assert low_water(32_768, 3, 3 * 3_700) == 16_384  # 32,768 - 25,900 < 50% -> floor
    assert low_water(32_768, 4, 400) == 29_491  # 32,768 - 700 > 90% -> ceiling
    assert low_water(25_000, 3, 3 * 3_700) == 12_500  # the measured 25 KB / 3.7 KB case clamps at 50%


# -- decay ------------------------------------------------------------------------------------------------


def test_most_turns_no_rewrite_below_the_working_window() -> None:
    msgs = transcript(300, 300)
    out, n = Decayer().decay_within(msgs, 1_000, 2_000)
    assert n == 0 and all(a is b for a, b in zip(out, msgs, strict=True))


def test_soft_pass_retires_only_spent_and_only_if_it_reaches_low_water() -> None:
    msgs = transcript(500, 500, 300)  # live 1,300 > working 1,000; low water 750
    dec = Decayer()
    dec.acted_past(3)  # turn c0 was acted on: its result (index 2) is spent
    out, n = dec.decay_within(msgs, 1_000, 2_000)
    # retiring c0 alone: 1,300 - (500 - stub) > 750 -> cannot reach -> all-or-nothing: nothing, hold branch
    assert n == 0 and [m.content for m in out] == [m.content for m in msgs]
    dec.acted_past(5)  # c0 and c1 spent: 1,300 - 2*(500 - stub) <= 750
    out, n = dec.decay_within(msgs, 1_000, 2_000)
    assert n == 2
    stub0 = result_stub(label("sh", "ls"), 500, "observations/c0.txt")
    assert out[2].content == stub0 and out[4].content.startswith("[sh ls — 500 bytes, spilled to")
    assert out[6].content == "x" * 300  # the fresh result stays
    assert tool_bytes(out) <= 750


def test_hold_branch_keeps_the_prompt_byte_identical_between_working_and_safety() -> None:
    msgs = transcript(600, 600, 600)  # live 1,800: above working 1,000, within safety 2,000; nothing spent
    out, n = Decayer().decay_within(msgs, 1_000, 2_000)
    assert n == 0 and [m.content for m in out] == [m.content for m in msgs]


def test_over_safety_retires_spent_then_needed_to_safety_low_water_then_fresh_to_safety() -> None:
    msgs = transcript(900, 900, 900)  # live 2,700 > safety 2,000; low water(2,000) = 1,500
    out, n = Decayer().decay_within(msgs, 1_000, 2_000)
    # needed c0 (oldest first) is retired; 2,700 - (900 - ~50) <= 1,500? no -> c1 too; c2 is fresh
    assert n == 2
    assert out[6].content == "x" * 900
    assert tool_bytes(out) <= 1_500
    big_fresh = transcript(100, 3_000)
    out, n = Decayer().decay_within(big_fresh, 1_000, 2_000)
    assert out[4].content.startswith("[sh ls — 3000 bytes")  # fresh cut only because safety required it
    assert out[2].content.startswith("[sh ls — 100 bytes")


def test_unknown_window_has_no_hold_branch() -> None:
    msgs = transcript(20_000, 20_000, 100)  # live 40,100 > 32,768 = working = safety
    out, n = Decayer().decay_within(msgs, 32_768, 32_768)
    assert n == 1 and tool_bytes(out) <= 24_576


def test_stubs_are_write_once_and_never_remove_a_message() -> None:
    msgs = transcript(900, 900, 900)
    dec = Decayer()
    out, _ = dec.decay_within(msgs, 1_000, 2_000)
    first = dict(dec.stubs)
    again, n = dec.decay_within(msgs, 1_000, 2_000)  # handed the originals again
    assert n == 0 and dec.stubs == first
    assert [m.content for m in again] == [m.content for m in out]
    assert len(again) == len(msgs)
    assert [m.tool_call_id for m in again] == [m.tool_call_id for m in msgs]


def test_a_result_shorter_than_its_stub_is_never_stubbed() -> None:
    msgs = transcript(10, 10, 10_000)
    out, _ = Decayer().decay_within(msgs, 1_000, 2_000)
    assert out[2].content == "x" * 10 and out[4].content == "x" * 10


def test_spill_failure_falls_back_to_the_pathless_stub() -> None:
    class NoSpill:
        def preserve(self, key: str, text: str) -> str | None:
            return None

    out, _ = Decayer(spill=NoSpill()).decay_within(transcript(900, 900, 900), 1_000, 2_000)
    assert out[2].content == "[sh ls — 900 bytes, superseded]"


# -- memo -------------------------------------------------------------------------------------------------


def test_memo_points_at_the_earliest_identical_result_and_marks_it_used() -> None:
    dec = Decayer(spill=MemorySpill())
    memo = ObservationMemo(dec)
    body = "same output\n" * 50
    assert memo.admit(1, "a", "cat", "f.py", body) == body
    second = memo.admit(4, "b", "cat", "f.py", body)
    assert second == pointer("cat f.py", 1, "observations/a.txt")
    assert "a" in dec.used and memo.pointers == 1
    assert memo.admit(5, "c", "cat", "f.py", "ERROR: x") == "ERROR: x"
    assert (
        memo.admit(5, "d", "cat", "f.py", body, is_error=True) == "ERROR: " + body
    )  # errors never addressed
    assert memo.admit(5, None, "cat", "f.py", body) == body  # no call id: never addressed
    assert memo.admit(5, "e", "cat", "f.py", body, multimodal=True) == body


def test_memo_keeps_short_results_whole_and_reports_after_pointers() -> None:
    memo = ObservationMemo(Decayer())
    assert memo.admit(1, "a", "sh", "echo", "ok") == "ok"
    assert memo.admit(2, "b", "sh", "echo", "ok") == "ok"  # the pointer would be longer
    long = "y" * 400
    memo.admit(3, "c", "sh", "cat", long)
    assert memo.admit(4, "d", "sh", "cat", long, report="\n[job 1 done]").endswith(
        "read it above, or from observations/c.txt]\n[job 1 done]"
    )
    assert memo.admit(5, "e", "sh", "cat", "", report="[job 2 done]") == "[job 2 done]"


def test_memo_after_decay_returns_the_body_and_makes_this_copy_canonical() -> None:
    dec = Decayer()
    memo = ObservationMemo(dec)
    body = "z" * 900
    memo.admit(1, "c0", "sh", "ls", body)
    msgs = transcript(900, 900, 900)
    dec.decay_within(msgs, 1_000, 2_000)  # stubs c0
    assert "c0" in dec.stubs
    assert memo.admit(5, "c9", "sh", "ls", body) == body
    assert memo.admit(6, "c10", "sh", "ls", body).startswith("[identical to the result of sh ls at turn 5")


def test_memo_used_copies_are_spent_for_the_decayer() -> None:
    dec = Decayer()
    msgs = transcript(500, 500, 300)
    dec.mark_used("c0")
    dec.mark_used("c1")
    out, n = dec.decay_within(msgs, 1_000, 2_000)
    assert n == 2 and out[6].content == "x" * 300


# -- fold -------------------------------------------------------------------------------------------------


def test_fold_never_touches_the_newest_three_assistant_messages_and_keeps_tool_calls() -> None:
    msgs = [Message(role="user", content="task")]
    for i in range(5):
        msgs += tool_turn(f"c{i}", 10, text="t" * 400)
    dec = Decayer()
    out, n = dec.fold_within(msgs, 1_000, 1_000)  # live 2,050 > 1,000, unknown-style: no hold
    assistants = [m for m in out if m.role == "assistant"]
    assert n == 2
    assert assistants[0].content == fold_stub(1, 400, "observations/turn-1.txt")
    assert [m.content for m in assistants[2:]] == ["t" * 400] * 3
    assert all(len(m.tool_calls) == 1 for m in assistants)


def test_fold_soft_pass_folds_only_consumed_text() -> None:
    msgs = [Message(role="user", content="task")]
    for i in range(5):
        msgs += tool_turn(f"c{i}", 10, text="t" * 400)
    dec = Decayer()
    dec.acted_past(3)  # only the first assistant message (index 1) is consumed
    # live 2,050 > working 2,040; low water 1,530; a fold saves 260 B: one cannot reach it, two can
    out, n = dec.fold_within(msgs, 2_040, 3_000)
    assert n == 0  # all-or-nothing at the working target, then hold (live <= safety)
    dec.acted_past(7)
    out, n = dec.fold_within(msgs, 2_040, 3_000)
    assert (
        n == 2 and sum(nbytes(m.content) for m in out if m.role != "user") == 1_530
    )  # exactly the low-water mark
