"""The vectorised counts held equal to the readable oracle (``workbench.analysis.reference``), bit for bit: the
frontier table (``summarise``) and the band's per-grant effects (``band.effects``), on random sweeps
(hypothesis), on replayed synthetic runs with dollars and context lengths, and on the real traces."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.analysis import reference
from workbench.analysis.band import effects
from workbench.analysis.frames import annotate, run_facts
from workbench.analysis.frontier import (
    LEDGER,
    Basis,
    RunLedger,
    classify,
    ledger,
    policies_for,
    summarise,
    sweep_rows,
)
from workbench.report.sweeps import grant_sweep
from workbench.scenarios.seed import mixed_corpus
from workbench.trace.columns import typed
from workbench.trace.schema import Run

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def sweeps(draw: st.DrawFn) -> tuple[pd.DataFrame, RunLedger]:
    """A ledger of random runs (some unpriced) and classified sweep rows over random policies."""
    n = draw(st.integers(1, 8))
    calls = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    cums, table = {}, []
    for i, k in enumerate(calls):
        usd = np.array(draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=k, max_size=k)))
        if k and draw(st.booleans()) and draw(st.booleans()):
            usd[draw(st.integers(0, k - 1))] = np.nan  # a call priced neither way
        cums[f"r{i}"] = np.cumsum(usd)
        labelled = draw(st.booleans())
        table.append(
            {
                "run_id": f"r{i}",
                "source": draw(st.sampled_from(["a", "b", "c"])),
                "agent": draw(st.sampled_from(["a", "a:X"])),
                "model": draw(st.sampled_from(["m1", "m2"])),
                "model_raw": None,
                "label": None,
                "label_source": None,
                "success": draw(st.booleans()),
                "success_basis": Basis.RESOLVED if labelled else Basis.FINISHED,
                "finished": False,
                "recorded_stop": None,
                "recorded_tokens": draw(st.integers(0, 10**6)),
                "recorded_raw": 0,
                "recorded_usd": float(cums[f"r{i}"][-1]) if k else 0.0,
                "usd_basis": "unknown",
            }
        )
    book = RunLedger(typed({c.name: [r[c.name] for r in table] for c in LEDGER}, LEDGER), cums)
    policies = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["current", "older"]), st.integers(1, 4), st.sampled_from([None, 8192])
            ),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    rows = []
    for rules, grant, ctx in policies:
        for i, k in enumerate(calls):
            made = draw(st.integers(0, k))
            rows.append(
                {
                    "run_id": f"r{i}",
                    "rules": rules,
                    "grant": grant * 50_000,
                    "context_length": ctx,
                    "spent": draw(st.integers(0, 10**6)),
                    "raw": draw(st.integers(0, 10**6)),
                    "landing_started_at": draw(st.sampled_from([None, 0, 2])),
                    "censored": draw(st.booleans()),
                    "cut_turns": k - made,
                    "turns_replayed": made,
                    "stop_basis": draw(st.sampled_from([None, "recorded", "inferred"])),
                    "unjudged_at": draw(st.sampled_from([None, 1])),
                    "cause": draw(st.sampled_from([None, "grant landing", "no-progress"])),
                }
            )
    frame = pd.DataFrame(rows).astype({"landing_started_at": "Int64"})
    return classify(frame), book


@SETTINGS
@given(sweeps(), st.sampled_from(["source", "agent", "model", "all"]))
def test_summarise_equals_the_oracle_on_random_sweeps(sweep: tuple[pd.DataFrame, RunLedger], by: str) -> None:
    rows, book = sweep
    got = summarise(rows, book, by)
    pd.testing.assert_frame_equal(got, reference.frontier_table(rows, book, by), check_exact=True)


@st.composite
def annotated(draw: st.DrawFn) -> pd.DataFrame:
    """Annotated sweep rows over random grants: recorded facts beside each replay's figures."""
    n = draw(st.integers(1, 30))
    ints = st.integers(0, 10**6)
    col = lambda s: draw(st.lists(s, min_size=n, max_size=n))  # noqa: E731
    turns = col(st.integers(1, 9))
    frame = pd.DataFrame(
        {
            "grant": col(st.sampled_from([100_000, 200_000, 300_000])),
            "stop_reason": col(st.sampled_from(["done", "budget", "error"])),
            "spent": col(ints),
            "recorded_spent": col(ints),
            "turns": turns,
            "landing_started_at": pd.array(col(st.sampled_from([None, 0, 3, 8])), dtype="Int64"),
            "censored": col(st.booleans()),
            "cut_turns": col(st.integers(0, 5)),
            "cut_tool_calls": pd.array(col(st.one_of(st.none(), st.integers(0, 5))), dtype="Int64"),
            "cut_mutations": col(st.integers(0, 5)),
            "recorded_finished": col(st.booleans()),
        }
    )
    return frame.assign(run_id=[f"r{i}" for i in range(n)], raw=0, turns_replayed=0, rules="current")


