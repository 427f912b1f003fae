"""SWE-Effi's effectiveness against a hand computation on a corpus the test writes; the money format; the
ablations (``Policy.without``, ``--without``, ``--set``) and their errors; the bills' first row is the recording."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.analysis.efficiency import effectiveness, efficiency
from workbench.analysis.frontier import frontier
from workbench.cli import main
from workbench.format import usd
from workbench.govern.ablation import parse_setting
from workbench.govern.policy import Policy
from workbench.scenarios.labelled import labelled_runs
from workbench.trace.native import write_run


def test_effectiveness_matches_a_hand_computation() -> None:
    # 4 runs, cap 10: resolved at 2 and 6, one resolved beyond the cap (12), one unresolved at 1.
    # R(b) = 0 on [0,2), 1/4 on [2,6), 2/4 on [6,10]: area = 1/4*4 + 2/4*4 = 3; normalised: 3/10 = 0.3.
    assert effectiveness([2, 6, 12, 1], [True, True, True, False], 10) == pytest.approx(0.3)
    assert effectiveness([], [], 10) != effectiveness([], [], 10)  # NaN for no runs
    assert effectiveness([0, 0], [True, True], 5) == 1.0


@given(st.lists(st.tuples(st.floats(0, 50), st.booleans()), min_size=1, max_size=12), st.floats(0.5, 40))
def test_effectiveness_is_the_sampled_area_and_never_above_the_resolve_rate(pairs, cap) -> None:
    cost = [c for c, _ in pairs]
    ok = [o for _, o in pairs]
    e = effectiveness(cost, ok, cap)
    assert 0 <= e <= sum(ok) / len(ok) + 1e-12
    # the integral by a fine midpoint sum of R(b)
    n = 1000
    area = sum(sum(1 for c, o in pairs if o and c <= (k + 0.5) * cap / n) / len(pairs) for k in range(n)) / n
    assert e == pytest.approx(area, abs=2 / n + 1e-9 + max(1, len(pairs)) / n)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("labelled")
    for run in labelled_runs(12, seed=3):
        write_run(run, out / f"{run.run_id}.jsonl")
    return out


def test_efficiency_recorded_and_per_policy_by_hand(corpus: Path) -> None:
    runs = labelled_runs(12, seed=3)
    fr = frontier(runs, grants=[100_000, 300_000])
    eff = efficiency(fr, token_cap=1_000_000, usd_cap=1.0)
    rec = eff[eff["policy"] == "recorded"].iloc[0]
    raw = [sum((t.usage.prompt or 0) + (t.usage.completion or 0) for t in r.turns) for r in runs]
    ok = [r.outcome.label == "resolved" for r in runs]
    hand = sum(1_000_000 - c for c, o in zip(raw, ok, strict=True) if o and c <= 1_000_000) / (12 * 1_000_000)
    assert rec["eutb"] == pytest.approx(hand) and rec["resolved"] == sum(ok)
    for grant in (100_000, 300_000):
        row = eff[eff["grant"] == grant].iloc[0]
        at = fr.rows[fr.rows["grant"] == grant]
        kept = at["success"] & (at["fate"] != "cut")
        hand = sum(1_000_000 - c for c, o in zip(at["raw"], kept, strict=True) if o and c <= 1_000_000)
        assert row["eutb"] == pytest.approx(hand / (12 * 1_000_000))
        assert (
            row["resolved"]
            == int(kept.sum())
            == fr.point(grant)["resolved"] - fr.point(grant)["resolved_lost"]
        )


def test_money_prints_one_way() -> None:
    assert usd(1234.561) == "$1,234.56"
    assert usd(29) == "$29.00" and usd(8.14) == "$8.14"
    assert usd(-0.5) == "-$0.50" and usd(-0.001) == "$0.00"
    assert usd(None) == "—" and usd(math.nan) == "—"


def test_policy_without_switches_the_named_guards_off() -> None:
    p = Policy.named("current").without("no_progress", "tool-timeout", "backstop", "wrap-up")
    assert (p.no_progress, p.tool_timeouts, p.turn_backstop, p.wrapup_at) == (False, False, None, None)
    assert p.grant == Policy.named("current").grant
    with pytest.raises(ValueError, match="unknown ablation 'guard'; known: no-progress"):
        Policy.named("current").without("guard")


def test_set_parses_by_the_field_type() -> None:
    assert parse_setting("repeat_cap=6") == ("repeat_cap", 6)
    assert parse_setting("turn-backstop=none") == ("turn_backstop", None)
    assert parse_setting("no_progress=off") == ("no_progress", False)
    assert parse_setting("wrapup_at=0.8") == ("wrapup_at", 0.8)
    with pytest.raises(ValueError, match="repeat_cap takes int"):
        parse_setting("repeat_cap=many")
    with pytest.raises(ValueError, match="unknown policy field 'nope'"):
        parse_setting("nope=1")


@pytest.mark.parametrize("command", ["frontier", "bills", "calibrate", "report", "sweep", "replay"])
def test_every_command_takes_the_ablations_and_lists_the_fields(command: str, capsys) -> None:
    try:
        assert main([command, "--help"]) == 0
    except SystemExit as exc:  # argparse's own exit, where main does not catch it
        assert exc.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--without" in out and "--set" in out and "repeat_cap (int)" in out


@pytest.mark.parametrize(
    "args, why",
    [
        (["--set", "repeat_cap=many"], "repeat_cap takes int"),
        (["--set", "grant=-5"], "grant must be a token count >= 0"),
        (["--without", "nothing"], "unknown ablation 'nothing'"),
    ],
)
def test_a_bad_ablation_is_a_one_line_usage_error(corpus: Path, args, why, capsys) -> None:
    try:
        code = main(["frontier", str(corpus), *args])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert why in err and "\n" not in err and "Traceback" not in err


def test_frontier_without_the_guard_equals_the_api(corpus: Path, capsys) -> None:
    assert main(["frontier", str(corpus), "--grants", "200000", "--json", "--without", "no-progress"]) == 0
    (row,) = [json.loads(x) for x in capsys.readouterr().out.splitlines() if "recommendation" not in x]
    fr = frontier(labelled_runs(12, seed=3), grants=[200_000], overrides={"no_progress": False})
    assert row["resolved_lost"] == fr.point(200_000)["resolved_lost"]
    assert not any(k.startswith("no-progress") for k in (*row["lost_by"], *row["cut_by"]))


def test_the_bills_first_row_is_the_recording(corpus: Path, capsys) -> None:
    from workbench.replay.bill_sweep import bill_grid

    assert main(["bills", str(corpus)]) == 0
    lines = capsys.readouterr().out.splitlines()
    frame = bill_grid(labelled_runs(12, seed=3))
    first, governed = lines[2], lines[3]
    assert first.startswith("recorded (as the runs were billed)")
    assert f"{int(frame['recorded_spent'].sum()):,}" in first and usd(frame["recorded_usd"].sum()) in first
    assert governed.startswith("current, governed")
    assert f"{int(frame['cf_spent'].sum()):,}" in governed
