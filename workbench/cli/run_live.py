"""``workbench run`` once its --out is checked (the parser: workbench/cli/run_cmd.py): the sandbox, the loop, its
client and recorder, signals, and the outcome printed. Imported only when a run starts, so ``workbench run
--help`` loads none of it."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from workbench.cli import errors
from workbench.cli.replay_cmd import policy_overrides
from workbench.context.spill import DirectorySpill
from workbench.format import printable
from workbench.govern.endings import REFLEX_GRANT, REFLEX_MAX_TURNS
from workbench.govern.policy import Policy
from workbench.govern.verdict import StopReason
from workbench.loop.client import BadEndpoint, ChatClient, Timeouts, check_base_url
from workbench.loop.closer import CheckCloser
from workbench.loop.errors import ProviderError
from workbench.loop.loop import LOOP_ERROR_STOP, LiveLoop, LoopResult, TurnReport
from workbench.loop.reaper import become_subreaper
from workbench.loop.recorder import Recorder
from workbench.loop.sandbox import Sandbox, SandboxUnavailable, probe
from workbench.loop.secrets import KeyRefused, RedactedSpill, Secret
from workbench.loop.tools import Toolbox
from workbench.loop.workspace import Workspace
from workbench.trace.schema import Run

# What --no-sandbox exposes, said once on stderr when it is used.
UNCONFINED_WARNING = (
    "workbench run: --no-sandbox: sh runs unconfined, as this user: the model's commands can read and change every "
    "file this user can, reach the network, and read this machine's other processes and their environments; children "
    "that leave a command's session are adopted by this process and killed when no command runs, but work handed to "
    "a service manager or another user's process outlives the run"
)
# The exit status of a run stopped by a signal (the shell's convention: 128 + the signal's number).
SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}


def policy_of(args: argparse.Namespace) -> Policy:
    overrides = policy_overrides(args)
    if args.reflex:
        overrides["reflex"] = True
        overrides.setdefault("grant", REFLEX_GRANT)
        overrides.setdefault("max_turns", REFLEX_MAX_TURNS)
    if args.swarm:
        overrides["swarm"] = True
    return Policy.named(args.rules, **overrides)


def workspace_of(args: argparse.Namespace) -> Path:
    return (args.workspace or args.out.with_suffix(".workspace")).resolve()


def check_layout(args: argparse.Namespace) -> None:
    """The trace must lie outside the workspace: inside, the model's commands could rewrite the record of their
    own run."""
    out, workspace = args.out.resolve(), workspace_of(args)
    if out == workspace or workspace in out.parents:
        raise ValueError(f"--out {args.out} lies inside the workspace {workspace}; put the trace outside it")


def sandbox_of(args: argparse.Namespace, workspace: Path) -> Sandbox | None:
    """The sandbox for sh, probed once; None with --no-sandbox (after the warning)."""
    if args.no_sandbox:
        print(UNCONFINED_WARNING, file=sys.stderr)
        become_subreaper()  # a command's setsid children are adopted here and killed when commands end
        return None
    sandbox = Sandbox(network=args.allow_network, read_only=tuple(args.sandbox_ro))
    if sandbox.visible(args.out.resolve().parent, workspace):
        raise ValueError(
            f"--out {args.out} lies in a folder the sandbox can see (bound read-only with --sandbox-ro or the "
            "system's); put the trace in a folder the model's commands cannot reach"
        )
    workspace.mkdir(parents=True, exist_ok=True)
    probe(sandbox, workspace)
    return sandbox


def spill_of(args: argparse.Namespace) -> DirectorySpill:
    """The loop-owned folder stubbed and repeated results are kept in: new for each run, beside the trace (so
    outside the workspace and out of the sandbox's sight), mode 0700, opened once."""
    out = args.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    return DirectorySpill(tempfile.mkdtemp(prefix=f"{out.name}.observations-", dir=out.parent))


async def execute(
    args: argparse.Namespace, secret: Secret, policy: Policy, sandbox: Sandbox | None
) -> LoopResult:
    workspace = Workspace(workspace_of(args))

    def progress(report: TurnReport) -> None:
        if not args.quiet:
            print(printable(secret.redact(report.line())), flush=True)

    timeouts = Timeouts(read=args.read_timeout, total=args.call_timeout)
    spill = spill_of(args)
    tools = Toolbox(
        workspace,
        hidden_env=(args.api_key_env,) if args.api_key_env else (),
        sandbox=sandbox,
        redact=secret.redact,
        reap_orphans=sandbox is None,
        spill=spill,
    )
    async with ChatClient(args.base_url, args.model, api_key=secret, timeouts=timeouts) as client:
        loop = LiveLoop(
            policy,
            client,
            tools,
            closer=CheckCloser(args.check, tools) if args.check else None,
            # outside the workspace, where the model's commands cannot plant links; redacted like every file
            spill=RedactedSpill(spill, secret.redact),
            model=args.model,
            window=args.context_length,
            on_turn=progress,
            redact=secret.redact,
        )
        header = loop.header(
            args.task,
            base_url=args.base_url,
            api_key_env=args.api_key_env,
            workspace=str(workspace.root),
            observations=str(spill.root),
            sandbox="off" if sandbox is None else ("bwrap+network" if sandbox.network else "bwrap"),
            check=args.check,
        )
        export = span_export(args, header, secret)
        if export is None:
            with Recorder(args.out, header, redact=secret.redact) as recorder:
                return await loop.run(args.task, recorder)
        from workbench.loop.otel_export import ExportingRecorder

        try:
            with ExportingRecorder(args.out, header, redact=secret.redact, export=export) as recorder:
                return await loop.run(args.task, recorder)
        finally:
            print(f"otlp: {secret.redact(export.tally.words(args.otlp_endpoint))}", file=sys.stderr)


def span_export(args: argparse.Namespace, header: Run, secret: Secret) -> Any:
    """The span exporter ``--otlp-endpoint`` asks for (None without it). Its own log lines are kept off the
    terminal: what reached the backend is said once, at the end (``otlp: …``)."""
    if not args.otlp_endpoint:
        return None
    import logging

    from workbench.loop.otel_export import SpanExport

    logging.getLogger("opentelemetry").addHandler(logging.NullHandler())
    logging.getLogger("opentelemetry").propagate = False
    return SpanExport(header, endpoint=args.otlp_endpoint, project=args.otlp_project, redact=secret.redact)


async def governed(
    args: argparse.Namespace, secret: Secret, policy: Policy, sandbox: Sandbox | None
) -> LoopResult:
    """``execute`` with SIGTERM and SIGINT cancelling it: the loop lands ``cancelled`` and its commands are
    killed as the cancel unwinds."""
    task = asyncio.current_task()
    assert task is not None
    running = asyncio.get_running_loop()
    for sig in SIGNAL_EXIT:
        running.add_signal_handler(sig, task.cancel, f"cancelled by {sig.name}")
    try:
        return await execute(args, secret, policy, sandbox)
    finally:
        for sig in SIGNAL_EXIT:
            running.remove_signal_handler(sig)


def run_live(args: argparse.Namespace) -> int:
    if args.otlp_endpoint:
        from workbench.loop.otel_export import ExportUnavailable, check_endpoint

        try:
            check_endpoint(args.otlp_endpoint)
        except (ExportUnavailable, ValueError) as exc:
            raise errors.UsageError("--otlp-endpoint", str(exc)) from None
    try:
        secret = Secret.from_env(args.api_key_env)
        check_base_url(args.base_url)
        check_layout(args)
        policy = policy_of(args)
        sandbox = sandbox_of(args, workspace_of(args))
    except SandboxUnavailable as exc:
        raise errors.UsageError(
            str(exc), "sh will not run unconfined unless --no-sandbox is given (see docs/sandbox.md)"
        ) from None
    except (KeyError, KeyRefused, BadEndpoint, ValueError) as exc:
        raise errors.UsageError(str(exc.args[0] if exc.args else exc)) from None
    try:
        result = asyncio.run(governed(args, secret, policy, sandbox))
    except asyncio.CancelledError as exc:
        why = str(exc.args[0]) if exc.args and exc.args[0] else "cancelled"
        print(
            f"workbench run: {printable(why)}; the outcome is recorded in {printable(args.out)}",
            file=sys.stderr,
        )
        signame = why.rsplit(" ", 1)[-1]
        return next((code for sig, code in SIGNAL_EXIT.items() if sig.name == signame), 130)
    except ProviderError as exc:  # raised only outside the loop (the loop lands its own call failures)
        print(f"workbench run: {printable(secret.redact(str(exc)))}", file=sys.stderr)
        return 1
    except Exception as exc:  # a failure outside the loop's own landing: one line, never a traceback
        text = secret.redact(f"{type(exc).__name__}: {exc}").splitlines()
        print(f"workbench run: failed: {printable(text[0] if text else type(exc).__name__)}", file=sys.stderr)
        return 1
    print(printable(secret.redact(result.summary())))
    for number, part in enumerate(result.outcome.parts or (), start=1):
        print(printable(secret.redact(f"part {number}: {part}")))
    for finding in result.outcome.findings or ():
        print(printable(secret.redact(f"standing finding: {finding.splitlines()[0] if finding else ''}")))
    if result.error:
        print(f"error: {printable(' '.join(secret.redact(result.error).split()))}", file=sys.stderr)
    print(f"trace: {printable(result.trace)}")
    failed = (
        result.outcome.stop_reason in (StopReason.ERROR, StopReason.DEADLINE, LOOP_ERROR_STOP)
        and result.error
    )
    return 1 if failed else 0
