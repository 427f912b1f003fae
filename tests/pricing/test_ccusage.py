"""The workbench's dollars against ccusage's: the same formula on the same rates, session by session.

``ccusage_reference`` restates ccusage's Claude Code pricing from its source (provenance there). The workbench
prices with genai-prices (``workbench.pricing``); these tests hold (1) the restatement to ccusage's own unit
figures, (2) genai-prices' rates to ccusage's, rate by rate, naming any that differs, and (3) ``workbench inspect
--json`` ``cost_usd`` to ccusage's per-session USD on the shared Claude Code files within 0.5%.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.pricing.ccusage_reference import RATES, Rates, entry_cost, per_file, tiered
from workbench.pricing import price_usage
from workbench.trace.schema import Usage

REPO = Path(__file__).resolve().parents[2]
WHEN = datetime(2026, 2, 1, tzinfo=UTC)  # the shared sessions' month
MODELS = {"claude-opus-4-6": "claude-opus-4-6", "claude-haiku-4-5": "claude-haiku-4-5-20251001",
          "claude-sonnet-4-5": "claude-sonnet-4-5-20250929"}  # fmt: skip


def test_the_restatement_reproduces_ccusage_unit_figures() -> None:
    """cost.rs's own tests: 5m/1h split priced 10*1.25 + 20*(2*1) + 30*0.1 = 55.5; no split: 10*1.25 = 12.5."""
    rates = Rates(1.0, 10.0, 1.25, 0.1, (2.0, 10.0, 1.5, 0.1))
    split = {"cache_creation_input_tokens": 999, "cache_read_input_tokens": 30,
             "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 20}}  # fmt: skip
    assert entry_cost(rates, split) == pytest.approx(55.5)
    assert entry_cost(rates, {"cache_creation_input_tokens": 10}) == pytest.approx(12.5)
    assert tiered(250_000, 1.0, 2.0) == 200_000 + 100_000


def _rates_of(model: str) -> dict[str, float]:
    """genai-prices' per-token rates for ``model`` through ``workbench.pricing``, read off probe calls."""
    n = 1000

    def usd(**kw: int) -> float:
        p = price_usage(model, Usage(**kw), WHEN)
        assert p is not None, model
        return p.usd

    fresh = usd(prompt=n, completion=0)
    return {
        "input": fresh / n,
        "output": (usd(prompt=n, completion=n) - fresh) / n,
        "cache write (5 minutes)": usd(prompt=n, cache_write=n, cache_write_1h=0, completion=0) / n,
        "cache write (1 hour)": usd(prompt=n, cache_write=n, cache_write_1h=n, completion=0) / n,
        "cache read": usd(prompt=n, cached=n, completion=0) / n,
    }


def _ccusage_rates(r: Rates) -> dict[str, float]:
    return {"input": r.input, "output": r.output, "cache write (5 minutes)": r.cache_write,
            "cache write (1 hour)": r.cache_write_1h, "cache read": r.cache_read}  # fmt: skip


def differing_rates(model: str) -> list[str]:
    """Each rate where genai-prices and ccusage differ by more than 0.5%, named with both figures."""
    ours, theirs = _rates_of(MODELS[model]), _ccusage_rates(RATES[model])
    return [
        f"{model} {k}: workbench ${ours[k] * 1e6:.4f}/MTok, ccusage ${theirs[k] * 1e6:.4f}/MTok"
        for k in theirs
        if abs(ours[k] - theirs[k]) > 0.005 * theirs[k]
    ]


@pytest.mark.parametrize("model", sorted(RATES))
def test_genai_prices_rates_equal_ccusage_rates(model: str) -> None:
    assert differing_rates(model) == []
    # the one-hour write is twice the input rate, the five-minute one 1.25 times
    rates = _rates_of(MODELS[model])
    assert rates["cache write (1 hour)"] == pytest.approx(2 * rates["input"])
    assert rates["cache write (5 minutes)"] == pytest.approx(1.25 * rates["input"])


def test_a_mixed_session_is_priced_per_model_and_per_lifetime(tmp_path: Path) -> None:
    """A hand-written session: an opus call writing one-hour entries, a haiku call writing five-minute ones.
    ``inspect --json`` prices each at its own rates and breaks the session down per model."""
    lines = []
    for i, (model, w5, w1) in enumerate(
        (("claude-opus-4-6", 0, 10_000), ("claude-haiku-4-5-20251001", 4_000, 0))
    ):
        usage = {"input_tokens": 100, "cache_read_input_tokens": 20_000, "output_tokens": 500,
                 "cache_creation_input_tokens": w5 + w1,
                 "cache_creation": {"ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1}}  # fmt: skip
        lines.append({"type": "user", "uuid": f"u{i}", "parentUuid": f"a{i - 1}" if i else None,
                      "sessionId": "s1", "timestamp": f"2026-02-01T10:0{i}:00Z",
                      "message": {"role": "user", "content": f"step {i}"}})  # fmt: skip
        lines.append({"type": "assistant", "uuid": f"a{i}", "parentUuid": f"u{i}", "sessionId": "s1",
                      "requestId": f"r{i}", "timestamp": f"2026-02-01T10:0{i}:30Z",
                      "message": {"id": f"m{i}", "role": "assistant", "model": model, "usage": usage,
                                  "content": [{"type": "text", "text": "ok"}]}})  # fmt: skip
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (run,) = _inspect(path)["runs"]
    opus = 100 * 5e-6 + 20_000 * 0.5e-6 + 10_000 * 10e-6 + 500 * 25e-6  # the 1h write at 2 x $5
    haiku = 100 * 1e-6 + 20_000 * 0.1e-6 + 4_000 * 1.25e-6 + 500 * 5e-6  # the 5m write at 1.25 x $1
    assert run["cost_usd"] == pytest.approx(opus + haiku, rel=1e-9)
    assert run["cost_usd"] == pytest.approx(per_file(tmp_path)[path], rel=1e-9)
    assert [(m["model"], m["raw"], m["calls"]) for m in run["models"]] == [
        ("claude-opus-4-6", ["claude-opus-4-6"], 1),
        ("claude-haiku-4-5", ["claude-haiku-4-5-20251001"], 1),
    ]
    assert [m["cost_usd"] for m in run["models"]] == [pytest.approx(opus), pytest.approx(haiku)]


def _inspect(*paths: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "workbench", "inspect", "--json", *map(str, paths)],
        capture_output=True, text=True, cwd=REPO, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


@pytest.mark.real
def test_inspect_agrees_with_ccusage_per_session(shared: Path) -> None:
    root = shared / "claude-code"
    if not root.is_dir():
        pytest.skip("../shared/traces/claude-code is absent")
    theirs = per_file(root)
    runs = _inspect(root)["runs"]
    # every file with usage is a run, and only those
    assert {Path(r["source_file"]) for r in runs} == set(theirs)
    off = []
    for r in runs:
        want = theirs[Path(r["source_file"])]
        if r["cost_usd"] is None or abs(r["cost_usd"] - want) > 0.005 * want:
            models = sorted({m["model"] for m in r["models"]})
            named = [d for m in models for d in differing_rates(m)]
            off.append(
                f"{r['run_id']}: workbench {r['cost_usd']}, ccusage {want:.6f}; rates: {named or 'same'}"
            )
    assert off == []
    # ccusage's session report groups a session with its subagents (their folder): the same within 0.5%
    ours: dict[str, float] = defaultdict(float)
    ref: dict[str, float] = defaultdict(float)
    for r in runs:
        ours[r["parent_run_id"] or r["run_id"]] += r["cost_usd"]
    for path, usd in theirs.items():
        ref[path.parent.parent.name if path.parent.name == "subagents" else path.stem] += usd
    assert len(ref) == len(ours) == 9  # 6 sessions with subagent folders, 3 lone files
    for r in runs:
        if r["parent_run_id"] is None:
            assert ours[r["run_id"]] == pytest.approx(ref[Path(r["source_file"]).stem], rel=0.005)
    # the session the issue measured: $11.85 (it was $10.54 with one-hour writes at the five-minute rate)
    session = next(r for r in runs if r["run_id"] == "258c7280-ae70-4798-800f-63464d01a85d")
    assert f"${session['cost_usd']:,.2f}" == "$11.85"
    # the mixed session names both of its models
    mixed = next(r for r in runs if r["run_id"] == "ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    assert {m["model"] for m in mixed["models"]} == {"claude-opus-4-6", "claude-haiku-4-5"}
