"""The seed's documented run shapes as synthetic Runs (source ``synthetic``), one constructor per shape.

Each records its generator name and parameters in ``metadata["generator"]`` and the messages every turn sent
(``run.request(i)`` works), so a replay can feed them to the Governor and a recorded-mode live loop can re-execute
them. ``build_run`` makes any scripted shape from ``TurnSpec``s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from workbench.trace.schema import Message, Outcome, Run, ToolCall, ToolResult, Turn, Usage

# seed 001 linear.go DefaultLeafTokens comment (TestACacheDiscountedRunawayLandsOnItsMoney)
SEED_PROMPT = 12_192
SEED_CACHED = 11_948  # same test: 98% of the prompt cached after the first call
SEED_COMPLETION = 800  # same test
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class CallSpec:
    name: str
    arguments: dict[str, Any] | str
    result: str = "ok"
    is_error: bool = False
    timed_out: bool = False

    @property
    def argument_text(self) -> str:
        return (
            self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments, sort_keys=True)
        )


@dataclass(frozen=True)
class TurnSpec:
    prompt: int | None = 1_000
    cached: int | None = 0
    completion: int | None = 100
    text: str = ""
    calls: Sequence[CallSpec] = field(default_factory=tuple)
    finish_reason: str | None = None
    mutated: bool | None = None
    seconds: float | None = None
    """Wall time of this call (the next call starts when it ends); None: no timestamps."""


def build_run(
    run_id: str,
    specs: Sequence[TurnSpec],
    *,
    generator: str,
    params: dict[str, Any],
    task: str = "synthetic task",
    outcome: Outcome | None = None,
    context_length: int | None = None,
) -> Run:
    """A Run from scripted turns, with its message pool and per-turn ``sent`` spans."""
    messages: list[Message] = [
        Message(role="system", content="You complete one piece of work, alone, using tools."),
        Message(role="user", content=task),
    ]
    turns: list[Turn] = []
    clock = EPOCH if any(s.seconds is not None for s in specs) else None
    for i, s in enumerate(specs):
        sent = [(0, len(messages))]
        calls = [
            ToolCall(id=f"c{i}_{k}", name=c.name, arguments=c.argument_text) for k, c in enumerate(s.calls)
        ]
        results = [
            ToolResult.of(c.result, call_id=calls[k].id, is_error=c.is_error, timed_out=c.timed_out)
            for k, c in enumerate(s.calls)
        ]
        started = ended = None
        if clock is not None:
            started = clock
            ended = clock + timedelta(seconds=s.seconds or 0.0)
            clock = ended
        finish = s.finish_reason or ("tool_calls" if s.calls else "stop")
        turns.append(
            Turn(
                index=i,
                started_at=started,
                ended_at=ended,
                usage=Usage(prompt=s.prompt, cached=s.cached, completion=s.completion),
                finish_reason=finish,
                text=s.text,
                tool_calls=calls,
                tool_results=results,
                mutated=s.mutated,
                sent=sent,
            )
        )
        messages.append(Message(role="assistant", content=s.text, tool_calls=calls))
        for call, result in zip(calls, results, strict=True):
            messages.append(Message(role="tool", content=result.content, tool_call_id=call.id))
    return Run(
        run_id=run_id,
        source="synthetic",
        task=task,
        context_length=context_length,
        messages=messages,
        turns=turns,
        outcome=outcome or Outcome(stop_reason="done"),
        started_at=EPOCH if clock is not None else None,
        metadata={"generator": {"name": generator, "params": params}},
    )


def _cut(what: str = "synthetic") -> Outcome:
    return Outcome(stop_reason="turn-cap", detail=f"{what}: the recording ends where its generator stopped")


def _writes(name: str, turns: int, prompt: int, completion: int = 0, **kw: Any) -> list[TurnSpec]:
    """``turns`` turns that each write a new file, ``name.format(i=turn)``."""
    return [
        TurnSpec(
            prompt=prompt,
            completion=completion,
            calls=(CallSpec("write", {"path": n}, f"wrote {n}"),),
            mutated=True,
            **kw,
        )
        for n in (name.format(i=i) for i in range(turns))
    ]


def warm_runaway(
    turns: int = 140, prompt: int = SEED_PROMPT, cached: int = SEED_CACHED, completion: int = SEED_COMPLETION
) -> Run:
    """Every call ``prompt`` tokens, ``cached`` of them cache reads after the first, ``completion`` out, one new
    file written per turn; the recording never ends on its own (it stops where its generator stopped)."""
    specs = [
        TurnSpec(
            prompt=prompt,
            cached=0 if i == 0 else cached,
            completion=completion,
            calls=(
                CallSpec(
                    "write", {"path": f"notes/{i:04d}.md", "content": f"step {i}"}, f"wrote notes/{i:04d}.md"
                ),
            ),
            mutated=True,
        )
        for i in range(turns)
    ]
    params = {"turns": turns, "prompt": prompt, "cached": cached, "completion": completion}
    outcome = _cut("synthetic runaway")
    return build_run("seed-warm-runaway", specs, generator="warm_runaway", params=params, outcome=outcome)


def repeated_call(turns: int = 8, prompt: int = 5_000, completion: int = 200) -> Run:
    """The same read returning the same bytes every turn; nothing written."""
    call = CallSpec("read", {"path": "README.md"}, "# readme\nthe same bytes every time\n")
    specs = [TurnSpec(prompt=prompt, cached=0, completion=completion, calls=(call,), mutated=False)] * turns
    params = {"turns": turns, "prompt": prompt, "completion": completion}
    outcome = _cut()
    return build_run("seed-repeated-call", specs, generator="repeated_call", params=params, outcome=outcome)


def tool_timeouts(turns: int = 5, command: str = "make test-forever", prompt: int = 5_000) -> Run:
    """The same shell command timing out every turn (the runner's own timeout fact set)."""
    call = CallSpec("sh", {"command": command}, "command timed out after 60s", is_error=True, timed_out=True)
    specs = [TurnSpec(prompt=prompt, cached=0, completion=100, calls=(call,), mutated=False)] * turns
    params = {"turns": turns, "command": command, "prompt": prompt}
    outcome = _cut()
    return build_run("seed-tool-timeouts", specs, generator="tool_timeouts", params=params, outcome=outcome)


def empty_burn(turns: int = 4, completion: int = 80_000, prompt: int = 0) -> Run:
    """Replies with no visible text and no tool calls, each ``completion`` tokens long (the seed's tests: 80,000
    against a 100,000 grant is abandoned after one call; 50 tokens is nudged until the turn cap)."""
    specs = [TurnSpec(prompt=prompt, cached=0, completion=completion, text="", finish_reason="stop")] * turns
    params = {"turns": turns, "completion": completion, "prompt": prompt}
    outcome = _cut()
    return build_run("seed-empty-burn", specs, generator="empty_burn", params=params, outcome=outcome)


def length_stopped_batch(before: int = 3, after: int = 3, tokens_per_turn: int = 10_000) -> Run:
    """``before`` ordinary writing turns, one reply cut at the output limit holding two writes (none may run),
    ``after`` ordinary turns, then a final answer. Every turn costs ``tokens_per_turn`` (all fresh prompt)."""
    specs = _writes("a{i}", before, tokens_per_turn)
    specs.append(
        TurnSpec(
            prompt=tokens_per_turn,
            completion=0,
            calls=(
                CallSpec("write", {"path": "big1"}, "wrote big1"),
                CallSpec("write", {"path": "big2", "content": "tru"}, "wrote big2"),
            ),
            finish_reason="length",
            mutated=True,
        )
    )
    specs += _writes("b{i}", after, tokens_per_turn)
    specs.append(TurnSpec(prompt=tokens_per_turn, completion=0, text="The files are written."))
    params = {"before": before, "after": after, "tokens_per_turn": tokens_per_turn}
    return build_run("seed-length-stopped-batch", specs, generator="length_stopped_batch", params=params)


def timed_turns(
    turns: int = 40, seconds: float = 30.0, prompt: int = 2_000, completion: int = 100, *, final: bool = True
) -> Run:
    """``turns`` writing turns (one new file each, so no guard sees a stall) of ``seconds`` of wall time each, back
    to back from the epoch, then — when ``final`` — a closing answer of the same length. Each call is ``prompt``
    fresh tokens and ``completion`` out. With the defaults (30 s calls, 1,230 s in all) a 110 s deadline cuts
    call 3 at the lease, 600 s starts the deadline landing at call 18, 1,200 s lands it on its turn countdown and
    2,000 s only paces the wall."""
    specs = _writes("t{i:03d}", turns, prompt, completion, cached=0, seconds=seconds)
    if final:
        specs.append(
            TurnSpec(
                prompt=prompt, cached=0, completion=completion, text="The files are written.", seconds=seconds
            )
        )
    params = {"turns": turns, "seconds": seconds, "prompt": prompt, "completion": completion, "final": final}
    outcome = Outcome(stop_reason="done" if final else "turn-cap")
    return build_run("seed-timed-turns", specs, generator="timed_turns", params=params, outcome=outcome)


def constant_turns(turns: int, tokens_per_turn: int, *, final: bool = True) -> Run:
    """``turns`` writing turns of ``tokens_per_turn`` fresh tokens each (the seed's landing tests), then — when
    ``final`` — a closing answer."""
    specs = _writes("f{i}", turns, tokens_per_turn)
    if final:
        specs.append(TurnSpec(prompt=tokens_per_turn, completion=0, text="Done: the files are written."))
    params = {"turns": turns, "tokens_per_turn": tokens_per_turn, "final": final}
    outcome = Outcome(stop_reason="done" if final else "turn-cap")
    return build_run("seed-constant-turns", specs, generator="constant_turns", params=params, outcome=outcome)


def mixed_run(seed: int, *, max_turns: int = 80) -> Run:
    """One synthetic run mixing the seed's shapes at random (randomness is an input: ``seed``): warm and cold
    turns, repeated and fresh reads, writes, errors, timeouts, empty and length-stopped replies, and an ending that
    is a final answer or a cut. For property tests and benchmarks of the replay paths."""
    import random

    rng = random.Random(seed)
    n = rng.randint(1, max_turns)
    specs: list[TurnSpec] = []
    prompt = rng.randint(2_000, 15_000)
    for i in range(n):
        prompt += rng.randint(0, 2_500)
        cached = 0 if i == 0 else rng.choice([None, 0, int(prompt * rng.uniform(0.5, 0.99))])
        completion = (
            rng.choice([None, rng.randint(20, 3_000)]) if rng.random() < 0.05 else rng.randint(20, 3_000)
        )
        roll = rng.random()
        spec = partial(TurnSpec, prompt=prompt, cached=cached, completion=completion)
        if i == n - 1 and rng.random() < 0.6:
            specs.append(spec(text="The answer."))
            continue
        if roll < 0.04:
            specs.append(spec(completion=rng.choice([50, 40_000]), text=""))
            continue
        if roll < 0.06:
            specs.append(spec(text="cut mid", finish_reason="length"))
            continue
        k = rng.choice([1, 1, 1, 2, 3])
        calls: list[CallSpec] = []
        for _ in range(k):
            r = rng.random()
            if r < 0.3:
                calls.append(CallSpec("read", {"path": "same.txt"}, "same bytes"))
            elif r < 0.55:
                calls.append(
                    CallSpec("read", {"path": f"f{rng.randint(0, 30)}"}, f"content {rng.randint(0, 12)}")
                )
            elif r < 0.7:
                calls.append(CallSpec("write", {"path": f"w{i}"}, "written"))
            elif r < 0.8:
                calls.append(
                    CallSpec(
                        "sh",
                        {"command": "make test"},
                        "timed out",
                        is_error=True,
                        timed_out=rng.random() < 0.5,
                    )
                )
            else:
                calls.append(
                    CallSpec(
                        "sh",
                        {"command": f"grep {rng.randint(0, 5)}"},
                        f"out {rng.randint(0, 8)}",
                        is_error=rng.random() < 0.2,
                    )
                )
        finish = "length" if rng.random() < 0.03 else None
        mutated = (
            rng.choice([None, True, False])
            if any(c.name == "write" for c in calls)
            else rng.choice([None, False])
        )
        text = rng.choice(["", "", "working"])
        specs.append(spec(text=text, calls=tuple(calls), finish_reason=finish, mutated=mutated))
    outcome = Outcome(
        stop_reason=rng.choice(["done", "done", "budget", "turn-cap", None]),
        label=rng.choice([None, None, "resolved"]),
    )
    params = {"seed": seed, "max_turns": max_turns}
    return build_run(
        f"mixed-{seed}",
        specs,
        generator="mixed_run",
        params=params,
        outcome=outcome,
        context_length=rng.choice([None, 128_000, 200_000]),
    )


def mixed_corpus(n: int, seed: int = 0, *, max_turns: int = 80) -> list[Run]:
    """``n`` mixed runs, seeds ``seed .. seed + n - 1``."""
    return [mixed_run(seed + i, max_turns=max_turns) for i in range(n)]
