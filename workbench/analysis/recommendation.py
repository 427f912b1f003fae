"""The one recommendation: invariants + frontier → the grant, its band, and why. ``frontier``, ``report``,
``calibrate`` and the notebooks all ask ``recommend`` (docs/frontier.md, "One recommendation": grant, band, why, and
what is said when no swept grant satisfies the invariants).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from workbench.analysis.frontier import missing
from workbench.analysis.targets import SEED_SET, AnalystInvariants
from workbench.format import usd
from workbench.govern.policy import AGENT_RULES

SEED_WORDS = "the seed's invariants on its runaway"


@dataclass(frozen=True)
class Recommendation:
    """The grant one invariant set recommends on one frontier curve (group, rule set, context length)."""

    group: str
    rules: str
    context_length: int | None
    invariants: str
    """``seed``, or the analyst's invariants in words."""
    grant: int | None
    band: tuple[int, int] | None
    band_open: bool
    binding: tuple[str, ...]
    why: str
    best_grant: int | None
    best_keeps: str
    row: dict[str, Any] | None
    grants: tuple[int, ...]
    holds: tuple[bool, ...]
    analyst: AnalystInvariants | None = None
    no_success: bool = False
    """The group has no successful run: nothing for a grant to keep, so no grant (not even a best one)."""

    @property
    def found(self) -> bool:
        return self.grant is not None

    @property
    def band_words(self) -> str:
        if self.band is None:
            return "no band"
        lo, hi = self.band
        top = " (the grid's top: it may reach beyond)" if self.band_open else ""
        return f"{lo:,} to {hi:,}{top}"

    @property
    def headline(self) -> str:
        """One line: the grant and its band, or that none satisfies the invariants, with the best grant."""
        if self.found:
            return f"recommended grant {self.grant:,} (band {self.band_words})"
        if self.no_success:
            return f"no grant to recommend: {self.group} has no successful run"
        best = f"; best swept grant {self.best_grant:,}: {self.best_keeps}" if self.best_grant else ""
        return "no swept grant satisfies every invariant" + best

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "rules": self.rules,
            "context_length": self.context_length,
            "invariants": asdict(self.analyst) if self.analyst is not None else self.invariants,
            "grant": self.grant,
            "band": list(self.band) if self.band else None,
            "band_open": self.band_open,
            "binding": list(self.binding),
            "why": self.why,
            "best_grant": self.best_grant,
            "best_keeps": self.best_keeps,
            "no_success": self.no_success,
        }


def keeps(row: dict[str, Any] | pd.Series) -> str:
    """What one frontier row keeps, in words: resolved kept of resolved, lost (by cause), dollars saved."""
    r = row
    word = "finished" if r["basis"] == "finished" else "resolved"
    lost = r.get("lost_by") or {}
    by = " (" + ", ".join(f"{n} {c}" for c, n in lost.items()) + ")" if lost else ""
    saved, share = r["spend_saved_usd"], r["resolved_kept_share"]
    money = "" if missing(saved) else f", saves {usd(saved)}"
    pct = "—" if missing(share) else f"{share:.1%}"
    return (
        f"keeps {int(r['resolved_kept'])} of {int(r['resolved'])} {word} runs ({pct}), "
        f"loses {int(r['resolved_lost'])}{by}{money}"
    )


SeedVerdict = bool | tuple[str, ...]
"""Per grant: True/False, or the names of the seed invariants that fail (empty: all hold)."""


def _seed_ok(v: SeedVerdict | None) -> bool:
    return bool(v) if isinstance(v, bool) or v is None else not v


def _fails(
    row: pd.Series, analyst: AnalystInvariants | None, seed: dict[int, SeedVerdict] | None
) -> list[str]:
    bad = analyst.failures(row) if analyst is not None else []
    if seed is not None:
        v = seed.get(int(row["grant"]), False)
        if isinstance(v, bool):
            if not v:
                bad.append(SEED_WORDS)
        else:
            bad.extend(f"seed: {name}" for name in v)
    return bad


