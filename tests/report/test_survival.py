"""Kaplan-Meier survival of tokens-to-finish: censored runs are never counted as finishing."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from workbench.analysis.survival import survival, tokens_to_finish


def obs(tokens: list[float], finished: list[bool]) -> pd.DataFrame:
    return pd.DataFrame(
        {"run_id": [f"r{i}" for i in range(len(tokens))], "tokens": tokens, "finished": finished}
    )


def test_uncensored_coverage_is_the_empirical_quantile() -> None:
    s = survival(obs([float(k * 10_000) for k in range(1, 11)], [True] * 10))
    cov = s.coverage(0.9)
    assert cov.grant == 90_000
    assert s.covered_at(50_000) == pytest.approx(0.5)
    assert cov.lower <= cov.grant <= cov.upper


def test_censoring_lowers_what_is_known_not_the_grant() -> None:
    # The costliest run was cut by a limit at 100k: KM never reaches 100% finished, so 90% is not reached.
    s = survival(obs([10_000, 20_000, 30_000, 40_000, 100_000], [True, True, True, True, False]))
    assert s.censored == 1
    assert s.covered_at(50_000) == pytest.approx(0.8)
    assert math.isinf(s.coverage(0.9).grant)
    assert "not reached" in s.coverage(0.9).words


def test_tokens_to_finish_keeps_finished_and_cut_only() -> None:
    facts = pd.DataFrame(
        {
            "run_id": ["done", "cut", "error"],
            "recorded_spent": [100, 200, 300],
            "recorded_finished": [True, False, False],
            "recorded_cut": [False, True, False],
        }
    )
    o = tokens_to_finish(facts)
    assert o["run_id"].tolist() == ["done", "cut"] and o["finished"].tolist() == [True, False]


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="negative tokens-to-finish for \\['r0'\\]"):
        survival(obs([-1.0, 5.0], [True, True]))
    with pytest.raises(ValueError, match="lack column 'finished'"):
        survival(pd.DataFrame({"run_id": ["a"], "tokens": [1.0]}))
    with pytest.raises(ValueError, match="share must be between"):
        survival(obs([1.0], [True])).coverage(1.5)
