"""The calibration's replays take the fast path, held equal to the governor (the oracle): every guard's candidate
policies (``replays.isolated``: no cost lander) and the recon notices, on random corpora and on every shared run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as wb
from tests.replay.test_fast_fields import corpora
from workbench.analysis.calibration.evidence import Evidence
from workbench.analysis.calibration.guards import GUARDS, _base, recon_notices
from workbench.analysis.calibration.replays import isolated
from workbench.govern import messages as msg
from workbench.govern.policy import Policy
from workbench.replay import fast
from workbench.replay.engine import replay
from workbench.scale.sweep import sweep
from workbench.trace.schema import Run

CURRENT = Policy.named("current")


def _values(spec) -> list[int]:
    return sorted({*spec.candidates, *spec.widen_stricter, *spec.widen_looser})


def _candidates(policy: Policy) -> list[Policy]:
    return [_base(policy, spec).replace(**{spec.field: v}) for spec in GUARDS for v in _values(spec)]


def _same(runs: list[Run], policies: list[Policy]) -> pd.DataFrame:
    quick = sweep(runs, policies, segments=False, workers=1, progress=False)
    oracle = sweep(runs, policies, segments=False, workers=1, progress=False, fast=False)
    cols = [c for c in quick.columns if c != "path"]
    pd.testing.assert_frame_equal(quick[cols], oracle[cols])
    return quick


def _oracle_notices(run: Run, policy: Policy) -> int:
    return sum(1 for d in replay(run, policy).decisions if d.action == "inject" and d.kind == msg.RECON)


def test_every_guard_candidate_is_on_the_fast_path() -> None:
    assert all(fast.policy_eligible(p) for p in _candidates(CURRENT))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=corpora(), guard=st.sampled_from(GUARDS), data=st.data())
def test_guard_candidates_fast_equal_the_governor(runs: list[Run], guard, data: st.DataObject) -> None:
    values = data.draw(st.lists(st.sampled_from(_values(guard)), min_size=1, max_size=4, unique=True))
    base = _base(CURRENT.replace(conclude_grace=data.draw(st.integers(1, 5))), guard)
    out = _same(runs, [base.replace(**{guard.field: v}) for v in values])
    assert (out.path == "fast").all()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=corpora(), recon=st.integers(1, 12), nudges=st.booleans())
def test_recon_notices_equal_the_governor(runs: list[Run], recon: int, nudges: bool) -> None:
    policy = isolated(CURRENT.replace(nudges=nudges), no_progress=True, recon_turns=recon)
    for run in runs:
        assert recon_notices(run, policy) == _oracle_notices(run, policy)


@pytest.mark.real
def test_on_every_shared_run(shared: Path) -> None:
    runs = [leaf.run for leaf in Evidence.of(wb.load(shared), CURRENT.cache_weight_percent).leaves]
    edges = [
        _base(CURRENT, spec).replace(**{spec.field: v})
        for spec in GUARDS
        for v in {_values(spec)[0], _values(spec)[-1], getattr(CURRENT, spec.field)}
    ]
    assert (_same(runs, edges).path == "fast").mean() > 0.9
    for recon in (5, 10):
        policy = isolated(CURRENT, no_progress=True, recon_turns=recon)
        assert [recon_notices(r, policy) for r in runs] == [_oracle_notices(r, policy) for r in runs]
