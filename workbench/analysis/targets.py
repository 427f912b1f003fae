"""Invariants the analyst sets (``AnalystInvariants``: flags or an ``[invariants]`` TOML table), and the grant
they pick on a frontier: the smallest swept grant where every invariant holds. The seed's own two invariants are a
separate set (``seed``). docs/frontier.md.
"""

from __future__ import annotations

import html
import math
import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

import pandas as pd

SEED_SET = "seed"
DEFAULT_KEEP = 0.95
"""The share of resolved runs a grant keeps by default: the issue's question ("which grant keeps 95%")."""


@dataclass(frozen=True)
class AnalystInvariants:
    """What a grant must do on a frontier curve (one group, rule set and context length). ``None``: not asked."""

    keep_resolved: float | None = DEFAULT_KEEP
    keep_bound: Literal["point", "lower"] = "point"
    max_lost: int | None = None
    max_raw: int | None = None
    min_saved_usd: float | None = None
    min_saved_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.keep_resolved is not None and not 0 < self.keep_resolved <= 1:
            raise ValueError(f"keep_resolved must be a share in (0, 1], got {self.keep_resolved}")
        if self.keep_bound not in ("point", "lower"):
            raise ValueError(f"keep_bound must be 'point' or 'lower', got {self.keep_bound!r}")
        for name in ("max_lost", "max_raw", "min_saved_tokens"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
        if self.min_saved_usd is not None and not self.min_saved_usd >= 0:
            raise ValueError(f"min_saved_usd must be a non-negative number, got {self.min_saved_usd!r}")

    @classmethod
    def from_toml(cls, path: str | Path) -> AnalystInvariants:
        """Read ``[invariants]`` from a TOML file; an unknown key or a bad value is an error naming the file."""
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"{path}: cannot read invariants file ({exc.strerror or exc})") from None
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not valid TOML ({exc})") from None
        table = data.get("invariants", data)
        if not isinstance(table, dict):
            raise ValueError(f"{path}: [invariants] must be a table")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(table) - known)
        if unknown:
            raise ValueError(f"{path}: unknown invariant(s) {unknown}; known: {', '.join(sorted(known))}")
        kw = dict(table)
        if "keep_resolved" not in kw:
            kw["keep_resolved"] = None  # a file states every invariant it wants
        try:
            return cls(**kw)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None

    def replace(self, **kw: Any) -> AnalystInvariants:
        return AnalystInvariants(**{**asdict(self), **kw})

    def checks(self) -> list[tuple[str, str]]:
        """(name, statement) of each invariant asked."""
        out = []
        if self.keep_resolved is not None:
            what = "share" if self.keep_bound == "point" else "interval's lower end"
            out.append(("keep_resolved", f"resolved runs kept ({what}) >= {self.keep_resolved:.0%}"))
        if self.max_lost is not None:
            out.append(("max_lost", f"resolved runs lost <= {self.max_lost:,}"))
        if self.max_raw is not None:
            out.append(("max_raw", f"no run reaches more than {self.max_raw:,} raw tokens"))
        if self.min_saved_usd is not None:
            out.append(("min_saved_usd", f"saves at least ${self.min_saved_usd:,.2f}"))
        if self.min_saved_tokens is not None:
            out.append(("min_saved_tokens", f"saves at least {self.min_saved_tokens:,} tokens"))
        return out

    @property
    def words(self) -> str:
        return "; ".join(s for _, s in self.checks()) or "no invariants"

    def failures(self, row: dict[str, Any] | pd.Series) -> list[str]:
        """The invariants that fail on one frontier row (empty: all hold)."""
        out = []
        if self.keep_resolved is not None:
            col = "resolved_kept_share" if self.keep_bound == "point" else "resolved_kept_low"
            v = row[col]
            # a tiny tolerance: 57/60 is 0.95 exactly, but not always in floating point
            if v is None or (isinstance(v, float) and math.isnan(v)) or v < self.keep_resolved - 1e-12:
                out.append("keep_resolved")
        if self.max_lost is not None and row["resolved_lost"] > self.max_lost:
            out.append("max_lost")
        if self.max_raw is not None and row["max_raw"] > self.max_raw:
            out.append("max_raw")
        if self.min_saved_usd is not None:
            v = row["spend_saved_usd"]
            if v is None or (isinstance(v, float) and math.isnan(v)) or v < self.min_saved_usd:
                out.append("min_saved_usd")
        if self.min_saved_tokens is not None and row["spend_saved_tokens"] < self.min_saved_tokens:
            out.append("min_saved_tokens")
        return out


