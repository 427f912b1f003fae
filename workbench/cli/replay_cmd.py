"""``workbench replay PATH... [--rules ...] [--grant N] [--max-turns N] [--deadline SECONDS] [--segments] [--json]``

Replays every run under the given paths under one policy and prints, per run (or per segment with --segments), the
counterfactual: a JSON object per line with --json, else one readable line each.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from workbench.cli._load import load_runs
from workbench.govern.policy import RULE_SETS, Policy
from workbench.replay.engine import replay, replay_leaves


def add_policy_arguments(parser: argparse.ArgumentParser, *, grant: bool = True) -> None:
    parser.add_argument(
        "--rules", choices=sorted(RULE_SETS), default="current", help="rule set (default current)"
    )
    if grant:
        parser.add_argument("--grant", type=int, help="cost grant in tokens (default: the rule set's)")
    parser.add_argument("--max-turns", type=int, help="turn cap (default: the rule set's)")
    parser.add_argument("--deadline", type=float, metavar="SECONDS", help="wall-clock deadline in seconds")
    parser.add_argument(
        "--context-length", type=int, help="context-window manager on, with this window (tokens)"
    )
    parser.add_argument("--estimator", help="token estimator for the context manager (default adr)")
    parser.add_argument("--reserve", type=int, help="context manager reserve (tokens)")
    parser.add_argument("--safety", type=int, help="context manager safety margin (tokens)")
    parser.add_argument("--calibration", type=float, help="estimator calibration factor")


def policy_from_args(args: argparse.Namespace) -> Policy:
    over: dict[str, Any] = {}
    for attr, field in (
        ("grant", "grant"),
        ("max_turns", "max_turns"),
        ("deadline", "deadline_s"),
        ("context_length", "context_length"),
        ("estimator", "estimator"),
        ("reserve", "reserve"),
        ("safety", "safety"),
        ("calibration", "calibration"),
    ):
        value = getattr(args, attr, None)
        if value is not None:
            over[field] = value
    return Policy.named(args.rules, **over)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("replay", help="replay recorded runs under a policy", description=__doc__)
    p.add_argument("paths", nargs="+", metavar="PATH", help="trace files or folders")
    add_policy_arguments(p)
    p.add_argument("--segments", action="store_true", help="replay each segment of an interactive session")
    p.add_argument("--json", action="store_true", help="one JSON object per run (or segment) per line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        policy = policy_from_args(args)
    except ValueError as exc:
        print(f"workbench replay: {exc}", file=sys.stderr)
        return 2
    corpus = load_runs(args.paths, "replay")
    if corpus is None:
        return 1
    for r in corpus.runs:
        results = replay_leaves(r, policy) if args.segments else [replay(r, policy)]
        for res in results:
            if args.json:
                print(json.dumps(res.to_dict(), default=str))
            else:
                print(res.summary())
                if not res.usage_known:
                    print(f"  {next(n for n in res.notes if n.startswith('cost cannot be replayed'))}")
    return 1 if corpus.problems else 0
