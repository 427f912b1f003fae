"""The study stays linear: leave-one-out medians from one sorted array, and the ``fitted`` strategy's folds —
leave-one-run-out up to MAX_FOLDS runs (the answers the quadratic version gave), K-fold beyond."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from workbench.estimate.fit import fit_family
from workbench.estimate.requests import features
from workbench.estimate.study import MAX_FOLDS, folds_of, loo_medians, study

from .test_study_synthetic import TRUE, synthetic


@given(st.dictionaries(st.text(min_size=1, max_size=4), st.floats(-1e6, 1e6), min_size=0, max_size=30))
def test_loo_medians_equal_the_median_of_the_others_bit_for_bit(values: dict[str, float]) -> None:
    got = loo_medians(values)
    if len(values) < 2:
        assert got == {}
        return
    for key in values:
        others = [v for k, v in values.items() if k != key]
        assert got[key] == float(np.median(others))


def test_ties_leave_the_same_others() -> None:
    assert loo_medians({"a": 1.0, "b": 1.0, "c": 5.0}) == {"a": 3.0, "b": 3.0, "c": 1.0}


def _runs(n: int, copies: int = 1) -> list:
    return [synthetic(f"r{i:03d}", [20 + 3 * j + i for j in range(6)], TRUE) for i in range(n)] * copies


def test_up_to_max_folds_runs_each_run_is_its_own_fold() -> None:
    sets = [features(r) for r in _runs(MAX_FOLDS)]
    assert sorted(folds_of(sets).values()) == list(range(MAX_FOLDS))


def test_beyond_max_folds_runs_are_dealt_round_k_folds_and_copies_share_one() -> None:
    sets = [features(r) for r in _runs(MAX_FOLDS * 2 + 3, copies=2)]
    fold = folds_of(sets)
    assert len(fold) == MAX_FOLDS * 2 + 3
    assert set(fold.values()) == set(range(MAX_FOLDS))
    assert fold["r000"] == fold["r020"] == fold["r040"] == 0 and fold["r042"] == 2


def _naive_fitted(runs: list) -> pd.Series:
    """The former study's ``fitted`` estimate: one fit per run over every other run."""
    sets = [features(r) for r in runs]
    out = []
    for f in sets:
        fit = fit_family("unknown", [o for o in sets if o is not f])
        est = fit.estimator("synthetic/main+system")
        from workbench.estimate.fit import adr_tokens

        out.extend((adr_tokens(f.counts, est) + est.prefix_tokens)[f.comparable])
    return pd.Series(out, dtype=float)


def test_small_families_get_exactly_the_leave_one_run_out_answers() -> None:
    runs = _runs(5)
    s = study(runs, strategies=["fitted"])
    got = s.turns[s.turns["strategy"] == "fitted"]["estimate"].reset_index(drop=True)
    pd.testing.assert_series_equal(got, _naive_fitted(runs), check_names=False, check_exact=True)
    assert any("unknown: 5 runs, leave-one-run-out" in n for n in s.notes)


def test_large_families_say_they_were_k_fold() -> None:
    s = study(_runs(MAX_FOLDS + 5), strategies=["fitted"])
    assert any(f"unknown: {MAX_FOLDS + 5} runs, {MAX_FOLDS}-fold" in n for n in s.notes)
    # every run still scored by a fit that never saw it: the estimates track the truth out of sample
    fitted = s.to_frame().set_index("strategy").loc["fitted"]
    assert abs(fitted["ratio_p50"] - 1.0) < 0.01


@given(
    st.lists(st.tuples(st.integers(0, 6), st.floats(-1e6, 1e6)), min_size=0, max_size=12),
    st.lists(st.integers(1, 4), min_size=12, max_size=12),
)
def test_loo_medians_leave_a_runs_copies_out_with_it(
    contents: list[tuple[int, float]], times: list[int]
) -> None:
    # each distinct run (content c, value v) appears times[i] times, as copies with equal values
    values: dict[str, float] = {}
    content: dict[str, int] = {}
    for i, (c, v) in enumerate(dict(contents).items()):
        for j in range(times[i]):
            values[f"{c}~{j}"] = v
            content[f"{c}~{j}"] = c
    got = loo_medians(values, content)
    for key in values:
        others = [v for k, v in values.items() if content[k] != content[key]]
        if not others:
            assert key not in got
        else:
            assert got[key] == float(np.median(others))


@given(
    st.lists(st.lists(st.integers(5, 400), min_size=1, max_size=8), min_size=1, max_size=6),
    st.floats(2.0, 6.0),
    st.floats(1.5, 4.0),
)
def test_a_fit_without_the_per_class_table_gives_the_same_estimator(
    sizes: list[list[int]], prose: float, dense: float
) -> None:
    """The fold fits skip the second robust fit (tool arguments and results apart): their estimator, prefixes,
    counts and notes are those of the whole fit, and the per-class table is left empty, not guessed."""
    from .test_study_synthetic import true_tokens

    tokens = true_tokens(120.0, prose, dense)
    sets = [features(synthetic(f"r{i}", s, tokens)) for i, s in enumerate(sizes)]
    whole, lean = fit_family("unknown", sets), fit_family("unknown", sets, classes=False)
    assert lean.class_chars_per_token == {}
    assert (lean.prose_divisor, lean.dense_divisor, lean.prefix) == (
        whole.prose_divisor,
        whole.dense_divisor,
        whole.prefix,
    )
    assert (lean.turns, lean.runs) == (whole.turns, whole.runs)
    assert lean.notes == tuple(n for n in whole.notes if not n.startswith("chars per token not identifiable"))
    assert lean.estimator("synthetic/main+system") == whole.estimator("synthetic/main+system")


@given(
    st.lists(st.lists(st.integers(5, 400), min_size=1, max_size=8), min_size=1, max_size=8),
    st.lists(st.booleans(), min_size=8, max_size=8),
    st.floats(2.0, 6.0),
)
def test_a_fold_s_fit_from_the_family_s_rows_is_its_fit_from_scratch(
    sizes: list[list[int]], kept: list[bool], prose: float
) -> None:
    """The study reads a family's rows once (``FitRows.of``) and fits each fold from its part (``take``): every
    figure, prefix and note equals the fit of that fold's sets read afresh, bit for bit (a one-call run has no
    delta: some folds have none)."""
    from workbench.estimate.estimator import Estimator
    from workbench.estimate.fit import FitRows

    from .test_study_synthetic import true_tokens

    tokens = true_tokens(120.0, prose, 3.0)

    def hidden(i: int):  # type: ignore[no-untyped-def]  # each run its own unseen prefix: the first calls differ
        return lambda msgs: tokens(msgs) + 37 * i

    sets = [features(synthetic(f"r{i}", s, hidden(i))) for i, s in enumerate(sizes)]
    keep = np.array(kept[: len(sets)])
    part = [f for f, k in zip(sets, keep.tolist(), strict=True) if k]
    rows = FitRows.of(sets, Estimator())
    assert fit_family("unknown", part, classes=False, rows=rows.take(keep)) == fit_family(
        "unknown", part, classes=False
    )
    assert fit_family("unknown", sets, rows=rows) == fit_family("unknown", sets)
