"""The counterfactual bill: what a recorded run would have cost under a context policy (ADR-107's manager, the
seed's observation decay, observation masking, or any together), call by call: the request the policy sends, its
prompt anchored to the recorded one, its cache split from the provider family's cache model (the recorded split
kept before the first change, so with no policy the bill is the recording), ``spent`` and USD. Every completion is
the recorded one: after ``first_change`` the calls are approximations and the outcome is unknown. The rules, step by
step, and what the shared runs show: docs/counterfactual-bills.md.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import warnings
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import repeat
from typing import Any

import pandas as pd

from workbench.context.cache_model import (
    FIRST,
    SECOND,
    CacheRequest,
    CacheRules,
    CacheSplit,
    CacheState,
    cache_note,
    common_prefix,
    step,
    writes_one_hour,
)
from workbench.context.cache_requests import cache_request, eras, layout_for, reply_of, warm_state
from workbench.context.cache_routes import route_rules
from workbench.context.replay import REWRITE_KINDS
from workbench.context.request_tokens import AnchoredTokens, anchor
from workbench.govern.cost import spent as meter_spent
from workbench.replay.facts import RunFacts, run_facts
from workbench.trace.schema import Message, Run, Usage

MASK_PLACEHOLDER = "Old environment output: ({lines} lines omitted)"
"""mini-swe-agent's and the Complexity Trap's placeholder wording for a masked observation."""

Piece = tuple[int, Message | None]
"""A message of a counterfactual request: its pool index, and its replacement (``None``: sent as recorded)."""


@dataclass(frozen=True)
class ContextPolicy:
    """The context policy a bill is drawn under (``None`` / ``False``: that mechanism is off)."""

    context_length: int | None = None
    mask_observations: int | None = None
    decay: bool = False
    mask_block: int | None = None
    """Cache-aware masking: the mask moves only every ``mask_block`` turns, by that many observations at once, so
    the cached prefix stays stable between moves (``None``: the sliding mask, which moves every turn)."""

    def __post_init__(self) -> None:
        if self.mask_observations is not None and self.mask_observations < 0:
            raise ValueError(f"mask_observations must be >= 0, got {self.mask_observations}")
        if self.context_length is not None and self.context_length <= 0:
            raise ValueError(f"context_length must be positive, got {self.context_length}")

    @property
    def active(self) -> bool:
        return self.context_length is not None or self.mask_observations is not None or self.decay

    @property
    def label(self) -> str:
        parts = []
        if self.context_length is not None:
            parts.append(f"window {self.context_length:,}")
        if self.mask_observations is not None:
            block = f" in blocks of {self.mask_block}" if self.mask_block else ""
            parts.append(f"mask {self.mask_observations}{block}")
        if self.decay:
            parts.append("decay")
        return ", ".join(parts) or "no context policy"


@dataclass(frozen=True)
class BillRow:
    """One call. ``sent``: the pool indices of the messages the counterfactual request carried, in order;
    ``replaced``: those sent as a placeholder or stub instead of their recorded text (so a bill can be recomputed
    by hand from the run)."""

    turn: int
    changed: bool
    sent: tuple[int, ...]
    replaced: tuple[int, ...]
    removed_tokens: int
    prompt: int
    cached: int
    cache_write: int
    completion: int
    usd: float | None
    recorded_prompt: int
    recorded_cached: int
    recorded_cache_write: int
    recorded_usd: float | None
    modelled_recorded_cached: int
    modelled_recorded_cache_write: int
    found: int | None = None
    """The cached prefix the model found for the counterfactual request before the block step (automatic
    families; ``None`` otherwise): what the bill's interval steps down again under another block size."""
    coarse: tuple[int, int] = (1, 0)
    """The serving endpoint's ``(multiple, from_blocks)`` the read was stepped by (``CacheRules.coarse``)."""


TOTAL_KEYS = ("prompt_tokens", "cached_tokens", "cache_write_tokens", "completion_tokens", "spent", "usd")


