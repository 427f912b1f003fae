"""The cache model held to the shared recordings, and no-policy equality on every real run (skips where
../shared/traces is absent). The figures are the ones docs/cache-model.md reports."""

from __future__ import annotations

from pathlib import Path

import pytest

import workbench as wb
from workbench.analysis.cache_fit import FitRow, fit_run, stable_prefixes
from workbench.govern.policy import Policy
from workbench.replay.bill import counterfactual_bill, replay_with_bill


def error(r: FitRow) -> float:
    """The relative error of a reported read (0 when both are 0; inf when only the prediction is not)."""
    assert r.recorded_cached is not None
    if r.recorded_cached == 0:
        return 0.0 if r.predicted_cached == 0 else float("inf")
    return abs(r.predicted_cached - r.recorded_cached) / r.recorded_cached


class Fit:
    """The family rules' per-call rows over a corpus (the boundaries' stable prefix learned leave-one-out)."""

    def __init__(self, runs) -> None:
        stable = stable_prefixes(runs)
        self.rows = [row for r in runs for row in fit_run(r, stable=stable.get(r.run_id))]

    def calls(self, source: str) -> list[FitRow]:
        return [r for r in self.rows if r.source == source and not r.first and r.recorded_cached is not None]

    def boundaries(self) -> list[FitRow]:
        return [r for r in self.rows if r.boundary]


@pytest.fixture(scope="module")
def fit(shared: Path) -> Fit:
    corpus = wb.load(
        shared / "claude-code", shared / "codex-cli", shared / "openhands" / "fastjson2_gpt5.output.jsonl"
    )
    return Fit(corpus.runs)


def test_claude_code_calls_within_two_percent(fit) -> None:
    rows = fit.calls("claude-code")
    within = sum(error(r) <= 0.02 for r in rows)
    assert (within, len(rows)) == (
        870,
        879,
    )  # 99.0%: the misses are cache resets the transcript does not show


def test_compaction_boundaries_within_ten_percent(fit) -> None:
    boundaries = {(r.run_id[:8], r.turn): (r.recorded_cached, r.predicted_cached) for r in fit.boundaries()}
    assert set(boundaries) == {
        ("258c7280", 102),
        ("4d5611e5", 61),
        ("8463c716", 71),
        ("ae4a77f8", 138),
        ("fa812bfe", 126),
    }
    assert boundaries[("258c7280", 102)] == (21_460, 21_463)
    assert all(error(r) <= 0.10 for r in fit.boundaries())


def test_openai_fits_as_measured(fit) -> None:
    """OpenAI's cache is best-effort (a request can land on a machine without the prefix): a deterministic model
    cannot predict those misses. Codex: 30 of 38 calls within 2%; OpenHands GPT-5: 1 of 19."""
    codex, openhands = fit.calls("codex-cli"), fit.calls("openhands")
    assert (sum(error(r) <= 0.02 for r in codex), len(codex)) == (30, 38)
    assert (sum(error(r) <= 0.02 for r in openhands), len(openhands)) == (1, 19)
    # where the model misses on Codex it over-predicts: the recorded read fell short of the prefix
    assert all(r.predicted_cached >= r.recorded_cached for r in codex if error(r) > 0.02)


def test_no_policy_bill_equals_the_recording_on_every_real_run(shared: Path) -> None:
    corpus = wb.load(shared)
    assert len(corpus.runs) >= 120
    policy = Policy.named("current", grant=10**12, max_turns=10**6, no_progress=False, tool_timeouts=False)
    for run in corpus.runs:
        bill = counterfactual_bill(run)
        assert bill.first_change is None, run.run_id
        assert bill.counterfactual() == bill.recorded(), run.run_id
        res, bill2 = replay_with_bill(run, policy)
        if res.turns_replayed >= res.turns:
            fields = bill2.fields(res.turns)
            cf = fields["counterfactual"]
            assert cf["prompt_tokens"] == fields["recorded_prompt_tokens"], run.run_id
            assert cf["cached_tokens"] == fields["recorded_cached_tokens"], run.run_id
            assert cf["cache_write_tokens"] == fields["recorded_cache_write_tokens"], run.run_id
            assert (cf["spent"], cf["usd"]) == (fields["recorded_spent"], fields["recorded_usd"]), run.run_id
