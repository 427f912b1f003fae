"""The ADR-107 context-window manager, the seed loop's observation decay and memo, and context replay.

Live loops and replays share these objects; each module's docstring gives its call signatures.
"""

from workbench.context.budget import Budget, claude_code_reserve, context_budget
from workbench.context.decay import Decayer
from workbench.context.manager import (
    CONTEXT_TRUNCATED,
    SEND_SITES,
    ContextTruncated,
    ContextWindowManager,
    FitResult,
    SendSite,
)
from workbench.context.memo import ObservationMemo
from workbench.context.spill import DirectorySpill, MemorySpill
from workbench.context.transcript import Orphans, Partition, orphans, split

_REPLAY = {
    "ContextReplay": "workbench.context.replay",
    "replay_context": "workbench.context.replay",
    "DecayReplay": "workbench.context.decay_replay",
    "replay_decay": "workbench.context.decay_replay",
}


def __getattr__(name: str) -> object:
    # Context replay fits estimator constants (scipy); the manager and decayer a live loop uses do not need that.
    if name in _REPLAY:
        import importlib

        return getattr(importlib.import_module(_REPLAY[name]), name)
    raise AttributeError(f"module 'workbench.context' has no attribute {name!r}")


__all__ = [
    "CONTEXT_TRUNCATED",
    "SEND_SITES",
    "Budget",
    "ContextReplay",
    "ContextTruncated",
    "ContextWindowManager",
    "DecayReplay",
    "Decayer",
    "DirectorySpill",
    "FitResult",
    "MemorySpill",
    "ObservationMemo",
    "Orphans",
    "Partition",
    "SendSite",
    "claude_code_reserve",
    "context_budget",
    "orphans",
    "replay_context",
    "replay_decay",
    "split",
]