def _totals(calls: Iterable[tuple[int, int, int, int, float | None]]) -> dict[str, Any]:
    """``TOTAL_KEYS`` over calls' (prompt, cached, cache write, completion, USD): USD unknown if any call's is."""
    rows = list(calls)
    p, c, w, o = (sum(int(r[j] or 0) for r in rows) for j in range(4))
    usds = [r[4] for r in rows]
    usd = None if None in usds else float(sum(v or 0.0 for v in usds))
    return dict(zip(TOTAL_KEYS, (p, c, w, o, meter_spent(p, c, o), usd), strict=True))


@dataclass(frozen=True)
class Bill:
    """One run's counterfactual bill under one context policy, per call and in total."""

    run_id: str
    policy: ContextPolicy
    family: str
    rows: tuple[BillRow, ...]
    first_change: int | None
    truncated_at: int | None = None
    recorded_totals: dict[str, Any] | None = None
    """The whole recording's totals (every call with usage, also those after a ``CONTEXT_TRUNCATED`` stop)."""
    notes: tuple[str, ...] = ()
    context: Any = field(default=None, compare=False, repr=False)

    def _rows(self, calls: int | None) -> tuple[BillRow, ...]:
        return self.rows if calls is None else tuple(r for r in self.rows if r.turn < calls)

    def counterfactual(self, calls: int | None = None) -> dict[str, Any]:
        """Totals over the first ``calls`` turns (default all) as the policy would have sent them."""
        return _totals((r.prompt, r.cached, r.cache_write, r.completion, r.usd) for r in self._rows(calls))

    def recorded(self, calls: int | None = None) -> dict[str, Any]:
        """The recording's totals over the first ``calls`` calls (default: the whole recording)."""
        if calls is None and self.recorded_totals is not None:
            return dict(self.recorded_totals)
        rows = self._rows(calls)
        return _totals(
            (r.recorded_prompt, r.recorded_cached, r.recorded_cache_write, r.completion, r.recorded_usd)
            for r in rows
        )

    def fields(self, calls: int | None = None) -> dict[str, Any]:
        """``replay --json``'s fields: ``counterfactual`` over the calls replayed, ``recorded_*`` over the
        whole recording (what was paid)."""
        rec = self.recorded()
        out: dict[str, Any] = {
            "counterfactual": {**self.counterfactual(calls), "calls": len(self._rows(calls))}
        }
        for key, name in (
            ("prompt_tokens", "recorded_prompt_tokens"),
            ("cached_tokens", "recorded_cached_tokens"),
            ("cache_write_tokens", "recorded_cache_write_tokens"),
            ("spent", "recorded_spent"),
            ("usd", "recorded_usd"),
        ):
            out[name] = rec[key]
        out["bill"] = {
            "context_policy": self.policy.label,
            "cache_family": self.family,
            "first_change": self.first_change,
            "truncated_at": self.truncated_at,
            "notes": list(self.notes),
        }
        return out

    def facts(self, run: Run) -> RunFacts:
        """The run's facts with every call's prompt and cache read replaced by the counterfactual's: the
        governors' cost meter then reads this bill (a pruned run's grant lasts longer)."""
        base = run_facts(run)
        by_turn = {r.turn: r for r in self.rows}
        turns = []
        for k, tf in enumerate(base.turns):
            r = by_turn.get(k)
            if r is None or not r.changed:
                turns.append(tf)
                continue
            reply = dataclasses.replace(tf.reply, prompt=r.prompt, cached=r.cached)
            turns.append(dataclasses.replace(tf, reply=reply))
        return dataclasses.replace(base, turns=tuple(turns))

    def to_frame(self) -> pd.DataFrame:
        """One row per call; ``sent`` and ``replaced`` as message counts (the indices are on ``rows``)."""
        frame = pd.DataFrame([asdict(r) for r in self.rows])
        if not frame.empty:
            frame["sent"] = frame["sent"].map(len)
            frame["replaced"] = frame["replaced"].map(len)
        return frame

    def summary(self, calls: int | None = None) -> str:
        """One line: the counterfactual over the first ``calls`` calls (default all) against the whole recording."""
        cf, rec = self.counterfactual(calls), self.recorded()
        usd = "" if cf["usd"] is None or rec["usd"] is None else f"; ${cf['usd']:.4f} vs ${rec['usd']:.4f}"
        n = len(self._rows(calls))
        return (
            f"bill under {self.policy.label} ({self.family} cache), {n} of {len(self.rows)} calls: spent "
            f"{cf['spent']:,} vs recorded {rec['spent']:,}{usd}; first change at {self.first_change}"
        )

    def __repr__(self) -> str:
        return f"Bill({self.summary()})"

    def _repr_html_(self) -> str:
        cf, rec = self.counterfactual(), self.recorded()
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(_fmt(cf[k]))}</td>"
            f"<td>{html.escape(_fmt(rec[k]))}</td></tr>"
            for k in TOTAL_KEYS
        )
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return (
            f"<div><p><b>Bill</b> {html.escape(self.run_id)} — {html.escape(self.policy.label)}, cache family "
            f"{html.escape(self.family)}, first change at {self.first_change}</p><table><tr><th></th>"
            f"<th>counterfactual</th><th>recorded</th></tr>{rows}</table><ul>{notes}</ul></div>"
        )


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"${v:,.4f}"
    return f"{v:,}"


