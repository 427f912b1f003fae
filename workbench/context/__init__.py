"""The ADR-107 context-window manager, the seed loop's observation decay and memo, and context replay.

Live loops and replays share these objects; each module's docstring gives its call signatures.
"""

from workbench.context.budget import Budget, claude_code_reserve, context_budget
from workbench.context.manager import (
    CONTEXT_TRUNCATED,
    SEND_SITES,
    ContextTruncated,
    ContextWindowManager,
    FitResult,
    SendSite,
)
from workbench.context.transcript import Orphans, Partition, orphans, split

__all__ = [
    "CONTEXT_TRUNCATED",
    "SEND_SITES",
    "Budget",
    "ContextTruncated",
    "ContextWindowManager",
    "FitResult",
    "Orphans",
    "Partition",
    "SendSite",
    "claude_code_reserve",
    "context_budget",
    "orphans",
    "split",
]
