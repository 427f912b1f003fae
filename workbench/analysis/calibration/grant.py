"""The leaf grant (``DEFAULT_LEAF_TOKENS``): from the frontier where the corpus has positive runs, with the band
under the seed's invariants and the survival of tokens-to-finish of positive runs as context.

The recommendation is the frontier's (``workbench.analysis.frontier``, docs/frontier.md), the same answer as the
report's headline: the smallest swept grant that keeps ``DEFAULT_KEEP`` of the resolved runs (finished, where
unlabelled). Its band is read off the Wilson interval of that share: from the smallest grant whose interval's upper
end reaches the share (the data cannot rule it out) to the smallest whose lower end does (the data demand no
more); a band edge beyond the swept grid is said to be extrapolated. Where no swept grant keeps the share, the
band-and-survival rule below decides, and the row says so.

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
from workbench.analysis.frontier import default_grants, frontier
from workbench.analysis.invariants import seed_invariants
from workbench.analysis.recommend import recommend
from workbench.analysis.survival import survival
from workbench.analysis.targets import DEFAULT_KEEP, AnalystInvariants, pick_grant
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
    facts = run_facts(runs, evidence.prints)
    frame = annotate(
        sweep(
            runs,
            {"grant": list(grants)},
            base=policy,
            segments=False,
            workers=1,
            progress=False,
            prints=evidence.prints,
        ),
        facts,
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
    notes: list[str] = []
    if probes:
        notes.append(
            "the seed's invariants read a synthetic probe ("
            + ", ".join(str(k) for k in probes)
            + "): the corpus has no such run; it is replayed for the invariants only"
        )
    notes.append(band.words)
    notes.extend(b.words for b in band.bindings)
    leaf_calls = {leaf.run_id: leaf.calls for leaf in evidence.leaves}  # once, not per run
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
        calls=int(sum(leaf_calls[r] for r in obs["run_id"])),
        chart="grant",
        evidence=band.table,
    )
    if len(pos) < MIN_RUNS:
        why = f"{len(pos)} positive runs; {MIN_RUNS} needed"
        return ConstantRow(
            status=NOT_ENOUGH, recommended=None, band=None, why=why, notes=tuple(notes), **common
        )
    # the frontier's own grid as well, so the row gives the frontier's and the report's answer
    fr = frontier(
        runs,
        rules=(policy.rules,),
        grants=sorted({*grants, *default_grants()}),
        by="all",
        prints=evidence.prints,
    )
    curve = fr.curve(rules=policy.rules)
    pick = pick_grant(curve, AnalystInvariants())
    if pick.found:
        upper = curve[curve["resolved_kept_high"] >= DEFAULT_KEEP]["grant"]
        lower = curve[curve["resolved_kept_low"] >= DEFAULT_KEEP]["grant"]
        lo = int(upper.min()) if len(upper) else int(pick.grant)
        beyond = lower.empty
        hi = int(lower.min()) if not beyond else int(curve["grant"].max())
        at_pick = curve[curve["grant"] == pick.grant].iloc[0]
        notes.insert(
            0,
            f"from the frontier (rule set {policy.rules}): {int(at_pick['resolved_kept'])} of "
            f"{int(at_pick['resolved'])} {fr.basis(fr.groups[0])} runs kept at {int(pick.grant):,}; "
            f"{fr.interval}",
        )
        if beyond:
            notes.append(
                f"no swept grant up to {int(curve['grant'].max()):,} has the interval's lower end at {DEFAULT_KEEP:.0%}: "
                "the band's upper edge is the grid's end"
            )
        notes.append("the seed band (above) is context; the frontier decides")
        return ConstantRow(
            status=RECOMMENDED,
            recommended=int(pick.grant),
            band=(lo, hi),
            extrapolated=beyond,
            notes=tuple(notes),
            **{
                **common,
                "rule": (
                    f"the frontier's smallest swept grant keeping {DEFAULT_KEEP:.0%} of resolved runs (finished, "
                    "where unlabelled) with no landing started; band: from where the share's Wilson interval "
                    "reaches it at its upper end to where it does at its lower end"
                ),
            },
        )
    notes.append(
        f"the frontier keeps {DEFAULT_KEEP:.0%} at no swept grant ({pick.why}): the seed band decides"
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
