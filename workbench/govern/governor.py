"""The Governor: the ONE place the seed loop's per-turn order lives (docs/governors.md §4, precedence §4.3).

Pure (no I/O, no clock: elapsed seconds are passed in); the replay engine and the live loop drive this same
object, phase by phase as docs/governors.md §4.4 shows. Not modelled here: cancel/pause (the live loop's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.govern import messages as msg
from workbench.govern.agent_limits import AgentLimits, LimitHit, rules_for
from workbench.govern.cost import LedgerRow, Totals, exhausted
from workbench.govern.deadline import deadline_landing_reserve, landing_due, pace_due, wall_duration_text
from workbench.govern.decisions import (
    Decision,
    Inject,
    Next,
    Note,
    Phase,
    SkipTools,
    StartLanding,
    Step,
    Stop,
    numbers,
)
from workbench.govern.endings import DEFAULT_PROMOTION_TEXT, promotion, split_parts
from workbench.govern.landing import countdown, landing_ceiling
from workbench.govern.meter_record import (
    DEADLINE,
    MeterRecord,
    cost_meter,
    deadline_meter,
    no_progress_meter,
    tool_timeouts_meter,
    turns_meter,
)
from workbench.govern.noprogress import CallFact, ProgressGuard, ResultFact, Signal
from workbench.govern.openhands import StuckDetector, finish_text
from workbench.govern.policy import LIMIT_FIELDS, Policy
from workbench.govern.pressure import pressure_reached, reuse_ceiling
from workbench.govern.raw import raw_ceiling
from workbench.govern.replies import abandon_empty, is_length
from workbench.govern.tooltimeout import ToolTimeoutGuard
from workbench.govern.turncap import fold_last_call_due, turn_cap
from workbench.govern.verdict import StopReason, verdict_for
from workbench.govern.wrapup import budget_used, wrapup_due
from workbench.trace.schema import EventKind


@dataclass(frozen=True, slots=True)
class Reply:
    """One model response as the governor sees it."""

    prompt: int | None = None
    cached: int | None = None
    completion: int | None = None
    finish_reason: str | None = None
    text: str | None = None
    calls: tuple[CallFact, ...] = ()
    format_error: bool = False
    """The agent answered this reply as malformed and went on (``Turn.format_error``): not an ending."""


_STOPPED = "stopped"
"""``_expect`` once the run has stopped: no phase is expected."""


_QUIET = {n: Step((), n) for n in Next}
"""The answer of a phase that decided nothing, per next step."""


class GovernorError(RuntimeError):
    """A phase was called out of order (e.g. after the run stopped)."""


class Governor:
    """One leaf's governors, composed in the seed's order. The phase API: docs/governors.md §4.4."""

    def __init__(self, policy: Policy, *, window: int | None = None, timed: bool = True) -> None:
        self.policy = policy
        self.window = policy.window if policy.window is not None else window
        self.wall_s = policy.deadline_s if timed else None
        self.reserve_s = (
            deadline_landing_reserve(self.wall_s, policy.watchdog_pad_s) if self.wall_s is not None else None
        )
        self.max_turns = policy.effective_max_turns
        self.cap = max(turn_cap(self.max_turns, policy.fold) - policy.turn_cap_offset, 0)
        self.iteration = 0
        self.calls = 0
        self.tool_calls = 0
        self.totals = Totals()
        self.warned = False
        self.wall_paced = False
        self.landing = 0
        self.landing_stop = ""
        self.landing_ceiling = 0
        self.landing_clock_end: float | None = None
        self.exhausted: str | None = None
        self.meter: MeterRecord | None = None
        self.last_text = ""
        self.remaining = 0
        self.last_elapsed: float | None = None
        self.decisions: list[Decision] = []
        self.ledger: list[LedgerRow] = []
        self.closed_kinds: set[str] = set()
        self.unjudged_at: int | None = None
        """The first turn where the no-progress guard could not judge: a signal would have fired had an unknown
        workspace fact been read as "no change" (``ProgressReading.unjudged``)."""
        self.stopped: Stop | None = None
        self._expect: str = Phase.START
        self._calls: tuple[CallFact, ...] = ()
        self.progress = ProgressGuard.from_policy(policy) if policy.no_progress else None
        self.timeouts = ToolTimeoutGuard(policy.tool_timeout_cap) if policy.tool_timeouts else None
        self.stuck = (
            StuckDetector(
                policy.stuck_action_observation,
                policy.stuck_action_error,
                policy.stuck_monologue,
                policy.stuck_alternating,
                policy.stuck_scan_events,
            )
            if policy.stuck_detection
            else None
        )
        agent = rules_for(policy.rules)
        self.limits = (
            AgentLimits(agent, {f: getattr(policy, f) for f in LIMIT_FIELDS}) if agent is not None else None
        )
        if self.limits is not None and not self.limits.active:
            self.limits = None

    # -- readings -----------------------------------------------------------------------------------------------
    @property
    def spent(self) -> int:
        return self.totals.spent(self.policy.cache_weight_percent)

    @property
    def raw(self) -> int:
        return self.totals.raw

    def budget_used(self) -> float:
        p = self.policy
        return budget_used(
            self.spent,
            self.raw,
            self.totals.sent,
            p.grant,
            self.window,
            p.wrapup_readings,
            p.raw_ceiling_multiple,
        )

    # -- phases ---------------------------------------------------------------------------------------------------
    def begin_turn(self, elapsed_s: float | None = None, *, messages: int | None = None) -> Step:
        """Top of an iteration: the turn cap (after the loop), an agent's own before-call limits (``messages``: the
        conversation the call would send, for a message limit), then the deadline landing (B) and wall pace (C)."""
        self._check(Phase.START)
        self._seen(elapsed_s)
        if self.iteration >= self.cap:
            return self.end_of_loop()
        if self.limits is not None:
            hit = self.limits.before_call(messages=messages, elapsed_s=elapsed_s)
            if hit is not None:
                return self._limit_stop(hit, Phase.START)
        self.iteration += 1
        out: list[Decision] = []
        if self.wall_s is not None and elapsed_s is not None:
            assert self.reserve_s is not None
            if landing_due(elapsed_s, self.wall_s, self.reserve_s, self.landing > 0):
                self._start_deadline_landing(out, elapsed_s, Phase.START)
            at = self.policy.wall_pace_at
            if at is not None and pace_due(elapsed_s, self.wall_s, self.wall_paced, self.landing > 0, at):
                self.wall_paced = True
                gone, left = wall_duration_text(elapsed_s), wall_duration_text(self.wall_s - elapsed_s)
                nums = numbers(elapsed_s=elapsed_s, wall_s=self.wall_s, at=self.policy.wall_pace_at)
                out.append(
                    Note(self.calls, Phase.START, "wall-pace", msg.wall_pace_note(gone, left), numbers=nums)
                )
                out.append(
                    Inject(
                        self.calls,
                        Phase.START,
                        msg.WALL_PACE,
                        "wall pace",
                        msg.wall_pace_text(gone, left),
                        nums,
                    )
                )
        self.remaining = self.policy.grant - self.spent
        self._expect = Phase.RESPONSE
        return self._step(out, Next.CALL, call_deadline_s=self._call_deadline())

    def call_failed(self, elapsed_s: float | None = None, *, lease_expired: bool = False) -> Step:
        """Step H's error arm: a lease expiring before any landing starts the deadline landing (the cut call is
        discarded: ``retry``); any other failure stops with ``error`` — or ``deadline`` when a clock expired."""
        self._check(Phase.RESPONSE)
        self._seen(elapsed_s)
        out: list[Decision] = []
        if self.landing == 0 and lease_expired:
            self._start_deadline_landing(out, elapsed_s if elapsed_s is not None else 0.0, Phase.ERROR)
            self._expect = Phase.START
            return self._step(out, Next.RETRY)
        if lease_expired:
            if self.meter is None and self.wall_s is not None:
                self.meter = deadline_meter(elapsed_s or 0.0, self.wall_s)
            self.exhausted = DEADLINE
            return self._finish(out, Phase.ERROR, StopReason.DEADLINE, self.last_text, turn_shift=0)
        return self._finish(out, Phase.ERROR, StopReason.ERROR, self.last_text, turn_shift=0)

    def after_response(
        self, reply: Reply, elapsed_s: float | None = None, *, steered: bool = False, usd: float | None = None
    ) -> Step:
        """Steps I-M: meter the call; the no-tool rules (abandon, nudges, final); the length-stopped batch.

        ``usd``: the call's price for an agent's dollar limit (``workbench.govern.dollars``; None: unknown). An
        agent's after-call limits are checked first: a crossing call is billed, its answer discarded.

        ``steered``: guidance arrived in the mailbox as the final answer was written (step K.5). Outside a landing
        and before the last iteration it reopens the loop rather than ending it (``next`` is ``continue``)."""
        self._check(Phase.RESPONSE)
        self._seen(elapsed_s)
        p = self.policy
        self.calls += 1
        self.totals = self.totals.add(reply.prompt, reply.cached, reply.completion)
        turn = self.calls - 1
        self.ledger.append(
            LedgerRow("turn", turn, reply.prompt or 0, reply.cached or 0, reply.completion or 0)
        )
        text = (reply.text or "").strip()
        out: list[Decision] = []
        if self.limits is not None:
            tokens = (reply.prompt or 0) + (reply.completion or 0)
            hit = self.limits.after_call(usd, tokens, elapsed_s=elapsed_s)
            if hit is not None:
                return self._limit_stop(hit, Phase.RESPONSE)
        # J: the leaf's own endings, ahead of the no-tool path (K) and the length-stopped batch (M); the turn's
        # other calls are dropped with it
        if p.reflex and (partial := promotion(reply.calls)) is not None:
            return self._finish(
                out,
                Phase.RESPONSE,
                StopReason.PROMOTE,
                partial or text or DEFAULT_PROMOTION_TEXT,
                reason="promoted",
            )
        if p.swarm and not p.reflex and (parts := split_parts(reply.calls)) is not None:
            # the partial is the leaf's own words this turn, else the last thing it said (seed: lastAssistantText)
            return self._finish(
                out,
                Phase.RESPONSE,
                StopReason.SPLIT,
                text or self.last_text,
                reason=f"asked to divide into {len(parts)} parts",
                nums=numbers(parts=list(parts)),
            )
        if not reply.calls:
            if self.stuck is not None and text:
                stuck_hit = self.stuck.observe_message(text)
                if stuck_hit is not None:
                    self.last_text = text
                    return self._finish(out, Phase.RESPONSE, StopReason.STUCK, text, reason=stuck_hit.reason)
            if p.empty_abandon and abandon_empty(text, self.remaining, reply.completion):
                nums = numbers(completion=reply.completion or 0, remaining=self.remaining)
                reason = (
                    f"empty reply burned {reply.completion or 0} of {self.remaining} remaining tokens — "
                    "abandoned for escalation"
                )
                return self._finish(out, Phase.RESPONSE, StopReason.EMPTY, "", reason=reason, nums=nums)
            if text == "":
                self._expect = Phase.START
                if p.nudges:
                    out.append(
                        Inject(
                            turn,
                            Phase.RESPONSE,
                            msg.NUDGE_EMPTY,
                            "empty reply — nudged to continue",
                            msg.NUDGE_EMPTY_TEXT,
                        )
                    )
                return self._step(out, Next.CONTINUE)
            if reply.format_error:
                # the agent itself answered the reply with a correction: a turn without calls, not an ending
                self._expect = Phase.START
                return self._step(out, Next.CONTINUE)
            self.last_text = text
            if is_length(reply.finish_reason) and p.nudges:
                self._expect = Phase.START
                out.append(
                    Inject(
                        turn,
                        Phase.RESPONSE,
                        msg.NUDGE_LENGTH,
                        "truncated reply — nudged to use tools",
                        msg.NUDGE_LENGTH_TEXT,
                        numbers(finish_reason=reply.finish_reason),
                    )
                )
                return self._step(out, Next.CONTINUE)
            if steered and self.landing == 0 and self.iteration < self.cap:
                self._expect = Phase.START
                out.append(
                    Note(
                        turn,
                        Phase.RESPONSE,
                        "steered",
                        "steered at the finish — the answer was reopened rather than delivered",
                    )
                )
                return self._step(out, Next.CONTINUE)
            return self._finish(out, Phase.RESPONSE, StopReason.DONE, text, reason="final")
        if text:
            self.last_text = text
        self.tool_calls += len(reply.calls)
        if p.length_batch and is_length(reply.finish_reason):
            self._expect = Phase.START
            reason = (
                f"reply hit the output limit holding {len(reply.calls)} tool calls — none executed, "
                "all returned for re-issue"
            )
            out.append(
                SkipTools(
                    turn,
                    Phase.RESPONSE,
                    msg.LENGTH_BATCH,
                    reason,
                    msg.LENGTH_BATCH_TEXT,
                    numbers(calls=len(reply.calls), finish_reason=reply.finish_reason),
                )
            )
            return self._step(out, Next.SKIP_TOOLS)
        self._calls = reply.calls
        self._expect = Phase.TOOLS
        return self._step(out, Next.RUN_TOOLS)

    def tool_spend(self, prompt: int, cached: int = 0, completion: int = 0, *, calls: int = 1) -> None:
        """A tool's own model calls, billed to the node: every meter (cost, raw, wrap-up) reads them; Σsent and the
        turn rows do not. Callable at any time, before the first turn too (its ledger row then has no turn)."""
        turn = self.calls - 1 if self.calls else None
        self.totals = self.totals.add_tool(prompt, cached, completion, calls)
        self.ledger.append(LedgerRow("tool", turn, prompt, cached, completion, calls))

    def room_left(self, elapsed_s: float | None) -> bool:
        """The seed's ``RoomLeft`` (docs/governors.md §5.17): turns left, tokens left, wall left beyond the landing
        reserve, and no exhaustion (a leaf told to land has no room)."""
        if self.exhausted:
            return False
        if self.cap - self.calls <= 0 or self.policy.grant - self.spent <= 0:
            return False
        if self.wall_s is not None and elapsed_s is not None:
            assert self.reserve_s is not None
            if self.wall_s - elapsed_s - self.reserve_s <= 0:
                return False
        return True

    def reopen(self, kind: str, note: str, elapsed_s: float | None = None) -> Step:
        """After a ``done`` stop: put a finding of ``kind`` back to the leaf (once per kind, while room is left).
        ``continue`` clears the stop and its verdict (the answer becomes a draft; the loop appends it and
        ``note``); ``stop`` lands as it was, the finding standing."""
        stop = self.stopped
        if stop is None or stop.kind != StopReason.DONE:
            raise GovernorError("reopen() needs a run that has just stopped with a final answer")
        turn = self.calls - 1
        if kind in self.closed_kinds or not self.room_left(elapsed_s):
            why = "already put to the leaf once" if kind in self.closed_kinds else "no room left"
            note_out = Note(
                turn,
                Phase.CLOSE,
                EventKind.STANDING_FINDING,
                f"{kind}: {why} — lands with it",
                note,
                numbers(finding=kind),
            )
            self.decisions.insert(self.decisions.index(stop), note_out)  # the stop stays the last word
            return Step((note_out,), Next.STOP)
        self.closed_kinds.add(kind)
        self.decisions.remove(stop)
        self.stopped = None
        self._expect = Phase.START
        out: list[Decision] = [
            Inject(
                turn,
                Phase.CLOSE,
                EventKind.SELF_CLOSE,
                f"closing its own finding — {kind}",
                note,
                numbers(finding=kind),
            )
        ]
        return self._step(out, Next.CONTINUE)

    def after_tools(
        self,
        results: Sequence[ResultFact],
        mutated: bool | None = None,
        elapsed_s: float | None = None,
        *,
        inferred: bool = False,
    ) -> Step:
        """Steps R-W, in order: fold notice, budget landing start, landing countdown, wrap-up, tool-timeout guard,
        no-progress guard (and, under the openhands rules, the finish tool and the stuck detector).

        ``mutated``: the workspace fact (``None``: unknown, never read as "no change"); ``inferred``: it was
        inferred from the calls (``Turn.mutated_rule``), so a guard stop that read it says so."""
        self._check(Phase.TOOLS)
        self._seen(elapsed_s)
        p = self.policy
        calls = self._calls
        res = list(results)[: len(calls)]
        res += [ResultFact(None)] * (len(calls) - len(res))
        turn = self.calls - 1
        out: list[Decision] = []
        self._expect = Phase.START
        finishing = [c for c in calls if c.name in p.finish_tools] if p.finish_tools else None
        if finishing:
            text = finish_text(finishing[-1]) or self.last_text
            return self._finish(out, Phase.TOOLS, StopReason.DONE, text, reason="finish tool")
        if fold_last_call_due(self.iteration, self.cap, p.fold):
            out.append(
                Inject(
                    turn,
                    Phase.TOOLS,
                    msg.FOLD_LAST_CALL,
                    "fold: one round of tool calls",
                    msg.FOLD_LAST_CALL_TEXT,
                )
            )
        spent, raw, sent = self.spent, self.raw, self.totals.sent
        # S: budget exhaustion starts the landing (the crossing turn's calls already ran).
        if self.landing == 0:
            trigger = self._budget_trigger(spent, raw, sent)
            if trigger is not None:
                self.landing = p.landing_turns
                self.landing_stop = StopReason.BUDGET
                self.landing_ceiling = landing_ceiling(spent, p.grant, p.landing_token_share)
                self.exhausted = StopReason.BUDGET
                self.meter = cost_meter(spent, p.grant)
                nums = numbers(
                    trigger=trigger,
                    spent=spent,
                    grant=p.grant,
                    raw=raw,
                    sent=sent,
                    ceiling=self.landing_ceiling,
                    turns=self.landing,
                )
                out.append(
                    StartLanding(
                        turn,
                        Phase.TOOLS,
                        StopReason.BUDGET,
                        msg.NOTE_BUDGET_LANDING,
                        numbers=nums,
                        meter=self.meter,
                    )
                )
                out.append(
                    Inject(
                        turn,
                        Phase.TOOLS,
                        msg.BUDGET_LANDING,
                        f"{trigger} bound reached",
                        msg.BUDGET_LANDING_TEXT,
                        nums,
                    )
                )
                return self._step(out, Next.CONTINUE)
        # T: the landing countdown.
        if self.landing > 0:
            step = countdown(self.landing, spent, self.landing_ceiling)
            if step.ends:
                nums = numbers(spent=spent, ceiling=self.landing_ceiling, left=self.landing)
                if step.tokens_spent and self.landing > 1:
                    out.append(
                        Note(turn, Phase.TOOLS, "landing-tokens", msg.NOTE_LANDING_TOKENS, numbers=nums)
                    )
                return self._finish(
                    out, Phase.TOOLS, self.landing_stop, self.last_text, reason="landing ended", nums=nums
                )
            self.landing = step.left
            return self._step(out, Next.CONTINUE)
        # U: the once-only wrap-up warning.
        if p.wrapup_at is not None and not self.warned:
            used = self.budget_used()
            if wrapup_due(used, self.warned, p.wrapup_at):
                self.warned = True
                out.append(
                    Inject(
                        turn,
                        Phase.TOOLS,
                        msg.WRAPUP,
                        f"budget used {used:.3f} > {p.wrapup_at}",
                        msg.WRAPUP_TEXT,
                        numbers(used=round(used, 6), spent=spent, raw=raw, sent=sent),
                    )
                )
        # V: the tool-timeout guard.
        if self.timeouts is not None:
            hit = self.timeouts.observe(calls, res)
            if hit is not None:
                self.exhausted = StopReason.TOOL_TIMEOUTS
                self.meter = tool_timeouts_meter(hit.count, p.tool_timeout_cap)
                return self._finish(
                    out,
                    Phase.TOOLS,
                    StopReason.TOOL_TIMEOUTS,
                    self.last_text,
                    reason=hit.reason,
                    nums=numbers(count=hit.count, command=hit.command),
                )
        # W: the no-progress guard.
        if self.progress is not None:
            reading = self.progress.observe(calls, res, mutated, inferred)
            if reading.unjudged and self.unjudged_at is None:
                self.unjudged_at = turn
            signal = reading.signal
            if signal is not Signal.CONTINUE:
                nums = numbers(
                    observed=reading.turns,
                    repeat=reading.repeat,
                    stagnant=reading.stagnant,
                    recon=reading.recon,
                    productive=reading.productive,
                )
                if reading.fired:
                    nums += numbers(signal=reading.fired, basis=reading.basis)
            on = " (on an inferred workspace fact)" if reading.basis == "inferred" else ""
            if signal is Signal.CONTINUE:
                pass
            elif signal is Signal.PACE:
                out.append(Note(turn, Phase.TOOLS, "recon", self.progress.recon_note(), numbers=nums))
                out.append(
                    Inject(turn, Phase.TOOLS, msg.RECON, "reading pace", msg.recon_text(reading.recon), nums)
                )
            elif signal is Signal.CONCLUDE:
                self.progress.mark_concluded()
                out.append(
                    Inject(
                        turn,
                        Phase.TOOLS,
                        msg.CONCLUDE,
                        reading.reason + on + " — conclude directive injected",
                        msg.CONCLUDE_TEXT,
                        nums,
                    )
                )
            elif signal is Signal.TERMINATE:
                self.exhausted = StopReason.NO_PROGRESS
                self.meter = no_progress_meter(self.calls)
                return self._finish(
                    out,
                    Phase.TOOLS,
                    StopReason.NO_PROGRESS,
                    self.last_text,
                    reason=reading.reason + on + " — leaf terminated",
                    nums=nums,
                )
        if self.stuck is not None:
            stuck_hit = self.stuck.observe_tools(calls, res)
            if stuck_hit is not None:
                return self._finish(
                    out,
                    Phase.TOOLS,
                    StopReason.STUCK,
                    self.last_text,
                    reason=stuck_hit.reason,
                    nums=numbers(scenario=stuck_hit.scenario),
                )
        return self._step(out, Next.CONTINUE)

    def context_truncated(self, **nums: object) -> Step:
        """The context-window manager's terminus (ADR-107 CONTEXT_TRUNCATED): the send does not fit, no provider
        call is made, and the run ends with ``context-truncated`` (graded ``context_truncated``: it ran out of room;
        the meter is whatever the run was exhausting, re-read).

        Callable at the top of a turn (before ``begin_turn``) or after ``begin_turn``, before the call (where a
        live loop's size check runs, the turn's injections already in the transcript). Either way the stop is the
        same decision: turn = the last call made, phase ``start``."""
        self._check(Phase.START, Phase.RESPONSE)
        return self._finish(
            [],
            Phase.START,
            StopReason.CONTEXT_TRUNCATED,
            self.last_text,
            reason="context truncated",
            nums=numbers(**nums),
            turn_shift=-1,
        )

    def limit_at_end(self, elapsed_s: float | None = None) -> Step | None:
        """Where a recording ends: whether an agent's before-call limits already stop the next call (known from what
        was spent, without another turn; a message limit needs the next request and is not read). None: they do not."""
        self._check(Phase.START)
        if self.limits is None:
            return None
        hit = self.limits.before_call(messages=None, elapsed_s=elapsed_s)
        return None if hit is None else self._limit_stop(hit, Phase.START)

    def end_of_loop(self) -> Step:
        """Falling out of the loop: the turn cap (``begin_turn`` calls this itself once the cap is reached)."""
        self._check(Phase.START)
        return self._finish(
            [],
            Phase.END,
            StopReason.TURN_CAP,
            self.last_text,
            meter=turns_meter(self.calls, self.max_turns),
            turn_shift=-1,
        )

    # -- internals ------------------------------------------------------------------------------------------------
    def _budget_trigger(self, spent: int, raw: int, sent: int) -> str | None:
        p = self.policy
        if p.cost_lands and exhausted(spent, p.grant):
            return "cost"
        if p.raw_lands and raw >= raw_ceiling(p.grant, p.raw_ceiling_multiple):
            return "raw"
        if p.reuse_lands and pressure_reached(sent, reuse_ceiling(self.window)):
            return "reuse"
        return None

    def _limit_stop(self, hit: LimitHit, phase: Phase) -> Step:
        """An agent's own limit ends the run: before a call (``start``: the last call made is the stop turn) or once
        a call is billed (``response``: that call is the stop turn, its answer discarded)."""
        lim = hit.limit
        self.exhausted = lim.stop
        scale = 1_000_000 if lim.meter == "usd" else 1
        unit = "micro-USD" if lim.meter == "usd" else lim.meter
        meter = MeterRecord(lim.knob, round(hit.value * scale), round(hit.allowed * scale), unit)
        nums = numbers(
            exit_status=lim.exit_status,
            limit=lim.knob,
            value=round(hit.value, 6),
            allowed=hit.allowed,
            autosubmit=hit.autosubmit,
        )
        text = self.last_text if hit.autosubmit else ""
        return self._finish(
            [], phase, lim.stop, text, reason=hit.reason, meter=meter, nums=nums, turn_shift=-1
        )

    def _start_deadline_landing(self, out: list[Decision], elapsed_s: float, phase: Phase) -> None:
        assert self.wall_s is not None or phase == Phase.ERROR
        wall = self.wall_s or 0.0
        self.landing = self.policy.deadline_landing_turns
        self.landing_stop = StopReason.DEADLINE
        self.exhausted = DEADLINE
        self.landing_clock_end = elapsed_s + (self.reserve_s or 0.0)
        self.meter = deadline_meter(elapsed_s, wall)
        turn = self.calls if phase == Phase.START else max(self.calls - 1, 0)
        nums = numbers(elapsed_s=elapsed_s, wall_s=wall, reserve_s=self.reserve_s, turns=self.landing)
        out.append(
            StartLanding(
                turn, phase, StopReason.DEADLINE, msg.NOTE_DEADLINE_LANDING, numbers=nums, meter=self.meter
            )
        )
        out.append(
            Inject(self.calls, phase, msg.DEADLINE_LANDING, "deadline close", msg.DEADLINE_LANDING_TEXT, nums)
        )

    def _call_deadline(self) -> float | None:
        if self.landing_stop == DEADLINE and self.landing_clock_end is not None:
            return self.landing_clock_end
        return self.wall_s

    def _finish(
        self,
        out: list[Decision],
        phase: Phase,
        reason_kind: str,
        text: str,
        *,
        reason: str = "",
        meter: MeterRecord | None = None,
        nums: tuple[tuple[str, object], ...] = (),
        turn_shift: int = 0,
    ) -> Step:
        if meter is not None:
            self.meter = meter
        live = self.meter.reread(self.spent, self.last_elapsed) if self.meter is not None else None
        turn = self.calls - 1 if turn_shift == -1 or phase != Phase.START else self.calls
        stop = Stop(
            turn,
            phase,
            reason_kind,
            reason or reason_kind,
            text,
            nums,
            verdict=verdict_for(reason_kind, self.exhausted, text),
            meter=live,
            exhausted=self.exhausted,
        )
        out.append(stop)
        self.stopped = stop
        self._expect = _STOPPED
        return self._step(out, Next.STOP)

    def _step(self, out: list[Decision], next_: Next, call_deadline_s: float | None = None) -> Step:
        if not out and call_deadline_s is None:
            return _QUIET[next_]  # most phases decide nothing: one frozen Step each, shared
        self.decisions.extend(out)
        return Step(tuple(out), next_, call_deadline_s)

    def _seen(self, elapsed_s: float | None) -> None:
        if elapsed_s is not None:
            self.last_elapsed = elapsed_s

    def _check(self, *phases: Phase) -> None:
        if self._expect == _STOPPED:
            raise GovernorError("the run has stopped; no further phases")
        if self._expect not in phases:
            raise GovernorError(
                f"expected phase {str(self._expect)!r}, got {' or '.join(repr(str(p)) for p in phases)}"
            )
