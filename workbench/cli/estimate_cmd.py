"""``workbench estimate PATH... [--strategy adr|fitted|anchored|exact] [--json]``: the estimator study
(docs/estimator.md), per source and model, before and after ADR-107's calibration; says what it fitted.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

import orjson

from workbench.cli import errors
from workbench.cli.errors import printable
from workbench.estimate.constants import STRATEGIES

if TYPE_CHECKING:
    import pandas as pd

    from workbench.estimate.study import EstimatorStudy


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "estimate",
        help="the estimator study: under-/over-count of ADR-107 and alternatives against reported usage",
        description="Compare token-estimation strategies against the prompt tokens providers reported.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a trace file or a folder (any supported format)")
    p.add_argument(
        "--strategy",
        action="append",
        choices=STRATEGIES,
        help=f"a strategy to include, {errors.one_of(STRATEGIES)} (repeatable; default: all four)",
    )
    p.add_argument(
        "--seed",
        type=errors.calibration_factor,
        default=None,
        metavar="F",
        help="calibration seed, a finite number >= 1 (default: the workbench's 1.10)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    p.set_defaults(func=run)


def _clean(obj: Any) -> Any:
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def _text(df: pd.DataFrame) -> str:
    """A frame as plain text: three decimals, missing values as "—", columns with nothing in them left out,
    control characters shown escaped."""
    df = df.dropna(axis=1, how="all")
    text = df.to_string(index=False, na_rep="—", float_format=lambda x: f"{x:,.3f}")
    return printable(text, multiline=True)


def render(s: EstimatorStudy, strategies: list[str]) -> str:
    import pandas as pd

    out = ["Estimator study — actual/estimate per call (>1 = under-count, the overflow direction)", ""]
    summary = s.to_frame()
    if summary.empty:
        return "no calls with a recorded request and reported prompt tokens"
    out += [_text(summary), "", "Calibration bound (later calls under-counted by more than the last growth)"]
    bounds = pd.concat([s.calibration_bound(x) for x in strategies], ignore_index=True)
    out.append(_text(bounds))
    fits = s.fits[[c for c in s.fits.columns if not c.startswith("prefix[") and c != "notes"]]
    out += ["", "Fitted per tokenizer family (chars per token; overheads in tokens)", _text(fits)]
    fit_notes = [f"- {fam}: {n}" for fam, notes in zip(s.fits["family"], s.fits["notes"], strict=True)
                 for n in str(notes).split("; ") if n]  # fmt: skip
    out += fit_notes
    if not s.prefixes.empty:
        p = s.prefixes.groupby("group", sort=True).agg(
            runs=("run_id", "size"),
            prefix_tokens_p50=("prefix_adr", "median"),
            own_first_call_only=("in_sample", "sum"),
        )
        out += ["", "Unseen prefix per group (tokens the source does not record; leave-one-run-out)"]
        out.append(_text(p.reset_index()))
    if not s.classes.empty:
        out += ["", "Per content class (exact tokens where an offline tokenizer exists)", _text(s.classes)]
    out += ["", "Notes:"] + [printable(f"- {n}") for n in s.notes]
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    strategies = args.strategy or list(STRATEGIES)
    from workbench.cli._load import load_runs  # the readers: not for --help

    corpus = load_runs(args.paths, "estimate", "the model calls of every run")
    kw = {} if args.seed is None else {"seed": args.seed}
    from workbench.estimate.study import study  # pandas + scipy: only when the study runs

    s = study(corpus.runs, strategies=strategies, **kw)
    if args.json:
        sys.stdout.write(
            orjson.dumps(_clean(s.to_dict()), option=orjson.OPT_INDENT_2, default=str).decode() + "\n"
        )
    else:
        print(render(s, strategies))
    return 0
