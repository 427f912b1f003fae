"""The request pool: every request rebuilds exactly, whatever the transcript does between calls, and an
append-only transcript stores each message once."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.importers._pool import RequestPool
from workbench.trace.schema import Message


def _make(r: dict) -> Message:
    return Message(role=r["role"], content=r["content"])


@settings(max_examples=200, deadline=None)
@given(rng=st.randoms(use_true_random=False))
def test_every_request_rebuilds_exactly(rng: random.Random) -> None:
    pool = RequestPool()
    transcript: list[dict] = []
    for call in range(rng.randint(1, 12)):
        op = rng.random()
        if op < 0.15 and transcript:  # a prune
            transcript = transcript[: rng.randint(0, len(transcript))]
        elif op < 0.25 and transcript:  # a rewrite in the middle
            transcript[rng.randrange(len(transcript))] = {
                "role": "user",
                "content": f"edit {call} {rng.random()}",
            }
        transcript += [
            {"role": rng.choice(["user", "tool"]), "content": f"m{rng.randint(0, 3)}"}
            for _ in range(rng.randint(0, 3))
        ]
        raws = [dict(r) if rng.random() < 0.5 else r for r in transcript]  # equal copies or the same objects
        sent = pool.request_raw(raws, _make) if rng.random() < 0.7 else pool.request([_make(r) for r in raws])
        rebuilt = [m for a, b in sent for m in pool.messages[a:b]]
        assert [(m.role, m.content) for m in rebuilt] == [(r["role"], r["content"]) for r in raws]
        answer = {"role": "assistant", "content": f"a{rng.randint(0, 2)}"}
        pool.answer(_make(answer), answer if rng.random() < 0.5 else None)
        transcript.append(
            answer if rng.random() < 0.8 else {"role": "assistant", "content": "something else"}
        )


def test_an_append_only_transcript_is_stored_once_in_one_range() -> None:
    pool = RequestPool()
    transcript = [{"role": "user", "content": "task"}]
    for i in range(50):
        sent = pool.request_raw([dict(r) for r in transcript], _make)
        assert sent == [(0, 1 + 2 * i)]
        answer = {"role": "assistant", "content": f"step {i}"}
        pool.answer(_make(answer), answer)
        transcript += [answer, {"role": "tool", "content": f"out {i}"}]
    assert (
        len(pool.messages) == len(transcript) - 1
    )  # each message once (the last tool output was never sent)
