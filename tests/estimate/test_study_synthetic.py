"""Fitting, the study and context replay on synthetic runs whose true token counts are known."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from workbench.context.replay import replay_context
from workbench.estimate import Estimator, count_message
from workbench.estimate.fit import fit_family
from workbench.estimate.requests import features
from workbench.estimate.study import STRATEGIES, study
from workbench.govern import Policy
from workbench.trace import Message, Run, ToolCall, Turn, Usage


def true_tokens(prefix: float, prose_cpt: float, dense_cpt: float) -> Callable[[list[Message]], int]:
    def count(msgs: list[Message]) -> int:
        total = prefix
        for m in msgs:
            c = count_message(m)
            total += c.prose / prose_cpt + c.dense / dense_cpt + 4 * c.messages + 8 * c.tool_calls
        return round(total)

    return count


def synthetic(
    run_id: str, sizes: list[int], tokens: Callable[[list[Message]], int], role: str = "main"
) -> Run:
    msgs = [Message(role="system", content="s" * 400), Message(role="user", content="do the task " * 20)]
    turns = []
    for t, size in enumerate(sizes):
        turns.append(
            Turn(index=t, sent=[(0, len(msgs))], usage=Usage(prompt=tokens(msgs), completion=40), model="m-1")
        )
        msgs += [
            Message(
                role="assistant",
                content="thinking aloud " * (t % 5 + 1),
                tool_calls=[ToolCall(id=f"c{t}", name="sh", arguments='{"cmd":"ls -la"}' * (t % 3 + 1))],
            ),
            Message(role="tool", tool_call_id=f"c{t}", content="output line\n" * size),
        ]
    return Run(run_id=run_id, source="synthetic", role=role, model="m-1", messages=msgs, turns=turns)  # type: ignore[arg-type]


TRUE = true_tokens(prefix=3_000, prose_cpt=4.0, dense_cpt=3.0)


def test_fit_recovers_known_divisors_and_prefix() -> None:
    runs = [synthetic(f"r{i}", [20 + 7 * j + i for j in range(30)], TRUE) for i in range(3)]
    fit = fit_family("m", [features(r) for r in runs])
    assert fit.prose_divisor == pytest.approx(4.0, rel=0.02)
    assert fit.dense_divisor == pytest.approx(3.0, rel=0.01)
    # the synthetic runs record their system prompt: their prefix group says so (fit.group_of)
    assert fit.prefix["synthetic/main+system"] == pytest.approx(3_000, abs=5)
    assert fit.class_chars_per_token["tool_result"] == pytest.approx(3.0, rel=0.01)
    assert fit.class_chars_per_token["tool_args"] == pytest.approx(3.0, rel=0.1)


def test_study_reports_every_strategy_and_says_what_it_fitted() -> None:
    runs = [synthetic(f"r{i}", [20 + 7 * j + i for j in range(30)], TRUE) for i in range(3)]
    s = study(runs)
    frame = s.to_frame()
    assert set(frame["strategy"]) == {"adr", "fitted", "anchored"}  # no exact tokenizer for model m-1
    assert frame["calls"].tolist() == [90, 90, 90]
    adr = frame.set_index("strategy").loc["adr"]
    # ADR-107 over-counts text that really is 4 / 3 chars per token: never under, after calibration neither
    assert adr["under_rate"] == 0.0 and adr["cal_under_rate"] == 0.0
    fitted = frame.set_index("strategy").loc["fitted"]
    assert fitted["ratio_p50"] == pytest.approx(1.0, abs=0.01)
    assert any("unseen prefix" in n for n in s.notes)
    assert any("no offline tokenizer for synthetic:m-1" in n for n in s.notes)
    bound = s.calibration_bound("adr")
    assert bound[["calls", "violations"]].values.tolist() == [[87, 0]]
    assert "Estimator study" in s._repr_html_()
    with pytest.raises(ValueError, match="unknown strategy 'magic'"):
        study(runs, strategies=["magic"])
    assert STRATEGIES == ("adr", "fitted", "anchored", "exact")


def test_replay_learns_the_prefix_prunes_then_truncates() -> None:
    run = synthetic("r", [200] * 20 + [4_000], TRUE)  # each turn adds ~800 tokens of tool output
    replay = replay_context(run, Policy(context_length=12_000, reserve=1_000, safety=200))
    assert replay.budget == 10_800
    first = run.request(0)
    learned = TRUE(first) - Estimator().request(first)  # what ADR-107's transcript estimate leaves out
    assert replay.notes[0] == f"unseen prefix learned at turn 0: {learned:,.0f} tokens (reported - estimate)"
    assert replay.prefix_tokens == pytest.approx(learned)
    frame = replay.to_frame()
    assert list(frame.columns[:10]) == [
        "turn", "estimate", "calibrated_estimate", "actual_prompt", "budget", "action", "pruned_turns",
        "tokens_before", "tokens_after", "truncated",
    ]  # fmt: skip
    assert replay.first_prune_at == 7
    # one more turn dropped per call once the window is full: each turn adds about one turn's worth
    assert frame["pruned_turns"].tolist()[7:] == list(range(1, 15))
    pruned = frame[frame["action"] == "pruned"]
    assert (pruned["tokens_after"] <= 10_800).all() and (pruned["tokens_before"] > 10_800).all()
    assert replay.truncated_at is None  # the last turn's result is only sent at a 22nd call
    longer = synthetic("r", [200] * 20 + [4_000, 1], TRUE)
    cut = replay_context(longer, Policy(context_length=12_000, reserve=1_000, safety=200))
    assert cut.truncated_at == 21 and cut.events[-1].kind == "context-truncated"
    assert (cut.events[-1].turn, cut.events[-1].data["blocked_turn"]) == (20, 21)  # on the stop's turn
    assert [e.kind for e in cut.events[:-1]] == ["prune"] * (len(cut.events) - 1)
    assert cut.events[0].data["tokens_before"] > 10_800 >= cut.events[0].data["tokens_after"]


def test_replay_rejects_an_exact_estimator_without_a_tokenizer() -> None:
    with pytest.raises(ValueError, match="no offline tokenizer for model 'm-1'"):
        replay_context(synthetic("r", [1], TRUE), Policy(context_length=8_000, estimator="exact"))
    with pytest.raises(ValueError, match="estimator must be one of adr, fitted, anchored, exact, got 'best'"):
        Policy(context_length=8_000, estimator="best")  # refused when the policy is made, before any replay


def test_replay_with_an_explicit_estimator_and_prefix() -> None:
    run = synthetic("r", [10] * 5, TRUE)
    exact = Estimator(prose_divisor=4.0, dense_divisor=3.0)
    replay = replay_context(
        run, Policy(context_length=100_000, calibration=1.0), prefix_tokens=3_000, estimator=exact
    )
    frame = replay.to_frame()
    assert (frame["estimate"] - frame["actual_prompt"]).abs().max() <= 1
