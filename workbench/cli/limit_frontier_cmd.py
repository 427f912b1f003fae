"""``workbench frontier PATH... --rules AGENT --cost-limits START:STOP:STEP [--step-limits ...]``: the frontier in
the agent's own limits (``workbench.analysis.limit_frontier``), with the recommendation in its own unit
(docs/frontier.md, "In an agent's own limits"; which limits each rule set has: docs/governors.md).
"""

from __future__ import annotations

import argparse
import math

from workbench.cli import errors

TABLE_COLUMNS = ("cost_limit", "step_limit", "resolved", "resolved_kept", "kept %", "95% CI",
                 "resolved_at_risk", "resolved_lost", "lost_by_cost_limit", "lost_by_step_limit",
                 "unresolved_cut", "spend_saved_usd")  # fmt: skip
LIMITED_RULES = ("mini-swe-agent", "swe-agent", "openhands", "claude-code")


def cost_range(text: str) -> tuple[float, ...]:
    """Dollar limits: ``START:STOP:STEP`` (STOP inclusive), one number or a comma list, each > 0."""
    s = str(text).strip().replace("$", "")
    usage = "expected START:STOP:STEP in dollars (STOP inclusive), one number or a comma list of limits > 0"
    try:
        if ":" in s:
            parts = [float(p) for p in s.split(":")]
            if len(parts) != 3 or not all(math.isfinite(p) and p > 0 for p in parts):
                raise ValueError
            start, stop, step = parts
            if stop < start:
                raise argparse.ArgumentTypeError(f"STOP must be >= START, got {text!r}")
            count = math.floor(round((stop - start) / step, 9)) + 1
            if count > errors.MAX_GRID_VALUES:
                raise argparse.ArgumentTypeError(
                    f"{count:,} limits; at most {errors.MAX_GRID_VALUES:,}, got {text!r}"
                )
            # whole cents where the steps are: 0.1 + 0.2 is not 0.3 in binary, a limit typed as 0.3 is
            return tuple(round(start + k * step, 10) for k in range(count))
        values = [float(p) for p in s.split(",") if p.strip()]
        if not values or not all(math.isfinite(v) and v > 0 for v in values):
            raise ValueError
        return tuple(sorted(set(values)))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{usage}, got {text!r}") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "an agent's own limits (with --rules mini-swe-agent, swe-agent, openhands, claude-code)"
    )
    g.add_argument(
        "--cost-limits",
        type=cost_range,
        default=None,
        metavar="START:STOP:STEP",
        help="sweep the agent's dollar limit (cost_limit, per_instance_cost_limit, max_budget...), e.g. 0.25:3:0.25",
    )
    g.add_argument(
        "--step-limits",
        type=errors.grant_range,
        default=None,
        metavar="START:STOP:STEP",
        help="sweep the agent's step limit (step_limit, per_instance_call_limit, max_turns)",
    )


def wanted(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "cost_limits", None) or getattr(args, "step_limits", None))


def run(args: argparse.Namespace) -> int:
    from workbench.analysis.limit_frontier import limit_frontier, money, recommend_limits
    from workbench.analysis.targets import SEED_SET
    from workbench.cli.invariants import invariants_from_args

    rules = list(args.rules)
    bad = [r for r in rules if r not in LIMITED_RULES]
    if bad:
        raise errors.UsageError(
            "--rules",
            f"--cost-limits/--step-limits sweep an agent's own limits: {', '.join(bad)} has none; "
            f"use {errors.one_of(LIMITED_RULES)}",
        )
    if args.grants or args.context_lengths != (None,):
        raise errors.UsageError(
            "--grants", "an agent's own limits are swept without grants or context lengths"
        )
    invariants = invariants_from_args(args)
    if invariants == SEED_SET:
        raise errors.UsageError(
            "--invariants", "the seed's invariants read a token grant; not an agent's limits"
        )
    from workbench.cli._load import load_runs  # the readers: not for --help

    corpus = load_runs(args.paths, "frontier", "leaves (sessions split at each user prompt)")
    try:
        frontiers = [
            limit_frontier(
                corpus,
                rules=r,
                cost_limits=args.cost_limits,
                step_limits=args.step_limits,
                by=args.by,
                confidence=args.confidence,
            )
            for r in rules
        ]
    except ValueError as exc:
        raise errors.DataError(str(exc)) from exc
    from workbench.cli._format import print_jsonl, table, with_kept

    if args.json:
        print_jsonl(
            (rec for fr in frontiers for rec in fr.records()),
            [pick for fr in frontiers for pick in recommend_limits(fr, invariants)],
        )
        return 1 if corpus.problems else 0

    for fr in frontiers:
        print(f"{fr.runs.shape[0]} runs under {fr.rules}'s own limits; shares carry the {fr.interval}.")
        print(
            f"dollars: {'the cost each call recorded' if fr.price_source == 'recorded' else 'genai-prices'}"
        )
        for n in fr.notes:
            print(f"note: {n}")
        for pick in recommend_limits(fr, invariants):
            curve = fr.curve(pick.group)
            print()
            print(f"== {pick.group} — rules {fr.rules}")
            print(pick.why)
            rows = []
            for rec in map(with_kept, curve.to_dict("records")):
                if rec["cost_limit"] is not None and not _nan(rec["cost_limit"]):
                    rec["cost_limit"] = money(rec["cost_limit"])
                if not _nan(rec["spend_saved_usd"]):
                    rec["spend_saved_usd"] = f"${rec['spend_saved_usd']:,.2f}"
                rows.append(rec)
            cols = [c for c in TABLE_COLUMNS if c not in ("cost_limit", "step_limit") or c in _swept(curve)]
            print(table(rows, cols))
    return 1 if corpus.problems else 0


def _nan(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _swept(curve) -> tuple[str, ...]:
    return tuple(c for c in ("cost_limit", "step_limit") if curve[c].notna().any())
