"""The no-progress guard's caps and the tool-timeout cap, each candidate replayed with only its signal able to
stop a run: false positives, spend saved (docs/calibrate.md, "No-progress caps and the tool-timeout cap")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.analysis.calibration.evidence import MIN_RUNS, NEGATIVE, POSITIVE, Evidence
from workbench.analysis.calibration.model import RECOMMENDED, ConstantRow
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.calibration.replays import isolated, replay_grids, replay_values
from workbench.analysis.calibration.status import keep, not_enough, settle
from workbench.govern import messages as msg
from workbench.govern.policy import Policy
from workbench.govern.verdict import StopReason
from workbench.replay import fast
from workbench.replay.engine import replay
from workbench.replay.facts import RunFacts, run_facts
from workbench.trace.schema import Run


@dataclass(frozen=True)
class GuardSpec:
    name: str
    ref: ConstantRef
    field: str
    candidates: tuple[int, ...]
    stop_reason: str
    unit: str
    keep: tuple[tuple[str, Any], ...] = ()
    """Other fields of the isolated policy (the guard switched on, its other signals at the policy's values)."""
    stricter: str = "lower"
    """Which way the guard stops sooner: ``lower`` values (a cap) or ``higher`` ones (a minimum)."""
    widen_stricter: tuple[int, ...] = ()
    """Values tried, in order, when the pick sits at the grid's strict edge (empty: the edge is the guard's own
    limit, e.g. a repeat cap below 2 or a time-out cap below 1 means nothing)."""
    widen_looser: tuple[int, ...] = ()
    """Values tried, in order, when the guard still stops a negative run at the grid's loose edge."""


NOPROGRESS = "workbench.govern.noprogress"
# Candidate grids: workbench choices, wide enough to bracket each seed value on both sides, and widened at an edge
# the evidence reaches (``widened``).
GUARDS = (
    GuardSpec(
        "no-progress repeat cap",
        ConstantRef(NOPROGRESS, "NO_PROGRESS_REPEAT_CAP"),
        "repeat_cap",
        tuple(range(2, 9)),
        "no-progress",
        "identical turns",
        (("no_progress", True),),
        widen_looser=(10, 12, 16),
    ),
    GuardSpec(
        "no-progress stagnant cap",
        ConstantRef(NOPROGRESS, "NO_PROGRESS_STAGNANT_CAP"),
        "stagnant_cap",
        tuple(range(2, 11)),
        "no-progress",
        "turns",
        (("no_progress", True),),
        widen_stricter=(1,),
        widen_looser=(12, 15, 20),
    ),
    GuardSpec(
        "no-progress turn floor",
        ConstantRef(NOPROGRESS, "NO_PROGRESS_TURN_FLOOR"),
        "turn_floor",
        (20, 40, 80, 120, 160),
        "no-progress",
        "observed turns",
        (("no_progress", True), ("floor_min_productive", None)),
        widen_stricter=(10, 5),
        widen_looser=(200, 240, 320),
    ),
    GuardSpec(
        "no-progress floor min productive",
        ConstantRef(NOPROGRESS, "NO_PROGRESS_MIN_PRODUCTIVE"),
        "floor_min_productive",
        (1, 2, 3, 4, 6, 8, 10),
        "no-progress",
        "productive turns of the window",
        (("no_progress", True), ("turn_floor", None)),
        stricter="higher",
        widen_stricter=(12, 16, 20),
    ),
    GuardSpec(
        "tool-timeout cap",
        ConstantRef("workbench.govern.tooltimeout", "TOOL_TIMEOUT_REPEAT_CAP"),
        "tool_timeout_cap",
        tuple(range(1, 6)),
        "tool-timeouts",
        "timeouts of one command",
        (("tool_timeouts", True),),
        widen_looser=(6, 8, 10),
    ),
)


def _base(policy: Policy, spec: GuardSpec) -> Policy:
    # None in ``keep`` means "the policy's own value" (a signal that must stay on for this one to act).
    keep = {k: (getattr(policy, k) if v is None else v) for k, v in spec.keep}
    return isolated(policy, **keep)


def guard_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per candidate value: positives stopped before their end (false positives) and concluded; negatives
    stopped early, the spend saved and the calls cut."""
    fired = (frame["stop_reason"] == frame.attrs["stop_reason"]) & (frame["cut_turns"] > 0)
    inferred = frame["stop_basis"] == "inferred" if "stop_basis" in frame.columns else False
    f = frame.assign(
        _stopped=fired & ~inferred,
        _inferred=fired & inferred,
        _unjudged=frame["unjudged_at"].notna() if "unjudged_at" in frame.columns else False,
        _saved=(frame["recorded_spent"] - frame["spent"]).clip(lower=0),
    )
    rows = []
    for value, g in f.groupby("value", sort=True):
        pos, neg = g[g["group"].isin(POSITIVE)], g[g["group"].isin(NEGATIVE)]
        fp, saved = pos[pos["_stopped"]], neg[neg["_stopped"]]
        rows.append(
            {
                "value": value,
                "positive_runs": len(pos),
                "false_positives": len(fp),
                "positives_concluded": int(pos["concluded_at"].notna().sum()),
                "negative_runs": len(neg),
                "negatives_stopped": len(saved),
                "spend_saved": int(saved["_saved"].sum()),
                "calls_cut": int(saved["cut_turns"].sum()),
                "false_positive_runs": ", ".join(fp["run_id"]),
                "stopped_negative_runs": ", ".join(saved["run_id"]),
                "inferred_stops": int(g["_inferred"].sum()),
                "inferred_false_positives": int(pos["_inferred"].sum()),
                "unjudged": int(g["_unjudged"].sum()),
            }
        )
    return pd.DataFrame(rows)


def band_of(table: pd.DataFrame, stricter: str = "lower") -> tuple[int | None, int | None]:
    """(pick, loosest saving value) by the module's rule, in the guard's own direction: ``pick`` is the
    strictest value from which every looser candidate stops no positive run (None when even the loosest does);
    the second is the loosest value that still stops a negative run early (None when none does)."""
    t = table.sort_values("value", ascending=stricter == "higher")  # loosest first
    values, fp = t["value"].tolist(), t["false_positives"].tolist()
    pick = None
    for v, n in zip(values, fp, strict=True):
        if n > 0:
            break
        pick = v
    saving = t[t["negatives_stopped"] > 0]["value"].tolist()
    return pick, (saving[0] if saving else None)


def _grid(policy: Policy, spec: GuardSpec) -> list[Any]:
    return sorted({*spec.candidates, getattr(policy, spec.field)})


def guard_row(
    evidence: Evidence, policy: Policy, spec: GuardSpec, first: pd.DataFrame | None = None
) -> ConstantRow:
    """The guard's row; ``first``: the replays of its first grid (``_grid``) made already (``guard_rows``)."""
    in_use = getattr(policy, spec.field)
    values, table, widening = widened(evidence, policy, spec, _grid(policy, spec), first)
    at = table[table["value"] == in_use].to_dict("records")[0]
    pos, neg = evidence.positives, evidence.negatives
    fp_ids = [r for r in str(at["false_positive_runs"]).split(", ") if r]
    saved_ids = [r for r in str(at["stopped_negative_runs"]).split(", ") if r]
    effect = (
        f"at {in_use}: stops {at['false_positives']} of {len(pos)} positive runs ({evidence.positive_words()}) "
        f"before their end, concludes {at['positives_concluded']}; stops {at['negatives_stopped']} of "
        f"{len(neg)} negative runs early, saving {at['spend_saved']:,} tokens of billed work "
        f"({at['calls_cut']} calls)"
    )
    notes = [
        f"replayed through the governor with only the {spec.name} able to stop a run (cost landing, wrap-up, "
        "turn cap and the other signals off)"
    ]
    if not getattr(policy, "no_progress", True) and spec.stop_reason == StopReason.NO_PROGRESS:
        notes.append(f"rules {policy.rules!r} run no no-progress guard: evaluated as if they did")
    notes += _mutation_notes(evidence, spec)
    inferred_at = table[table["inferred_stops"] > 0]["value"].tolist()
    if inferred_at:
        notes.append(
            f"{int(table['inferred_stops'].sum())} stop(s) at {_values(inferred_at)} came from an inferred "
            "workspace fact (read from the calls, not recorded): counted apart, not as evidence"
        )
    unjudged_at = table[table["unjudged"] > 0]["value"].tolist()
    if unjudged_at:
        notes.append(
            f"{int(table['unjudged'].sum())} run-value pair(s) at {_values(unjudged_at)} could not be judged: "
            "the guard would have fired had an unknown workspace change been read as none"
        )
    notes += widening
    pick, loosest = band_of(table, spec.stricter)
    strictest, loosest_tried = _edges(values, spec)
    common = dict(
        name=spec.name,
        ref=spec.ref,
        seed=spec.ref.value,
        in_use=in_use,
        unit=spec.unit,
        effect=effect,
        touched=tuple(fp_ids + saved_ids),
        runs=len(pos) + len(neg),
        calls=sum(leaf.calls for leaf in [*pos, *neg]),
        chart="guard",
        evidence=table,
    )
    looser = "larger" if spec.stricter == "lower" else "smaller"
    rule = (
        f"the strictest value from which no {looser} candidate stops a positive run before its end (most spend "
        "saved with no false positive); the band runs from it to the loosest value still stopping a negative "
        "run early"
    )

    def unplaced(why: str) -> ConstantRow:
        return not_enough(why, rule=rule, notes=tuple(notes), **common)

    if len(pos) < MIN_RUNS:
        return unplaced(f"{len(pos)} positive runs; {MIN_RUNS} needed to rule out false positives")
    fired = table[(table["false_positives"] > 0) | (table["negatives_stopped"] > 0)]
    if fired.empty and int(table["inferred_stops"].sum()):
        return unplaced(
            f"the only stops from {values[0]} to {values[-1]} read an inferred workspace fact: not evidence for a "
            "cap"
        )
    if fired.empty:
        return unplaced(
            f"no candidate from {values[0]} to {values[-1]} stops any run here (positive or negative): the corpus "
            "cannot place it"
        )
    looser_or_pick = (
        table
        if pick is None
        else table[table["value"] >= pick if spec.stricter == "lower" else table["value"] <= pick]
    )
    doubtful = looser_or_pick[looser_or_pick["inferred_false_positives"] > 0]["value"].tolist()
    if doubtful:
        return unplaced(
            f"positive runs are stopped on inferred workspace facts at {_values(doubtful)}: the corpus cannot "
            "place it on recorded facts"
        )
    if pick is None:
        return unplaced(
            f"every candidate from {values[0]} to {values[-1]} stops a positive run before its end"
        )
    notes.append(
        f"no false positive in {len(pos)} positive runs at {pick}: the false-positive rate is below "
        f"{3 / len(pos):.1%} at 95% (rule of three)"
    )
    at_edge = pick == strictest
    if at_edge:
        notes.append(
            f"{pick} is the strictest value tried ({_values(values)}) and stops no positive run: at grid edge, "
            + (
                "widened as far as the guard means anything"
                if not spec.widen_stricter
                else f"widened to {_values(spec.widen_stricter)} and still there"
            )
            + "; a stricter value may hold too"
        )
    saves = loosest is not None and (loosest >= pick if spec.stricter == "lower" else loosest <= pick)
    if not saves:
        notes.append(
            f"at {pick} and looser the guard stops no negative run here: it saves nothing on this corpus"
        )
    open_loose = saves and loosest == loosest_tried
    if open_loose:
        notes.append(
            f"the guard still stops a negative run at {loosest}, the loosest value tried: the band is open there"
        )
    loose_edge = loosest if saves and not open_loose else None
    band = (pick, loose_edge) if spec.stricter == "lower" else (loose_edge, pick)
    row = ConstantRow(
        status=RECOMMENDED,
        recommended=pick,
        band=band,
        rule=rule,
        notes=tuple(notes),
        extrapolated=at_edge,
        at_grid_edge=at_edge,
        **common,
    )
    return _status(row, table, in_use, pick, spec)


def _status(row: ConstantRow, table: pd.DataFrame, in_use: Any, pick: Any, spec: GuardSpec) -> ConstantRow:
    """Recommended when the value in use stops a positive run (the pick is looser) or the stricter pick saves
    more spend with no false positive; keep otherwise."""
    by_value = table.set_index("value")
    fp_in_use = int(by_value.at[in_use, "false_positives"])
    if fp_in_use:
        return row
    saved_in_use, saved_pick = (int(by_value.at[v, "spend_saved"]) for v in (in_use, pick))
    stricter = pick < in_use if spec.stricter == "lower" else pick > in_use
    if pick != in_use and stricter and saved_pick > saved_in_use:
        return row
    if pick == in_use:
        return settle(row)
    return keep(
        row,
        f"{in_use} stops no positive run and {pick} saves no more ({saved_pick:,} tokens against {saved_in_use:,})",
    )


def _edges(values: Sequence[Any], spec: GuardSpec) -> tuple[Any, Any]:
    """(strictest, loosest) value of a sorted grid, in the guard's direction."""
    return (values[0], values[-1]) if spec.stricter == "lower" else (values[-1], values[0])


def widened(
    evidence: Evidence, policy: Policy, spec: GuardSpec, values: list[Any], frame: pd.DataFrame | None = None
) -> tuple[list[Any], pd.DataFrame, list[str]]:
    """The grid, its replays and table, widened one value at a time at each edge the evidence reaches: at the
    strict edge while the pick sits there (the strictest value stops no positive run), at the loose edge while the
    loosest value still stops a negative run. Returns (values, table, notes saying what was widened). ``frame``: the
    grid's replays made already."""
    base = _base(policy, spec)
    frame = frame if frame is not None else replay_values(evidence, base, spec.field, values)
    frame.attrs["stop_reason"] = spec.stop_reason
    table = guard_table(frame)
    more_strict, more_loose = list(spec.widen_stricter), list(spec.widen_looser)
    added: list[Any] = []
    while True:
        pick, loosest = band_of(table, spec.stricter)
        strictest, loosest_tried = _edges(values, spec)
        add = []
        fired = bool((table["false_positives"] > 0).any() or (table["negatives_stopped"] > 0).any())
        if fired and pick is not None and pick == strictest and more_strict:
            add.append(more_strict.pop(0))
        if loosest is not None and loosest == loosest_tried and more_loose:
            add.append(more_loose.pop(0))
        add = [v for v in add if v not in values]
        if not add:
            break
        extra = replay_values(evidence, base, spec.field, add)
        frame = pd.concat([frame, extra], ignore_index=True)
        frame.attrs["stop_reason"] = spec.stop_reason
        values = sorted({*values, *add})
        added += add
        table = guard_table(frame)
    notes = []
    if added:
        notes.append(
            f"the candidate grid ({_values(sorted({*spec.candidates}))}) was widened at its edge to "
            f"{_values(sorted(added))}: the pick or the last value still stopping a negative run sat there"
        )
    return values, table, notes


def _values(values: list[Any]) -> str:
    return ", ".join(str(v) for v in values)


def _mutation_notes(evidence: Evidence, spec: GuardSpec) -> list[str]:
    if spec.stop_reason != StopReason.NO_PROGRESS:
        return []
    blind = sorted(
        {
            leaf.run.source
            for leaf in evidence.leaves
            if all(t.mutated is None for t in leaf.run.turns if t.tool_calls)
            and not any(
                c.name in {"write", "edit", "apply_patch"} for t in leaf.run.turns for c in t.tool_calls
            )
        }
    )
    if not blind:
        return []
    return [
        f"{', '.join(blind)} record no workspace fact, none could be inferred and they call no write/edit/"
        "apply_patch tool: unknown is never read as no change, so the guard's stagnant and floor signals cannot "
        "fire there (the repeat signal still can)"
    ]


RECON_REF = ConstantRef(NOPROGRESS, "NO_PROGRESS_RECON_TURNS")
RECON_CANDIDATES = (5, 10, 20, 30, 40)


def recon_row(evidence: Evidence, policy: Policy) -> ConstantRow:
    """The recon notice is advisory: it stops nothing, so the corpus can show how often it fires, not whether
    it helps."""
    in_use = policy.recon_turns
    values = sorted({*RECON_CANDIDATES, in_use})
    rows = []
    pos, neg = evidence.positives, evidence.negatives
    runs = [leaf.run for leaf in [*pos, *neg]]
    first = isolated(policy, no_progress=True, recon_turns=values[0])
    reads = [_readings(run, first) for run in runs]  # read once, answered per value
    sides = ["positive"] * len(pos) + ["negative"] * len(neg)
    for v in values:
        p = isolated(policy, no_progress=True, recon_turns=v)
        counts = {"positive": [0, 0], "negative": [0, 0]}
        for side, run, read in zip(sides, runs, reads, strict=True):
            n = recon_notices(run, p, read)
            counts[side][0] += n > 0
            counts[side][1] += n
        rows.append(
            {
                "value": v,
                "positive_runs": len(pos),
                "positives_noticed": counts["positive"][0],
                "notices_on_positives": counts["positive"][1],
                "negative_runs": len(neg),
                "negatives_noticed": counts["negative"][0],
                "notices_on_negatives": counts["negative"][1],
            }
        )
    table = pd.DataFrame(rows)
    at = table[table["value"] == in_use].to_dict("records")[0]
    effect = (
        f"at {in_use}: a reading-pace notice on {at['positives_noticed']} of {len(pos)} positive runs "
        f"({at['notices_on_positives']} notices) and {at['negatives_noticed']} of {len(neg)} negative runs "
        f"({at['notices_on_negatives']} notices)"
    )
    notes = ["replayed through the governor with the no-progress guard's other signals off"]
    notes += _mutation_notes(evidence, GUARDS[0])
    return not_enough(
        "the notice stops nothing and asks for a result; no recorded outcome shows whether a notice helped, so "
        "the corpus gives its frequency only",
        name="no-progress recon turns",
        ref=RECON_REF,
        seed=RECON_REF.value,
        in_use=in_use,
        unit="mutation-free turns",
        effect=effect,
        touched=(),
        rule="none: the notice is advisory",
        runs=len(pos) + len(neg),
        calls=sum(leaf.calls for leaf in [*pos, *neg]),
        notes=tuple(notes),
        chart="recon",
        evidence=table,
    )


def _readings(run: Run, policy: Policy) -> fast.Turns | RunFacts:
    """What ``recon_notices`` reads of a run under any recon threshold of ``policy``: the fast path's first pass
    where it applies, else the governor's facts."""
    eligible = fast.policy_eligible(policy) and fast.run_eligible(run, policy)
    turns = fast.turns_of(run, policy) if eligible else None
    return turns if turns is not None else run_facts(run)


def recon_notices(run: Run, policy: Policy, read: fast.Turns | RunFacts | None = None) -> int:
    """The reading-pace notices the governor gives ``run`` under ``policy``, an ``isolated`` recon policy: no
    landing, cap, guard stop or abandonment can end the run before its recording does, and a final answer before the
    last turn is reopened, so every notice the guard reads is given. Counted from the fast path's probe where it
    applies (``read``: ``_readings``), else from the governor's decisions (the oracle, which tests hold it to)."""
    read = read if read is not None else _readings(run, policy)
    if isinstance(read, fast.Turns):
        probed = fast.probe(run, policy, fast.Reach(fast.BIG, 0, fast.BIG), read)
        assert probed is not None  # read_turns answered, so the probe does
        return sum(1 for _, kind, _ in probed.guard_events if kind == "recon")
    decisions = replay(run, policy, facts=read).decisions
    return sum(1 for d in decisions if d.action == "inject" and d.kind == msg.RECON)


def guard_rows(evidence: Evidence, policy: Policy, specs: Sequence[GuardSpec] = GUARDS) -> list[ConstantRow]:
    """Every guard's row, their first grids replayed in one sweep (``replay_grids``)."""
    firsts = replay_grids(evidence, [(_base(policy, s), s.field, _grid(policy, s)) for s in specs])
    return [guard_row(evidence, policy, s, f) for s, f in zip(specs, firsts, strict=True)]
