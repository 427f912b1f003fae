"""The live loop: run a task against any OpenAI-compatible endpoint under a Policy, governed by the same Governor
and ContextWindowManager the replay uses, recorded crash-safe as a native trace (docs/loop.md).

    from workbench.loop import ChatClient, LiveLoop, Recorder, Secret, Toolbox, Workspace
    client = ChatClient("http://127.0.0.1:8080/v1", "qwen3", api_key=Secret.from_env("MY_KEY"))
    loop = LiveLoop(Policy.named("current", grant=100_000), client, Toolbox(Workspace("ws")))
    with Recorder("run.jsonl", loop.header("Fix the test")) as rec:
        result = await loop.run("Fix the test", rec)      # LoopResult: outcome, decisions, spent, retries

Recorded mode, ``LiveLoop.from_recording(run, policy)``, re-executes a recording deterministically, its recorded
time included.
"""

from typing import TYPE_CHECKING

from workbench._lazy import attach

if TYPE_CHECKING:  # imported on first use (workbench/_lazy.py)
    from workbench.loop.client import Attempt, ChatClient, Completion, Timeouts
    from workbench.loop.clock import Clock, SystemClock
    from workbench.loop.closer import CheckCloser, Closer, Finding, RecordedCloser
    from workbench.loop.errors import (
        CallFailed,
        ContextLengthExceeded,
        MalformedResponse,
        ProviderError,
        RateLimited,
        RequestRefused,
        TransportError,
        UpstreamError,
    )
    from workbench.loop.loop import SYSTEM_PROMPT, LiveLoop, LoopResult, TurnReport
    from workbench.loop.mailbox import BOARD_PREFIX, GUIDANCE_PREFIX, Mailbox, QueueMailbox, RecordedMailbox
    from workbench.loop.recorded import (
        RecordedClock,
        RecordedProvider,
        RecordedTools,
        RecordingExhausted,
        completion_json,
    )
    from workbench.loop.recorder import Recorder
    from workbench.loop.sandbox import Sandbox, SandboxUnavailable
    from workbench.loop.secrets import KeyRefused, Secret
    from workbench.loop.tools import TOOL_SCHEMAS, Batch, Toolbox
    from workbench.loop.wire import Reply
    from workbench.loop.workspace import PathEscape, Workspace

__getattr__, __dir__ = attach(__name__, __file__)

__all__ = ["BOARD_PREFIX", "GUIDANCE_PREFIX", "SYSTEM_PROMPT", "TOOL_SCHEMAS", "Attempt",
           "Batch", "CallFailed", "ChatClient", "CheckCloser", "Clock", "Closer", "Completion",
           "ContextLengthExceeded", "Finding", "KeyRefused", "LiveLoop", "LoopResult",
           "Mailbox", "MalformedResponse", "PathEscape", "ProviderError", "QueueMailbox",
           "RateLimited", "RecordedClock", "RecordedCloser", "RecordedMailbox",
           "RecordedProvider", "RecordedTools", "Recorder", "RecordingExhausted", "Reply",
           "RequestRefused", "Sandbox", "SandboxUnavailable", "Secret", "SystemClock",
           "Timeouts", "Toolbox", "TransportError", "TurnReport", "UpstreamError", "Workspace",
           "completion_json"]  # fmt: skip
