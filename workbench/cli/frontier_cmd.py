"""``workbench frontier PATH... [--rules ...] [--grants START:STOP:STEP] [--context-lengths ...] [--by ...] [--json]``

Which grant keeps the runs that succeed, and what it saves. Every run is replayed under every (rule set, grant,
context length); per group of runs (``--by source|agent|model|all``) and policy it counts the resolved runs kept,
at risk and lost (Wilson 95% intervals), the unresolved runs cut, and the spend in tokens and dollars. Unlabelled
runs count as succeeded when their recording finished on its own (the ``basis`` column says which).

Invariants the analyst sets pick the recommended grant per group — the smallest swept grant where all hold:
``--keep-resolved 0.95`` (the default), ``--keep-bound lower``, ``--max-lost N``, ``--max-raw N``,
``--min-saved-usd X``, ``--min-saved-tokens N``, or ``--invariants FILE.toml`` (an ``[invariants]`` table of the same
names); ``--invariants seed`` picks with the seed's two invariants over its synthetic runaway instead.

With ``--json``: one JSON object per line per (group, policy) with every frontier column (docs/frontier.md), then
one ``{"recommendation": ...}`` line per group.

An agent's own limits: ``--rules mini-swe-agent --cost-limits 0.25:3:0.25`` (and/or ``--step-limits 50:250:50``)
sweeps that agent's dollar and step limits instead of a grant (``workbench.cli.limit_frontier_cmd``): the same
columns, ``cost_limit``/``step_limit`` in place of ``grant``, the recommendation in the agent's own unit.
"""

from __future__ import annotations

import argparse
import json

from workbench.cli import errors, limit_frontier_cmd
from workbench.cli._load import load_runs
from workbench.format import printable
from workbench.govern.policy import RULE_SETS

TABLE_COLUMNS = (
    "grant",
    "resolved",
    "resolved_kept",
    "kept %",
    "95% CI",
    "resolved_at_risk",
    "resolved_lost",
    "unresolved_cut",
    "stopped_inferred",
    "unjudged",
    "spend_saved_tokens",
    "spend_saved_usd",
)


def _share(text: str) -> float:
    value = errors.positive_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"must be a share in (0, 1], got {text!r}")
    return value


def _confidence(text: str) -> float:
    value = errors.positive_float(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text!r}")
    return value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "frontier",
        help="which grant keeps the runs that succeed, and what it saves",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="trace files or folders")
    p.add_argument(
        "--rules",
        type=errors.choice_list(sorted(RULE_SETS)),
        default=("current",),
        help=f"comma list of rule sets, each {errors.one_of(sorted(RULE_SETS))} (default: current)",
    )
    p.add_argument(
        "--grants",
        type=errors.grant_range,
        default=None,
        metavar="START:STOP:STEP",
        help="grants: START:STOP:STEP (STOP inclusive), one number or a comma list (default 100000:600000:10000)",
    )
    p.add_argument(
        "--context-lengths",
        type=errors.context_lengths,
        default=(None,),
        help="comma list of context lengths; 'none' = no context manager (default: none)",
    )
    p.add_argument(
        "--by", default="source", choices=("source", "agent", "model", "all"), help="group runs by"
    )
    p.add_argument("--confidence", type=_confidence, default=0.95, help="interval level (default 0.95)")
    add_invariant_arguments(p)
    limit_frontier_cmd.add_arguments(p)
    p.add_argument("--json", action="store_true", help="one JSON object per (group, policy) per line")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.set_defaults(func=run)


def add_invariant_arguments(p: argparse.ArgumentParser) -> None:
    """The analyst's invariants as flags (``frontier`` and ``report`` share them)."""
    g = p.add_argument_group(
        "invariants the analyst sets (the recommended grant is the smallest where all hold)"
    )
    g.add_argument(
        "--keep-resolved", type=_share, default=None, help="share of resolved runs kept (default 0.95)"
    )
    g.add_argument("--keep-bound", choices=("point", "lower"), default=None, help="which end must reach it")
    g.add_argument(
        "--max-lost", type=errors.non_negative_int, default=None, help="resolved runs a grant may lose"
    )
    g.add_argument("--max-raw", type=errors.positive_int, default=None, help="raw tokens no run may reach")
    g.add_argument(
        "--min-saved-usd", type=errors.positive_float, default=None, help="dollars a grant must save"
    )
    g.add_argument(
        "--min-saved-tokens", type=errors.positive_int, default=None, help="tokens a grant must save"
    )
    g.add_argument(
        "--invariants", default=None, metavar="FILE.toml|seed", help="an [invariants] TOML file, or 'seed'"
    )


