"""A run's requests as the prompt-cache model sees them: the fixed prefix (its ``warm`` and ``stable`` parts and the
rest a rewrite renews), then one block per message named by its pool index (or a replacement's own name), with its
anchored token count; Anthropic breakpoints where Claude Code puts them (docs/cache-model.md, "Requests as blocks").
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from workbench.context.cache_model import CacheRequest, CacheRules, CacheState
from workbench.trace.schema import Run, Turn

Block = tuple[Hashable, int]


@dataclass(frozen=True)
class PrefixLayout:
    """Token counts of the prefix's parts: ``warm`` <= ``stable`` <= ``total``."""

    total: int
    warm: int = 0
    stable: int = 0

    def blocks(self, era: int) -> list[Block]:
        warm = min(self.warm, self.total)
        stable = min(max(self.stable, warm), self.total)
        out: list[Block] = []
        if warm:
            out.append((("prefix", "warm"), warm))
        if stable > warm:
            out.append((("prefix", "stable"), stable - warm))
        if self.total > stable:
            out.append((("prefix", "rest", era), self.total - stable))
        return out


def layout_for(run: Run, prefix: int, rules: CacheRules, stable: int | None = None) -> PrefixLayout:
    """The prefix layout of a recorded run: on explicit caching, the first call's read is the warm part."""
    warm = 0
    if rules.explicit and run.turns and run.turns[0].usage.cached:
        warm = min(run.turns[0].usage.cached, prefix)
    return PrefixLayout(total=prefix, warm=warm, stable=stable if stable is not None else warm)


def tail_of(turn: Turn, rules: CacheRules, last_block: int) -> int:
    """What the client sends after its last breakpoint: the recorded input neither read nor written."""
    u = turn.usage
    if not rules.explicit or u.prompt is None or u.cached is None or u.cache_write is None:
        return 0
    return max(0, min(u.prompt - u.cached - u.cache_write, last_block))


def endpoint_of(turn: Turn) -> str | None:
    """The endpoint that served ``turn`` as its gateway named it (``Route.endpoint``): its cache is its own."""
    return None if turn.route is None else turn.route.endpoint


def seconds(turn: Turn) -> float | None:
    return None if turn.started_at is None else turn.started_at.timestamp()


def cache_request(
    run: Run,
    turn: Turn,
    layout: PrefixLayout,
    blocks: Sequence[Block],
    rules: CacheRules,
    *,
    era: int = 0,
    tail: int | None = None,
    reply: Block | None = None,
) -> CacheRequest:
    """One call's request: the prefix blocks, then ``blocks`` (the messages it sent)."""
    pre = layout.blocks(era)
    allb = tuple(pre) + tuple(blocks)
    if not allb:
        return CacheRequest((), model=turn.model or run.model, at=seconds(turn), endpoint=endpoint_of(turn))
    marked = [k for k in range(len(pre)) if pre[k][0][1] in ("warm", "stable")]
    breakpoints = (*marked, len(allb) - 1)
    t = tail if tail is not None else tail_of(turn, rules, allb[-1][1])
    return CacheRequest(
        blocks=allb,
        breakpoints=breakpoints,
        tail=min(t, allb[-1][1]),
        at=seconds(turn),
        model=turn.model or run.model,
        endpoint=endpoint_of(turn),
        reply=reply,
    )


def reply_of(run: Run, ids: Sequence[tuple[int, ...] | None], k: int) -> Block | None:
    """Turn ``k``'s reply as the next request carries it: the assistant message that opens what the next request
    adds, with the completion tokens the provider generated (``None`` when there is no such message)."""
    here, nxt = ids[k], ids[k + 1] if k + 1 < len(ids) else None
    completion = run.turns[k].usage.completion
    if here is None or nxt is None or completion is None or tuple(nxt[: len(here)]) != tuple(here):
        return None
    if len(nxt) > len(here) and run.messages[nxt[len(here)]].role == "assistant":
        return (("m", nxt[len(here)]), completion)
    return None


def warm_state(run: Run, layout: PrefixLayout, state: CacheState) -> None:
    """Seed the cache with the warm prefix for every model the run calls, on every endpoint it calls."""
    warm = [b for b in layout.blocks(0) if b[0][1] == "warm"]
    if warm:
        for model, endpoint in dict.fromkeys((t.model or run.model, endpoint_of(t)) for t in run.turns):
            state.warm(model, warm, endpoint)


def eras(run: Run) -> list[int]:
    """Per turn, how many times the source has rewritten its transcript before it (0 while append-only)."""
    out, era, prev = [], 0, None
    for t in run.turns:
        ids = None if t.sent is None else [i for a, b in t.sent for i in range(a, b)]
        if ids is not None and prev is not None and ids[: len(prev)] != prev:
            era += 1
        out.append(era)
        prev = ids if ids is not None else prev
    return out
