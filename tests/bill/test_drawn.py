"""The interval's arithmetic on all calls at once (``bill_interval._drawn``) against the readable definition, one
call at a time, with the same generator: every figure equal bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.context.cache_routes import Interval, RouteParams
from workbench.replay.bill import BillRow
from workbench.replay.bill_interval import _draw, _drawn

Rates = tuple[float, float, float, float]


def per_call(
    rng: np.random.Generator, drawn: list[tuple[BillRow, Rates]], params: RouteParams, picks: tuple
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One call at a time, as ``spread`` computed it before: the read each draw steps to, then its miss or
    under-read, then what was lost and paid instead."""
    blocks, miss_p, over_p = picks
    n = len(blocks)
    ratios, over_ratios = np.array(params.miss_ratios or [0.0]), np.array(params.over_ratios or [1.0])
    costs, lost_in, added = [], [], []
    for r, (r_in, r_read, r_write, _) in drawn:
        if r.found is not None and params.accounting == "automatic":
            whole = np.floor(min(r.found, r.prompt) / blocks)
            multiple, start = r.coarse
            if multiple > 1:
                whole = np.where(whole >= start, np.floor(whole / multiple) * multiple, whole)
            read = whole * blocks
            read = np.where(read < max(int(params.min_tokens.value or 0), 1), 0.0, read)
        else:
            read = np.full(n, float(r.cached))
        u = rng.random(n)
        missed = u < miss_p
        over = ~missed & (u < miss_p + over_p)
        share, more = _draw(rng, ratios, n), _draw(rng, over_ratios, n)
        read = np.where(missed, read * share, np.where(over, np.minimum(read * more, r.prompt), read))
        lost = r.cached - read
        resent = r_write if params.accounting == "explicit" else r_in
        costs.append(r.usd + lost * (resent - r_read))
        lost_in.append(lost * r_in)
        added.append(lost * resent)
    return np.array(costs), np.array(lost_in), np.array(added)


def _row(cached: int, extra: int, found: int | None, coarse: tuple[int, int], usd: float) -> BillRow:
    prompt = cached + extra
    return BillRow(
        0, True, (), (), 0, prompt, cached, 0, 10, usd, prompt, cached, 0, usd, cached, 0, found, coarse
    )


rows = st.builds(
    _row,
    st.integers(0, 50_000),
    st.integers(0, 20_000),
    st.none() | st.integers(0, 80_000),
    st.sampled_from([(1, 0), (2, 3), (4, 1), (16, 0)]),
    st.floats(0, 2, allow_nan=False),
)
rates = st.tuples(*(st.floats(0, 1e-4, allow_nan=False) for _ in range(4)))
shares = st.lists(st.floats(0, 3, allow_nan=False), max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(
    drawn=st.lists(st.tuples(rows, rates), min_size=1, max_size=12),
    accounting=st.sampled_from(["automatic", "explicit"]),
    min_tokens=st.sampled_from([0.0, 1024.0, 4096.0]),
    miss_ratios=shares,
    over_ratios=shares,
    n=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_all_calls_at_once_is_each_call_alone(
    drawn: list[tuple[BillRow, Rates]],
    accounting: str,
    min_tokens: float,
    miss_ratios: tuple[float, ...],
    over_ratios: tuple[float, ...],
    n: int,
    seed: int,
) -> None:
    params = RouteParams(
        "r", accounting, min_tokens=Interval(min_tokens), miss_ratios=miss_ratios, over_ratios=over_ratios
    )
    picks = np.random.default_rng(seed + 1).random((3, n)) * np.array([[512.0], [0.6], [0.3]]) + [
        [1],
        [0],
        [0],
    ]
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    got, want = _drawn(ours, drawn, params, tuple(picks)), per_call(theirs, drawn, params, tuple(picks))
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape == (len(drawn), n)
        assert g.tobytes() == w.tobytes()
    assert (
        ours.random(3).tobytes() == theirs.random(3).tobytes()
    )  # the stream is left where one call at a time left it
