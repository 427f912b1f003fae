"""Dollars: what each model call cost, priced by the `genai-prices` database at the call's date (docs/pricing.md:
which usage field is which token class, names normalised, cache writes at their lifetime's rate, the route's prices).

A call no price covers, or whose usage is unknown, prices as unknown (``None``) with a note, never as 0.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.trace.schema import Run, Usage


@dataclass(frozen=True, slots=True)  # the price memo holds one a call: 88 bytes with slots, 128 without
class Price:
    """One call's price in USD and the model and provider the database matched."""

    usd: float
    model: str
    provider: str


# A trailing release date: Anthropic's ``-20250929``, OpenAI's ``-2024-08-06``, Vertex's ``@20250929``.
_DATE_SUFFIX = re.compile(r"(?:[-@](?:20\d{2}-?[01]\d-?[0-3]\d)|@latest|@default)$")
_ROUTE_PREFIXES = ("openrouter/", "litellm_proxy/", "bedrock/", "vertex_ai/", "azure/")


def normalise_model(model: str | None, *, keep_date: bool = False) -> str | None:
    """The name a model is grouped under, whatever route recorded it: no ``@`` route marker
    (``@google/gemini-3-pro-preview``), no router or provider prefix (``openrouter/``, ``anthropic/``,
    ``google/``), lower case, and (unless ``keep_date``) no release-date suffix (``claude-sonnet-4-5-20250929``
    -> ``claude-sonnet-4-5``). ``None`` stays ``None``: an unrecorded model is not guessed."""
    if model is None:
        return None
    name, last = _normalised_once(model, keep_date), model
    for _ in range(len(model)):  # to a fixed point (each pass only shortens), so normalising is idempotent
        if name == last:
            break
        name, last = _normalised_once(name, keep_date), name
    return name or model


def _normalised_once(model: str, keep_date: bool) -> str:
    name = model.strip().lower().lstrip("@")
    for prefix in _ROUTE_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
    name = name.rsplit("/", 1)[-1]
    if name.startswith("claude-"):
        name = re.sub(r"(?<=\d)\.(?=\d)", "-", name)  # OpenRouter's claude-sonnet-4.5 is Anthropic's 4-5
    if not keep_date:
        name = _DATE_SUFFIX.sub("", name)
    return name


@dataclass(frozen=True)
class ModelCost:
    """One model's share of a run: the normalised name, the names it was recorded under, calls and USD."""

    model: str
    raw: tuple[str, ...]
    calls: int
    priced_calls: int
    usd: float | None
    """``None`` unless every call of this model could be priced."""


@dataclass(frozen=True)
class RunCost:
    """A run's price: the workbench's (``usd``) beside the one its source recorded (``recorded_usd``).

    ``usd`` is ``None`` unless every call with known usage could be priced; ``priced_usd`` sums the calls that
    could be (a lower bound when some could not).
    """

    usd: float | None
    priced_usd: float
    priced_calls: int
    unpriced_calls: int
    recorded_usd: float | None
    models: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    by_model: tuple[ModelCost, ...] = ()
    """Per model (normalised name, most expensive first): a mixed session (opus with haiku) is broken down."""


def _candidates(model: str) -> list[str]:
    names = [model]
    if "/" in model:
        names.append(model.rsplit("/", 1)[1])
    for name in (normalise_model(model, keep_date=True), normalise_model(model)):
        if name and name not in names:
            names.append(name)
    return names


def _gusage(
    prompt: int | None,
    completion: int | None,
    cached: int | None,
    cache_write: int | None,
    cache_write_1h: int | None,
):
    """genai-prices' usage for recorded counts: the one-hour part of the cache write apart (genai-prices'
    ``cache_write_1h_tokens``, a part of ``cache_write_tokens``)."""
    from genai_prices import Usage as GUsage

    write = cache_write or 0
    return GUsage(
        input_tokens=prompt,
        output_tokens=completion,
        cache_read_tokens=cached or None,
        cache_write_tokens=write or None,
        cache_write_1h_tokens=min(cache_write_1h or 0, write) or None,
    )


@lru_cache(maxsize=4096)
def _resolve(model: str, provider: str | None) -> tuple[str, str | None] | None:
    """The (model_ref, provider_id) under which genai-prices knows ``model``, or ``None``."""
    from genai_prices import Usage as GUsage
    from genai_prices import calc_price

    probe = GUsage(input_tokens=1, output_tokens=1)
    for name in _candidates(model):
        for prov in (provider, None) if provider else (None,):
            try:
                _quiet(calc_price, probe, model_ref=name, provider_id=prov)
            except LookupError:
                continue
            return name, prov
    return None


def price_usage(
    model: str | None, usage: Usage, when: datetime | None = None, provider: str | None = None
) -> Price | None:
    """The USD price of one call, or ``None`` when its model is not in the database or its usage unknown."""
    u = usage
    if not model or u.prompt is None or u.completion is None:
        return None
    return _price(model, provider, when, u.prompt, u.completion, u.cached, u.cache_write, u.cache_write_1h)


