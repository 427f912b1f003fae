"""The replay engine: recorded turns, in order, fed to the Governor built from a Policy; the engine never decides
anything itself (docs/architecture.md, "Replay semantics": divergence, cut calls, steering, censoring).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from workbench.govern.decisions import Decision, Inject, Next, Phase, SkipTools, Stop
from workbench.govern.dollars import call_dollars
from workbench.govern.governor import Governor
from workbench.govern.messages import KINDS, LENGTH_BATCH_TEXT
from workbench.govern.policy import Policy
from workbench.govern.verdict import StopReason, verdict_for
from workbench.replay.censoring import finished_on_own, good_outcome
from workbench.replay.context_hook import ContextReplayer, context_replay
from workbench.replay.facts import RunFacts, run_facts, usage_unknown
from workbench.replay.result import ReplayResult
from workbench.trace.schema import Run

END_OF_RECORDING = "end-of-recording"


def recorded_injections(run: Run) -> list[Counter[str]] | None:
    """Per turn, the count of each governor-injected ``Message.kind`` (``workbench.govern.messages.KINDS``) in its
    request; None when the run records none (importers' own kinds — notifications, summaries — are not injections)."""
    if {m.kind for m in run.messages}.isdisjoint(KINDS):
        return None
    return [Counter(m.kind for m in run.request(t) if m.kind in KINDS) for t in run.turns]


def _diverges_at(
    decisions: Sequence[Decision],
    stop_turn: int,
    n_turns: int,
    kinds: list[Counter[str]] | None,
    facts: RunFacts,
) -> int | None:
    first: int | None = None
    for d in decisions:
        if isinstance(d, Inject):
            j = d.turn if d.phase in (Phase.START, Phase.ERROR) else d.turn + 1
        elif isinstance(d, SkipTools):
            recorded = facts.turns[d.turn].results
            if recorded and all(r.content == LENGTH_BATCH_TEXT for r in recorded):
                continue
            j = d.turn + 1
        else:
            continue
        if j >= n_turns or j > stop_turn:
            continue
        if isinstance(d, Inject) and kinds is not None:
            before = kinds[j - 1][d.kind] if j > 0 else 0
            if kinds[j][d.kind] > before:
                continue
        first = j if first is None else min(first, j)
    return first


def approximate_note(div: int) -> str:
    """The note a replay carries from the turn where the policy would first have prompted differently."""
    return (
        f"turns from {div} on are approximate: the model would have been prompted differently; the decisions "
        "after it (and any landing's turns) use the recorded turns"
    )


def replay(
    run: Run,
    policy: Policy,
    *,
    facts: RunFacts | None = None,
    context_replayer: ContextReplayer | None = None,
) -> ReplayResult:
    """Replay one run (as one leaf) under ``policy``. Use ``replay_leaves`` for an interactive session's segments."""
    policy = policy.for_run(run)
    facts = facts or run_facts(run)
    ctx = context_replay(run, policy, context_replayer)
    truncated_at = getattr(ctx, "truncated_at", None) if ctx is not None else None
    gov = Governor(policy, window=run.context_length, timed=facts.timed)
    for spend in facts.opening_spend:  # tool-side spend before any turn: the node's, with no turn row
        gov.tool_spend(*spend[:3], calls=spend[3])
    turns = facts.turns
    n = len(turns)
    # An agent's own limits (workbench.govern.agent_limits): its dollar meter and the conversation each call sends.
    limits = gov.limits
    dollars = (
        call_dollars(run, limits.rules.price_source) if limits is not None and limits.caps_dollars else None
    )
    counts_messages = limits is not None and any(lim.meter == "messages" for lim, _ in limits.active)
    i = 0
    shift = 0.0
    stop: Stop | None = None
    while i < n:
        tf = turns[i]
        start = None if tf.started_s is None else tf.started_s + shift
        end = None if tf.ended_s is None else tf.ended_s + shift
        sent = None
        if counts_messages:
            sent = len(run.request(i)) if run.turns[i].sent is not None else None
        step = gov.begin_turn(start, messages=sent)
        if step.stop is not None:
            stop = step.stop
            break
        if truncated_at is not None and i >= truncated_at:
            # The seed's order: the deadline landing and wall pace (top of turn) come before the send, and the
            # context-window manager bounds the send itself (ADR-107) — so the terminus is checked here, as live.
            stop = gov.context_truncated(turn=i).stop
            break
        deadline = step.call_deadline_s
        if end is not None and deadline is not None and end > deadline:
            step = gov.call_failed(deadline, lease_expired=True)
            if step.stop is not None:
                stop = step.stop
                break
            assert start is not None
            shift += deadline - start  # the re-issued call starts at the moment of expiry
            continue
        # The recording went on past a final answer: something arrived in the mailbox (steering, a notification,
        # the next prompt of a session) — the seed's loop reopens for it when not landing (step K.5).
        # A final answer the leaf's own landing check reopened is not steering: the check's finding is put back.
        usd = dollars.usd[i] if dollars is not None else None
        step = gov.after_response(tf.reply, end, steered=i + 1 < n and not tf.closing, usd=usd)
        if step.next == Next.RUN_TOOLS:
            for spend in tf.tool_spend:  # step N: tool-side usage is folded in before the budget check
                gov.tool_spend(*spend[:3], calls=spend[3])
            step = gov.after_tools(tf.results, tf.mutated, end, inferred=tf.mutated_inferred)
        elif step.stop is not None and step.stop.kind == StopReason.DONE and tf.closing:
            for kind, note in tf.closing:
                step = gov.reopen(kind, note, end)
                if step.next == Next.CONTINUE:
                    break
        i += 1
        if step.stop is not None:
            stop = step.stop
            break
    if stop is None and i >= n and gov.iteration >= gov.cap:
        # The recording ended exactly where the loop would fall out of its turn cap: known without another turn.
        stop = gov.end_of_loop().stop
    if stop is None and i >= n and gov.limits is not None:
        # ... or where an agent's own limit stops the next call (a run that stopped on its cost limit).
        last = turns[-1].ended_s if turns and turns[-1].ended_s is not None else None
        at_end = gov.limit_at_end(None if last is None else last + shift)
        stop = at_end.stop if at_end is not None else None
    notes: list[str] = []
    if limits is not None:
        notes.append(f"{limits.rules.agent}'s own limits, as {limits.rules.source}")
        if dollars is not None:
            notes.append(f"dollar meter: {dollars.basis} (the rule set reads {limits.rules.price_source})")
            said = dollars.note(limits.rules.price_source)
            if said:
                notes.append(said)
        if counts_messages and any(t.sent is None for t in run.turns):
            notes.append("some calls recorded no request: the message limit was not checked before them")
        if not facts.timed and any(lim.meter == "seconds" for lim, _ in limits.active):
            notes.append("no turn timestamps: the time limit was not applied")
    if not facts.timed:
        notes.append("no turn timestamps: no deadline rules were applied")
    elif policy.deadline_s is None:
        notes.append("no deadline in the policy: no deadline rules were applied")
    unknown = usage_unknown(run)
    if unknown is not None:
        notes.append(
            f"cost cannot be replayed: {unknown}. Spent and raw are not measurements and no budget stop can be "
            "found; only the turn, deadline and tool guards were replayed"
        )
    elif facts.missing_usage:
        notes.append(f"{facts.missing_usage} turn(s) reported no usage: counted as 0 tokens")
    if gov.totals.missing_cached:
        notes.append(f"{gov.totals.missing_cached} turn(s) reported no cache reads: billed at full weight")
    if facts.inferred_mutation_turns:
        notes.append(
            f"{facts.inferred_mutation_turns} tool turn(s) carry a workspace change inferred from their calls "
            "(their shell commands, write tools), not recorded"
        )
    if facts.unrecorded_mutation:
        notes.append(
            f"{facts.unrecorded_mutation} tool turn(s) leave the workspace change unknown: never read as no "
            "change (write/edit/apply_patch calls still count as mutations)"
        )
    unjudged_at = gov.unjudged_at
    if unjudged_at is not None and (stop is None or unjudged_at <= stop.turn):
        notes.append(
            f"the no-progress guard could not judge from turn {unjudged_at}: it would have fired had the "
            "unknown workspace changes been read as none"
        )
    else:
        unjudged_at = None
    censored = False
    if stop is not None:
        stop_reason, stop_turn, verdict, meter = stop.kind, stop.turn, stop.verdict, stop.meter
        if (
            stop_reason == StopReason.DONE
            and stop_turn == n - 1
            and not stop.text.strip()
            and run.outcome.text
        ):
            # the recording's own ending: its recorded answer (e.g. an OpenHands finish message) grades it
            verdict = verdict_for(stop_reason, stop.exhausted, run.outcome.text)
    else:
        stop_turn = n - 1
        meter = gov.meter.reread(gov.spent, gov.last_elapsed) if gov.meter is not None else None
        if finished_on_own(run):
            stop_reason = run.outcome.stop_reason or "done"
            verdict = verdict_for(stop_reason, gov.exhausted, gov.last_text or run.outcome.text)
        else:
            stop_reason, verdict, censored = END_OF_RECORDING, None, True
            notes.append(
                f"the recording was cut by {run.outcome.stop_reason!r} before this policy stopped it: "
                "a censored lower bound"
            )
    replayed = gov.calls
    cut = turns[replayed:]
    decisions = tuple(gov.decisions)
    div = _diverges_at(decisions, stop_turn, n, recorded_injections(run), facts)
    if ctx is not None and getattr(ctx, "first_prune_at", None) is not None:
        fp = ctx.first_prune_at
        if fp <= stop_turn and (div is None or fp < div):
            div = fp
    if div is not None:
        notes.append(approximate_note(div))
    landing = next((d for d in decisions if d.action == "start-landing"), None)
    wrapup = next((d for d in decisions if isinstance(d, Inject) and d.kind == "wrapup"), None)
    conclude = next((d for d in decisions if isinstance(d, Inject) and d.kind == "conclude"), None)
    seg = run.metadata.get("segment")
    basis = next((v for k, v in stop.numbers if k == "basis"), None) if stop is not None else None
    if basis == "inferred":
        notes.append(
            "stopped on an inferred fact: the workspace change the guard read was inferred, not recorded"
        )
    return ReplayResult(
        run_id=run.run_id,
        policy=policy,
        stop_reason=stop_reason,
        stop_turn=stop_turn,
        verdict=verdict,
        meter=meter,
        spent=gov.spent,
        raw=gov.raw,
        landing_started_at=None if landing is None else landing.turn,
        landing_kind=None if landing is None else landing.kind,
        wrapup_at=None if wrapup is None else wrapup.turn,
        concluded_at=None if conclude is None else conclude.turn,
        diverges_at=div,
        censored=censored,
        cut_turns=len(cut),
        cut_tokens=sum(t.raw_tokens for t in cut),
        cut_tool_calls=sum(len(t.reply.calls) for t in cut),
        cut_mutations=sum(1 for t in cut if t.inferred_mutation),
        good_outcome_after_cut=bool(cut) and good_outcome(run),
        recorded_stop=run.outcome.stop_reason,
        turns=n,
        turns_replayed=replayed,
        timed=facts.timed and policy.deadline_s is not None,
        decisions=decisions,
        notes=tuple(notes),
        segment=seg if isinstance(seg, int) else None,
        context=ctx,
        usage_known=unknown is None,
        stop_basis=basis if stop_reason == StopReason.NO_PROGRESS else None,
        unjudged_at=unjudged_at,
    )


def replay_leaves(run: Run, policy: Policy, **kw: Any) -> list[ReplayResult]:
    """One replay per segment of an interactive session (``Run.leaves()``); the run itself when it has none."""
    return [replay(leaf, policy, **kw) for leaf in run.leaves()]
