"""The study's ``anchored`` strategy, computed over every turn at once, equals the turn-by-turn definition (the
manager's anchored pricing: last prompt + completion + the scaled estimate of what followed the reply) bit for
bit, on random features with unknown prompts and completions, rewritten requests and replies."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.estimate.estimator import Estimator
from workbench.estimate.fit import adr_tokens
from workbench.estimate.requests import RequestFeatures
from workbench.estimate.study import anchored


def reference(f: RequestFeatures, adr: Estimator, fallback: np.ndarray, scale: float) -> np.ndarray:
    """The readable definition, one turn at a time."""
    out = fallback.copy()
    for t in range(1, len(f)):
        if f.extends[t] and not np.isnan(f.prompt[t - 1]):
            delta = f.counts[t] - f.counts[t - 1]
            if np.isnan(f.completion[t - 1]) or not f.reply[t].any():
                out[t] = f.prompt[t - 1] + scale * adr_tokens(delta, adr)
            else:
                out[t] = f.prompt[t - 1] + f.completion[t - 1] + scale * adr_tokens(delta - f.reply[t], adr)
    return out


_maybe = st.one_of(st.just(float("nan")), st.integers(0, 300_000).map(float))


@st.composite
def _features(draw: st.DrawFn) -> RequestFeatures:
    n = draw(st.integers(0, 12))
    grow = draw(st.lists(st.lists(st.integers(0, 5_000), min_size=6, max_size=6), min_size=n, max_size=n))
    counts = np.cumsum(np.array(grow, dtype=np.int64).reshape(n, 6), axis=0)
    reply = np.array(
        draw(st.lists(st.lists(st.integers(0, 50), min_size=6, max_size=6), min_size=n, max_size=n)),
        dtype=np.int64,
    ).reshape(n, 6)
    no_reply = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    reply[no_reply] = 0
    return RequestFeatures(
        run=None,  # type: ignore[arg-type]  # anchored reads the arrays only
        turns=np.arange(n),
        counts=counts,
        exact=None,
        prompt=np.array(draw(st.lists(_maybe, min_size=n, max_size=n)), dtype=float),
        completion=np.array(draw(st.lists(_maybe, min_size=n, max_size=n)), dtype=float),
        reply=reply,
        extends=np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool),
        models=[None] * n,
    )


@settings(max_examples=300, deadline=None)
@given(_features(), st.floats(0.5, 3.0), st.floats(1.0, 8.0), st.floats(0.0, 30.0))
def test_anchored_equals_the_turn_by_turn_definition_bit_for_bit(
    f: RequestFeatures, scale: float, prose: float, per_message: float
) -> None:
    adr = Estimator().with_(prose_divisor=prose, per_message=per_message)
    fallback = adr_tokens(f.counts, adr).astype(float) + 7.0 if len(f) else np.zeros(0)
    got, want = anchored(f, adr, fallback, scale), reference(f, adr, fallback, scale)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