# -- the counterfactual requests ---------------------------------------------------------------------------


def _added(run: Run, ids: Sequence[tuple[int, ...] | None]) -> list[list[int]]:
    """Per turn, the pool messages the uncompacted transcript gains (the context and decay replays' rule)."""
    out: list[list[int]] = []
    prev: tuple[int, ...] | None = None
    seen: set[int] = set()
    for req in ids:
        if req is None:
            out.append([])
            continue
        if prev is None:
            added = list(req)
        elif req[: len(prev)] == prev:
            added = list(req[len(prev) :])
        else:
            start = max(seen) + 1 if seen else 0
            added = [i for i in range(start, max(req) + 1) if run.messages[i].kind not in REWRITE_KINDS]
        seen.update(req)
        prev = req
        out.append(added)
    return out


def _manager_requests(run: Run, policy: Any) -> tuple[dict[int, list[int]], Any]:
    """Per turn, the pool indices ADR-107's manager would have sent (from the context replay)."""
    from workbench.context.replay import replay_context

    index = {id(m): i for i, m in enumerate(run.messages)}
    one_place = len(index) == len(run.messages)  # no message object at two places: its place is its index
    kept: dict[int, list[int]] = {}

    def on_fit(turn: int, fit: Any, ids: list[int] | None) -> None:
        if ids is not None and one_place:
            kept[turn] = ids
        else:
            kept[turn] = [index[id(m)] for m in fit.messages if id(m) in index]

    ctx = replay_context(run, policy, on_fit=on_fit)
    return kept, ctx


def _decay_requests(
    run: Run, ids: Sequence[tuple[int, ...] | None], window: int | None, policy: Any = None
) -> dict[int, list[Piece]]:
    """Per turn, the decayed transcript as pieces (pool index, replacement) from the decay replay (under the
    policy's observation window and memo where ``policy`` is a Policy)."""
    from workbench.context.decay_replay import replay_decay

    added = _added(run, ids)
    order: list[int] = []
    turn_of = {t.index: k for k, t in enumerate(run.turns)}
    out: dict[int, list[Piece]] = {}

    def on_turn(turn: int, transcript: list[Message]) -> None:
        order.extend(added[turn_of[turn]])
        pieces: list[Piece] = []
        for pos, m in enumerate(transcript):
            i = order[pos]
            original = run.messages[i]
            pieces.append((i, None if m is original or m.content == original.content else m))
        out[turn] = pieces

    from workbench.govern.policy import Policy

    replay_decay(run, window, policy if isinstance(policy, Policy) else None, on_turn=on_turn)
    return out


def observations(messages: Sequence[Message]) -> list[int]:
    """Per message, the assistant turn whose tool result it is, or -1 when it is not a tool result: a ``tool``
    message, or a ``user`` message after an assistant turn (mini-swe-agent sends bash output that way)."""
    out: list[int] = []
    g = -1
    for m in messages:
        if m.role == "assistant":
            g += 1
        tool_result = m.kind is None and (m.role == "tool" or (m.role == "user" and g >= 0))
        out.append(g if tool_result else -1)
    return out


