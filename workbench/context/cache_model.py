"""A prompt-cache model per provider family: given successive requests, how many of each call's prompt tokens
are read from the cache, written to it, or sent fresh (docs/cache-model.md: requests as blocks, the families).

All time is an input (seconds on any clock, ``None`` for untimed runs: then nothing expires).

Call signature::

    splits = predict(rules, requests)     # one CacheSplit per request, in order
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import itemgetter
from typing import TYPE_CHECKING

from workbench.trace.route import FAMILIES, Family

if TYPE_CHECKING:
    from workbench.trace.schema import Run

# Anthropic prompt-caching docs: cache writes 1.25x base input for the 5-minute lifetime, 2x for one hour.
ANTHROPIC_WRITE_MULTIPLIER_5M = 1.25
ANTHROPIC_WRITE_MULTIPLIER_1H = 2.0
# Anthropic prompt-caching docs: a cache hit is looked up at a breakpoint and up to 20 blocks before it.
ANTHROPIC_LOOKBACK_BLOCKS = 20
# Anthropic prompt-caching docs: the minimum cacheable prompt (tokens), by model; 1,024 for the others.
ANTHROPIC_MIN_TOKENS = {"opus-4-5": 4096, "opus-4-6": 4096, "haiku-4-5": 4096, "haiku-3": 2048}
ANTHROPIC_MIN_TOKENS_DEFAULT = 1024
# OpenAI prompt-caching guide: automatic for prompts of 1,024 tokens or more, hits in 128-token increments.
OPENAI_MIN_TOKENS = 1024
OPENAI_STEP_TOKENS = 128
# Read off the shared Gemini 3 Pro (OpenRouter) recordings: cached reads come in ~2,048-token blocks.
GEMINI_STEP_TOKENS = 2048
# Anthropic: 5 minutes (default) or one hour; OpenAI: "5 to 10 minutes of inactivity" (the shorter taken).
TTL_5M_S = 300.0
TTL_1H_S = 3600.0


@dataclass(frozen=True)
class CacheRules:
    """How one provider family caches. ``ttl_s`` is the lifetime of an entry after its last use."""

    family: Family
    min_tokens: int = 0
    step: int = 1
    ttl_s: float = TTL_5M_S
    lookback: int = ANTHROPIC_LOOKBACK_BLOCKS
    write_multiplier: float = 0.0
    """Price of a cache write per input token (0: writes are not charged beyond an input token)."""
    reply_cached: bool = True
    """Automatic families: the next call can read through this call's reply (fitted per route: Gemini's
    recorded reads stop at the previous prompt)."""
    coarse: tuple[tuple[str, int, int], ...] = ()
    """Automatic families, per serving endpoint ``(endpoint, multiple, from_blocks)``: on that endpoint a read of
    ``from_blocks`` blocks or more comes in whole multiples of ``multiple`` blocks (fitted per route: Gemini via
    OpenRouter's ``Google AI Studio`` reads 1, 2, 3, then only even block counts)."""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"cache family must be one of {FAMILIES}, got {self.family!r}")
        if self.step < 1 or self.min_tokens < 0 or self.ttl_s <= 0:
            raise ValueError(
                f"invalid cache rules: step {self.step}, min {self.min_tokens}, ttl {self.ttl_s}"
            )
        if any(m < 1 or f < 0 for _, m, f in self.coarse):
            raise ValueError(f"invalid coarse steps: {self.coarse}")

    def coarse_of(self, endpoint: str | None) -> tuple[int, int]:
        """``(multiple, from_blocks)`` on ``endpoint``: ``(1, 0)`` where reads step by one block."""
        if not self.coarse:
            return (1, 0)
        return next(((m, f) for e, m, f in self.coarse if e == endpoint), (1, 0))

    @property
    def explicit(self) -> bool:
        """Writes are counted apart (Anthropic's ``cache_creation_input_tokens``)."""
        return self.family == "anthropic"

    @property
    def one_hour(self) -> bool:
        return self.family == "anthropic" and self.ttl_s >= TTL_1H_S

    @classmethod
    def anthropic(cls, model: str | None = None, *, one_hour: bool = False) -> CacheRules:
        return cls(
            "anthropic",
            min_tokens=anthropic_min_tokens(model),
            ttl_s=TTL_1H_S if one_hour else TTL_5M_S,
            write_multiplier=ANTHROPIC_WRITE_MULTIPLIER_1H if one_hour else ANTHROPIC_WRITE_MULTIPLIER_5M,
        )

    @classmethod
    def openai(cls) -> CacheRules:
        return cls("openai", min_tokens=OPENAI_MIN_TOKENS, step=OPENAI_STEP_TOKENS)

    @classmethod
    def gemini(cls) -> CacheRules:
        return cls("gemini", min_tokens=GEMINI_STEP_TOKENS, step=GEMINI_STEP_TOKENS)

    @classmethod
    def none(cls) -> CacheRules:
        return cls("none")


def anthropic_min_tokens(model: str | None) -> int:
    name = (model or "").lower()
    return next((v for k, v in ANTHROPIC_MIN_TOKENS.items() if k in name), ANTHROPIC_MIN_TOKENS_DEFAULT)


def rules_for_family(family: Family, model: str | None = None, *, one_hour: bool = False) -> CacheRules:
    """The rules of one family (``model`` sets Anthropic's minimum cacheable prompt)."""
    if family == "anthropic":
        return CacheRules.anthropic(model, one_hour=one_hour)
    if family == "openai":
        return CacheRules.openai()
    if family == "gemini":
        return CacheRules.gemini()
    return CacheRules.none()


def rules_for(run: Run) -> CacheRules:
    """The rules of the provider a recorded run's calls went through (:func:`workbench.trace.route.run_route`;
    never the model name's prefix): an unknown route caches nothing (:func:`cache_note` says so). Claude Code
    writes one-hour entries (its recorded ``cache_creation.ephemeral_1h_input_tokens``)."""
    from workbench.trace.route import cache_family, run_route

    family, _ = cache_family(run_route(run), _served_model(run))
    return rules_for_family(family, run.model, one_hour=run.source == "claude-code")


def cache_note(run: Run) -> str | None:
    """Why :func:`rules_for` assumes no cache for ``run`` (its route unknown, or a provider without a cache
    model), or ``None`` when it models one."""
    from workbench.trace.route import cache_family, run_route

    route = run_route(run)
    note = cache_family(route, _served_model(run))[1]
    return None if note is None else f"{note} (route: {'not recorded' if route is None else route.key})"


def _served_model(run: Run) -> str | None:
    return next((t.model for t in run.turns if t.model), run.model)


def writes_one_hour(run: Run, default: bool) -> bool:
    """Are ``run``'s cache writes one-hour entries? As recorded where the run splits its writes by lifetime
    (``Usage.cache_write_1h``: one-hour when most written tokens were), else ``default`` (the rules' TTL).
    Claude Code writes either kind: of the 20 shared files, 10 wrote only one-hour entries, 10 only five-minute."""
    split = [
        (t.usage.cache_write or 0, t.usage.cache_write_1h)
        for t in run.turns
        if t.usage.cache_write_1h is not None
    ]
    written = sum(w for w, _ in split)
    if not written:
        return default
    return sum(h for _, h in split) * 2 > written


FIRST, SECOND = itemgetter(0), itemgetter(1)
"""A pair's items, read in C: a block's identity and tokens (a call's blocks are read whole on every step), a
piece's pool index and replacement."""


@dataclass(frozen=True)
class CacheRequest:
    """One call's prompt as the cache sees it.

    ``blocks``: ``(identity, tokens)`` in order. ``breakpoints``: indices of the blocks that carry a cache
    breakpoint (Anthropic; ignored by the automatic families); the last breakpoint ends ``tail`` tokens before the
    end of its block (what the client sends after its marker: fresh on every call). ``at``: when it was sent.
    """

    blocks: tuple[tuple[Hashable, int], ...]
    breakpoints: tuple[int, ...] = ()
    tail: int = 0
    at: float | None = None
    model: str | None = None
    endpoint: str | None = None
    """The serving endpoint as the gateway named it (``Route.endpoint``): each endpoint has its own cache."""
    reply: tuple[Hashable, int] | None = None
    """The reply this call produced, as the next request carries it (identity, tokens): on the automatic
    families the provider's cache holds the generated tokens too, so the next call can read through them."""

    @property
    def tokens(self) -> int:
        return sum(map(SECOND, self.blocks))


@dataclass(frozen=True)
class CacheSplit:
    """A call's prompt split: ``cached`` read + ``cache_write`` + ``fresh`` = ``prompt``."""

    prompt: int
    cached: int
    cache_write: int
    fresh: int
    found: int | None = None
    """Automatic families: the cached prefix found, before the minimum and the block step (what a draw with
    another block size steps down again)."""
    coarse: tuple[int, int] = (1, 0)
    """The endpoint's ``(multiple, from_blocks)`` the read was stepped by (:attr:`CacheRules.coarse`)."""


Entry = tuple[int, float | None]
"""A cached prefix: its tokens and when it expires (``None``: never)."""


@dataclass
class CacheState:
    """The provider's cache as the model sees it: prefix identity -> (cached tokens, expiry)."""

    entries: dict[int, Entry] = field(default_factory=dict)
    keys: dict[tuple[int | None, Hashable], int] = field(default_factory=dict, repr=False)
    """Prefix identities: (parent's key, block) -> key, numbered in the order first named (a root's parent is
    ``None``). One memo names a prefix once, so states sharing it share keys (the bill's saved states)."""
    last: tuple[Hashable, list[Hashable], list[int]] = field(default=(None, [], []), repr=False)
    """The last chain named (root, block identities, keys): the next request's common prefix with it is reused."""

    def get(self, key: int, at: float | None) -> Entry | None:
        e = self.entries.get(key)
        if e is None or (at is not None and e[1] is not None and at > e[1]):
            return None
        return e

    def put(self, key: int, tokens: int, at: float | None, ttl: float) -> None:
        self.entries[key] = (tokens, None if at is None else at + ttl)

    def warm(
        self, model: str | None, blocks: Sequence[tuple[Hashable, int]], endpoint: str | None = None
    ) -> None:
        """The provider already holds these leading blocks for ``model`` on ``endpoint`` (the agent's prefix,
        cached by its earlier sessions): each of their prefixes is readable and does not expire within the run."""
        keys = self.chain(model, list(map(FIRST, blocks)), endpoint)
        self.entries.update(zip(keys, zip(accumulate(map(SECOND, blocks)), repeat(None)), strict=True))

    def chain(self, model: str | None, idents: list[Hashable], endpoint: str | None = None) -> list[int]:
        """Cumulative identity of each prefix: block k's key names blocks 0..k (and the model and the serving
        endpoint: caches are per model, and per endpoint), numbered by ``keys``: within one memo a key is a
        function of the blocks up to it. The prefix shared with the last chain is not named again."""
        root = (model, endpoint)
        last_root, last_idents, last_keys = self.last
        n = common_prefix(idents, last_idents) if root == last_root else 0
        out, keys = last_keys[:n], self.keys
        h = out[-1] if n else keys.setdefault((None, root), len(keys))
        for ident in idents[n:]:
            nxt = keys.get((h, ident))
            if nxt is None:
                nxt = keys[(h, ident)] = len(keys)
            h = nxt
            out.append(h)
        self.last = (root, idents, out)
        return out


def common_prefix(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """The length of ``a``'s and ``b``'s common prefix (list comparisons, by bisection)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while hi - lo > 1:  # a[:lo] == b[:lo], a[:hi] != b[:hi]
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if a[:mid] == b[:mid] else (lo, mid)
    return lo


def stepped_blocks(blocks: int, coarse: tuple[int, int]) -> int:
    """A read of ``blocks`` whole blocks on an endpoint with ``coarse = (multiple, from_blocks)``: from
    ``from_blocks`` on, whole multiples of ``multiple`` only."""
    multiple, start = coarse
    return blocks if multiple <= 1 or blocks < start else blocks // multiple * multiple


def _step_down(tokens: int, rules: CacheRules, endpoint: str | None = None) -> int:
    if tokens < max(rules.min_tokens, 1):
        return 0
    return stepped_blocks(tokens // rules.step, rules.coarse_of(endpoint)) * rules.step


def predict(
    rules: CacheRules, requests: Sequence[CacheRequest], state: CacheState | None = None
) -> list[CacheSplit]:
    """The cache split of each request, in order, starting from ``state`` (default: an empty cache)."""
    state = state if state is not None else CacheState()
    return [step(rules, r, state) for r in requests]


def step(rules: CacheRules, req: CacheRequest, state: CacheState) -> CacheSplit:
    """One call: its split, and the cache updated with what it wrote (``state`` is changed in place)."""
    total = req.tokens
    if rules.family == "none" or not req.blocks:
        return CacheSplit(total, 0, 0, total)
    keys = state.chain(req.model, list(map(FIRST, req.blocks)), req.endpoint)
    cum = list(accumulate(map(SECOND, req.blocks)))
    if rules.family == "anthropic":
        return _anthropic(rules, req, state, keys, cum, total)
    return _automatic(rules, req, state, keys, cum, total)


def _automatic(
    rules: CacheRules, req: CacheRequest, state: CacheState, keys: list[int], cum: list[int], total: int
) -> CacheSplit:
    # every prefix is cached; the longest one still alive is read (prefixes are closed under shortening). The
    # prefixes never cached (past an edit, every one) are passed over in C.
    alive = (state.get(k, req.at) for k in filter(state.entries.__contains__, reversed(keys)))
    hit = next((e for e in alive if e is not None), None)
    found = min(hit[0], total) if hit is not None else 0
    read = _step_down(found, rules, req.endpoint)
    expires = None if req.at is None else req.at + rules.ttl_s
    state.entries.update(zip(keys, zip(cum, repeat(expires)), strict=True))  # every prefix, in C
    if req.reply is not None and rules.reply_cached:
        reply_key = state.chain(req.model, [*map(FIRST, req.blocks), req.reply[0]], req.endpoint)[-1]
        state.entries[reply_key] = (total + req.reply[1], expires)
    return CacheSplit(total, read, 0, total - read, found, rules.coarse_of(req.endpoint))


def _anthropic(
    rules: CacheRules, req: CacheRequest, state: CacheState, keys: list[int], cum: list[int], total: int
) -> CacheSplit:
    n = len(keys)
    bps = sorted({b for b in req.breakpoints if 0 <= b < n})
    if not bps:
        return CacheSplit(total, 0, 0, total)
    last = bps[-1]
    ends = {b: cum[b] - (req.tail if b == last else 0) for b in bps}
    read, read_key = 0, None
    for b in bps:
        for k in range(b, max(-1, b - rules.lookback - 1), -1):
            e = state.get(keys[k], req.at)
            if e is not None:
                if e[0] > read:
                    read, read_key = e[0], keys[k]
                break
    end = max(ends[last], 0)
    if end < rules.min_tokens:
        return CacheSplit(total, 0, 0, total)
    read = min(read, end)
    write = end - read
    if read_key is not None:  # a hit refreshes its entry's lifetime
        state.put(read_key, read, req.at, rules.ttl_s)
    for b in bps:
        if ends[b] >= rules.min_tokens and ends[b] >= read:
            state.put(keys[b], ends[b], req.at, rules.ttl_s)
    return CacheSplit(total, read, write, total - read - write)