PRICE_MEMO = 1 << 19
"""Prices remembered: a report prices every call of its corpus about a dozen times (the frontier's ledger, the own
limits, the calibration), so the memo holds one entry per call of 100 copies of the shared traces (495,900 calls;
about 460 bytes an entry, 230 MB when full). The 32,768 it held before were fewer than 10 copies' 49,590 calls:
each section's pass evicted the last's, and a quarter of the lookups missed (147,666 where 49,590 are distinct)."""


@lru_cache(maxsize=PRICE_MEMO)
def _price(
    model: str,
    provider: str | None,
    when: datetime | None,
    prompt: int,
    completion: int,
    cached: int | None,
    cache_write: int | None,
    cache_write_1h: int | None,
) -> Price | None:
    """``price_usage`` of the usage these counts make, remembered: a replay grid prices each run's calls again
    under every policy (the dollar meter, ``govern.dollars.call_dollars``). The key is every input the price
    reads, so a hit is the same figure (``PRICE_MEMO``). Where the counts are a usage genai-prices accepts, its
    figure comes from the tier's exact rates (``_linear``): its general pricing takes about 0.1 ms a call."""
    found = _resolve(model, provider)
    if found is None:
        return None
    from genai_prices import data_snapshot

    name, prov = found
    read, write = cached or 0, cache_write or 0
    one_hour = min(cache_write_1h or 0, write)
    if prompt > 0 and min(completion, read, write, prompt - read - write) >= 0:
        via, info = data_snapshot.get_snapshot().find_provider_model(name, None, prov, None)
        # (Groq's audio models are billed by a rule of genai-prices' own)
        rates = None if via.id == "groq" else _linear(info.get_prices(when or datetime.now(tz=UTC)), prompt)
        if rates is not None:
            c0, r_in, d_read, d_write, d_write_1h, r_out = rates
            usd = c0 + r_in * prompt + d_read * read + d_write * (write - one_hour) + d_write_1h * one_hour
            return Price(usd=float(usd + r_out * completion), model=info.id, provider=via.id)
    return _general(name, prov, when, _gusage(prompt, completion, cached, cache_write, cache_write_1h))


def _general(name: str, prov: str | None, when: datetime | None, usage: Any) -> Price | None:
    """genai-prices' general pricing of a usage (what ``_price`` gives where the tier's rates do not serve)."""
    from genai_prices import calc_price

    try:
        calc = _quiet(calc_price, usage, model_ref=name, provider_id=prov, genai_request_timestamp=when)
    except (LookupError, ValueError):
        return None
    return Price(usd=float(calc.total_price), model=calc.model.id, provider=calc.provider.id)


_RATES: dict[tuple[int, int], tuple[object, tuple[Decimal, ...] | None]] = {}
"""Per (price rule, tier): the rule (held, so its id is not reused) and its rates (``_linear``)."""


def _linear(rule: Any, prompt: int) -> tuple[Decimal, ...] | None:
    """A price rule's exact linear form in the tier of a ``prompt``-token prompt: USD per request and per fresh
    token, what a cache-read, a cache-write and a one-hour-write token add to a fresh one, USD per output token.
    genai-prices prices a usage as a Decimal sum of ``count x price / per`` over linear parts of the usage, its
    tier chosen by the whole prompt, so differences of its prices within the tier are these rates exactly (each a
    short decimal: the divisions are exact), and their sum is its own figure (tests/pricing/test_linear.py).
    ``None`` where genai-prices refuses the tier, or the tier holds one prompt size."""
    starts = _tier_starts(rule)
    tier = sum(prompt > s for s in starts)  # genai-prices: the highest tier whose start the prompt exceeds
    if (id(rule), tier) not in _RATES:
        other = prompt - 1 if prompt - 1 > (starts[tier - 1] if tier else -1) else prompt + 1
        rates = None
        if tier == len(starts) or other <= starts[tier]:
            with contextlib.suppress(LookupError, ValueError):
                p0 = _exact(rule, prompt)
                r_in = (p0 - _exact(rule, other)) / (prompt - other)
                parts = ({"cached": prompt}, {"write": prompt}, {"write": prompt, "write_1h": prompt},
                         {"completion": prompt})  # fmt: skip
                rates = (
                    p0 - r_in * prompt,
                    r_in,
                    *((_exact(rule, prompt, **k) - p0) / prompt for k in parts),
                )
        _RATES[(id(rule), tier)] = (rule, rates)
    return _RATES[(id(rule), tier)][1]


def _exact(
    rule: Any, prompt: int, cached: int = 0, write: int = 0, write_1h: int = 0, completion: int = 0
) -> Any:
    return _quiet(rule.calc_price, _gusage(prompt, completion, cached, write, write_1h))["total_price"]