@dataclass(frozen=True)
class Pick:
    """The grant an invariant set picks on one frontier curve, and why."""

    group: str
    rules: str
    context_length: int | None
    invariants: AnalystInvariants
    grant: int | None
    row: dict[str, Any] | None
    why: str
    holds: tuple[bool, ...] = ()
    grants: tuple[int, ...] = ()

    @property
    def found(self) -> bool:
        return self.grant is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "rules": self.rules,
            "context_length": self.context_length,
            "invariants": asdict(self.invariants),
            "grant": self.grant,
            "why": self.why,
        }

    def _repr_html_(self) -> str:
        return f"<p><b>{html.escape(self.group)}</b>: {html.escape(self.why)}</p>"


def pick_grant(
    curve: pd.DataFrame,
    invariants: AnalystInvariants,
    extra: dict[int, bool] | None = None,
    extra_name: str = "the seed's invariants on its runaway probe",
) -> Pick:
    """The smallest grant of ``curve`` (one group, rule set and context length; ``Frontier.curve``) where every
    invariant holds; ``extra`` adds a per-grant verdict from elsewhere (e.g. the seed probe)."""
    if curve.empty:
        raise ValueError("an empty frontier curve")
    curve = curve.sort_values("grant")
    first = curve.iloc[0]
    ctx = first["context_length"]
    ctx = None if ctx is None or (isinstance(ctx, float) and math.isnan(ctx)) else int(ctx)
    grants = tuple(int(g) for g in curve["grant"])
    asked = [w for w in (invariants.words if invariants.checks() else "", extra_name if extra else "") if w]
    words = "; ".join(asked) or "no invariants"
    holds = []
    fails: dict[str, int] = {}
    for _, row in curve.iterrows():
        bad = invariants.failures(row)
        if extra is not None and not extra.get(int(row["grant"]), False):
            bad.append(extra_name)
        for b in bad:
            fails[b] = fails.get(b, 0) + 1
        holds.append(not bad)
    base = {"group": str(first["group"]), "rules": str(first["rules"]), "context_length": ctx}
    if not any(holds):
        why = (
            f"no swept grant ({grants[0]:,} to {grants[-1]:,}) satisfies every invariant ({words}); "
            + ", ".join(f"{k} fails at {n} of {len(grants)} grants" for k, n in fails.items())
        )
        if invariants.keep_resolved is not None and "resolved" in curve.columns:
            if int(curve["resolved"].max()) == 0:
                why += "; no run of this group succeeded, so there is no share of successful runs to keep"
            else:
                best = curve.loc[curve["resolved_kept_share"].idxmax()]
                why += (
                    f"; the most any swept grant keeps is {int(best['resolved_kept'])} of {int(best['resolved'])} "
                    f"({best['resolved_kept_share']:.1%}, at {int(best['grant']):,})"
                )
        return Pick(
            **base, invariants=invariants, grant=None, row=None, why=why, holds=tuple(holds), grants=grants
        )
    k = holds.index(True)
    row = curve.iloc[k].to_dict()
    grant = grants[k]
    why = f"the smallest swept grant where every invariant holds ({words})"
    if k == 0:
        why += f"; it is the bottom of the swept grid ({grants[0]:,}): a smaller grant may hold too"
    if not all(holds[k:]):
        back = grants[k + holds[k:].index(False)]
        why += f"; note: they fail again at {back:,}"
    return Pick(
        **base, invariants=invariants, grant=grant, row=row, why=why, holds=tuple(holds), grants=grants
    )


def pick_all(
    frontier: Any, invariants: AnalystInvariants, extra: dict[int, bool] | None = None
) -> list[Pick]:
    """One pick per (group, rule set, context length) of a ``Frontier``."""
    t = frontier.table
    out = []
    keys = t[["group", "rules", "context_length"]].drop_duplicates(ignore_index=True)
    for rec in keys.to_dict("records"):
        ctx = rec["context_length"]
        ctx = None if ctx is None or (isinstance(ctx, float) and math.isnan(ctx)) else int(ctx)
        out.append(pick_grant(frontier.curve(rec["group"], rec["rules"], ctx), invariants, extra))
    return out