def mask(
    pieces: Sequence[Piece],
    run: Run,
    keep: int,
    counts: AnchoredTokens,
    memo: dict[int, Message | None] | None = None,
    block: int | None = None,
) -> list[Piece]:
    """Keep the tool results of the last ``keep`` assistant turns; replace older ones with the placeholder where
    it is shorter than what it replaces. ``memo`` keeps each pool message's placeholder (or ``None``: not
    shorter) across the calls of one run. ``block``: cache-aware, the masked count moves only in whole steps of
    ``block`` (the oldest ``block`` observations masked at once, every ``block`` turns), so between moves every
    request extends the last one and its prefix stays cached; at least ``keep`` turns stay unmasked."""
    memo = {} if memo is None else memo
    msgs = [m if m is not None else run.messages[i] for i, m in pieces]
    turn_of = observations(msgs)
    turns = sorted({g for g in turn_of if g >= 0})
    over = max(0, len(turns) - keep)
    if block:
        over = over // block * block
    masked = set(turns[:over])
    out: list[Piece] = []
    for (i, rep), m, g in zip(pieces, msgs, turn_of, strict=True):
        if g not in masked or not m.content:
            out.append((i, rep))
        elif rep is None and i in memo:
            out.append((i, memo[i]))
        else:
            lines = m.content.count("\n") + 1
            placeholder = m.model_copy(update={"content": MASK_PLACEHOLDER.format(lines=lines)})
            shorter = _tokens(counts, i, placeholder, run) < _tokens(counts, i, rep, run)
            if rep is None:
                memo[i] = placeholder if shorter else None
            out.append((i, placeholder if shorter else rep))
    return out


def _tokens(counts: AnchoredTokens, i: int, rep: Message | None, run: Run | None = None) -> int:
    """Tokens of pool message ``i`` as sent (its anchored count; estimated at the run's rate if no recorded request
    carried it) or of its replacement (estimated, never more than the message it replaces)."""
    if rep is None:
        return counts.of(i, run.messages[i] if run is not None else None)
    n = max(1, round(counts.estimate(rep)))
    return min(n, counts.of(i)) if i in counts.tokens else n


