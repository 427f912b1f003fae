"""The calibration table on the real runs in ../shared/traces, checked against figures computed here, in the test,
from the trajectory files themselves (plain json and re, not through the workbench).

mini-swe-agent's format, as its files show: ``messages`` alternate assistant actions (one fenced ```bash block)
and user observations (``<returncode>N</returncode><output>…``); each assistant message is one model call with
its ``extra.response.usage`` (``prompt_tokens``, ``completion_tokens``, ``prompt_tokens_details.cached_tokens``);
the SWE-bench verdict is ``logs/<id>/report.json`` → ``resolved``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import workbench as wb
from workbench.analysis import calibrate
from workbench.analysis.calibration import NOT_ENOUGH, RECOMMENDED
from workbench.analysis.calibration.model import KEEP, NONE_SATISFIES, STATUSES

ACTION = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
GRANT = 220_000
EVERY_ROW = {
    "leaf grant",
    "landing turns",
    "landing token share",
    "turn backstop",
    "turn cap",
    "no-progress repeat cap",
    "no-progress stagnant cap",
    "no-progress turn floor",
    "no-progress floor min productive",
    "no-progress recon turns",
    "tool-timeout cap",
    "wrap-up threshold",
    "empty-reply share",
    "calibration seed factor",
    "reserve",
    "safety",
}


@pytest.fixture(scope="module")
def trajs(msa: Path) -> dict[str, dict]:
    """instance id -> {"messages": [...], "resolved": bool}, read with json only."""
    out = {}
    for f in sorted((msa / "trajs").glob("*/*.traj.json")):
        doc = json.loads(f.read_text())
        iid = doc["instance_id"]
        report = json.loads((msa / "logs" / iid / "report.json").read_text())
        out[iid] = {"messages": doc["messages"], "resolved": bool(report["resolved"])}
    return out


@pytest.fixture(scope="module")
def cal_all(shared: Path):
    return calibrate(wb.load(shared), "current")


def calls_of(traj: dict) -> list[dict]:
    return [m for m in traj["messages"] if m["role"] == "assistant"]


def bills(traj: dict) -> list[int]:
    """The cost meter after each call: fresh prompt + a tenth of cache reads + completion, on running totals."""
    p = c = o = 0
    out = []
    for m in calls_of(traj):
        u = m["extra"]["response"]["usage"]
        p += u["prompt_tokens"]
        c += (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        o += u["completion_tokens"]
        cached = min(c, p)
        out.append(p - cached + cached * 10 // 100 + o)
    return out


def test_every_constant_has_a_row_on_both_corpora(cal_msa, cal_all) -> None:
    for cal in (cal_msa, cal_all):
        assert set(cal.names) == EVERY_ROW
        for row in cal.rows:
            assert row.status in STATUSES
            if row.status == NONE_SATISFIES:  # never a silent fallback: it says so, with the best grant
                assert row.name == "leaf grant" and "the best swept grant is" in row.why
            assert row.provenance and row.home
            if row.status == RECOMMENDED:
                assert row.runs >= 10, row.name  # a recommendation never rests on fewer runs
    assert cal_msa.counts["resolved"] == 60 and cal_msa.counts["unresolved"] == 40
    assert cal_all.counts["finished"] > 0  # unlabelled runs stand in as "finished"
    assert "in place of 'resolved'" in cal_all.corpus
    assert len(cal_msa.to_frame()) == len(EVERY_ROW)


def test_every_row_has_its_status_on_the_shared_runs(cal_msa) -> None:
    """The statuses as the evidence argues them (issue 22): recommended only where it argues for a change."""
    got = {r.name: (r.status_words, r.answer) for r in cal_msa.rows}
    assert got == {
        "leaf grant": ("recommended", 330_000),
        "landing turns": ("not enough data", None),  # 7 positive runs cross 220,000
        "landing token share": ("not enough data", None),
        "turn backstop": ("keep", 400),
        "turn cap": ("recommended", 57),
        "no-progress repeat cap": ("recommended", 5),  # 4 stops sympy__sympy-15976 before its end
        "no-progress stagnant cap": ("not enough data", None),
        "no-progress turn floor": ("not enough data", None),
        "no-progress floor min productive": ("not enough data", None),
        "tool-timeout cap": ("keep", 3),  # 3 stops no positive run; 2 saves nothing more
        "no-progress recon turns": ("not enough data", None),
        "wrap-up threshold": ("recommended", 0.99),
        "empty-reply share": ("not enough data", None),
        "calibration seed factor": ("recommended", 1.1358),
        "reserve": ("recommended", 2_973),
        "safety": ("recommended", 4_077),
    }
    tt = cal_msa.row("tool-timeout cap")
    assert tt.why == "3 stops no positive run and 2 saves no more (0 tokens against 0)"
    assert cal_msa.row("wrap-up threshold").at_grid_edge
    # the pair fits ADR-107's fallback window (no run records its context length): noted, not flagged
    for name in ("reserve", "safety"):
        row = cal_msa.row(name)
        assert row.flags == ()
        notes = " ".join(row.notes)
        assert (
            "reserve + safety = 7,050 tokens leave 1,142 of the 8,192-token window in use (ADR-107's" in notes
        )


def test_turn_backstop_against_the_files(cal_msa, trajs) -> None:
    resolved = {i: len(calls_of(t)) for i, t in trajs.items() if t["resolved"]}
    assert len(resolved) == 60
    row = cal_msa.row("turn backstop")
    longest = max(resolved.values())
    assert row.band == (longest, None)
    # the seed's backstop sits above every resolved run, so it is kept: a keep row, not a recommendation
    assert row.status == KEEP and row.recommended is None and row.value == row.answer == 400
    assert row.runs == 60 and row.calls == sum(resolved.values())
    assert row.touched == ()
    assert "stops 0 of 60 positive runs" in row.effect and f"the longest ran {longest} calls" in row.effect
    ev = row.evidence.set_index("run_id")
    assert {i: int(ev.loc[i, "calls"]) for i in resolved} == resolved


def test_landing_turns_against_the_files(cal_msa, trajs) -> None:
    row = cal_msa.row("landing turns")
    for grant in (GRANT, 100_000):
        expected = {}
        for iid, t in trajs.items():
            if not t["resolved"]:
                continue
            b = bills(t)
            crossing = next((k for k, s in enumerate(b) if s >= grant), None)
            if crossing is not None:
                expected[iid] = len(b) - 1 - crossing
        ev = row.evidence[row.evidence["grant"] == grant]
        got = dict(zip(ev["run_id"], ev["calls_after"].astype(int), strict=True))
        assert got == expected, grant
    crossing_220 = {
        iid: len(bills(t)) - 1 - next(k for k, s in enumerate(bills(t)) if s >= GRANT)
        for iid, t in trajs.items()
        if t["resolved"] and bills(t)[-1] >= GRANT
    }
    within = sum(1 for a in crossing_220.values() if a <= 4)
    assert row.effect.startswith(
        f"at grant 220,000: {len(crossing_220)} runs cross ({len(crossing_220)} positive"
    )
    assert f"{within} positive runs finish within 4 calls" in row.effect
    # fewer than ten resolved runs cross 220,000 here: the row says so rather than recommend
    assert len(crossing_220) < 10 and row.status == NOT_ENOUGH and row.recommended is None


def repeat_stop(traj: dict, cap: int, grace: int = 4) -> int | None:
    """The call at which the repeat signal alone terminates a run (conclude at ``cap``, then ``grace`` observed
    turns, or a repeat reading during them), or None. Only calls with exactly one bash block run a tool."""
    msgs = traj["messages"]
    call = -1
    repeat, last = 0, None
    concluded, left = False, 0
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        call += 1
        found = ACTION.findall(m["content"])
        if len(found) != 1:
            continue
        nxt = msgs[i + 1] if i + 1 < len(msgs) and msgs[i + 1]["role"] == "user" else None
        out = nxt["content"] if nxt is not None else None
        code = RETURNCODE.search(out) if out is not None else None
        error = code is not None and int(code.group(1)) != 0
        key = (found[0].strip(), out) if out is not None else object()  # a missing output equals nothing
        repeat = repeat + 1 if (not error and key == last) else 1
        last = key
        if concluded:
            left -= 1
            if repeat >= cap or left <= 0:
                return call
            continue
        if repeat >= cap:
            concluded, left = True, grace
    return None


def test_no_progress_repeat_false_positives_against_the_files(cal_msa, trajs) -> None:
    table = cal_msa.row("no-progress repeat cap").evidence.set_index("value")
    for cap in table.index:
        fp, saved = set(), set()
        for iid, t in trajs.items():
            stop = repeat_stop(t, cap)
            if stop is not None and stop < len(calls_of(t)) - 1:
                (fp if t["resolved"] else saved).add(iid)
        got_fp = {r for r in str(table.loc[cap, "false_positive_runs"]).split(", ") if r}
        got_saved = {r for r in str(table.loc[cap, "stopped_negative_runs"]).split(", ") if r}
        assert got_fp == fp, cap
        assert got_saved == saved, cap
        assert table.loc[cap, "false_positives"] == len(fp)
    # at the seed's 4 one resolved run is stopped before its end; from 5 up none is
    assert table.loc[4, "false_positives"] == 1
    row = cal_msa.row("no-progress repeat cap")
    assert row.recommended == 5 and row.band == (5, None)


def test_guard_table_is_monotone_where_the_rule_reads_it(cal_all) -> None:
    for name in ("no-progress repeat cap", "no-progress stagnant cap", "tool-timeout cap"):
        t = cal_all.row(name).evidence.sort_values("value")
        assert list(t["false_positives"]) == sorted(t["false_positives"], reverse=True), name


def test_json_rows_are_plain(cal_msa) -> None:
    for d in cal_msa.to_dicts():
        json.dumps(d)  # no numpy scalars, no NaN
        assert d["status"] in STATUSES


def stagnant_stop(traj: dict, cap: int, grace: int = 4) -> int | None:
    """The call at which the stagnant signal alone terminates a run: a tool turn with no new output (an output not
    seen before in the run; an error or a missing output is always new) counts up, any other resets; conclude at
    ``cap``, then ``grace`` observed turns or a stagnant reading at the cap during them. mini-swe-agent's only tool
    is bash and it records no workspace change: a command that writes is a mutation, and one whose effect is unknown
    is never read as "no change" (it resets the count too); only a read-only command can count up (issue 21)."""
    from workbench.importers.shell import classify

    msgs = traj["messages"]
    call, stagnant, seen = -1, 0, set()
    concluded, left = False, 0
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        call += 1
        if len(ACTION.findall(m["content"])) != 1:
            continue
        nxt = msgs[i + 1] if i + 1 < len(msgs) and msgs[i + 1]["role"] == "user" else None
        out = nxt["content"] if nxt is not None else None
        code = RETURNCODE.search(out) if out is not None else None
        error = code is not None and int(code.group(1)) != 0
        new = out is None or error or out not in seen
        if out is not None and not error:
            seen.add(out)
        read_only = classify(ACTION.findall(m["content"])[0].strip()).kind == "read-only"
        stagnant = 0 if new or not read_only else stagnant + 1
        if concluded:
            left -= 1
            if stagnant >= cap or left <= 0:
                return call
            continue
        if stagnant >= cap:
            concluded, left = True, grace
    return None


def test_no_progress_stagnant_false_positives_against_the_files(cal_msa, trajs) -> None:
    table = cal_msa.row("no-progress stagnant cap").evidence.set_index("value")
    for cap in table.index:
        fp, saved = set(), set()
        for iid, t in trajs.items():
            stop = stagnant_stop(t, cap)
            if stop is not None and stop < len(calls_of(t)) - 1:
                (fp if t["resolved"] else saved).add(iid)
        # every such stop read an inferred workspace fact (a command read as read-only): counted apart, never
        # evidence for a cap
        assert not {r for r in str(table.loc[cap, "false_positive_runs"]).split(", ") if r}, cap
        assert not {r for r in str(table.loc[cap, "stopped_negative_runs"]).split(", ") if r}, cap
        assert table.loc[cap, "inferred_false_positives"] == len(fp), cap
        assert table.loc[cap, "inferred_stops"] == len(fp) + len(saved), cap
