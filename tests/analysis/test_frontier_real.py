"""The frontier on the shared labelled SWE-bench runs, against a count made independently with plain ``json``.

The independent count reads each ``trajs/<id>/<id>.traj.json`` and the sb-cli report itself, with none of the
workbench's code: a call is an assistant message carrying ``extra.response.usage``; the cost meter is the seed's
``spent()`` on the cumulative totals (fresh prompt + 10% of cache reads, rounded down + completion); a landing
starts after the first call that ran a command (mini-swe-agent's rule: exactly one fenced bash block; a reply
with none or several is a format error, not a tool turn) with the cumulative spend at or over the grant, and allows
at most 4 more calls that run a command, fewer once the meter passes the crossing's meter + 20% of the grant (a
format-error reply the agent answered is no ending and no landing call: issue 21). A resolved run is **kept** when no call reaches the grant, **at risk** when the recording ends
within the landing's allowance, **lost** when the landing ends before the recording does.

The one place the replay and this cost-only count differ is a guard the count does not model: the no-progress
guard stops ``sympy__sympy-15976`` at the same turn under every grant (it repeats an identical call), so the
frontier loses it where the count keeps it. The test asserts exactly that difference and nothing looser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

GRANTS = list(range(100_000, 600_001, 10_000))
GUARD_STOPPED = {
    "sympy__sympy-15976"
}  # stopped by the no-progress guard at every grant (see module docstring)


# mini-swe-agent 1.x's own action rule: exactly one fenced bash block is a command; otherwise a format error.
ACTION = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)


def _independent(root: Path) -> tuple[dict[str, list[tuple[int, bool]]], set[str]]:
    """Per run, (cost meter, ran a command) after each call; and the resolved ids — plain json."""
    report = next((root / "trajs" / "sb-cli-reports").glob("*.json"))
    resolved = set(json.loads(report.read_text())["resolved_ids"])
    meters: dict[str, list[int]] = {}
    for path in sorted((root / "trajs").glob("*/*.traj.json")):
        data = json.loads(path.read_text())
        prompt = cached = completion = 0
        cum = []
        for m in data["messages"]:
            usage = ((m.get("extra") or {}).get("response") or {}).get("usage")
            if m.get("role") != "assistant" or not usage:
                continue
            prompt += usage["prompt_tokens"]
            completion += usage["completion_tokens"]
            cached += (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
            c = min(cached, prompt)
            command = len(ACTION.findall(m.get("content") or "")) == 1
            cum.append((prompt - c + c * 10 // 100 + completion, command))
        meters[data["instance_id"]] = cum
    return meters, resolved & set(meters)


def _fate(calls: list[tuple[int, bool]], grant: int) -> str:
    """kept / at_risk / lost under the seed's landing. The landing starts after the first call that ran a command
    with the meter at or over the grant; it allows at most 4 more calls that run a command, ending early at the
    first whose meter reaches the crossing's meter + int(grant x 0.2). A reply with no command is a format error
    the agent answered: not an ending, and not one of the landing's calls."""
    n = len(calls)
    crossing = next((i for i, (v, cmd) in enumerate(calls) if cmd and v >= grant), None)
    if crossing is None:
        return "kept"
    ceiling = calls[crossing][0] + int(grant * 0.2)
    after = [k for k in range(crossing + 1, n) if calls[k][1]][:4]
    end = next((k for j, k in enumerate(after) if calls[k][0] >= ceiling or j == 3), None)
    return "at_risk" if end is None or end >= n - 1 else "lost"


@pytest.fixture(scope="module")
def mini(shared: Path) -> Path:
    root = shared / "mini-swe-agent"
    if not root.is_dir():
        pytest.skip("../shared/traces/mini-swe-agent is absent")
    return root


@pytest.fixture(scope="module")
def fr(mini: Path):
    import workbench as wb
    from workbench.analysis.frontier import frontier

    return frontier(wb.load(mini), grants=GRANTS)