def _why_fail(name: str, row: pd.Series, analyst: AnalystInvariants | None) -> str:
    if name == "keep_resolved" and analyst is not None:
        return f"keep_resolved ({row['resolved_kept_share']:.1%} kept, {analyst.keep_resolved:.0%} asked)"
    if name == "max_lost":
        return f"max_lost ({int(row['resolved_lost'])} lost)"
    if name == "max_raw":
        return f"max_raw ({int(row['max_raw']):,} raw)"
    if name == "min_saved_usd":
        return f"min_saved_usd ({usd(row['spend_saved_usd'])} saved)"
    if name == "min_saved_tokens":
        return f"min_saved_tokens ({int(row['spend_saved_tokens']):,} saved)"
    return name


def recommend(
    curve: pd.DataFrame, invariants: AnalystInvariants | str, seed_holds: dict[int, SeedVerdict] | None = None
) -> Recommendation:
    """The recommendation on one frontier curve (``Frontier.curve``). ``invariants``: the analyst's, or
    ``"seed"`` with ``seed_holds`` (per grant, whether the seed's invariants hold: ``seed_verdicts``)."""
    if curve.empty:
        raise ValueError("an empty frontier curve")
    seed = invariants == SEED_SET
    if seed and seed_holds is None:
        raise ValueError("the seed's invariants need their per-grant verdicts (seed_verdicts)")
    analyst = None if seed else invariants
    assert seed or isinstance(analyst, AnalystInvariants)
    curve = curve.sort_values("grant").reset_index(drop=True)
    first = curve.iloc[0]
    ctx = None if missing(first["context_length"]) else int(first["context_length"])
    grants = tuple(int(g) for g in curve["grant"])
    fails = [_fails(row, analyst, seed_holds if seed else None) for _, row in curve.iterrows()]
    holds = tuple(not f for f in fails)
    words = SEED_WORDS if seed else (analyst.words if analyst is not None else "")
    base: dict[str, Any] = {
        "group": str(first["group"]),
        "rules": str(first["rules"]),
        "context_length": ctx,
        "invariants": SEED_SET if seed else words,
        "grants": grants,
        "holds": holds,
        "analyst": analyst,
    }
    none = {"grant": None, "band": None, "band_open": False, "row": None}  # every answer that names no grant
    if base["rules"] in AGENT_RULES:
        # an agent's own rules (openhands: an iteration limit) never read the grant: every grant replays the same,
        # so the smallest would be "recommended" for nothing it does
        why = (
            f"no grant recommended: rules {base['rules']} never read the grant (every grant swept, "
            f"{grants[0]:,} to {grants[-1]:,}, replays the same); compare rule sets instead, or sweep the "
            "agent's own limits (--cost-limits, --step-limits)"
        )
        return Recommendation(**base, **none, binding=(), why=why, best_grant=None, best_keeps="")
    if int(curve["resolved"].max()) == 0:
        # no successful run: every grant keeps 0 of 0, so none is better than another and none is named
        word = "finished" if first["basis"] == "finished" else "resolved"
        n = int(first["runs"])
        why = (
            f"no grant to recommend: {base['group']} has no successful run (0 of {n} run{'' if n == 1 else 's'} "
            f"{word}), so there is nothing a grant can keep"
        )
        return Recommendation(
            **base, **none, binding=(), why=why, best_grant=None, best_keeps="", no_success=True
        )
    if not any(holds):
        ok = [_seed_ok(seed_holds.get(g)) for g in grants] if seed else []
        pool = curve[ok] if seed and any(ok) else curve
        top = pool["resolved_kept_share"].max()
        best_row = pool[pool["resolved_kept_share"] >= top - 1e-12].iloc[0]
        counts = Counter(name for f in fails for name in f)  # in the order the failures first appear
        failing = tuple(f"{k} fails at {n} of {len(grants)} grants" for k, n in counts.items())
        best_grant = int(best_row["grant"])
        best = keeps(best_row)
        why = (
            f"no swept grant ({grants[0]:,} to {grants[-1]:,}) satisfies every invariant ({words}); "
            f"{', '.join(failing)}; the best swept grant is {best_grant:,}: it {best}"
        )
        return Recommendation(
            **base, **none, binding=failing, why=why, best_grant=best_grant, best_keeps=best
        )
    k = holds.index(True)
    j = k
    while j + 1 < len(holds) and holds[j + 1]:
        j += 1
    binding = []
    if k > 0:
        below = curve.iloc[k - 1]
        binding.append(
            f"floor: {', '.join(_why_fail(n, below, analyst) for n in fails[k - 1])} fails at {grants[k - 1]:,}"
        )
    else:
        binding.append(f"floor: the bottom of the swept grid ({grants[0]:,}); a smaller grant may hold too")
    if j + 1 < len(holds):
        above = curve.iloc[j + 1]
        binding.append(
            f"ceiling: {', '.join(_why_fail(n, above, analyst) for n in fails[j + 1])} fails at {grants[j + 1]:,}"
        )
    else:
        binding.append(f"ceiling: the top of the swept grid ({grants[-1]:,}); nothing swept above it fails")
    row = curve.iloc[k].to_dict()
    why = f"the smallest swept grant where every invariant holds ({words}); " + "; ".join(binding)
    if not all(holds[j + 1 :]) and any(holds[j + 1 :]):
        why += f"; they hold again from {grants[j + 1 + holds[j + 1 :].index(True)]:,}"
    return Recommendation(
        **base,
        grant=grants[k],
        band=(grants[k], grants[j]),
        band_open=j == len(holds) - 1,
        binding=tuple(binding),
        why=why,
        best_grant=grants[k],
        best_keeps=keeps(row),
        row=row,
    )


