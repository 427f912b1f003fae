"""``workbench run``: run a task against any OpenAI-compatible endpoint under a policy, recording a trace
(docs/loop.md: flags, exit status, the key, signals, an example; docs/sandbox.md). The parser and the --out check;
the run itself is ``workbench.cli.run_live``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from workbench.cli import errors
from workbench.cli.replay_cmd import add_policy_arguments


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "run",
        help="run a task live against an OpenAI-compatible endpoint, governed, recording a native trace",
        description="Run TASK with the sh/read/write/edit tools in a workspace folder, governed by a policy; "
        "print one line per turn and the outcome; write the trace to --out.",
        epilog="The model's sh commands run in a bubblewrap sandbox: the workspace read-write, the system "
        "read-only, no other host files, no network (unless --allow-network), no view of this process or its "
        "environment, every process killed when the command ends. Without bubblewrap the run is refused unless "
        "--no-sandbox is given, which runs commands as you, with access to all your files and the network. The "
        "API key is redacted from everything written; the trace must lie outside the workspace. SIGTERM/SIGINT "
        "record a cancelled outcome. See docs/sandbox.md and docs/loop.md.",
    )
    p.add_argument("task", help="the task (the brief the model is given)")
    p.add_argument(
        "--base-url", required=True, metavar="URL", help="endpoint base, e.g. http://127.0.0.1:8080/v1"
    )
    p.add_argument("--model", required=True, metavar="NAME", help="model name sent with every request")
    p.add_argument(
        "--api-key-env", metavar="VAR", help="environment variable holding the API key (never printed)"
    )
    add_policy_arguments(p, live=True)
    p.add_argument(
        "--workspace", type=Path, metavar="DIR", help="folder the tools work in (default: <out>.workspace/)"
    )
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
    p.add_argument(
        "--call-timeout",
        type=errors.positive_float,
        default=900.0,
        metavar="SECONDS",
        help="limit on one model call attempt from sending to the last byte (default 900)",
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run sh unconfined, as this user (it then reaches every file, the network, other processes)",
    )
    p.add_argument(
        "--allow-network",
        action="store_true",
        help="let sandboxed commands reach the network (off by default)",
    )
    p.add_argument(
        "--sandbox-ro",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="make a host path visible read-only inside the sandbox (repeatable), e.g. a toolchain under /opt",
    )
    p.add_argument(
        "--reflex",
        action="store_true",
        help="a reflex micro-leaf: the seed's reflex prompt, a small budget of its own (grant 22,000, 12 turns, "
        "unless --grant/--max-turns say otherwise) and the promote tool, which ends it with stop promote",
    )
    p.add_argument(
        "--swarm",
        action="store_true",
        help="arm the cooperative split: a leaf that is not a reflex gets request_split, which ends it with stop "
        "split and its parts (off: the tool is absent)",
    )
    p.add_argument(
        "--check",
        metavar="COMMAND",
        help="after a final answer, run COMMAND in the workspace (as sh runs); if it fails, the leaf is asked once "
        "to fix it, inside what is left of its budget, turns and clock",
    )
    p.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        default=os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None,
        help="also send the run as OpenTelemetry GenAI spans over OTLP/HTTP to URL (a collector, Phoenix's "
        "http://HOST:6006, Langfuse, Jaeger; default $OTEL_EXPORTER_OTLP_ENDPOINT); message contents only with "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true (docs/loop.md)",
    )
    p.add_argument(
        "--otlp-project",
        metavar="NAME",
        help="the Phoenix project the spans go to (resource attribute openinference.project.name; default: default)",
    )
    p.add_argument("--quiet", action="store_true", help="print only the outcome")
    p.set_defaults(func=run)


def check_out(out: Path, *, force: bool) -> None:
    """An earlier trace is data someone paid for: refuse to overwrite it without --force."""
    if out.is_dir():
        raise errors.UsageError(f"--out {out}", "is a folder; give the trace file to write")
    if os.path.lexists(out) and not force:
        raise errors.UsageError(f"--out {out}", "already exists; give --force to replace it")


def run(args: argparse.Namespace) -> int:
    check_out(args.out, force=args.force)
    from workbench.cli.run_live import run_live  # the loop, its client and recorder (httpx, pydantic)

    return run_live(args)
