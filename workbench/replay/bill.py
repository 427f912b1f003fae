"""The counterfactual bill: what a recorded run would have cost under a context policy (docs/counterfactual-bills.md).

Policies (any of them, together): ADR-107's manager at ``policy.context_length`` (turn-atomic pruning, read from
the context replay), the seed's observation decay (stubs and folds, read from the decay replay), and observation
masking (``mask_observations=M``: the last M turns' tool results kept, older ones replaced by a one-line
placeholder, as mini-swe-agent and the Complexity Trap do).

Per call:

* the counterfactual request — the messages the policy would have sent, by pool index, with replacements;
* its prompt tokens, anchored: the recorded prompt, minus the anchored tokens of what the policy removed, plus
  the tokens of what it put in their place (a placeholder only replaces text it is shorter than), so removing
  content never raises a prompt;
* its cache split from the prompt-cache model of the run's provider family (workbench/context/cache_model.py);
  before the first call the policy changes, the recorded split is kept exactly — so with no policy the bill *is*
  the recording;
* ``spent`` (the governors' cost meter: cache reads at 10%) and USD from ``workbench.pricing`` (genai-prices);
  Anthropic one-hour cache writes at genai-prices' one-hour write rate (2x input, against 1.25x for 5 minutes).

The completion of every call is the recorded one: after the first change (``first_change``) the model would have
seen a different transcript, so the later calls are approximations, and the outcome under the changed transcript
is unknown. The bill also carries the cache model run on the *recorded* requests (``modelled_recorded_*``), so a
saving can be read model-to-model where the model's own error matters.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from workbench.context.cache_model import (
    CacheRules,
    CacheSplit,
    CacheState,
    cache_note,
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


def _sum_usd(values: Sequence[float | None]) -> float | None:
    return None if any(v is None for v in values) else float(sum(v for v in values if v is not None))


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
        rows = self._rows(calls)
        p, c, w, o = (
            sum(getattr(r, k) for r in rows) for k in ("prompt", "cached", "cache_write", "completion")
        )
        return dict(
            zip(TOTAL_KEYS, (p, c, w, o, meter_spent(p, c, o), _sum_usd([r.usd for r in rows])), strict=True)
        )

    def recorded(self, calls: int | None = None) -> dict[str, Any]:
        """The recording's totals over the first ``calls`` calls (default: the whole recording)."""
        if calls is None and self.recorded_totals is not None:
            return dict(self.recorded_totals)
        rows = self._rows(calls)
        p = sum(r.recorded_prompt for r in rows)
        c = sum(r.recorded_cached for r in rows)
        w = sum(r.recorded_cache_write for r in rows)
        o = sum(r.completion for r in rows)
        return dict(
            zip(
                TOTAL_KEYS,
                (p, c, w, o, meter_spent(p, c, o), _sum_usd([r.recorded_usd for r in rows])),
                strict=True,
            )
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
    kept: dict[int, list[int]] = {}

    def on_fit(turn: int, fit: Any) -> None:
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
    for k, (i, rep) in enumerate(pieces):
        m = msgs[k]
        if turn_of[k] in masked and m.content and rep is None:
            if i not in memo:
                lines = m.content.count("\n") + 1
                placeholder = m.model_copy(update={"content": MASK_PLACEHOLDER.format(lines=lines)})
                shorter = _tokens(counts, i, placeholder, run) < _tokens(counts, i, None, run)
                memo[i] = placeholder if shorter else None
            if memo[i] is not None:
                out.append((i, memo[i]))
                continue
        elif turn_of[k] in masked and m.content and rep is not None:
            lines = m.content.count("\n") + 1
            placeholder = m.model_copy(update={"content": MASK_PLACEHOLDER.format(lines=lines)})
            if _tokens(counts, i, placeholder, run) < _tokens(counts, i, rep, run):
                out.append((i, placeholder))
                continue
        out.append((i, rep))
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
    """USD of a run's calls via ``workbench.pricing`` (genai-prices), looked up once per model and day.

    A price is linear in the fresh, cache-read, cache-write and output tokens within one price tier (genai-prices'
    tiers switch on the whole prompt), so each tier's four rates are read from genai-prices once, by pricing
    probe usages of the call's own prompt size, and every call is priced from them (a sweep prices thousands)."""

    def __init__(self, run: Run, rules: CacheRules) -> None:
        self.run, self.rules = run, rules
        # a write whose lifetime the usage does not say (a counterfactual's) is of the kind the run wrote
        self.one_hour = rules.family == "anthropic" and writes_one_hour(run, rules.one_hour)
        self._rules: dict[tuple[str | None, Any, str | None], tuple[Any, tuple[int, ...]] | None] = {}
        self._rates: dict[tuple[int, int], tuple[float, float, float, float, float] | None] = {}

    def _rule(self, k: int) -> tuple[Any, tuple[int, ...]] | None:
        """Call ``k``'s price rule (genai-prices') and the prompt sizes where its tiers start; ``None``: unpriced."""
        from workbench.pricing import price_tiers, pricer
        from workbench.trace.route import price_provider, route_of

        t = self.run.turns[k]
        model, when = t.model or self.run.model, t.started_at or self.run.started_at
        provider = price_provider(route_of(self.run, t))
        key = (model, when.date() if when is not None else None, provider)
        if key not in self._rules:
            rule = pricer(model, when, provider, one_hour_writes=self.one_hour)
            self._rules[key] = None if rule is None else (rule, price_tiers(model, when, provider))
        return self._rules[key]

    def _rate(
        self, rule: Any, starts: tuple[int, ...], prompt: int
    ) -> tuple[float, float, float, float, float] | None:
        tier = sum(prompt > s for s in starts) * 2 + (prompt in starts)
        key = (id(rule), tier)
        if key not in self._rates:
            p = max(prompt, 1)
            fresh = rule(Usage(prompt=p, completion=0))
            read = rule(Usage(prompt=p, cached=p, completion=0))
            write = rule(Usage(prompt=p, cache_write=p, cache_write_1h=0, completion=0))
            write_1h = rule(Usage(prompt=p, cache_write=p, cache_write_1h=p, completion=0))
            out = rule(Usage(prompt=p, completion=1_000_000))
            if None in (fresh, read, write, write_1h, out):
                self._rates[key] = None
            else:
                self._rates[key] = (fresh / p, read / p, write / p, write_1h / p, (out - fresh) / 1_000_000)
        return self._rates[key]

    def rates(self, k: int, prompt: int) -> tuple[float, float, float, float] | None:
        """Call ``k``'s USD per fresh, cache-read, cache-write (the run's lifetime) and output token at a prompt
        of ``prompt``."""
        found = self._rule(k)
        rates = None if found is None else self._rate(*found, prompt)
        if rates is None:
            return None
        r_in, r_read, r_write, r_write_1h, r_out = rates
        return r_in, r_read, r_write_1h if self.one_hour else r_write, r_out

    def usd(self, k: int, usage: Usage) -> float | None:
        found = self._rule(k)
        if found is None or usage.prompt is None or usage.completion is None:
            return None
        rates = self._rate(*found, usage.prompt)
        if rates is None:
            return None
        cached, write = usage.cached or 0, usage.cache_write or 0
        # a write's lifetime as recorded, else the rules' (a counterfactual's writes are the run's kind)
        one_hour = (
            usage.cache_write_1h if usage.cache_write_1h is not None else (write if self.one_hour else 0)
        )
        one_hour = min(one_hour, write)
        fresh = usage.prompt - cached - write
        r_in, r_read, r_write, r_write_1h, r_out = rates
        return (
            fresh * r_in
            + cached * r_read
            + (write - one_hour) * r_write
            + one_hour * r_write_1h
            + usage.completion * r_out
        )


# -- the bill ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedPass:
    """What a bill reads of the recording alone, whatever the policy: the anchored token counts, the prefix
    layout, each call's era, recorded blocks and reply, and the cache model's split of each recorded request (the
    model run on the recording, call after call). A grid of policies over one run reads it once
    (``recorded_pass``); every bill equals the one that computes it itself."""

    run: Run
    rules: CacheRules
    counts: AnchoredTokens
    layout: Any
    eras: list[int]
    blocks: dict[int, list[tuple[Hashable, int]]]
    replies: dict[int, Any]
    splits: dict[int, CacheSplit]


def recorded_pass(run: Run, rules: CacheRules | None = None) -> RecordedPass:
    """The recording's side of every bill of ``run`` under ``rules`` (default: the run's route's fitted rules)."""
    rules = rules or route_rules(run)
    counts = anchor(run)
    ids = counts.ids
    layout = layout_for(run, counts.prefix, rules)
    state = CacheState()
    warm_state(run, layout, state)
    era_of = eras(run)
    blocks: dict[int, list[tuple[Hashable, int]]] = {}
    replies: dict[int, Any] = {}
    splits: dict[int, CacheSplit] = {}
    for k, t in enumerate(run.turns):
        req = ids[k]
        if req is None or t.usage.prompt is None:
            continue
        # a call's split depends on the calls before it only, so a bill that stops early reads a prefix of these
        blocks[k] = [(_ident(i, None), counts.of(i)) for i in req]
        replies[k] = reply_of(run, ids, k)
        splits[k] = step(
            rules, cache_request(run, t, layout, blocks[k], rules, era=era_of[k], reply=replies[k]), state
        )
    return RecordedPass(run, rules, counts, layout, era_of, blocks, replies, splits)


def counterfactual_bill(
    run: Run,
    policy: Any = None,
    *,
    mask_observations: int | None = None,
    decay: bool = False,
    rules: CacheRules | None = None,
    prices: RunPricer | None = None,
    recorded: RecordedPass | None = None,
    mask_block: int | None = None,
) -> Bill:
    """The bill of ``run`` under ``policy``'s context length (duck-typed; ``None``: no manager), observation
    ``decay`` and ``mask_observations``. ``recorded``: the recording's side already read (``recorded_pass``), for
    a grid of policies over one run."""
    cp = ContextPolicy(
        context_length=getattr(policy, "context_length", None) if policy is not None else None,
        mask_observations=mask_observations,
        decay=decay,
        mask_block=mask_block,
    )
    rules = rules or route_rules(run)
    if recorded is None or recorded.run is not run or recorded.rules != rules:
        recorded = recorded_pass(run, rules)
    counts = recorded.counts
    ids = counts.ids
    prices = prices if prices is not None and prices.run is run else RunPricer(run, rules)
    notes: list[str] = []
    if rules.family == "none" and (why := cache_note(run)) is not None:
        notes.append(why)
    kept, ctx = _manager_requests(run, policy) if cp.context_length is not None else ({}, None)
    window = getattr(policy, "window", None) or run.context_length
    decayed = _decay_requests(run, ids, window, policy) if decay else {}
    if counts.shortfall:
        notes.append(
            f"{len(counts.shortfall)} recorded request(s) reported fewer tokens than the messages they repeat were "
            "counted at: those requests' new messages are counted as 0 tokens"
        )
    layout = recorded.layout
    cf_state = CacheState()
    warm_state(run, layout, cf_state)
    era_of = recorded.eras
    rows: list[BillRow] = []
    placeholders: dict[int, Message | None] = {}
    first_change: int | None = None
    truncated_at = getattr(ctx, "truncated_at", None)
    for k, t in enumerate(run.turns):
        req, u = ids[k], t.usage
        if req is None or u.prompt is None:
            continue
        if truncated_at is not None and t.index >= truncated_at:
            break
        recorded_pieces: list[Piece] = [(i, None) for i in req]
        if cp.context_length is not None and t.index in kept:
            # the manager's transcript (uncompacted where the source compacted), with the decay's replacements
            swap = dict(decayed.get(t.index, ())) if decay else {}
            pieces = [(i, swap.get(i)) for i in kept[t.index]]
        elif decay and t.index in decayed:
            pieces = decayed[t.index]
        else:
            pieces = list(recorded_pieces)
        if mask_observations is not None:
            pieces = mask(pieces, run, mask_observations, counts, placeholders, mask_block)
        changed = pieces != recorded_pieces
        rec_blocks = recorded.blocks[k]
        cf_blocks = [(_ident(i, rep), _tokens(counts, i, rep, run)) for i, rep in pieces]
        reply = recorded.replies[k]
        rec_split = recorded.splits[k]
        cf_split = step(
            rules, cache_request(run, t, layout, cf_blocks, rules, era=era_of[k], reply=reply), cf_state
        )
        removed = sum(b for _, b in rec_blocks) - sum(b for _, b in cf_blocks)
        if changed and first_change is None:
            first_change = t.index
        rec_cached, rec_write = u.cached or 0, u.cache_write or 0
        completion = u.completion or 0
        if first_change is None:
            prompt, cached, write = u.prompt, rec_cached, rec_write
        else:
            prompt = max(0, u.prompt - removed)
            cached, write = _fit(cf_split, prompt)
        cf_usage = Usage(prompt=prompt, cached=cached, cache_write=write or None, completion=u.completion)
        rows.append(
            BillRow(
                turn=t.index,
                changed=changed,
                sent=tuple(i for i, _ in pieces),
                replaced=tuple(i for i, rep in pieces if rep is not None),
                removed_tokens=removed,
                prompt=prompt,
                cached=cached,
                cache_write=write,
                completion=completion,
                usd=prices.usd(k, cf_usage),
                recorded_prompt=u.prompt,
                recorded_cached=rec_cached,
                recorded_cache_write=rec_write,
                recorded_usd=prices.usd(k, u),
                modelled_recorded_cached=rec_split.cached,
                modelled_recorded_cache_write=rec_split.cache_write,
                found=cf_split.found,
                coarse=cf_split.coarse,
            )
        )
    if first_change is not None:
        notes.append(
            f"the transcript first differs from the recording at turn {first_change}: later calls keep the "
            "recorded replies and completions, an approximation; the outcome under the changed transcript is unknown"
        )
    if cp.context_length is not None and any(e != 0 for e in era_of):
        notes.append(
            "the source rewrote its transcript (its own compaction): under a context length the manager's "
            "uncompacted transcript is billed instead, as the context replay reads it"
        )
    if cp.context_length is not None and (mask_observations is not None or decay):
        notes.append(
            "the manager prunes the unmasked, undecayed transcript: its budget does not count those savings"
        )
    return Bill(
        run_id=run.run_id,
        policy=cp,
        family=rules.family,
        rows=tuple(rows),
        first_change=first_change,
        truncated_at=truncated_at,
        notes=tuple(notes),
        context=ctx,
        recorded_totals=_recorded_totals(run, prices),
    )


def _recorded_totals(run: Run, prices: RunPricer) -> dict[str, Any]:
    used = [(k, t.usage) for k, t in enumerate(run.turns) if t.usage.prompt is not None]
    p = sum(u.prompt or 0 for _, u in used)
    c = sum(u.cached or 0 for _, u in used)
    w = sum(u.cache_write or 0 for _, u in used)
    o = sum(u.completion or 0 for _, u in used)
    usd = _sum_usd([prices.usd(k, u) for k, u in used])
    return dict(zip(TOTAL_KEYS, (p, c, w, o, meter_spent(p, c, o), usd), strict=True))


def _fit(split: CacheSplit, prompt: int) -> tuple[int, int]:
    """The model's read and write, within the anchored prompt."""
    cached = min(split.cached, prompt)
    write = min(split.cache_write, prompt - cached)
    return cached, write


def replay_with_bill(
    run: Run,
    policy: Any,
    *,
    mask_observations: int | None = None,
    decay: bool = False,
    rules: CacheRules | None = None,
    recorded: RecordedPass | None = None,
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
