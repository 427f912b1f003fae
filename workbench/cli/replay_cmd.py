"""``workbench replay PATH... [--rules ...] [--grant N] [--max-turns N] [--deadline SECONDS] [--segments] [--json]``
(what it prints: the parser's description below), and the policy options every policy-taking command shares."""

from __future__ import annotations

import argparse
import json
from typing import Any

from workbench.cli import errors
from workbench.cli._sources import add_paths
from workbench.cli.ablation import ablation_overrides, add_ablation_arguments
from workbench.estimate.constants import STRATEGIES as ESTIMATORS
from workbench.format import printable
from workbench.govern.policy import AGENT_RULES, Policy

# The policy's options in help order: (flag, who takes it, argparse's keywords); ``grant``: the commands that take
# a grant, ``replay``: all but ``workbench run`` (no agent limits, tuning or ablations live), ``any``: every one.
POLICY_OPTIONS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("--grant", "grant", dict(type=errors.positive_int, metavar="N", help="cost grant in tokens (default: the rule "
     "set's)")),
    ("--max-turns", "any", dict(type=errors.positive_int, metavar="N", help="turn cap (default: the rule set's)")),
    ("--cost-limit", "replay", dict(type=errors.positive_float, metavar="USD", help="an agent's own dollar limit "
     "(mini-swe-agent cost_limit, SWE-agent per_instance_cost_limit, OpenHands max_budget_per_task, Claude Code "
     "max_budget_usd, Inspect cost_limit); agents' rule sets only")),
    ("--step-limit", "replay", dict(type=errors.positive_int, metavar="N", help="an agent's own step limit "
     "(mini-swe-agent step_limit, Claude Code max_turns); agents' rule sets only")),
    ("--deadline", "any", dict(type=errors.positive_float, metavar="SECONDS", help="wall-clock deadline in seconds "
     "(> 0)")),
    ("--context-length", "any", dict(type=errors.positive_int, metavar="N", help="turn the context-window manager on, "
     "with this window in tokens")),
    ("--estimator", "replay", dict(choices=ESTIMATORS, metavar="NAME", help="token estimator of the context manager, "
     f"{errors.one_of(ESTIMATORS)} (default: adr)")),
    ("--reserve", "replay", dict(type=errors.non_negative_int, metavar="N", help="tokens the context manager keeps "
     "free for the reply (default: the run's output cap, else 10%% of the window)")),
    ("--safety", "replay", dict(type=errors.non_negative_int, metavar="N", help="tokens the context manager keeps as "
     "a safety margin (default: 2%% of the window)")),
    ("--calibration", "replay", dict(type=errors.calibration_factor, metavar="F", help="estimator calibration "
     "factor, a finite number >= 1 (ADR-107's factor only grows from above 1)")),
)  # fmt: skip


def add_policy_arguments(parser: argparse.ArgumentParser, *, grant: bool = True, live: bool = False) -> None:
    """The policy's options; ``live``: only those ``workbench run`` takes (no agent limits, tuning or ablations)."""
    errors.add_rules(parser, metavar="RULES", more="; docs/governors.md")
    for flag, who, keywords in POLICY_OPTIONS:
        if (grant or who != "grant") and not (live and who == "replay"):
            parser.add_argument(flag, **keywords)
    if not live:
        add_ablation_arguments(parser)


# The option dests that override a Policy field of the same name, but for these two.
POLICY_DESTS = ("grant", "max_turns", "cost_limit", "step_limit", "deadline", "context_length", "estimator",
                "reserve", "safety", "calibration")  # fmt: skip
RENAMED = {"cost_limit": "cost_limit_usd", "deadline": "deadline_s"}


def policy_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The Policy fields the options given set (an option a command lacks sets nothing)."""
    found = {RENAMED.get(d, d): getattr(args, d, None) for d in POLICY_DESTS}
    return {field: value for field, value in found.items() if value is not None}


def policy_from_args(args: argparse.Namespace) -> Policy:
    """The policy the options name; one they cannot make is a usage error (``policy: why``)."""
    over = policy_overrides(args)
    mine = [f for f in ("cost_limit_usd", "step_limit") if f in over]
    if mine and args.rules not in AGENT_RULES:
        raise errors.UsageError(
            "policy",
            f"--cost-limit/--step-limit are an agent's own limits: use one of {', '.join(AGENT_RULES)}, "
            f"not {args.rules!r}",
        )
    # --without / --set (workbench.cli.ablation), checked against the rule set; the named options above win
    try:
        return Policy.named(args.rules, **{**ablation_overrides(args, args.rules), **over})
    except ValueError as exc:
        raise errors.UsageError("policy", str(exc)) from exc


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "replay",
        help="replay recorded runs under a policy",
        description="Replay every run under the given files or folders under one policy (a rule set with "
        "overrides) and print, per run (or per segment with --segments), what that policy would have done: "
        "one readable line each, or one JSON object per line with --json.",
    )
    add_paths(p)
    add_policy_arguments(p)
    p.add_argument(
        "--mask-observations",
        type=errors.non_negative_int,
        metavar="M",
        help="bill the run with the tool results of the last M turns kept and older ones replaced by a "
        "one-line placeholder (docs/counterfactual-bills.md)",
    )
    p.add_argument(
        "--decay",
        action="store_true",
        help="bill the run under the seed's observation decay (stubs and folds)",
    )
    p.add_argument("--segments", action="store_true", help="replay each segment of an interactive session")
    p.add_argument("--json", action="store_true", help="one JSON object per run (or segment) per line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the readers and the replay (pydantic, pandas) are imported when the command runs, not for --help
    from workbench.cli._load import load_runs
    from workbench.replay.bill import replay_with_bill
    from workbench.replay.bill_interval import bill_interval
    from workbench.replay.engine import replay
    from workbench.replay.facts import usage_unknown

    policy = policy_from_args(args)
    mask = args.mask_observations
    decay = bool(args.decay)
    corpus = load_runs(
        args.paths, "replay", "leaves (each segment replayed)" if args.segments else "runs (a session whole)"
    )
    billed = args.json or mask is not None or decay
    for r in corpus.runs:
        leaves = r.leaves() if args.segments else [r]
        for leaf in leaves:
            # a run whose calls recorded no usage has no bill to recompute: its replay says so instead
            if billed and usage_unknown(leaf) is None:
                res, bill = replay_with_bill(leaf, policy, mask_observations=mask, decay=decay)
            else:
                res, bill = replay(leaf, policy), None
            calls = min(res.turns_replayed, res.turns)
            if args.json:
                out = res.to_dict()
                if bill is not None:
                    out.update(bill.fields(calls))
                    out["bill"]["interval"] = bill_interval(bill, leaf, calls)
                print(json.dumps(out, default=str))
            else:
                # a run id is the trace's text: escaped, so an ESC cannot reach the terminal nor a newline forge a row
                print(printable(res.summary() if bill is None else f"{res.summary()}; {bill.summary(calls)}"))
                if not res.usage_known:
                    print(
                        printable(
                            f"  {next(n for n in res.notes if n.startswith('cost cannot be replayed'))}"
                        )
                    )
    return 1 if corpus.problems or corpus.refused else 0