def test_independent_count_matches_the_frontier_at_every_grant(mini: Path, fr) -> None:
    meters, resolved = _independent(mini)
    assert len(meters) == 100 and len(resolved) == 60
    rows = fr.rows[fr.rows["success"]]
    for grant in GRANTS:
        fates = {rid: _fate(meters[rid], grant) for rid in resolved}
        kept = {rid for rid, f in fates.items() if f == "kept"}
        at_risk = {rid for rid, f in fates.items() if f == "at_risk"}
        at = rows[rows["grant"] == grant]
        got_kept = set(at[at["fate"] == "kept"]["run_id"])
        got_risk = set(at[at["fate"] == "at_risk"]["run_id"])
        assert got_kept == kept - GUARD_STOPPED, grant
        assert got_risk == at_risk - GUARD_STOPPED, grant
        row = fr.point(grant).row
        assert row["resolved"] == 60
        assert row["resolved_kept"] == len(kept - GUARD_STOPPED)
        assert row["resolved_at_risk"] == len(at_risk - GUARD_STOPPED)
        assert row["resolved_lost"] == 60 - len(kept | at_risk) + len(GUARD_STOPPED & (kept | at_risk))


def test_the_guard_stop_is_the_no_progress_guard_at_one_turn(mini: Path, fr) -> None:
    """Where the cost meter alone would let sympy__sympy-15976 end as recorded, the no-progress guard stops it, at
    the same turn under every such grant; under smaller grants the budget landing stops it first."""
    meters, _ = _independent(mini)
    (rid,) = GUARD_STOPPED
    r = fr.rows[fr.rows["run_id"] == rid].set_index("grant")
    assert set(r["fate"]) == {"cut"}
    spared = [g for g in GRANTS if _fate(meters[rid], g) != "lost"]
    assert spared and set(r.loc[spared, "stop_reason"]) == {"no-progress"}
    assert r.loc[spared, "stop_turn"].nunique() == 1


def test_the_seed_grant_and_the_95_percent_grant(mini: Path, fr) -> None:
    """The issue's reading: at 220,000 between 53 and 55 of 60 finish before any landing starts — 53 kept, 2 whose
    landing starts at their last call (at risk), so 55 end as recorded; 57 of 60 (95%) needs about 340,000."""
    p = fr.point(220_000)
    assert (p["resolved_kept"], p["resolved_at_risk"], p["resolved_lost"]) == (53, 2, 5)
    meters, resolved = _independent(mini)
    finals = sorted(meters[r][-1][0] for r in resolved if r not in GUARD_STOPPED)
    # 57 kept needs the 57th-cheapest resolved run's final meter to stay under the grant (the guard-stopped run
    # is lost at any grant, so it is 57 of the other 59): 327,435, so 327,436 is the exact threshold and 330,000
    # the first grant of a 10,000 grid. The "about 340,000" is a 20,000 grid's reading (200k, 220k, ...).
    assert finals[56] == 327_435
    kept = fr.curve().set_index("grant")["resolved_kept"]
    assert kept[320_000] == 56 and kept[330_000] == 57 and kept[340_000] == 57
    from workbench.analysis.recommendation import recommend
    from workbench.analysis.targets import AnalystInvariants

    assert recommend(fr.curve(), AnalystInvariants(keep_resolved=0.95)).grant == 330_000
    coarse = fr.curve()
    coarse = coarse[(coarse["grant"] - 200_000) % 20_000 == 0]
    assert recommend(coarse, AnalystInvariants(keep_resolved=0.95)).grant == 340_000


def test_dollars_are_the_priced_calls_of_what_the_policy_makes(mini: Path, fr) -> None:
    """At the top of the grid only the no-progress guard still cuts a resolved run; the spend plus the saving is
    the whole recorded bill, and every run is priced."""
    row = fr.point(600_000).row
    assert row["usd_runs"] == 100
    assert row["spend_usd"] + row["spend_saved_usd"] == pytest.approx(row["recorded_usd"])
    assert row["spend_tokens"] + row["spend_saved_tokens"] == row["recorded_tokens"]
    meters, _ = _independent(mini)
    assert row["recorded_tokens"] == sum(m[-1][0] for m in meters.values())