def _ident(i: int, rep: Message | None) -> Hashable:
    if rep is None:
        return ("m", i)
    digest = hashlib.blake2b((rep.content or "").encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return ("r", i, digest)


# -- prices --------------------------------------------------------------------------------------------------


class RunPricer:
    """USD of a run's calls via ``workbench.pricing`` (genai-prices), looked up once per model, day and price epoch
    (``pricing.price_epoch``: the date and time-of-day constraints in force, so an off-peak call is priced off-peak).

    A price is linear in the fresh, cache-read, cache-write and output tokens within one price tier (genai-prices'
    tiers switch on the whole prompt), so each tier's four rates are read from genai-prices once, by pricing
    probe usages of the call's own prompt size, and every call is priced from them (a sweep prices thousands)."""

    def __init__(self, run: Run, rules: CacheRules) -> None:
        self.run, self.rules = run, rules
        # a write whose lifetime the usage does not say (a counterfactual's) is of the kind the run wrote
        self.one_hour = rules.family == "anthropic" and writes_one_hour(run, rules.one_hour)
        self._rules: dict[tuple[Any, ...], tuple[Any, tuple[int, ...]] | None] = {}
        self._rates: dict[tuple[int, int], tuple[float, float, float, float, float]] = {}
        self._turns: dict[int, tuple[Any, tuple[int, ...]] | None] = {}
        self._at: dict[tuple[int, int], tuple[float, float, float, float] | None] = {}

    def _rule(self, k: int) -> tuple[Any, tuple[int, ...]] | None:
        """Call ``k``'s price rule (genai-prices') and the prompt sizes where its tiers start; ``None``: unpriced."""
        if k in self._turns:  # before the imports: a sweep asks millions of times
            return self._turns[k]
        from workbench.pricing import price_epoch, price_rule
        from workbench.trace.route import price_provider, route_of

        t = self.run.turns[k]
        model, when = t.model or self.run.model, t.started_at or self.run.started_at
        provider = price_provider(route_of(self.run, t))
        key = (model, when.date() if when is not None else None, price_epoch(model, when, provider), provider)
        if key not in self._rules:
            self._rules[key] = price_rule(model, when, provider)
        self._turns[k] = self._rules[key]
        return self._turns[k]

    def _rate(
        self, rule: Any, starts: tuple[int, ...], prompt: int
    ) -> tuple[float, float, float, float, float]:
        tier = sum(prompt > s for s in starts) * 2 + (prompt in starts)
        key = (id(rule), tier)
        if key not in self._rates:
            p = max(prompt, 1)
            fresh, out = rule(p), rule(p, completion=1_000_000)
            read, write, write_1h = rule(p, cached=p), rule(p, write=p), rule(p, write=p, write_1h=p)
            self._rates[key] = (fresh / p, read / p, write / p, write_1h / p, (out - fresh) / 1_000_000)
        return self._rates[key]

    def rates(self, k: int, prompt: int) -> tuple[float, float, float, float] | None:
        """Call ``k``'s USD per fresh, cache-read, cache-write (the run's lifetime) and output token at a prompt
        of ``prompt`` (remembered: a run's bills ask for the same calls' prompts again)."""
        if (k, prompt) not in self._at:
            found = self._rule(k)
            if found is None:
                self._at[(k, prompt)] = None
            else:
                r_in, r_read, r_write, r_write_1h, r_out = self._rate(*found, prompt)
                self._at[(k, prompt)] = (r_in, r_read, r_write_1h if self.one_hour else r_write, r_out)
        return self._at[(k, prompt)]

    def usd(self, k: int, usage: Usage) -> float | None:
        u = usage
        return self.cost(k, u.prompt, u.cached or 0, u.cache_write or 0, u.cache_write_1h, u.completion)

    def cost(
        self,
        k: int,
        prompt: int | None,
        cached: int,
        write: int,
        write_1h: int | None,
        completion: int | None,
    ) -> float | None:
        """``usd`` from the counts: ``write_1h`` is the part of ``write`` with a one-hour lifetime (``None``: a
        write of the kind the run wrote, as a counterfactual's)."""
        found = self._rule(k)
        if found is None or prompt is None or completion is None:
            return None
        one_hour = min(write_1h if write_1h is not None else (write if self.one_hour else 0), write)
        fresh = prompt - cached - write
        r_in, r_read, r_write, r_write_1h, r_out = self._rate(*found, prompt)
        return (
            fresh * r_in
            + cached * r_read
            + (write - one_hour) * r_write
            + one_hour * r_write_1h
            + completion * r_out
        )


# -- the bill ------------------------------------------------------------------------------------------------


class RunBills:
    """What every bill of one run shares, whatever the policy, read once: the anchored token counts, the prefix
    layout, each call's era, recorded request, reply and split (the cache model run on the recording), the bill
    with no policy (the recording itself), the manager's requests per context length, and the cache's state before
    a call. A bill's calls before its first change are the recording's: it takes those rows as they are and steps
    the cache model from the recorded state at its first change on (``oracle=True``: from the first call, as the
    readable definition does; the tests hold the two equal). A grid of policies over one run reads it once."""

    def __init__(self, run: Run, rules: CacheRules | None = None, prices: RunPricer | None = None) -> None:
        self.run, self.rules = run, rules or route_rules(run)
        self.prices = prices if prices is not None and prices.run is run else RunPricer(run, self.rules)
        self.counts = counts = anchor(run)
        self.layout = layout_for(run, counts.prefix, self.rules)
        self.eras = eras(run)
        self.calls = [
            k for k, t in enumerate(run.turns) if counts.ids[k] is not None and t.usage.prompt is not None
        ]
        self.plain: dict[int, list[Piece]] = {
            k: list(zip(counts.ids[k] or (), repeat(None))) for k in self.calls
        }
        self._blocks: dict[tuple[int, int], tuple[Message | None, tuple[Hashable, int]]] = {}
        self._placeholders: dict[int, Message | None] = {}
        self._managers: dict[tuple[Any, ...], tuple[dict[int, list[int]], Any]] = {}
        self._memo: dict[tuple[Any, ...], Bill] = {}
        self._masked: dict[tuple[int, int, int | None], list[Piece]] = {}
        self._tails: dict[tuple[int, ...], tuple[list[list[Piece]], tuple[BillRow, ...], int | None]] = {}
        state = CacheState()
        warm_state(run, self.layout, state)
        self._states = {0: dict(state.entries)}
        self._keys = state.keys
        self.rec_usd = [self.prices.usd(k, run.turns[k].usage) for k in self.calls]
        self.requests: list[CacheRequest] = []
        self.splits: list[CacheSplit] = []
        self.base: list[BillRow] = []
        self.sizes: list[int] = []
        blocks: list[tuple[Hashable, int]] = []
        ids: Sequence[int] = ()
        for p, k in enumerate(self.calls):
            if p % STATE_EVERY == 0:
                self._states[p] = dict(state.entries)
            # a request mostly extends the last one: its blocks are looked up from where the two differ
            sent_ids = counts.ids[k] or ()
            n, ids = common_prefix(sent_ids, ids), sent_ids
            blocks = [*blocks[:n], *(self._block(i, None) for i in ids[n:])]
            self.sizes.append(sum(map(SECOND, blocks)))
            self.requests.append(self._request(k, blocks))
            self.splits.append(step(self.rules, self.requests[-1], state))
            self.base.append(self._row(p, self.plain[k], blocks, self.splits[-1], False))
        self.totals = _recorded_totals(run, self.prices)

    def _block(self, i: int, rep: Message | None) -> tuple[Hashable, int]:
        key = (i, id(rep))  # the memo keeps ``rep`` alive, so no other object takes its id
        if key not in self._blocks:
            self._blocks[key] = (rep, (_ident(i, rep), _tokens(self.counts, i, rep, self.run)))
        return self._blocks[key][1]

    def _request(self, k: int, blocks: list[tuple[Hashable, int]]) -> CacheRequest:
        run, reply = self.run, reply_of(self.run, self.counts.ids, k)
        return cache_request(
            run, run.turns[k], self.layout, blocks, self.rules, era=self.eras[k], reply=reply
        )

    def _state(self, p: int) -> CacheState:
        """The cache as the recording left it before call ``p`` (a copy: the caller steps it on)."""
        q = max(s for s in self._states if s <= p)
        state = CacheState(dict(self._states[q]), self._keys)
        for r in range(q, p):
            step(self.rules, self.requests[r], state)
        self._states[p] = dict(state.entries)
        return state

    def _row(
        self, p: int, pieces: list[Piece], blocks: list[tuple[Hashable, int]], split: CacheSplit, after: bool
    ) -> BillRow:
        """Call ``p``'s row: as recorded before the first change (``after`` false), else the model's split of
        the anchored prompt."""
        k = self.calls[p]
        u = self.run.turns[k].usage
        assert u.prompt is not None
        removed = self.sizes[p] - sum(map(SECOND, blocks))
        unreplaced = list(map(SECOND, pieces)).count(None)  # most calls replace nothing: told in C
        rec_cached, rec_write = u.cached or 0, u.cache_write or 0
        if not after:
            prompt, cached, write = u.prompt, rec_cached, rec_write
        else:
            prompt = max(0, u.prompt - removed)  # the model's read and write, within the anchored prompt
            cached = min(split.cached, prompt)
            write = min(split.cache_write, prompt - cached)
        rec = self.splits[p]
        return BillRow(
            turn=self.run.turns[k].index,
            changed=pieces != self.plain[k],
            sent=tuple(map(FIRST, pieces)),
            replaced=() if unreplaced == len(pieces) else tuple(i for i, rep in pieces if rep is not None),
            removed_tokens=removed,
            prompt=prompt,
            cached=cached,
            cache_write=write,
            completion=u.completion or 0,
            usd=self.prices.cost(k, prompt, cached, write, None, u.completion),
            recorded_prompt=u.prompt,
            recorded_cached=rec_cached,
            recorded_cache_write=rec_write,
            recorded_usd=self.rec_usd[p],
            modelled_recorded_cached=rec.cached,
            modelled_recorded_cache_write=rec.cache_write,
            found=split.found,
            coarse=split.coarse,
        )

    def context(self, policy: Any) -> Any:
        """The context replay under ``policy``'s manager fields: the one this run's bills read (replayed once)."""
        return self._manager(policy)[1]

    def _manager(self, policy: Any) -> tuple[dict[int, list[int]], Any]:
        key = tuple(getattr(policy, f, None) for f in MANAGER_FIELDS)
        if key not in self._managers:
            self._managers[key] = _manager_requests(self.run, policy)
        return self._managers[key]

    def bill(
        self,
        policy: Any = None,
        *,
        mask_observations: int | None = None,
        decay: bool = False,
        mask_block: int | None = None,
        oracle: bool = False,
    ) -> Bill:
        """The bill under ``policy``'s context length (duck-typed; ``None``: no manager), observation ``decay``
        and ``mask_observations`` (``counterfactual_bill``)."""
        length = getattr(policy, "context_length", None) if policy is not None else None
        cp = ContextPolicy(length, mask_observations, decay, mask_block)
        key = (tuple(getattr(policy, f, None) for f in MANAGER_FIELDS), mask_observations, mask_block, oracle)
        if not decay and key in self._memo:  # the bill reads no other policy field
            return self._memo[key]
        run, counts, rules = self.run, self.counts, self.rules
        kept, ctx = self._manager(policy) if length is not None else ({}, None)
        window = getattr(policy, "window", None) or run.context_length
        decayed = _decay_requests(run, counts.ids, window, policy) if decay else {}
        truncated_at = getattr(ctx, "truncated_at", None)
        sent: list[list[Piece]] = []
        for k in self.calls:
            index = run.turns[k].index
            if truncated_at is not None and index >= truncated_at:
                break
            if length is not None and index in kept:
                # the manager's transcript (uncompacted where the source compacted), with the decay's replacements
                swap = dict(decayed.get(index, ())) if decay else {}
                if swap or tuple(kept[index]) != (counts.ids[k] or ()):
                    pieces = [(i, swap.get(i)) for i in kept[index]]
                    pieces = self.plain[k] if pieces == self.plain[k] else pieces
                else:  # the recorded request, told by its ids (most calls are)
                    pieces = self.plain[k]
            elif decay and index in decayed:
                pieces = decayed[index]
            else:
                pieces = self.plain[k]
            if mask_observations is not None:
                pieces = self._mask(k, pieces, mask_observations, mask_block)
            sent.append(pieces)
        start = (
            0
            if oracle
            else next((p for p, s in enumerate(sent) if s != self.plain[self.calls[p]]), len(sent))
        )
        tail, first_change = self._tail(sent, start, oracle)
        notes = self._notes(cp, first_change)
        bill = Bill(
            run.run_id,
            cp,
            rules.family,
            (*self.base[:start], *tail),
            first_change,
            truncated_at,
            self.totals,
            notes,
            ctx,
        )
        if not decay:
            self._memo[key] = bill
        return bill

    def _mask(self, k: int, pieces: list[Piece], keep: int, block: int | None) -> list[Piece]:
        """``mask`` of call ``k``'s pieces, remembered where they are the recorded request's."""
        if pieces is not self.plain[k]:
            return mask(pieces, self.run, keep, self.counts, self._placeholders, block)
        if (k, keep, block) not in self._masked:
            self._masked[(k, keep, block)] = mask(
                pieces, self.run, keep, self.counts, self._placeholders, block
            )
        return self._masked[(k, keep, block)]

    def _tail(
        self, sent: list[list[Piece]], start: int, oracle: bool
    ) -> tuple[tuple[BillRow, ...], int | None]:
        """The rows of calls ``start`` on, the cache stepped from the recorded state before ``start``, and the
        first change; remembered by the requests sent (the memo keeps them alive, so their ids name them)."""
        key = (start, *map(id, sent[start:]))
        if not oracle and key in self._tails:
            return self._tails[key][1:]
        state = self._state(start) if start < len(sent) else CacheState()
        rows: list[BillRow] = []
        first_change: int | None = None
        blocks: list[tuple[Hashable, int]] = []
        for p in range(start, len(sent)):
            k = self.calls[p]
            if first_change is None and sent[p] != self.plain[k]:
                first_change = self.run.turns[k].index
            n = common_prefix(sent[p], sent[p - 1]) if p > start else 0
            blocks = [*blocks[:n], *(self._block(i, rep) for i, rep in sent[p][n:])]
            split = step(self.rules, self._request(k, blocks), state)
            rows.append(self._row(p, sent[p], blocks, split, first_change is not None))
        if not oracle:
            self._tails[key] = (sent, tuple(rows), first_change)
        return tuple(rows), first_change

    def _notes(self, cp: ContextPolicy, first_change: int | None) -> tuple[str, ...]:
        notes: list[str] = []
        if self.rules.family == "none" and (why := cache_note(self.run)) is not None:
            notes.append(why)
        if self.counts.shortfall:
            notes.append(
                f"{len(self.counts.shortfall)} recorded request(s) reported fewer tokens than the messages they "
                "repeat were counted at: those requests' new messages are counted as 0 tokens"
            )
        if first_change is not None:
            notes.append(
                f"the transcript first differs from the recording at turn {first_change}: later calls keep the "
                "recorded replies and completions, an approximation; the outcome under the changed transcript is "
                "unknown"
            )
        if cp.context_length is not None and any(e != 0 for e in self.eras):
            notes.append(
                "the source rewrote its transcript (its own compaction): under a context length the manager's "
                "uncompacted transcript is billed instead, as the context replay reads it"
            )
        if cp.context_length is not None and (cp.mask_observations is not None or cp.decay):
            notes.append(
                "the manager prunes the unmasked, undecayed transcript: its budget does not count those savings"
            )
        return tuple(notes)


STATE_EVERY = 8
"""``RunBills`` keeps the recorded cache state before every 8th call (and before each first change asked for)."""
MANAGER_FIELDS = ("context_length", "reserve", "safety", "calibration", "estimator")
"""The policy fields ADR-107's manager reads (``ContextWindowManager.from_policy``): a bill reads no others."""


def counterfactual_bill(
    run: Run,
    policy: Any = None,
    *,
    mask_observations: int | None = None,
    decay: bool = False,
    rules: CacheRules | None = None,
    prices: RunPricer | None = None,
    recorded: RunBills | None = None,
    mask_block: int | None = None,
) -> Bill:
    """The bill of ``run`` under ``policy``'s context length (duck-typed; ``None``: no manager), observation
    ``decay`` and ``mask_observations``. ``recorded``: what the run's bills share, already read (``RunBills``),
    for a grid of policies over one run."""
    rules = rules or route_rules(run)
    if recorded is None or recorded.run is not run or recorded.rules != rules:
        recorded = RunBills(run, rules, prices)
    return recorded.bill(policy, mask_observations=mask_observations, decay=decay, mask_block=mask_block)


def _recorded_totals(run: Run, prices: RunPricer) -> dict[str, Any]:
    used = [(k, t.usage) for k, t in enumerate(run.turns) if t.usage.prompt is not None]
    return _totals(
        (u.prompt or 0, u.cached or 0, u.cache_write or 0, u.completion or 0, prices.usd(k, u))
        for k, u in used
    )


def replay_with_bill(
    run: Run,
    policy: Any,
    *,
    mask_observations: int | None = None,
    decay: bool = False,
    rules: CacheRules | None = None,
    recorded: RunBills | None = None,
    mask_block: int | None = None,
) -> tuple[Any, Bill]:
    """Replay ``run`` with the governors on the counterfactual meter; the result's ``diverges_at`` is the earlier
    of the governors' and the bill's first change (``recorded``: as for ``counterfactual_bill``)."""
    from workbench.replay.engine import replay

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bill = counterfactual_bill(
            run,
            policy,
            mask_observations=mask_observations,
            decay=decay,
            rules=rules,
            recorded=recorded,
            mask_block=mask_block,
        )
    res = replay(
        run,
        policy,
        facts=bill.facts(run),
        context_replayer=(lambda r, q: bill.context) if bill.context else None,
    )
    fc = bill.first_change
    if fc is not None and fc <= res.stop_turn and (res.diverges_at is None or fc < res.diverges_at):
        res = dataclasses.replace(
            res,
            diverges_at=fc,
            notes=(
                *res.notes,
                f"the context policy ({bill.policy.label}) changes the transcript from turn {fc} on",
            ),
        )
    return res, bill