@SETTINGS
@given(annotated())
def test_effects_equal_the_oracle_on_random_sweeps(frame: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(effects(frame), reference.effects(frame), check_exact=True)


@dataclass(frozen=True)
class _Price:
    usd: float


def _price(model: str | None, usage: Any, when: Any) -> _Price | None:
    """A price with many significant digits (so summation order would show), unknown for some calls."""
    if usage.prompt is None or usage.prompt % 97 == 0:
        return None
    return _Price(usage.prompt * 3.1e-6 / 7 + (usage.completion or 0) * 1.7e-5 / 3)


def _runs() -> list[Run]:
    runs = mixed_corpus(40, seed=11, max_turns=50)
    # three sources and two models, so every grouping has several groups and an "all runs" one
    return [
        r.model_copy(
            update={
                "source": ("native", "openhands", "codex-cli")[i % 3],
                "model": ("gpt-5", "claude-sonnet-4-5")[i % 2],
                "metadata": {**r.metadata, "agent_class": ("A", "B")[i % 2]},
            }
        )
        for i, r in enumerate(runs)
    ]


def _same(rows: pd.DataFrame, book: RunLedger, by: str) -> None:
    want = reference.frontier_table(rows, book, by)
    pd.testing.assert_frame_equal(summarise(rows, book, by), want, check_exact=True)


@pytest.mark.parametrize("by", ["source", "agent", "model", "all"])
def test_summarise_equals_the_oracle_on_replayed_runs(by: str) -> None:
    runs = _runs()
    policies = policies_for(("current", "ink-s9"), range(40_000, 400_001, 30_000), (None,))
    _same(classify(sweep_rows(runs, policies)), ledger(runs, _price), by)


def test_summarise_with_context_lengths() -> None:
    runs = _runs()[:12]
    rows = classify(sweep_rows(runs, policies_for(("current",), (60_000, 200_000), (None, 8_192, 32_768))))
    assert rows["context_length"].notna().any()
    for by in ("model", "all"):
        _same(rows, ledger(runs, _price), by)


def test_effects_equal_the_oracle_on_replayed_runs() -> None:
    runs = mixed_corpus(60, seed=5, max_turns=60)
    frame = annotate(
        grant_sweep(runs, ("current", "ink-s9"), range(20_000, 500_001, 20_000)), run_facts(runs)
    )
    assert frame["events"].map(id).nunique() == 1 and frame["events"].iloc[0] == ()  # no manager: no events
    for rules in ("current", "ink-s9"):
        part = frame[frame["rules"] == rules]
        pd.testing.assert_frame_equal(effects(part), reference.effects(part), check_exact=True)
    # a grant where no run finished in its recording: the share is NaN in both
    none = frame[frame["rules"] == "current"].assign(recorded_finished=False)
    pd.testing.assert_frame_equal(effects(none), reference.effects(none), check_exact=True)


@pytest.mark.real
def test_summarise_on_the_real_traces(shared: Path) -> None:
    from workbench.report.build import load_leaves

    _, leaves, _ = load_leaves([shared])
    book = ledger(leaves)
    rows = classify(sweep_rows(leaves, policies_for(("current",), range(100_000, 600_001, 10_000), (None,))))
    for by in ("source", "agent", "model", "all"):
        _same(rows, book, by)
    frame = annotate(grant_sweep(leaves, ("current",), range(100_000, 600_001, 10_000)), run_facts(leaves))
    pd.testing.assert_frame_equal(effects(frame), reference.effects(frame), check_exact=True)
