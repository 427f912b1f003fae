"""Invariants the analyst sets (``AnalystInvariants``: flags or an ``[invariants]`` TOML table); the grant they
pick on a frontier is ``workbench.analysis.recommendation.recommend``'s. The seed's own two invariants are a
separate set (``seed``). docs/frontier.md.
"""

from __future__ import annotations

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
