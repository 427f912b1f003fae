"""Which provider a model call went through, and what that means for its prompt cache (docs/trace-format.md,
"Routes": read from the log, strongest first — the provider a gateway reports, the base URL, a response id only
one gateway writes, the served model's vendor — never from a prefix of the model's name). What none of these
tells stays unknown: :func:`cache_family` then assumes no cache and says so."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from workbench.trace.schema import Route

if TYPE_CHECKING:
    from workbench.trace.schema import Run, Turn

# The prompt-cache families workbench.context.cache_model models; named here, below it, because a route's family
# is a fact of the route (docs/architecture.md, "Layers": the cache model imports the route, never back).
Family = Literal["anthropic", "openai", "gemini", "none"]
FAMILIES: tuple[Family, ...] = ("anthropic", "openai", "gemini", "none")

# OpenRouter's generation ids: "gen-<unix seconds>-<random>" (openrouter.ai/docs/api-reference/get-a-generation).
OPENROUTER_ID = re.compile(r"^gen-\d{9,11}-[A-Za-z0-9]+$")
# OpenRouter's provider display names (its `provider` field) that are not a genai-prices provider id once
# lower-cased; the rest (OpenAI, Anthropic, Google, DeepSeek, Mistral, Groq, Together, Fireworks …) are.
PROVIDER_ALIASES = {
    "google ai studio": "google",
    "google vertex": "google",
    "google-vertex": "google",
    "vertex_ai": "google",
    "vertex": "google",
    "gemini": "google",
    "amazon bedrock": "aws",
    "bedrock": "aws",
    "azure openai": "azure",
    "azureai": "azure",
    "grok": "x-ai",
    "xai": "x-ai",
    "together ai": "together",
    "fireworks ai": "fireworks",
    "meta": "meta",
}
# Gateways: a provider id that routes calls on to others (its own bill, someone else's cache).
GATEWAYS = frozenset({"openrouter", "litellm"})
VENDOR_RULE = "the model's vendor by genai-prices' model match; a direct call assumed"


@lru_cache(maxsize=1)
def _snapshot() -> Any:
    from genai_prices.data_snapshot import get_snapshot

    return get_snapshot()


@lru_cache(maxsize=4096)
def provider_id(name: str | None) -> str | None:
    """A recorded provider name as genai-prices' provider id (``Google AI Studio`` -> ``google``), or the
    name lower-cased when genai-prices does not know it; ``None`` for no name."""
    if not isinstance(name, str) or not name.strip():
        return None
    key = name.strip().lower()
    key = PROVIDER_ALIASES.get(key, key)
    try:
        return str(_snapshot().find_provider(None, key, None).id)
    except LookupError:
        return key.replace(" ", "-")


@lru_cache(maxsize=4096)
def vendor_of(model: str | None) -> str | None:
    """The provider genai-prices' model match names for ``model`` (``claude-opus-4-6`` -> ``anthropic``), or
    ``None`` when none matches (``openrouter-llama-4-maverick``). A match on the whole name: a router's prefix is
    not read apart."""
    if not isinstance(model, str) or not model:
        return None
    try:
        return str(_snapshot().find_provider(model, None, None).id)
    except LookupError:
        return None


@lru_cache(maxsize=1024)
def endpoint(base_url: str | None) -> tuple[str | None, str | None]:
    """``(provider, host)`` of a base URL: the genai-prices provider whose API pattern it matches, else
    ``(None, host)``. ``(None, None)`` for no URL."""
    if not isinstance(base_url, str) or not base_url.strip():
        return None, None
    url = base_url.strip()
    if "://" not in url:
        url = "https://" + url
    host = urlsplit(url).netloc or None
    for p in _snapshot().providers:
        if re.match(p.api_pattern, url):
            return str(p.id), host
    return None, host


def observed(
    *,
    provider: str | None = None,
    provider_field: str = "provider",
    base_url: str | None = None,
    response_id: str | None = None,
    model: str | None = None,
    configured: bool = False,
) -> Route | None:
    """The route of one call from what its log records (docs/trace-format.md, "Routes": strongest first).
    ``provider_field`` names the field ``provider`` was read from (the route's ``rule``); ``model`` is the
    served model's name (the response's ``model``, else the configured one). ``configured``: ``provider`` is the
    client's setting (LiteLLM's ``custom_llm_provider``, Inspect's model prefix), not a gateway's report; beside a
    base URL no provider's pattern matches it names only the protocol spoken (``openai`` to a local vLLM), so the
    served provider is then left to the served model's vendor."""
    gen_id = isinstance(response_id, str) and OPENROUTER_ID.match(response_id) is not None
    return _observed(provider, provider_field, base_url, gen_id, model, configured)


