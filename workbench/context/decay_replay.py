"""Decay replay: what the seed loop's memo, decayer and fold would have done to a recorded run's transcript, rebuilt
turn by turn from its requests, under the context law's windows (32,768 bytes each when the window is unknown) or the
``older`` rule set's grant/6 window and call-keyed memo (docs/context.md, docs/governors.md §5.13-5.15, §5.21).

    replay_decay(run, window=None, policy=None) -> DecayReplay   # window: the model's context in tokens
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import asdict, dataclass

import pandas as pd

from workbench.context.decay import Decayer, nbytes
from workbench.context.memo import CallKeyedMemo, ObservationMemo
from workbench.context.replay import sent_requests
from workbench.context.spill import MemorySpill
from workbench.estimate.ctxbudget import observation_bytes, observation_safety_bytes, older_observation_bytes
from workbench.govern.policy import MEMOS, OBSERVATION_WINDOWS, Policy
from workbench.govern.replies import is_length
from workbench.trace.schema import Message, Run


@dataclass(frozen=True)
class DecayRow:
    turn: int
    tool_bytes_before: int
    tool_bytes_after: int
    assistant_bytes_after: int
    stubbed: int
    folded: int
    pointers: int
    working: int
    safety: int


@dataclass(frozen=True)
class DecayReplay:
    run_id: str
    window: int | None
    working: int
    safety: int
    rows: tuple[DecayRow, ...]
    decayed: int
    folded: int
    pointers: int

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([asdict(r) for r in self.rows])

    def _repr_html_(self) -> str:
        head = (
            f"<b>Decay replay</b> {html.escape(self.run_id)} — windows {self.working:,} / {self.safety:,} B; "
            f"{self.decayed} results stubbed, {self.folded} texts folded, {self.pointers} memo pointers"
        )
        return f"<p>{head}</p>{self.to_frame().to_html(index=False)}"


def _bytes(msgs: list[Message], role: str) -> int:
    return sum(nbytes(m.content) for m in msgs if m.role == role)


def windows_for(policy: Policy | None, window: int | None) -> tuple[int, int]:
    """The decayer's working and safety windows in bytes under ``policy`` (None: the current loop's)."""
    kind = "context" if policy is None else policy.observation_window
    if kind == "grant/6":
        assert policy is not None
        one = older_observation_bytes(policy.grant)
        return one, one
    if kind != "context":
        raise ValueError(f"unknown observation_window {kind!r}; known: {', '.join(OBSERVATION_WINDOWS)}")
    return observation_bytes(window), observation_safety_bytes(window)


def replay_decay(
    run: Run,
    window: int | None = None,
    policy: Policy | None = None,
    *,
    on_turn: Callable[[int, list[Message]], None] | None = None,
) -> DecayReplay:
    """``on_turn(turn, transcript)`` sees each turn's decayed transcript (the counterfactual bill reads it)."""
    working, safety = windows_for(policy, window)
    dec = Decayer(spill=MemorySpill())
    memo_kind = "content" if policy is None else policy.memo
    if memo_kind not in MEMOS:
        raise ValueError(f"unknown memo {memo_kind!r}; known: {', '.join(MEMOS)}")
    memo: ObservationMemo | CallKeyedMemo = (
        CallKeyedMemo() if memo_kind == "call-keyed" else ObservationMemo(dec)
    )
    calls = {c.id: c for t in run.turns for c in t.tool_calls if c.id}
    errors = {r.call_id for t in run.turns for r in t.tool_results if r.call_id and r.is_error}
    transcript: list[Message] = []
    rows: list[DecayRow] = []
    prev_turn = None
    for turn, _, added, _ in sent_requests(run):
        if isinstance(memo, CallKeyedMemo) and prev_turn is not None and prev_turn.mutated:
            memo.clear()  # the workspace changed: a cached answer may be stale
        history_before = None
        admitted = 0
        for m in added:
            if m.role == "assistant":
                history_before = len(transcript) + 1
            if m.role == "tool" and m.content is not None:
                call = calls.get(m.tool_call_id) if m.tool_call_id else None
                text = memo.admit(
                    turn.index,
                    m.tool_call_id,
                    call.name if call else (m.name or "tool"),
                    call.arguments if call else "",
                    m.content,
                    is_error=m.tool_call_id in errors,
                )
                text = (
                    text[len("ERROR: ") :]
                    if m.tool_call_id in errors and text.startswith("ERROR: ")
                    else text
                )
                admitted += nbytes(text)
                m = m if text == m.content else m.model_copy(update={"content": text})
            transcript.append(m)
        if prev_turn is not None and prev_turn.tool_calls and not is_length(prev_turn.finish_reason):
            dec.observe(admitted)
            if prev_turn.mutated and history_before is not None:
                dec.acted_past(history_before)
        before = _bytes(transcript, "tool")
        transcript, n = dec.decay_within(transcript, working, safety)
        transcript, f = dec.fold_within(transcript, working, safety)
        if on_turn is not None:
            on_turn(turn.index, transcript)
        rows.append(
            DecayRow(
                turn=turn.index,
                tool_bytes_before=before,
                tool_bytes_after=_bytes(transcript, "tool"),
                assistant_bytes_after=_bytes(transcript, "assistant"),
                stubbed=n,
                folded=f,
                pointers=memo.pointers,
                working=working,
                safety=safety,
            )
        )
        prev_turn = turn
    return DecayReplay(
        run.run_id, window, working, safety, tuple(rows), dec.decayed, dec.folded, memo.pointers
    )


# docs/governors.md §5.12: the finish reasons of a length-stopped batch (no inflow sample for that turn).
