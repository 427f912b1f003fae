"""The leaf grant (``DEFAULT_LEAF_TOKENS``): the band under the seed's invariants, and the survival of
tokens-to-finish of positive runs.

Computed through the existing replay, sweep and band code (``workbench.replay.sweep``,
``workbench.analysis.band.grant_band``, ``workbench.analysis.recommend``): the leaves are swept over a grid of grants
under the policy, the seed's invariants are checked (on a synthetic probe where the corpus lacks their run — it is
replayed for the invariants only, never counted), and Kaplan-Meier over positive runs' bills (censored: runs not
seen to finish) gives the grant covering ``GRANT_COVER`` of them. The recommendation is ``recommend``'s: the
smallest swept grant inside the band covering that share, else the band's nearer edge.
"""

from __future__ import annotations

import math

import pandas as pd

from workbench.analysis.band import grant_band
from workbench.analysis.calibration.evidence import MIN_RUNS, Evidence
from workbench.analysis.calibration.model import NOT_ENOUGH, RECOMMENDED, ConstantRow
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.frames import annotate, run_facts
from workbench.analysis.invariants import seed_invariants
from workbench.analysis.recommend import recommend
from workbench.analysis.survival import survival
from workbench.govern.policy import Policy
from workbench.replay.sweep import sweep

GRANT = ConstantRef("workbench.govern.cost", "DEFAULT_LEAF_TOKENS")
GRANT_COVER = 0.9  # the report's coverage share (workbench.report.build.ReportConfig.coverage_share)
GRANTS = tuple(range(150_000, 300_001, 5_000))  # workbench choice: the report's range, in 5,000 steps


def _generator(run) -> str | None:
    gen = run.metadata.get("generator")
    return gen.get("name") if isinstance(gen, dict) else None


def grant_row(evidence: Evidence, policy: Policy, grants: tuple[int, ...] = GRANTS) -> ConstantRow:
    grants = tuple(sorted({*grants, policy.grant}))
    runs = [leaf.run for leaf in evidence.leaves]
    facts = run_facts(runs)
    frame = annotate(
        sweep(runs, {"grant": list(grants)}, base=policy, segments=False, workers=1, progress=False), facts
    )
    invariants = seed_invariants()
    have = {r.run_id for r in runs} | {g for g in map(_generator, runs) if g}
    probes = {inv.probe: inv.build_probe() for inv in invariants if inv.run not in have and inv.probe}
    probe_rows = None
    if probes:
        pr = list(probes.values())
        probe_rows = annotate(
            sweep(pr, {"grant": list(grants)}, base=policy, segments=False, workers=1, progress=False),
            run_facts(pr),
        )
    band = grant_band(frame, invariants, probe_rows)
    obs = pd.DataFrame(
        [
            {"run_id": leaf.run_id, "tokens": float(leaf.spent[-1]), "finished": leaf.positive}
            for leaf in evidence.leaves
            if leaf.positive or leaf.censored
        ],
        columns=["run_id", "tokens", "finished"],
    )
    pos = evidence.positives
    at = band.table[band.table["grant"] == policy.grant].iloc[0]
    effect = (
        f"at {policy.grant:,}: {at['finished_inside']} of {at['finished_runs']} runs that finished on their own "
        f"finish inside; {at['landed_mid_work']} landed mid-work; spend saved {at['spend_saved']:,}"
    )
    landed = frame[(frame["grant"] == policy.grant) & frame["landing_started_at"].notna()]
    notes = [
        "computed through the replay sweep and the grant-band code (workbench.analysis.band); "
        "workbench.analysis.frontier was not used"
    ]
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
        rule=(
            f"inside the band where the seed's invariants hold, the smallest swept grant covering {GRANT_COVER:.0%} "
            "of positive runs' bills (Kaplan-Meier, censored: runs not seen to finish); the band's edge when "
            "the coverage falls outside it"
        ),
        runs=len(obs),
        calls=int(sum(evidence.by_id()[r].calls for r in obs["run_id"])),
        chart="grant",
        evidence=band.table,
    )
    if len(pos) < MIN_RUNS:
        why = f"{len(pos)} positive runs; {MIN_RUNS} needed"
        return ConstantRow(
            status=NOT_ENOUGH, recommended=None, band=None, why=why, notes=tuple(notes), **common
        )
    cov = survival(obs).coverage(GRANT_COVER)
    notes.append(cov.words + " (positive runs: resolved, or finished where unlabelled)")
    pick, why_pick = recommend(band, cov, grants)
    if pick is None:
        return ConstantRow(
            status=NOT_ENOUGH, recommended=None, band=None, why=why_pick, notes=tuple(notes), **common
        )
    notes.append(why_pick)
    lo = band.exact_low if band.exact_low is not None else band.low
    hi = band.exact_high if band.exact_high is not None else band.high
    extrapolated = math.isinf(cov.grant)
    return ConstantRow(
        status=RECOMMENDED,
        recommended=int(pick),
        band=(lo, hi),
        extrapolated=extrapolated,
        notes=tuple(notes),
        **common,
    )