def _quiet(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``f(...)`` with genai-prices' warnings (an unsupported price key, a model's date) kept off the output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


def _tier_starts(rule: Any) -> tuple[int, ...]:
    """The prompt sizes at which a rule's prices switch tier (genai-prices' ``TieredPrices``)."""
    from genai_prices.types import TieredPrices

    return tuple(
        sorted({t.start for v in vars(rule).values() if isinstance(v, TieredPrices) for t in v.tiers})
    )


def recorded_cost(run: Run) -> float | None:
    """What the source recorded the run cost: the sum of per-call costs, else the run's recorded total."""
    known = [t.usage.cost for t in run.turns if t.usage.cost is not None]
    if known and len(known) == len(run.turns):
        return float(sum(known))
    if run.recorded_cost_usd is not None:
        return run.recorded_cost_usd
    return float(sum(known)) if known else None


def run_cost(run: Run, provider: str | None = None) -> RunCost:
    """Price every call of ``run`` at its date and compare with what the source recorded. ``provider``
    overrides every call's route."""
    priced = 0
    unpriced = 0
    total = 0.0
    unknown_usage = 0
    unknown_models: set[str] = set()
    models: set[str] = set()
    from workbench.trace.route import price_provider, route_of

    per: dict[str, list] = {}  # normalised name -> [raw names, calls, priced calls, usd]
    for t in run.turns:
        model = t.model or run.model
        share = per.setdefault(normalise_model(model) or "(no model recorded)", [set(), 0, 0, 0.0])
        share[0].add(model or "(no model recorded)")
        share[1] += 1
        if t.usage.prompt is None or t.usage.completion is None:
            unknown_usage += 1
            unpriced += 1
            continue
        via = provider or price_provider(route_of(run, t))
        p = price_usage(model, t.usage, t.started_at or run.started_at, via)
        if p is None:
            unpriced += 1
            unknown_models.add(model or "(no model recorded)")
            continue
        priced += 1
        total += p.usd
        share[2] += 1
        share[3] += p.usd
        models.add(f"{p.provider}:{p.model}")
    notes = []
    if unknown_models:
        notes.append(f"no price known for {', '.join(sorted(unknown_models))}: those calls priced as unknown")
    if unknown_usage:
        notes.append(f"{unknown_usage} call(s) without recorded usage cannot be priced")
    return RunCost(
        usd=total if unpriced == 0 and run.turns else None,
        priced_usd=total,
        priced_calls=priced,
        unpriced_calls=unpriced,
        recorded_usd=recorded_cost(run),
        models=tuple(sorted(models)),
        notes=tuple(notes),
        by_model=tuple(
            sorted(
                (
                    ModelCost(name, tuple(sorted(raw)), calls, ok, usd if ok == calls else None)
                    for name, (raw, calls, ok, usd) in per.items()
                ),
                key=lambda m: (-(m.usd or 0.0), m.model),
            )
        ),
    )


def price_epoch(model: str | None, when: datetime | None, provider: str | None = None) -> tuple[bool, ...]:
    """Which constraints on ``model``'s prices hold at ``when`` (start dates, time-of-day windows such as DeepSeek's
    off-peak hours): calls with the same epoch are priced by one rule (``price_rule``). ``()``: unknown."""
    found = _resolve(model, provider) if model else None
    if found is None or when is None:
        return ()
    from genai_prices import data_snapshot

    info = data_snapshot.get_snapshot().find_provider_model(found[0], None, found[1], None)[1]
    priced = [*(info.prices if isinstance(info.prices, list) else ()), *(info.price_variants or ())]
    return tuple(p.constraint is not None and p.constraint.active(when) for p in priced)


def price_rule(
    model: str | None, when: datetime | None = None, provider: str | None = None
) -> tuple[Callable[..., float], tuple[int, ...]] | None:
    """The price of many calls of one model on one day, without looking the model up again for every call:
    ``price(prompt, cached, cache_write, cache_write_1h, completion) -> USD`` (the same figure as
    ``price_usage``), and the prompt sizes at which its prices switch tier (genai-prices' ``TieredPrices``:
    crossing a tier prices *all* tokens at its rate; ``()`` when it has none); ``None`` when unknown."""
    found = _resolve(model, provider) if model else None
    if found is None:
        return None
    from genai_prices import Usage as GUsage
    from genai_prices import calc_price

    try:
        probe = GUsage(input_tokens=1, output_tokens=1)
        rule = _quiet(
            calc_price, probe, model_ref=found[0], provider_id=found[1], genai_request_timestamp=when
        )
    except (LookupError, ValueError):
        return None

    def price(prompt: int, cached: int = 0, write: int = 0, write_1h: int = 0, completion: int = 0) -> float:
        return float(_exact(rule.model_price, prompt, cached, write, write_1h, completion))

    return price, _tier_starts(rule.model_price)