@lru_cache(maxsize=4096)
def _observed(
    provider: str | None,
    provider_field: str,
    base_url: str | None,
    gen_id: bool,
    model: str | None,
    configured: bool = False,
) -> Route | None:
    url_provider, host = endpoint(base_url)
    if configured and url_provider is None and host is not None:
        provider = None  # a protocol setting beside an unknown endpoint: who served the call is not told
    served = provider_id(provider)
    rules: list[str] = [provider_field] if served is not None else []
    inferred = False
    via: str | None = None
    if url_provider in GATEWAYS:
        via = url_provider
    elif url_provider is not None:
        served = served or url_provider
    else:
        via = host
    if base_url and (via is not None or served == url_provider):
        rules.append("base URL")
    if served in GATEWAYS:  # a gateway named as the provider: where it sent the call is still untold
        via, served = served, None
    if gen_id and via != "openrouter":
        via = "openrouter"  # a proxy in front of OpenRouter (its host kept in no field: the bill is OpenRouter's)
        rules.append("OpenRouter generation id")
        inferred = True
    if served is None:
        vendor = vendor_of(model)
        if vendor is not None and vendor not in GATEWAYS:
            served = vendor
            rules.append("the served model's vendor by genai-prices' model match")
            inferred = True
    if served is None and via is None:
        return None
    # a gateway's own name for where it sent the call (its caches are apart from another endpoint's)
    reported = via in GATEWAYS and served is not None and not configured and provider_field in rules
    served_by = provider.strip() if reported and provider is not None else None
    return Route(
        provider=served,
        via=via,
        basis="inferred" if inferred else "recorded",
        rule="; ".join(rules) or None,
        endpoint=served_by,
    )


def route_of(run: Run, turn: Turn) -> Route | None:
    """The turn's route: the one its importer recorded or inferred, else its model's vendor (the last rule, a
    direct call assumed), else ``None`` (unknown)."""
    if turn.route is not None:
        return turn.route
    vendor = vendor_of(turn.model or run.model)
    return _vendor_route(vendor) if vendor is not None else None


@lru_cache(maxsize=256)
def _vendor_route(vendor: str) -> Route:
    if vendor in GATEWAYS:
        return Route(provider=None, via=vendor, basis="inferred", rule=VENDOR_RULE)
    return Route(provider=vendor, basis="inferred", rule=VENDOR_RULE)


def run_route(run: Run) -> Route | None:
    """The route most of the run's calls went through (ties: the first call's); ``None`` when most are unknown
    or the run has no calls and its model matches no vendor."""
    if not run.turns:
        vendor = vendor_of(run.model)
        return _vendor_route(vendor) if vendor else None
    counts = Counter(route_of(run, t) for t in run.turns)
    return max(counts, key=lambda r: counts[r])


def cache_family(route: Route | None, model: str | None = None) -> tuple[Family, str | None]:
    """The prompt-cache family of calls on ``route`` and, when it assumes no cache, why. ``model``: the served
    model, for clouds that serve several vendors' models (Claude on Bedrock or Vertex caches as Anthropic)."""
    if route is None:
        return "none", "the provider route is not recorded: no prompt cache assumed"
    p = route.provider
    if p is None:
        return "none", f"the provider behind {route.via} is not recorded: no prompt cache assumed"
    if p == "anthropic":
        return "anthropic", None
    if p in ("openai", "azure"):
        return "openai", None
    if p in ("google", "aws"):
        if vendor_of(model) == "anthropic":
            return "anthropic", None
        if p == "google":
            return "gemini", None
    return "none", f"no prompt-cache model for provider {p}: no prompt cache assumed"


def price_provider(route: Route | None) -> str | None:
    """The genai-prices provider whose prices the call paid: the gateway's when it bills (OpenRouter), else the
    serving provider's; ``None`` when unknown (genai-prices then matches by model)."""
    if route is None:
        return None
    if route.via == "openrouter":
        return "openrouter"
    return route.provider


def stamp(
    turns: list[Turn],
    *,
    provider: str | None = None,
    provider_field: str = "provider",
    base_url: str | None = None,
    model: str | None = None,
    configured: bool = False,
) -> None:
    """Give each turn without a route the one :func:`observed` reads from the run's recorded client settings
    and the turn's own response id and served model (``model``: the configured name, for turns without one)."""
    for t in turns:
        if t.route is None:
            t.route = observed(
                provider=provider,
                provider_field=provider_field,
                base_url=base_url,
                response_id=t.response_id,
                model=t.model or model,
                configured=configured,
            )
