"""The bundled synthetic corpus: honest leaves, a leaf that wants splitting, a transcript that outgrows its
window, and the seed's documented shapes (:mod:`workbench.scenarios.seed`); what each generator draws and why:
traces/README.md. Every generator takes its randomness as an input (a ``numpy.random.Generator``) and records its
name and parameters in ``run.metadata["generator"]``, so ``build_corpus(seed)`` regenerates the same bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.govern.cost import CACHED_TOKEN_WEIGHT_PERCENT
from workbench.scenarios.shapes import (
    HONEST_LEAF_SPENT,
    LEAF_TURNS_MAX,
    LEAF_TURNS_MIN,
    MEDIAN_LEAF_PROMPT,
    SPLIT_WORTHY_LEAF,
    SYNTHETIC_EPOCH,
)
from workbench.scenarios.transcript import Transcript
from workbench.trace.schema import Event, EventKind, Outcome, RecordedPolicy, Run

GENERATOR_VERSION = 1
DEFAULT_SEED = 20260911
"""The corpus seed the bundled ``traces/synthetic`` were generated with (the measured run's date)."""

# A leaf's spend-to-finish is drawn from Normal(mean of the two honest leaves, this sd) — a spread chosen
# here (not measured) so the corpus shows a distribution rather than two points.
HONEST_SPENT_SD = 15_000
HONEST_MODEL = "synthetic/glm-like-200k"
HONEST_CONTEXT_LENGTH = 200_000


def _generator(name: str, seed: int | None, **params: Any) -> dict[str, Any]:
    return {"name": name, "version": GENERATOR_VERSION, "corpus_seed": seed, "params": params}


def _leaf_plan(
    rng: np.random.Generator, turns: int, median_prompt: int, target_spent: int
) -> tuple[int, np.ndarray, np.ndarray, float]:
    """Base prompt, per-turn completions and tool-result sizes, and the cache-hit share to hit the bill."""
    base = int(median_prompt * rng.uniform(0.45, 0.7))
    growth = 2 * (median_prompt - base) / max(1, turns - 1)
    step = np.maximum(60, rng.normal(growth, growth * 0.25, size=turns)).astype(int)
    completion = np.maximum(40, (step * rng.uniform(0.2, 0.45, size=turns)).astype(int))
    result = step - completion
    prompts = base + np.concatenate([[0], np.cumsum(step)[:-1]])
    previous = np.concatenate([[0], prompts[:-1]])
    # Solve the cost meter's spent = ΣP - (1 - w)·h·ΣP_prev + ΣO for the cache-hit share h (clipped to what
    # caching allows); workbench.govern.cost bills the result, this only sizes the generator.
    w = CACHED_TOKEN_WEIGHT_PERCENT / 100
    h = (prompts.sum() + completion.sum() - target_spent) / ((1 - w) * max(1, previous.sum()))
    return base, completion, result, float(np.clip(h, 0.0, 0.97))


def work_leaf(
    rng: np.random.Generator,
    *,
    run_id: str,
    turns: int,
    median_prompt: int,
    target_spent: int,
    write_every: int = 3,
    generator: str = "honest_leaf",
    corpus_seed: int | None = None,
) -> Run:
    """A leaf that does real work for ``turns`` calls and then answers: reads new content each turn, writes
    every ``write_every`` turns, and bills about ``target_spent`` tokens of work by the seed's meter."""
    if turns < 2:
        raise ValueError(f"a working leaf needs at least 2 turns, got {turns}")
    base, completion, result, hit = _leaf_plan(rng, turns, median_prompt, target_spent)
    t = Transcript(rng, base_prompt=base)
    previous = 0
    for i in range(turns):
        last = i == turns - 1
        cached = int(previous * hit)
        writes = (i % write_every) == write_every - 1
        previous = t.prompt
        t.turn(
            completion=int(completion[i]),
            cached=cached,
            result_tokens=None if last else int(result[i]),
            tool="write_file" if writes else "read_file",
            mutated=writes,
            seconds=float(rng.uniform(8, 40)),
        )
    params = {
        "turns": turns,
        "median_prompt": median_prompt,
        "target_spent": target_spent,
        "base_prompt": base,
        "cache_hit_share": round(hit, 4),
        "write_every": write_every,
    }
    return Run(
        run_id=run_id,
        source="synthetic",
        model=HONEST_MODEL,
        context_length=HONEST_CONTEXT_LENGTH,
        task=f"synthetic {generator.replace('_', ' ')} {run_id}",
        started_at=SYNTHETIC_EPOCH,
        messages=t.messages,
        turns=t.turns,
        outcome=Outcome(stop_reason="done", verdict="unverified_success", text=t.turns[-1].text),
        metadata={"generator": _generator(generator, corpus_seed, **params)},
    )


def honest_leaves(rng: np.random.Generator, count: int = 24, *, corpus_seed: int | None = None) -> list[Run]:
    """``count`` honest leaves: 14-41 turns, ~14.2k median prompt, bills around the measured leaves."""
    mean_spent = sum(HONEST_LEAF_SPENT) / len(HONEST_LEAF_SPENT)
    runs = []
    for k in range(count):
        turns = int(rng.integers(LEAF_TURNS_MIN, LEAF_TURNS_MAX + 1))
        median = int(rng.normal(MEDIAN_LEAF_PROMPT, 900))
        target = int(rng.normal(mean_spent, HONEST_SPENT_SD))
        runs.append(
            work_leaf(
                rng,
                run_id=f"honest-leaf-{k:02d}",
                turns=turns,
                median_prompt=median,
                target_spent=target,
                corpus_seed=corpus_seed,
            )
        )
    return runs


def split_worthy_leaf(rng: np.random.Generator, *, corpus_seed: int | None = None) -> Run:
    """The seed's third leaf: 14 turns that billed 268,971 — a job that wants splitting, not a bigger grant."""
    turns, spent = SPLIT_WORTHY_LEAF
    return work_leaf(
        rng,
        run_id="split-worthy-leaf",
        turns=turns,
        median_prompt=int(spent / turns * 1.05),
        target_spent=spent,
        generator="split_worthy_leaf",
        corpus_seed=corpus_seed,
    )


def outgrowing_window(
    rng: np.random.Generator,
    *,
    context_length: int = 131_072,
    base_prompt: int = 12_000,
    growth: int = 3_600,
    corpus_seed: int | None = None,
) -> Run:
    """A transcript that outgrows its window: each turn reads a large file; the call after the last
    recorded turn would not fit, and the provider refused it (recorded as an ``error`` stop)."""
    t = Transcript(rng, base_prompt=base_prompt)
    previous = 0
    while t.prompt + growth <= context_length:
        completion = int(rng.integers(300, 700))
        cached = int(previous * 0.9)
        previous = t.prompt
        t.turn(
            completion=completion,
            cached=cached,
            result_tokens=max(100, growth - completion),
            tool="read_file",
            mutated=len(t.turns) % 4 == 3,
            seconds=float(rng.uniform(8, 30)),
        )
    refused = t.prompt
    detail = f"context_length_exceeded: the next call's prompt of {refused:,} tokens exceeds the {context_length:,}-token window"
    params = {"context_length": context_length, "base_prompt": base_prompt, "growth": growth}
    return Run(
        run_id="outgrows-window",
        source="synthetic",
        model="synthetic/128k",
        context_length=context_length,
        task="synthetic transcript that outgrows its window",
        started_at=SYNTHETIC_EPOCH,
        messages=t.messages,
        turns=t.turns,
        events=[
            Event(
                turn=len(t.turns) - 1,
                kind=EventKind.PROVIDER_ERROR,
                reason="context_length_exceeded",
                data={"prompt": refused, "context_length": context_length},
            )
        ],
        outcome=Outcome(stop_reason="error", verdict="provider_failure", detail=detail),
        policy=RecordedPolicy(context_length=context_length),
        metadata={"generator": _generator("outgrowing_window", corpus_seed, **params)},
    )


def seed_scenarios() -> list[Run]:
    """The seed's documented shapes, built by :mod:`workbench.scenarios.seed` (deterministic, no rng)."""
    from workbench.scenarios import seed

    return [
        seed.warm_runaway(),
        seed.repeated_call(),
        seed.tool_timeouts(),
        seed.empty_burn(),
        seed.length_stopped_batch(),
    ]


def build_corpus(seed: int = DEFAULT_SEED, *, honest: int = 24) -> list[Run]:
    """Everything ``traces/synthetic`` holds, regenerated from ``seed``: honest leaves, the split-worthy
    leaf, the outgrowing transcript, and the seed scenarios. Same seed, same runs."""
    rng = np.random.default_rng(seed)
    runs = honest_leaves(rng, honest, corpus_seed=seed)
    runs.append(split_worthy_leaf(rng, corpus_seed=seed))
    runs.append(outgrowing_window(rng, corpus_seed=seed))
    runs.extend(seed_scenarios())
    return runs
