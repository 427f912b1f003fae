"""A call's provider route: read from what the log records (provider field, base URL, response id, served
model), never from the configured model name's prefix; unknown where nothing tells (issue 21, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.analysis.cache_fit import fit_run
from workbench.context.cache_model import cache_note, rules_for
from workbench.importers import detect
from workbench.trace.route import cache_family, observed, price_provider, route_of, run_route
from workbench.trace.schema import Route, Run, Turn

GEN_ID = "gen-1746001974-alxKxkQSJ8j9QsfNTvnX"


@pytest.mark.parametrize(
    ("seen", "route", "family"),
    [
        # OpenHands' ponyc runs: a local proxy, an OpenRouter generation id, a model no vendor matches
        (
            {
                "base_url": "http://localhost:2600",
                "response_id": GEN_ID,
                "model": "meta-llama/llama-4-maverick",
            },
            Route(via="openrouter", basis="inferred", rule="base URL; OpenRouter generation id"),
            "none",
        ),
        # OpenHands' fastjson2 run: a reseller's base URL serving an OpenAI snapshot
        (
            {
                "base_url": "https://api.chatanywhere.org/v1",
                "response_id": "chatcmpl-1",
                "model": "gpt-5-2025-08-07",
            },
            Route(
                provider="openai",
                via="api.chatanywhere.org",
                basis="inferred",
                rule="base URL; the served model's vendor by genai-prices' model match",
            ),
            "openai",
        ),
        # mini-swe-agent through OpenRouter: its provider field names the upstream
        (
            {"provider": "Google", "response_id": "gen-1763508908-qvNm42be7BPiZLNMQNNX", "model": "google/x"},
            Route(
                provider="google",
                via="openrouter",
                basis="inferred",
                rule="provider; OpenRouter generation id",
                endpoint="Google",
            ),
            "gemini",
        ),
        # the other Gemini endpoint OpenRouter routes to: the same provider and key, its own cache
        (
            {
                "provider": "Google AI Studio",
                "response_id": "gen-1763508908-qvNm42be7BPiZLNMQNNX",
                "model": "g/x",
            },
            Route(
                provider="google",
                via="openrouter",
                basis="inferred",
                rule="provider; OpenRouter generation id",
                endpoint="Google AI Studio",
            ),
            "gemini",
        ),
        (
            {"provider": "Amazon Bedrock", "model": "anthropic/claude-sonnet-4"},
            Route(provider="aws", rule="provider"),
            "anthropic",
        ),
        (
            {"provider": "Google Vertex", "model": "gemini-2.5-pro"},
            Route(provider="google", rule="provider"),
            "gemini",
        ),
        (
            {"base_url": "https://api.anthropic.com", "model": "x"},
            Route(provider="anthropic", rule="base URL"),
            "anthropic",
        ),
        (
            {"base_url": "https://openrouter.ai/api/v1", "model": "qwen/qwen3-coder"},
            Route(via="openrouter", rule="base URL"),
            "none",
        ),
        ({"provider": "litellm", "model": "mystery"}, Route(via="litellm", rule="provider"), "none"),
        (
            {"provider": "DeepSeek", "model": "deepseek-chat"},
            Route(provider="deepseek", rule="provider"),
            "none",
        ),
        # the LiteLLM prefix is not read: "openai/" is the client's protocol, not the route
        ({"model": "openai/openrouter-llama-4-maverick"}, None, "none"),
        ({"model": "qwen3-coder"}, None, "none"),
    ],
)
def test_a_route_is_read_from_what_the_log_records(seen: dict, route: Route | None, family: str) -> None:
    got = observed(**seen)
    assert got == route
    assert cache_family(got, seen.get("model"))[0] == family


def test_an_unknown_route_assumes_no_cache_and_says_so() -> None:
    run = Run(
        run_id="r", source="openhands", model="openai/openrouter-llama-4-maverick", turns=[Turn(index=0)]
    )
    assert run_route(run) is None and rules_for(run).family == "none"
    assert (
        cache_note(run) == "the provider route is not recorded: no prompt cache assumed (route: not recorded)"
    )
    run.turns[0].route = Route(via="openrouter", basis="inferred")
    assert cache_note(run) == (
        "the provider behind openrouter is not recorded: no prompt cache assumed (route: unknown via openrouter)"
    )


def test_a_turn_without_a_route_takes_its_models_vendor_as_an_inference() -> None:
    run = Run(run_id="r", source="native", model="claude-sonnet-4-5", turns=[Turn(index=0)])
    r = route_of(run, run.turns[0])
    assert r is not None and (r.provider, r.via, r.basis) == ("anthropic", None, "inferred")
    assert r.key == "anthropic" and rules_for(run).family == "anthropic"


def test_route_keys_group_provider_and_gateway() -> None:
    assert Route(provider="google", via="openrouter").key == "google via openrouter"
    assert Route(via="localhost:2600").key == "unknown via localhost:2600"
    assert Route(provider="openai").key == "openai"
    assert price_provider(Route(provider="google", via="openrouter")) == "openrouter"
    assert price_provider(Route(provider="openai", via="api.chatanywhere.org")) == "openai"


def test_the_route_survives_the_native_round_trip(tmp_path: Path) -> None:
    from workbench.trace.native import read_run, write_run

    route = Route(
        provider="google", via="openrouter", basis="inferred", rule="provider; OpenRouter generation id"
    )
    run = Run(run_id="r", source="native", turns=[Turn(index=0, route=route), Turn(index=1)])
    path = tmp_path / "r.jsonl"
    write_run(run, path)
    back = read_run(path)
    assert [t.route for t in back.turns] == [route, None]


def test_openhands_llama_runs_through_openrouter_predict_no_cache(shared: Path) -> None:
    """The issue's real case: three llama-4-maverick runs named ``openai/openrouter-llama-4-maverick``; modelled as
    OpenAI they predicted 1,838,208 cached tokens. Their responses report no cache read (``prompt_tokens_details``
    null; OpenHands' metrics write a default 0): the read is unknown on every call, never a recorded 0."""
    path = shared / "openhands" / "multi_swe_bench_ponyc.output.jsonl"
    runs = detect(path).load(path)
    assert [len(r.turns) for r in runs] == [23, 33, 49]
    for run in runs:
        assert {t.route.key for t in run.turns if t.route} == {"unknown via openrouter"}
        assert rules_for(run).family == "none"
        rows = fit_run(run)
        assert sum(r.predicted_cached for r in rows) == 0
        assert {r.recorded_cached for r in rows} == {None}


def test_real_routes_per_format(shared: Path) -> None:
    gpt5 = detect(p := shared / "openhands" / "fastjson2_gpt5.output.jsonl").load(p)[0]
    assert {t.route.key for t in gpt5.turns} == {"openai via api.chatanywhere.org"}
    codex = next(iter((shared / "codex-cli").glob("*.jsonl")))
    run = detect(codex).load(codex)[0]
    assert {t.route for t in run.turns} == {Route(provider="openai", rule="session_meta.model_provider")}
    traj = sorted((shared / "mini-swe-agent" / "trajs").glob("*/*.traj.json"))[0]
    mini = detect(traj).load(traj)[0]
    assert {t.route.key for t in mini.turns} == {"google via openrouter"} and rules_for(
        mini
    ).family == "gemini"


def test_a_configured_protocol_beside_an_unknown_endpoint_does_not_name_the_server() -> None:
    """LiteLLM's custom_llm_provider or Inspect's ``openai/`` beside a local base URL name the protocol spoken,
    not who served the call; a gateway's own report (OpenRouter's ``provider``) does name it."""
    local = "http://localhost:8000/v1"
    assert observed(provider="openai", base_url=local, model="Qwen/Qwen3-8B", configured=True) == Route(
        via="localhost:8000", rule="base URL"
    )
    assert observed(provider="openai", base_url=local, model="Qwen/Qwen3-8B") == Route(
        provider="openai", via="localhost:8000", rule="provider; base URL"
    )
    assert observed(provider="anthropic", model="claude-sonnet-4-5", configured=True) == Route(
        provider="anthropic", rule="provider"
    )
