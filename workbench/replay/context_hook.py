"""The context replay hook (owned by branch ``ctx``: ``workbench.context.replay.replay_context``), imported only
when a policy asks for a context-window manager (``policy.context_length is not None``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.govern.policy import Policy
from workbench.trace.schema import Run

ContextReplayer = Callable[[Run, Policy], Any]


def default_replayer() -> ContextReplayer:
    try:
        from workbench.context.replay import replay_context
    except ImportError as exc:  # the ctx branch is not merged into this checkout
        raise RuntimeError(
            "this policy sets context_length, which needs workbench.context.replay (the context-window manager); "
            f"it could not be imported: {exc}"
        ) from exc
    return replay_context


def context_replay(run: Run, policy: Policy, replayer: ContextReplayer | None = None) -> Any | None:
    if policy.context_length is None:
        return None
    return (replayer or default_replayer())(run, policy)