def invariants_from_args(args: argparse.Namespace):  # -> AnalystInvariants | str
    """The analyst's invariants from a file and flags (flags win), or ``"seed"``. A bad file is a usage error
    naming it."""
    from workbench.analysis.targets import SEED_SET, AnalystInvariants

    if args.invariants == SEED_SET:
        return SEED_SET
    try:
        inv = AnalystInvariants.from_toml(args.invariants) if args.invariants else AnalystInvariants()
        over = {
            k: getattr(args, k)
            for k in (
                "keep_resolved",
                "keep_bound",
                "max_lost",
                "max_raw",
                "min_saved_usd",
                "min_saved_tokens",
            )
            if getattr(args, k) is not None
        }
        return inv.replace(**over) if over else inv
    except ValueError as exc:
        raise errors.UsageError("--invariants" if args.invariants else "invariants", str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    from workbench.analysis.frontier import default_grants, frontier
    from workbench.analysis.targets import SEED_SET, AnalystInvariants, pick_all, seed_probe_holds

    if limit_frontier_cmd.wanted(args):
        return limit_frontier_cmd.run(args)
    agents = [r for r in args.rules if r in limit_frontier_cmd.LIMITED_RULES and r != "openhands"]
    if agents:
        raise errors.UsageError(
            "--rules",
            f"{', '.join(agents)} has no token grant: sweep its own limits with --cost-limits or --step-limits",
        )
    grants = list(args.grants) if args.grants else list(default_grants())
    rules = list(args.rules)
    invariants = invariants_from_args(args)
    corpus = load_runs(args.paths, "frontier", "leaves (sessions split at each user prompt)")
    try:
        fr = frontier(
            corpus,
            rules=rules,
            grants=grants,
            context_lengths=list(args.context_lengths),
            by=args.by,
            confidence=args.confidence,
            progress=args.progress,
        )
    except ValueError as exc:
        raise errors.DataError(str(exc)) from exc
    picks = []
    for r in rules:
        if invariants == SEED_SET:
            sub = pick_all(fr, AnalystInvariants(keep_resolved=None), seed_probe_holds(r, grants))
        else:
            sub = pick_all(fr, invariants)
        picks.extend(p for p in sub if p.rules == r)
    if args.json:
        for rec in fr.records():
            print(json.dumps(rec))
        for p in picks:
            print(json.dumps({"recommendation": p.to_dict()}))
        return 1 if corpus.problems else 0
    from workbench.cli._format import table

    print(f"{len(fr.runs)} runs; shares carry the {fr.interval}.")
    for n in fr.notes:
        print(printable(f"note: {n}"))
    for p in picks:
        ctx = "no context manager" if p.context_length is None else f"context length {p.context_length:,}"
        curve = fr.curve(p.group, p.rules, p.context_length)
        word = "finished" if curve["basis"].iloc[0] == "finished" else "resolved"
        print()
        print(
            printable(f"== {p.group} — rules {p.rules}, {ctx}; success = {word} ({curve['basis'].iloc[0]})")
        )
        if p.found:
            print(printable(f"recommended grant {p.grant:,}: {p.why}"))
            print(printable("  " + fr.point(p.grant, p.group, p.rules, p.context_length).words))
        else:
            print(printable(p.why))
        rows = []
        for rec in curve.to_dict("records"):
            rec["kept %"] = f"{rec['resolved_kept_share']:.1%}" if rec["resolved"] else "—"
            rec["95% CI"] = (
                f"{rec['resolved_kept_low']:.1%}-{rec['resolved_kept_high']:.1%}" if rec["resolved"] else "—"
            )
            rows.append(rec)
        print(table(rows, TABLE_COLUMNS))
    return 1 if corpus.problems else 0
