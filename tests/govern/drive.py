"""A tiny driver: feed scripted replies to a Governor the way a loop would, and report what it decided."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from workbench.govern import CallFact, Governor, Policy, Reply, ResultFact, Stop


@dataclass(frozen=True)
class T:
    """One scripted model call (and its tools)."""

    prompt: int = 0
    completion: int = 0
    cached: int | None = 0
    text: str = ""
    calls: Sequence[tuple[str, str]] = ()
    results: Sequence[ResultFact] = ()
    finish: str | None = None
    mutated: bool | None = None
    elapsed: float | None = None
    end: float | None = None


def tool(
    prompt: int = 0, completion: int = 0, name: str = "write", args: str = "{}", result: str = "ok", **kw
) -> T:
    return T(prompt=prompt, completion=completion, calls=((name, args),), results=(ResultFact(result),), **kw)


@dataclass
class Outcome:
    stop: Stop | None
    calls: int
    gov: Governor
    kinds: list[tuple[int, str, str]] = field(default_factory=list)

    def injected(self, kind: str) -> list[int]:
        return [t for t, action, k in self.kinds if action == "inject" and k == kind]


def drive(policy: Policy, script: Sequence[T], *, timed: bool = False) -> Outcome:
    gov = Governor(policy, timed=timed)
    for t in script:
        step = gov.begin_turn(t.elapsed)
        if step.stop:
            break
        reply = Reply(
            prompt=t.prompt,
            cached=t.cached,
            completion=t.completion,
            finish_reason=t.finish,
            text=t.text,
            calls=tuple(CallFact(n, a) for n, a in t.calls),
        )
        step = gov.after_response(reply, t.end)
        if step.next == "run-tools":
            step = gov.after_tools(t.results, t.mutated, t.end)
        if step.stop:
            break
    else:
        if gov.stopped is None and gov.iteration >= gov.cap:
            gov.end_of_loop()
    return Outcome(gov.stopped, gov.calls, gov, [(d.turn, d.action, d.kind) for d in gov.decisions])
