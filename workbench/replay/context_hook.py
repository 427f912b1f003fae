"""The context replay hook: ``workbench.context.replay.replay_context``, run only when a policy asks for a
context-window manager (``policy.context_length is not None``; ADR-107: an absent manager is a no-op). Imported
lazily so a replay without a context length never loads the estimator. A replayer can be passed in (tests do)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.govern.policy import Policy
from workbench.trace.schema import Run

ContextReplayer = Callable[[Run, Policy], Any]


def default_replayer() -> ContextReplayer:
    from workbench.context.replay import replay_context

    return replay_context


def context_replay(run: Run, policy: Policy, replayer: ContextReplayer | None = None) -> Any | None:
    if policy.context_length is None:
        return None
    return (replayer or default_replayer())(run, policy)
