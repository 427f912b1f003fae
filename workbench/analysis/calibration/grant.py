"""The leaf grant (``DEFAULT_LEAF_TOKENS``): the one recommendation (``workbench.analysis.recommendation``),
with the band under the seed's invariants as context (docs/calibrate.md, "Leaf grant")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.analysis.band import grant_band
from workbench.analysis.calibration.evidence import MIN_RUNS, Evidence
from workbench.analysis.calibration.model import NONE_SATISFIES, RECOMMENDED, ConstantRow
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.calibration.status import not_enough
from workbench.analysis.frames import annotate, run_facts
from workbench.analysis.frontier import RunLedger, default_grants, frontier
from workbench.analysis.invariants import seed_invariants
from workbench.analysis.recommendation import generator_name, recommendations
from workbench.analysis.targets import AnalystInvariants
from workbench.govern.policy import Policy
from workbench.replay.sweep import replayable
from workbench.scale.sweep import sweep
from workbench.trace.schema import Run

GRANT = ConstantRef("workbench.govern.cost", "DEFAULT_LEAF_TOKENS")
GRANTS = default_grants()  # the frontier's grid: the same grant from `frontier`, `calibrate` and `report`


def swept_at(
    runs: list[Run], policy: Policy, grants: tuple[int, ...], known: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Sweep rows of ``runs`` under ``policy`` at each of ``grants``, annotated with the runs' facts, run by
    run in grant order, ``context_length`` the policy's: read from ``known`` (rows swept already and annotated, e.g.
    the report's grant sweep; not copied when they are all it holds) when it has one row under that very policy
    (its label) for each replayable run at each grant, else swept. (``policy_index`` is the sweep's own.)"""
    if known is not None:
        order = {r.run_id: k for k, r in enumerate(replayable(runs)[0])}
        labels = {g: policy.replace(grant=g).label for g in grants}
        ours = (known["grant"].map(labels) == known["policy_label"]) & known["run_id"].isin(order)
        rows = known if ours.all() else known[ours]
        if len(rows) == len(order) * len(grants) and not rows.duplicated(["run_id", "grant"]).any():
            place = {g: k for k, g in enumerate(grants)}  # (the order given: no need for it to be sorted)
            at = rows["run_id"].map(order).to_numpy() * len(grants) + rows["grant"].map(place).to_numpy()
            rows = rows if (np.diff(at) > 0).all() else rows.iloc[np.argsort(at, kind="stable")]
            return rows if rows.index.equals(pd.RangeIndex(len(rows))) else rows.reset_index(drop=True)
    rows = sweep(runs, {"grant": list(grants)}, base=policy, segments=False, workers=1, progress=False)
    rows["context_length"] = policy.context_length
    return annotate(rows, run_facts(runs))


def grant_row(
    evidence: Evidence,
    policy: Policy,
    grants: tuple[int, ...] | None = None,
    invariants: AnalystInvariants | str | None = None,
    known: pd.DataFrame | None = None,
    book: RunLedger | None = None,
) -> ConstantRow:
    """The leaf grant's row: the one recommendation under ``invariants`` (default: the analyst's default, keep
    95%; ``"seed"``: the seed's two) on ``grants`` (default: the frontier's grid), the seed band as context.
    ``known`` and ``book``: the runs' grant sweep and ledger already read (``swept_at``; a report's), so neither is
    made again."""
    grid = tuple(sorted(set(grants if grants is not None else default_grants())))
    grants = tuple(sorted({*grid, policy.grant}))  # the seed band and the effect read the grant in use too
    invariants = invariants if invariants is not None else AnalystInvariants()
    runs = [leaf.run for leaf in evidence.leaves]

    frame = swept_at(runs, policy, grants, known)
    seed_invs = seed_invariants()
    have = {r.run_id for r in runs} | {g for g in map(generator_name, runs) if g}
    probes = {inv.probe: inv.build_probe() for inv in seed_invs if inv.run not in have and inv.probe}
    probe_rows = swept_at(list(probes.values()), policy, grants) if probes else None
    band = grant_band(frame, seed_invs, probe_rows)
    observed = [leaf for leaf in evidence.leaves if leaf.positive or leaf.censored]  # finished, or cut short
    pos = evidence.positives
    at = band.table[band.table["grant"] == policy.grant].iloc[0]
    effect = (
        f"at {policy.grant:,}: {at['finished_inside']} of {at['finished_runs']} runs that finished on their own "
        f"finish inside; {at['landed_mid_work']} landed mid-work; spend saved {at['spend_saved']:,}"
    )
    landed = frame[(frame["grant"] == policy.grant) & frame["landing_started_at"].notna()]
    notes: list[str] = []
    if probes:
        notes.append(
            "the seed's invariants read a synthetic probe ("
            + ", ".join(str(k) for k in probes)
            + "): the corpus has no such run; it is replayed for the invariants only"
        )
    notes.append(band.words)
    notes.extend(b.words for b in band.bindings)
    common = dict(
        name="leaf grant",
        ref=GRANT,
        seed=GRANT.value,
        in_use=policy.grant,
        unit="tokens of billed work",
        effect=effect,
        touched=tuple(landed["run_id"]),
        rule="the one recommendation (docs/frontier.md)",
        runs=len(observed),
        calls=sum(leaf.calls for leaf in observed),
        chart="grant",
        evidence=band.table,
    )
    if len(pos) < MIN_RUNS:
        why = f"{len(pos)} positive runs; {MIN_RUNS} needed"
        return not_enough(why, notes=tuple(notes), **common)
    # The one recommendation engine (workbench.analysis.recommendation): the same grant and band as `frontier` and
    # `report` for the same invariants on the same grid.
    over = {k: v for k, v in policy.overrides().items() if k not in ("grant", "context_length")}
    # The frontier's policies are these at the grid (unless the policy has a context manager, which the frontier
    # leaves out): it reads the same rows, and the same ledger when it is these runs'.
    plain = policy == Policy.named(policy.rules, grant=policy.grant, context_length=None, **over)
    rows = (frame if set(grants) == set(grid) else frame[frame["grant"].isin(grid)]) if plain else None
    fr = frontier(runs, rules=(policy.rules,), grants=grid, by="all", overrides=over, sweep=rows, book=book)
    rec = recommendations(fr, invariants, runs)[0]
    rule = (
        f"the one recommendation (docs/frontier.md): the smallest swept grant where every invariant holds "
        f"({rec.invariants}); band: the swept grants from it on where they still hold"
    )
    notes.append("the seed band (above) is context; the recommendation decides")
    if not rec.found:
        return ConstantRow(
            status=NONE_SATISFIES,
            recommended=None,
            band=None,
            why=rec.why,
            notes=tuple(notes),
            **{**common, "rule": rule},
        )
    notes.insert(0, f"from the frontier (rule set {policy.rules}): {rec.best_keeps}; {fr.interval}")
    notes.extend(rec.binding)
    return ConstantRow(
        status=RECOMMENDED,
        recommended=int(rec.grant),
        band=rec.band,
        extrapolated=rec.band_open,
        why=rec.why,
        notes=tuple(notes),
        **{**common, "rule": rule},
    )
