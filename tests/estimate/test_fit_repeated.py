"""Copies enter the estimator's fit once, weighted by how many they are: the same robust objective, standard errors
and counts as every copy's rows repeated (to the solver's tolerance: the sums run in another order)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.estimate.fit import _robust_fit, _standard_errors, fit_family
from workbench.estimate.requests import features

from .test_study_synthetic import TRUE, synthetic


def _rows(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 4_000, size=(n, 2))
    b = a @ np.array([1 / 3.2, 1 / 2.4]) * rng.lognormal(0, 0.05, n)
    b[rng.random(n) < 0.1] *= 3  # outliers: what the soft-L1 refinement is for
    return a, b


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 60), st.lists(st.integers(1, 6), min_size=60, max_size=60))
def test_weighted_rows_fit_as_the_rows_repeated(seed: int, n: int, times: list[int]) -> None:
    a, b = _rows(seed, n)
    m = np.asarray(times[:n])
    x_w, se_w, n_w = _robust_fit(a, b, m)
    x_r, se_r, n_r = _robust_fit(np.repeat(a, m, axis=0), np.repeat(b, m))
    assert n_w == n_r == int(m[b > 50].sum())
    np.testing.assert_allclose(x_w, x_r, rtol=1e-6, atol=1e-12)  # a coefficient at its bound is ~0
    np.testing.assert_allclose(se_w, se_r, rtol=1e-5)


def test_weights_of_one_are_the_unweighted_fit_bit_for_bit() -> None:
    a, b = _rows(7, 40)
    got = _robust_fit(a, b, np.ones(40, dtype=np.int64))
    want = _robust_fit(a, b)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]) and got[2] == want[2]


def test_standard_errors_of_repeated_rows() -> None:
    a, b = _rows(3, 30)
    r = a @ np.array([0.3, 0.4]) - b
    m = np.arange(1, 31)
    np.testing.assert_allclose(
        _standard_errors(a, r, m.astype(float)),
        _standard_errors(np.repeat(a, m, axis=0), np.repeat(r, m)),
        rtol=1e-9,
    )


def test_fit_family_reads_copies_once_and_counts_them() -> None:
    runs = [synthetic(f"r{i:03d}", [20 + 3 * j + i for j in range(8)], TRUE) for i in range(6)]
    sets = [features(r) for r in runs]
    copied = sets * 3  # the same feature arrays three times: what the study gives a run's copies
    apart = [features(r) for r in runs * 3]  # equal arrays, read apart: fitted as rows repeated
    merged, each = fit_family("unknown", copied), fit_family("unknown", apart)
    assert merged.runs == each.runs == 18 and merged.turns == each.turns
    np.testing.assert_allclose(
        [merged.prose_divisor, merged.dense_divisor], [each.prose_divisor, each.dense_divisor], rtol=1e-7
    )
    assert merged.prefix.keys() == each.prefix.keys()
    for g in merged.prefix:
        assert abs(merged.prefix[g] - each.prefix[g]) < 1e-6
