"""``workbench run``: run a task against any OpenAI-compatible endpoint under a policy, recording a trace.

    workbench run --base-url http://127.0.0.1:8080/v1 --model qwen3 --api-key-env OPENROUTER_API_KEY \\
        --rules current --grant 100000 --out run.jsonl "Make the tests in tests/ pass"

One progress line per turn (turn, prompt tokens, spent of grant, the Governor's decisions), then the outcome.
The key is read from the named environment variable and never printed or recorded. The trace replays with
``workbench replay run.jsonl``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from workbench.cli import errors
from workbench.context.spill import DirectorySpill
from workbench.govern import RULE_SETS, Policy
from workbench.loop.client import ChatClient, Timeouts
from workbench.loop.errors import ProviderError
from workbench.loop.loop import LiveLoop, LoopResult, TurnReport
from workbench.loop.recorder import Recorder
from workbench.loop.secrets import Secret
from workbench.loop.tools import Toolbox
from workbench.loop.workspace import Workspace


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "run",
        help="run a task live against an OpenAI-compatible endpoint, governed, recording a native trace",
        description="Run TASK with the sh/read/write/edit tools in a workspace folder, governed by a policy; "
        "print one line per turn and the outcome; write the trace to --out.",
    )
    p.add_argument("task", help="the task (the brief the model is given)")
    p.add_argument("--base-url", required=True, help="endpoint base, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--model", required=True, help="model name sent with every request")
    p.add_argument(
        "--api-key-env", metavar="VAR", help="environment variable holding the API key (never printed)"
    )
    p.add_argument(
        "--rules",
        default="current",
        choices=sorted(RULE_SETS),
        help=f"rule set, {errors.one_of(sorted(RULE_SETS))} (default: current)",
    )
    p.add_argument(
        "--grant", type=errors.positive_int, metavar="N", help="token grant (default: the rule set's)"
    )
    p.add_argument(
        "--max-turns", type=errors.positive_int, metavar="N", help="turn cap (default: the rule set's)"
    )
    p.add_argument(
        "--deadline",
        type=errors.positive_float,
        metavar="SECONDS",
        help="wall-clock deadline of the run (> 0)",
    )
    p.add_argument(
        "--context-length",
        type=errors.positive_int,
        metavar="N",
        help="bound every send with the context-window manager",
    )
    p.add_argument("--workspace", type=Path, help="folder the tools work in (default: <out>.workspace/)")
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="TRACE",
        help="the native trace to write (JSONL); must not exist",
    )
    p.add_argument("--force", action="store_true", help="replace an existing --out trace")
    p.add_argument(
        "--read-timeout",
        type=errors.positive_float,
        default=600.0,
        metavar="SECONDS",
        help="per-read HTTP timeout (default 600)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the outcome")
    p.set_defaults(func=run)


def policy_of(args: argparse.Namespace) -> Policy:
    overrides: dict[str, object] = {}
    if args.grant is not None:
        overrides["grant"] = args.grant
    if args.max_turns is not None:
        overrides["max_turns"] = args.max_turns
    if args.deadline is not None:
        overrides["deadline_s"] = args.deadline
    if args.context_length is not None:
        overrides["context_length"] = args.context_length
    return Policy.named(args.rules, **overrides)


async def execute(args: argparse.Namespace, secret: Secret, policy: Policy) -> LoopResult:
    workspace = Workspace(args.workspace or args.out.with_suffix(".workspace"))

    def progress(report: TurnReport) -> None:
        if not args.quiet:
            print(secret.redact(report.line()), flush=True)

    async with ChatClient(
        args.base_url, args.model, api_key=secret, timeouts=Timeouts(read=args.read_timeout)
    ) as client:
        loop = LiveLoop(
            policy,
            client,
            Toolbox(workspace, hidden_env=(args.api_key_env,) if args.api_key_env else ()),
            spill=DirectorySpill(workspace.root / ".observations"),  # a dot folder: outside the change walk
            model=args.model,
            window=args.context_length,
            on_turn=progress,
        )
        header = loop.header(
            args.task, base_url=args.base_url, api_key_env=args.api_key_env, workspace=str(workspace.root)
        )
        with Recorder(args.out, header, redact=secret.redact) as recorder:
            return await loop.run(args.task, recorder)


def check_out(out: Path, *, force: bool) -> None:
    """An earlier trace is data someone paid for: refuse to overwrite it without --force."""
    if out.is_dir():
        raise errors.UsageError(f"--out {out}", "is a folder; give the trace file to write")
    if os.path.lexists(out) and not force:
        raise errors.UsageError(f"--out {out}", "already exists; give --force to replace it")


def run(args: argparse.Namespace) -> int:
    check_out(args.out, force=args.force)
    try:
        secret = Secret.from_env(args.api_key_env)
        policy = policy_of(args)
    except (KeyError, ValueError) as exc:
        raise errors.UsageError(str(exc.args[0] if exc.args else exc)) from exc
    try:
        result = asyncio.run(execute(args, secret, policy))
    except ProviderError as exc:  # raised only outside the loop (the loop lands its own call failures)
        print(f"workbench run: {secret.redact(str(exc))}", file=sys.stderr)
        return 1
    print(secret.redact(result.summary()))
    if result.error:
        print(f"error: {secret.redact(result.error)}", file=sys.stderr)
    print(f"trace: {result.trace}")
    return 1 if result.outcome.stop_reason in ("error", "deadline") and result.error else 0
