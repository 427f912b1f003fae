"""The messages the loop injects, verbatim from the seed where the seed has them, and the ``Message.kind`` each is
recorded under (the live loop writes these kinds; the replay engine reads them to tell a recorded injection from a
counterfactual one).
"""

from __future__ import annotations

# -- kinds (Message.kind / Inject.kind) -------------------------------------------------------------------------
DEADLINE_LANDING = "deadline-landing"
WALL_PACE = "wall-pace"
NUDGE_EMPTY = "nudge-empty"
NUDGE_LENGTH = "nudge-length"
LENGTH_BATCH = "length-batch"
FOLD_LAST_CALL = "fold-last-call"
BUDGET_LANDING = "landing"
WRAPUP = "wrapup"
RECON = "recon"
CONCLUDE = "conclude"

KINDS = (
    DEADLINE_LANDING,
    WALL_PACE,
    NUDGE_EMPTY,
    NUDGE_LENGTH,
    LENGTH_BATCH,
    FOLD_LAST_CALL,
    BUDGET_LANDING,
    WRAPUP,
    RECON,
    CONCLUDE,
)

# seed 001 linear.go startDeadlineLanding
DEADLINE_LANDING_TEXT = (
    "The wall-clock deadline for this task is close. Use the remaining time only to "
    "land the work safely. In order: make whatever you were changing consistent "
    "again; run the single quickest check that would catch breakage; fix only what "
    "it reveals. Do not start anything new. Then give your final answer."
)

# seed 001 linear.go Run (budget exhaustion, step S)
BUDGET_LANDING_TEXT = (
    "The budget for this task is spent. You have a few final tool calls to land the "
    "work safely, and nothing more. In order: make whatever you were changing "
    "consistent again; run the single quickest check that would catch breakage; fix "
    "only what it reveals. Do not start anything new. Then give your final answer."
)

# seed 001 linear.go Run (wrap-up warning, step U)
WRAPUP_TEXT = (
    "You have used most of the budget for this task. If the deliverable is not yet "
    "produced and connected into place, start that now and leave room for one "
    "verification pass at the end — work you have not done yet will not happen. "
    "Stop exploring; nothing you have already confirmed needs another look."
)

# seed 001 linear.go Run (empty reply nudge, step K.3)
NUDGE_EMPTY_TEXT = (
    "Your last reply was empty — it either hit the output limit or contained "
    "only private reasoning. Continue the work with tool calls, or if the work "
    "is finished, state the deliverable itself in the body of your reply."
)

# seed 001 linear.go Run (truncated final nudge, step K.4)
NUDGE_LENGTH_TEXT = (
    "That reply hit the output limit and was cut off, so it cannot be the "
    "result. Your reply is not the place to produce the work: do it with tool "
    "calls — write files with the write tool, in several pieces if they are "
    "large — and keep the final message short."
)

# seed 001 linear.go lengthStopBatchFailure
LENGTH_BATCH_TEXT = (
    "This tool call was NOT executed. The reply carrying it hit the output token "
    "limit, so its arguments may be truncated mid-write and running them could do something "
    "other than what you intended. Nothing was changed. Re-issue the call with complete "
    "arguments — and issue fewer or smaller calls this turn, since the last reply did not fit."
)

# seed 001 linear.go Run (fold, step R)
FOLD_LAST_CALL_TEXT = (
    "That was the one round of tool calls this step has. Your next reply is the "
    "result: state it in full, in the body of the message."
)

# docs/governors.md §5.8 (noprogress.go noProgressConcludeDirective; not in the seed)
CONCLUDE_TEXT = (
    "This task is not making forward progress — the same tool calls "
    "are repeating without changing anything or learning anything new. Conclude "
    "now: state your deliverable in the body of your reply, reporting what you "
    "finished and what you did not. Do not make any more tool calls."
)

# seed 001 linear.go Run (trace notes)
NOTE_BUDGET_LANDING = "budget exhausted — landing reserve granted"
NOTE_DEADLINE_LANDING = "deadline close — landing reserve started"
NOTE_LANDING_TOKENS = "landing reserve spent its tokens — ended before its last turn"


def wall_pace_text(gone: str, left: str) -> str:
    """seed 001 linear.go Run (wall pace, step C)."""
    return (
        "The clock for this task now reads "
        + gone
        + " gone and "
        + left
        + " left. Use the time that remains "
        "to produce the result and leave room to check it."
    )


def wall_pace_note(gone: str, left: str) -> str:
    return "wall pace — " + gone + " gone, " + left + " left"


def recon_text(turns: int) -> str:
    """docs/governors.md §5.8 (noprogress.go reconNotice)."""
    return (
        f"You have made {turns} consecutive tool-calling turns without changing the workspace. Produce the "
        "result now: save or connect the work if the task calls for it, or state the answer in the body of "
        "your reply if the answer itself is the result."
    )


def wall_sentence(duration: str) -> str:
    """seed 001 linear.go Run: the brief's sentence naming the wall ("" when the wall is unknown)."""
    return f"\n\nYou have {duration} of wall-clock time for this task." if duration else ""
