"""The ADR-107 context-window manager, the seed loop's observation decay and memo, and context replay.

Live loops and replays share these objects; each module's docstring gives its call signatures.
"""

from typing import TYPE_CHECKING

from workbench._lazy import attach

if TYPE_CHECKING:  # imported on first use (workbench/_lazy.py): context replay fits constants with scipy
    from workbench.context.budget import Budget, claude_code_reserve, context_budget
    from workbench.context.decay import Decayer
    from workbench.context.decay_replay import DecayReplay, replay_decay
    from workbench.context.manager import (
        CONTEXT_TRUNCATED,
        SEND_SITES,
        ContextTruncated,
        ContextWindowManager,
        FitResult,
        SendSite,
    )
    from workbench.context.memo import ObservationMemo
    from workbench.context.replay import ContextReplay, replay_context
    from workbench.context.spill import DirectorySpill, MemorySpill
    from workbench.context.transcript import Orphans, Partition, orphans, split

__getattr__, __dir__ = attach(__name__, __file__)

__all__ = ["CONTEXT_TRUNCATED", "SEND_SITES", "Budget", "ContextReplay", "ContextTruncated",
           "ContextWindowManager", "DecayReplay", "Decayer", "DirectorySpill", "FitResult",
           "MemorySpill", "ObservationMemo", "Orphans", "Partition", "SendSite",
           "claude_code_reserve", "context_budget", "orphans", "replay_context",
           "replay_decay", "split"]  # fmt: skip