def seed_verdicts(
    leaves: Sequence[Any], rules: str, grants: Sequence[int], overrides: dict[str, Any] | None = None
) -> dict[int, tuple[str, ...]]:
    """Per grant, the seed's invariants that fail (empty: all hold): each read on the corpus's own run of that name
    where it has one, else on its synthetic probe (replayed for the invariants only)."""
    from workbench.analysis.invariants import seed_invariants
    from workbench.govern.policy import Policy
    from workbench.scale.sweep import sweep

    out: dict[int, tuple[str, ...]] = {int(g): () for g in grants}
    policies = [Policy.named(rules, grant=int(g), **(overrides or {})) for g in grants]
    built: dict[str, Any] = {}
    for inv in seed_invariants():
        run = next((r for r in leaves if r.run_id == inv.run or generator_name(r) == inv.run), None)
        if run is None:
            if inv.probe not in built:
                built[inv.probe] = inv.build_probe()
            run = built[inv.probe]
        frame = sweep([run], policies, segments=False, progress=False)
        for _, row in frame.iterrows():
            if not inv.holds(row):
                out[int(row["grant"])] += (inv.name,)
    return out


def generator_name(run: Any) -> str | None:
    """A synthetic run's generator (``metadata["generator"]["name"]``), else None."""
    gen = run.metadata.get("generator")
    return gen.get("name") if isinstance(gen, dict) else None


def recommendations(
    frontier: Any, invariants: AnalystInvariants | str, leaves: Sequence[Any] = ()
) -> list[Recommendation]:
    """One recommendation per (group, rule set, context length) of a ``Frontier``. The seed's verdicts are
    computed once per rule set (with the frontier's overrides) on ``leaves`` or the probe."""
    t = frontier.table
    keys = t[["group", "rules", "context_length"]].drop_duplicates(ignore_index=True)
    grants = sorted({int(g) for g in t["grant"]})
    verdicts: dict[str, dict[int, tuple[str, ...]]] = {}
    out = []
    for rec in keys.to_dict("records"):
        ctx = None if missing(rec["context_length"]) else int(rec["context_length"])
        holds = None
        if invariants == SEED_SET:
            if rec["rules"] not in verdicts:
                verdicts[rec["rules"]] = seed_verdicts(leaves, rec["rules"], grants, frontier.overrides)
            holds = verdicts[rec["rules"]]
        out.append(recommend(frontier.curve(rec["group"], rec["rules"], ctx), invariants, holds))
    return out
