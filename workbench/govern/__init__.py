"""Governors: the rules that bound the seed's agent loop, one module per mechanism, composed by ``Governor``.

``Policy`` holds every parameter (``Policy.named("ink-s9", grant=150_000)``); ``Governor(policy)`` is fed one model
call at a time in phases (``begin_turn`` → ``after_response`` → ``after_tools``; ``call_failed``) and answers with
frozen decisions (``Inject``, ``StartLanding``, ``SkipTools``, ``Note``, ``Stop``).
"""

from typing import TYPE_CHECKING

from workbench._lazy import attach

if TYPE_CHECKING:  # imported on first use (workbench/_lazy.py)
    from workbench.govern.decisions import Decision, Inject, Note, SkipTools, StartLanding, Step, Stop
    from workbench.govern.governor import Governor, GovernorError, Reply
    from workbench.govern.meter_record import MeterRecord
    from workbench.govern.noprogress import CallFact, ResultFact
    from workbench.govern.policy import RULE_SETS, RULE_SETS_DOC, Policy

__getattr__, __dir__ = attach(__name__, __file__)

__all__ = [
    "RULE_SETS",
    "RULE_SETS_DOC",
    "CallFact",
    "Decision",
    "Governor",
    "GovernorError",
    "Inject",
    "MeterRecord",
    "Note",
    "Policy",
    "Reply",
    "ResultFact",
    "SkipTools",
    "StartLanding",
    "Step",
    "Stop",
]
