"""The live loop: system prompt and brief, then turns, governed by the same :class:`~workbench.govern.Governor`
the offline replay drives, and recorded as it goes (docs/loop.md). No rule lives here: each turn the loop asks the
Governor (top of turn, after the response, after the tools) and does what the decisions say; a context-window
manager, when the policy has one, bounds every send; every way out passes through ``_Run._land``, which re-reads
the live meters and writes the Outcome.

    loop = LiveLoop(Policy.named("current", grant=100_000), provider=client, tools=Toolbox(Workspace("ws")))
    result = await loop.run("Fix the failing test", recorder=Recorder("run.jsonl", loop.header("Fix…")))
"""

from __future__ import annotations

import asyncio
import html
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from workbench.context import ContextWindowManager
from workbench.context.decay import Decayer, nbytes
from workbench.context.memo import ObservationMemo
from workbench.context.spill import MemorySpill, SpillStore
from workbench.estimate.ctxbudget import observation_bytes, observation_safety_bytes
from workbench.govern import CallFact, Decision, Governor, Inject, Policy, ResultFact, Stop
from workbench.govern import Reply as GovReply
from workbench.govern.deadline import wall_duration_text
from workbench.govern.decisions import Next, Phase, Step
from workbench.govern.endings import REFLEX_SYSTEM_PROMPT, ending_schemas
from workbench.govern.messages import wall_sentence
from workbench.govern.verdict import StopReason, verdict_for
from workbench.loop.client import Completion
from workbench.loop.clock import Clock, SystemClock, as_clock
from workbench.loop.closer import Closer, RecordedCloser
from workbench.loop.errors import ProviderError
from workbench.loop.mailbox import CANCEL, PAUSE, Mailbox, RecordedMailbox, board_text, guidance_text
from workbench.loop.recorded import (
    END_OF_RECORDING,
    RecordedClock,
    RecordedProvider,
    RecordedTools,
    RecordingExhausted,
)
from workbench.loop.recorder import Recorder
from workbench.loop.tools import TOOL_SCHEMAS, Batch
from workbench.replay.facts import run_facts
from workbench.trace.schema import (
    Event,
    EventKind,
    Message,
    Outcome,
    RecordedPolicy,
    Run,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
)

# The stop reason and verdict of a failure inside the loop itself (a bug, a disk that filled): workbench words, not
# the seed's (the seed's `error` stop is a provider failure and is graded provider_failure).
LOOP_ERROR_STOP = "loop-error"
LOOP_ERROR = "error"

SYSTEM_PROMPT = (
    "You are an agent working in a workspace folder. Use the tools: sh runs a shell command there, read and write "
    "files, edit replaces one exact occurrence of text in a file. Paths are relative to the workspace. Work in "
    "small verified steps. When the task is done, reply without tool calls and state the result."
)


class Provider(Protocol):
    async def complete(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]
    ) -> Completion: ...


class ToolRunner(Protocol):
    async def run_batch(
        self, calls: Sequence[ToolCall], turn: int, *, budget_s: float | None = None
    ) -> Batch: ...


@dataclass(frozen=True)
class TurnReport:
    """One turn as the progress line shows it."""

    turn: int
    prompt: int | None
    spent: int
    grant: int
    retries: int
    decisions: tuple[Decision, ...]

    def line(self) -> str:
        prompt = "?" if self.prompt is None else f"{self.prompt:,}"
        said = ", ".join(f"{d.action} {d.kind}" for d in self.decisions if d.action != "note") or "-"
        retry = f"  retries {self.retries}" if self.retries else ""
        return (
            f"turn {self.turn:>3}  prompt {prompt:>9}  spent {self.spent:,} of {self.grant:,}{retry}  {said}"
        )


@dataclass(frozen=True)
class LoopResult:
    """How a live run ended: the Outcome (stop reason, verdict, meter), its decisions and where it was recorded."""

    run_id: str
    outcome: Outcome
    turns: int
    spent: int
    raw: int
    grant: int
    decisions: tuple[Decision, ...]
    retries: int
    trace: Path | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        meter = self.outcome.meter
        return {
            "run_id": self.run_id,
            "stop_reason": self.outcome.stop_reason,
            "verdict": self.outcome.verdict,
            "turns": self.turns,
            "spent": self.spent,
            "raw": self.raw,
            "grant": self.grant,
            "retries": self.retries,
            "meter": meter.words() if meter else None,
            "trace": str(self.trace) if self.trace else None,
            "error": self.error,
        }

    def to_frame(self) -> pd.DataFrame:
        """The decision timeline, one row per governor decision."""
        return pd.DataFrame([d.to_row() for d in self.decisions])

    def summary(self) -> str:
        meter = self.outcome.meter.words() if self.outcome.meter else ""
        parts = [
            f"stop {self.outcome.stop_reason}",
            f"verdict {self.outcome.verdict}",
            f"{self.turns} turns",
            f"spent {self.spent:,} of {self.grant:,}",
        ]
        if meter:
            parts.append(f"({meter})")
        if self.retries:
            parts.append(f"{self.retries} retries")
        return "  ".join(parts)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
            for k, v in self.to_dict().items()
        )
        return f"<table><caption>Live run {html.escape(str(self.run_id))}</caption>{rows}</table>"


def event_of(decision: Decision) -> Event:
    """A governor decision as a trace event (``data`` holds the action, phase, numbers and stop fields)."""
    data: dict[str, Any] = {"action": decision.action, "phase": decision.phase, **decision.data}
    if isinstance(decision, Stop):
        data["verdict"] = decision.verdict
        if decision.exhausted:
            data["exhausted"] = decision.exhausted
    meter = getattr(decision, "meter", None)
    if meter is not None:
        data["meter"] = {k: getattr(meter, k) for k in ("name", "reached", "allowed", "unit")}
    return Event(turn=decision.turn, kind=decision.kind, reason=decision.reason or None, data=data)


def call_facts(calls: Sequence[ToolCall]) -> tuple[CallFact, ...]:
    return tuple(CallFact(c.name, c.arguments, c.id) for c in calls)


def result_facts(results: Sequence[ToolResult]) -> tuple[ResultFact, ...]:
    return tuple(ResultFact(r.digest(), r.is_error, r.timed_out, r.content) for r in results)


@dataclass
class LiveLoop:
    """One governed run. Time is an input: ``clock`` (a :class:`~workbench.loop.clock.Clock`, or a function
    returning monotonic seconds) times the turns and cuts a call at the lease, ``now`` gives the wall time stamped
    on turns. A context-window manager (given, or built from the policy) bounds every send."""

    policy: Policy
    provider: Provider
    tools: ToolRunner
    tool_schemas: Sequence[Mapping[str, Any]] = TOOL_SCHEMAS
    manager: ContextWindowManager | None = None
    """The context-window manager; by default each run builds its own from the policy
    (``ContextWindowManager.from_policy``: none when ``policy.context_length`` is None, ADR-107's no-op)."""
    decay: bool = True
    """Run the seed's observation memo and decayer (steps E, F, O, P): results identical to earlier ones become
    pointers, and old results are stubbed once the window's observation budget is exceeded."""
    spill: SpillStore | None = None
    """Where stubbed results and pointers keep their bytes (default: in memory; the CLI uses the workspace)."""
    system_prompt: str = SYSTEM_PROMPT
    model: str | None = None
    window: int | None = None
    """The model's context size (the reuse ceiling's W); defaults to the policy's ``context_length``."""
    clock: Clock | Callable[[], float] = field(default_factory=SystemClock)
    now: Callable[[], datetime | None] = field(default=lambda: datetime.now(UTC))
    opening: Sequence[Message] | None = None
    """The messages the first call opens with; by default the system prompt and the task (with the wall sentence
    when the policy has a deadline). Recorded mode opens with the recording's own first request."""
    on_turn: Callable[[TurnReport], None] | None = None
    mailbox: Mailbox | None = None
    """What reaches the leaf from outside (``workbench.loop.mailbox``): guidance and board notes, read at the top of
    every turn and at the final answer (where guidance reopens it, if the Governor agrees), and the caller's cancel
    and pause, read at the turn boundary."""
    closer: Closer | None = None
    """Reads the leaf's own landing after a final answer (``workbench.loop.closer``): each finding is put back to
    the leaf once per kind while room is left (``Governor.reopen``)."""
    spend_before: Sequence[Usage] = ()
    """Tool-side model spend made before the first turn: billed to the node, recorded as ``tool-spend`` events."""
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    redact: Callable[[str], str] = field(default=lambda text: text)
    """Applied to a failure's text before it is cut to length (the API key's redactor; the recorder redacts the
    rest of what it writes)."""

    @classmethod
    def from_recording(cls, run: Run, policy: Policy, **overrides: Any) -> LiveLoop:
        """Recorded mode: re-execute ``run`` through this loop under ``policy``. The provider answers the k-th
        request with recorded turn k, the tools with the recorded results, the clock replays the recorded turn
        timestamps (a call whose recorded end falls past the lease is cut), the mailbox holds input where the
        recording went on past a final answer. The loop opens with the recording's first request and its tool
        schemas and does not decay observations, so each send is the recorded request while no rule has changed
        it: a context-window manager then faces what the offline context replay faces — up to its first prune.
        After a prune the recorded usage still describes the unpruned request, so the live calibration reads it
        against a smaller send and the two part ways (the offline context replay calibrates on what was really
        sent). ``overrides`` replace any of these fields except the provider."""
        provider = RecordedProvider(run)
        clock = RecordedClock(provider)
        fields: dict[str, Any] = {
            "tools": RecordedTools(run),
            "clock": clock,
            "now": clock.stamp,
            "mailbox": RecordedMailbox(provider),
            "window": run.context_length,
            "model": run.model,
            "opening": tuple(run.request(0)) if run.turns and run.request(0) else None,
            "tool_schemas": tuple(run.tool_schemas or ()),
            "decay": False,
            "closer": RecordedCloser(run),
            "spend_before": tuple(
                Usage(prompt=p, cached=c, completion=o) for p, c, o, _ in run_facts(run).opening_spend
            ),
        }
        fields.update(overrides)
        return cls(policy, provider, **fields)

    def schemas(self) -> tuple[Mapping[str, Any], ...]:
        """The tools every request offers: ``tool_schemas`` plus the policy's ending tools (``promote`` for a
        reflex, ``request_split`` when the swarm is armed) unless already there (a recording carries its own)."""
        held = {s.get("function", {}).get("name") for s in self.tool_schemas}
        endings = ending_schemas(reflex=self.policy.reflex, swarm=self.policy.swarm)
        return (*self.tool_schemas, *(e for e in endings if e["function"]["name"] not in held))

    def header(self, task: str, **metadata: Any) -> Run:
        """The trace header: policy, model, context length, tool schemas."""
        p = self.policy
        return Run(
            run_id=self.run_id,
            source="workbench",
            model=self.model,
            context_length=self.window if self.window is not None else p.context_length,
            policy=RecordedPolicy(
                rules=p.rules,
                grant=p.grant,
                max_turns=p.max_turns,
                deadline_s=p.deadline_s,
                context_length=p.context_length,
                params={"policy": p.to_dict()},
            ),
            task=task,
            tool_schemas=[dict(s) for s in self.schemas()],
            started_at=self.now(),
            metadata=dict(metadata),
        )

    async def run(self, task: str, recorder: Recorder | None = None) -> LoopResult:
        """Run ``task``. A trace inside the tools' workspace is refused (``ValueError``) before anything runs: the
        model's commands could rewrite the record of their own run."""
        workspace = getattr(getattr(self.tools, "workspace", None), "root", None)
        if recorder is not None and workspace is not None:
            trace, root = recorder.path.resolve(), Path(workspace).resolve()
            if trace == root or root in trace.parents:
                raise ValueError(
                    f"the trace {recorder.path} lies inside the workspace {root}; put it outside"
                )
        return await _Run(self, task, recorder).go()


class _Run:
    """The state of one run of a :class:`LiveLoop` (kept off the loop object so a loop can be run again)."""

    def __init__(self, loop: LiveLoop, task: str, recorder: Recorder | None) -> None:
        self.loop = loop
        self.recorder = recorder
        window = loop.window if loop.window is not None else loop.policy.context_length
        self.clock = as_clock(loop.clock)
        timed = loop.policy.deadline_s is not None and self.clock.timed
        self.gov = Governor(loop.policy, window=window, timed=timed)
        self.started = self.clock.read()
        if loop.opening is not None:
            self.transcript: list[Message] = list(loop.opening)
        else:
            brief = task
            if loop.policy.deadline_s is not None:
                brief += wall_sentence(wall_duration_text(loop.policy.deadline_s))
            system = loop.system_prompt + (REFLEX_SYSTEM_PROMPT if loop.policy.reflex else "")
            self.transcript = [Message(role="system", content=system), Message(role="user", content=brief)]
        self.schemas = loop.schemas()
        self.manager = (
            loop.manager
            if loop.manager is not None
            else ContextWindowManager.from_policy(loop.policy, model=loop.model)
        )
        self.decayer = Decayer(spill=loop.spill or MemorySpill()) if loop.decay else None
        self.memo = ObservationMemo(self.decayer) if self.decayer is not None else None
        self.working, self.safety = observation_bytes(window), observation_safety_bytes(window)
        self.decisions: list[Decision] = []
        self.pending: list[Event] = []
        self.retries = 0
        self.last_prompt: int | None = None
        self.error: str | None = None
        self.findings: list[str] = []

    def since_start(self, reading: float | None) -> float | None:
        """Seconds since the run started at ``reading`` (None when the clock cannot tell)."""
        return None if reading is None or self.started is None else reading - self.started

    def elapsed(self) -> float | None:
        return self.since_start(self.clock.read())

    def _take(self, decisions: Sequence[Decision]) -> None:
        self.decisions.extend(decisions)
        self.pending.extend(event_of(d) for d in decisions)
        for d in decisions:
            if isinstance(d, Inject):
                self.transcript.append(Message(role="user", content=d.text, kind=d.kind))

    def _event(self, turn: int | None, kind: str, reason: str | None = None, **data: Any) -> None:
        self.pending.append(Event(turn=turn, kind=kind, reason=reason, data=data))

    def _flush_events(self) -> None:
        if self.recorder is not None:
            for event in self.pending:
                self.recorder.event(event)
            self.recorder.flush()
        self.pending = []

    async def go(self) -> LoopResult:
        """The run; every way out records an Outcome. A cancel lands ``cancelled`` (its message is the reason) and
        is re-raised; any other failure inside the loop lands ``error`` with verdict ``error`` and the reason, and
        the result says so (``LoopResult.error``) instead of raising."""
        try:
            return await self._turns()
        except asyncio.CancelledError as exc:
            reason = str(exc.args[0]) if exc.args and exc.args[0] else "cancelled by the caller"
            self._land(self._own_stop(StopReason.CANCELLED, reason))
            raise
        except Exception as exc:  # any failure must still end with an outcome in the trace
            self.error = self.loop.redact(f"{type(exc).__name__}: {exc}")[:2000]
            self._event(self.gov.calls, EventKind.LOOP_ERROR, self.error, error=type(exc).__name__)
            stop = self._own_stop(LOOP_ERROR_STOP, f"the loop failed: {self.error}", verdict=LOOP_ERROR)
            return self._land(stop, detail=self.error)

    async def _turns(self) -> LoopResult:
        loop, gov = self.loop, self.gov
        for usage in loop.spend_before:  # tool-side spend before any turn: the node's, with no turn row
            self._tool_spend(usage, None)
        while True:
            turn_decisions: list[Decision] = []
            if (control := await self._control()) is not None:  # A: the caller's cancel, at the turn boundary
                return self._land(control)
            step = gov.begin_turn(self.since_start(self.clock.turn_start()))
            lease = step.call_deadline_s  # bounds this turn's model call and its tools alike
            self._take(step.decisions)
            turn_decisions += step.decisions
            if step.stop:
                return self._land(step.stop)
            self._read_steering(gov.calls)  # D: the board, then the person's guidance
            self._decay(gov.calls)
            send = self.transcript
            if self.manager is not None:
                fit = self.manager.before_send(
                    self.transcript, site="tool", tools=list(self.schemas), last_usage=self.last_prompt
                )
                if (event := fit.event(gov.calls)) is not None:
                    self.pending.append(event)
                if fit.truncated:  # ADR-107's terminus: no call; the Governor grades and meters the stop
                    step = gov.context_truncated(turn=gov.calls)
                    self._take(step.decisions)
                    assert step.stop is not None
                    return self._land(step.stop, detail=fit.reason)
                send = list(fit.messages)  # type: ignore[arg-type]
            sent = self.recorder.sent(send) if self.recorder is not None else None
            started_at = loop.now()
            try:
                completion = await self._call(send, step.call_deadline_s)
            except TimeoutError:
                step = gov.call_failed(self.elapsed(), lease_expired=True)
                self._take(step.decisions)
                if step.stop:
                    return self._land(step.stop)
                self._flush_events()
                continue
            except RecordingExhausted:
                return self._land(self._own_stop(END_OF_RECORDING, "the recording has no further model call"))
            except ProviderError as exc:
                self.retries += len(exc.failed_attempts)
                self.error = f"{exc.kind}: {exc.message}"
                failed = {"error": exc.kind, "status": exc.status, "attempts": len(exc.failed_attempts) or 1}
                self._event(gov.calls, EventKind.CALL_FAILED, exc.message, **failed)
                step = gov.call_failed(self.elapsed(), lease_expired=False)
                self._take(step.decisions)
                assert step.stop is not None
                return self._land(step.stop, detail=self.error)
            reply = completion.reply
            self.retries += completion.retries
            self.last_prompt = reply.usage.prompt
            calls = [
                c if c.id else c.model_copy(update={"id": f"call_{gov.calls}_{i}"})
                for i, c in enumerate(reply.tool_calls)
            ]
            step = gov.after_response(
                GovReply(
                    prompt=reply.usage.prompt,
                    cached=reply.usage.cached,
                    completion=reply.usage.completion,
                    finish_reason=reply.finish_reason,
                    text=reply.text,
                    calls=call_facts(calls),
                ),
                self.elapsed(),
                steered=not calls and loop.mailbox is not None and loop.mailbox.pending(),
            )
            index = gov.calls - 1
            if step.stop is not None and step.stop.kind == StopReason.DONE and loop.closer is not None:
                step = await self._close(step, index, lease)
            record = Turn(
                index=index,
                started_at=started_at,
                ended_at=loop.now(),
                usage=reply.usage,
                finish_reason=reply.finish_reason,
                text=reply.text,
                tool_calls=calls,
                sent=sent,
                response_id=reply.response_id,
                retries=completion.retries,
                model=reply.model,
            )
            if completion.failed:
                self._event(index, EventKind.RETRIES, attempts=[a.to_dict() for a in completion.failed])
            after_response = step
            results: tuple[ToolResult, ...] = ()
            mutated: bool | None = None
            # a nudge or a reopened answer: the reply goes in, then what follows it
            if step.next == Next.CONTINUE:
                self.transcript.append(Message(role="assistant", content=reply.text))
                if loop.mailbox is not None and any(d.kind == "steered" for d in step.decisions):
                    self._read_steering(index, guidance=loop.mailbox.drain())
            elif step.next in (Next.SKIP_TOOLS, Next.RUN_TOOLS):
                self.transcript.append(Message(role="assistant", content=reply.text, tool_calls=calls))
            if step.next == Next.SKIP_TOOLS:
                skip = step.skip
                assert skip is not None
                results = tuple(ToolResult.of(skip.text, call_id=c.id, is_error=True) for c in calls)
            elif step.next == Next.RUN_TOOLS:
                batch = await loop.tools.run_batch(calls, index, budget_s=self._left(lease))
                results, mutated = batch.results, batch.mutated
                for result in results:  # N: tool-side model spend is the node's, folded in before after_tools
                    if result.usage is not None:
                        self._tool_spend(result.usage, index, recorded=True)
            history_before = len(self.transcript)
            admitted = 0
            for call, result in zip(calls, results if results else (), strict=bool(results)):
                text = result.content or ""
                if self.memo is not None and step.next == Next.RUN_TOOLS:
                    text = self.memo.admit(
                        index + 1, call.id, call.name, call.arguments, text, is_error=result.is_error
                    )
                    admitted += nbytes(text)
                self.transcript.append(Message(role="tool", tool_call_id=call.id, content=text))
            if self.decayer is not None and step.next == Next.RUN_TOOLS:
                self.decayer.observe(admitted)
                if mutated:
                    self.decayer.acted_past(history_before)
            self._take(after_response.decisions)
            turn_decisions += after_response.decisions
            if step.next == Next.RUN_TOOLS:
                step = gov.after_tools(result_facts(results), mutated, self.elapsed())
                self._take(step.decisions)
                turn_decisions += step.decisions
            record = record.model_copy(update={"tool_results": list(results), "mutated": mutated})
            if self.recorder is not None:
                self.recorder.turn(record)
            self._flush_events()
            if loop.on_turn is not None:
                loop.on_turn(
                    TurnReport(
                        index,
                        reply.usage.prompt,
                        gov.spent,
                        loop.policy.grant,
                        completion.retries,
                        tuple(turn_decisions),
                    )
                )
            if step.stop:
                return self._land(step.stop)

    async def _close(self, step: Step, index: int, lease: float | None) -> Step:
        """Read the leaf's own landing: each finding is put back once per kind while room is left (the answer
        becomes a draft, the finding follows it, the stop and its verdict are dropped); else it lands with the
        findings standing."""
        assert self.loop.closer is not None and step.stop is not None
        stop = step.stop
        findings = await self.loop.closer.inspect(index, self._left(lease))
        kept = tuple(d for d in step.decisions if d is not stop)
        extra: list[Decision] = []
        for finding in findings:
            answer = self.gov.reopen(finding.kind, finding.note, self.elapsed())
            extra += answer.decisions
            if answer.next == Next.CONTINUE:
                return Step((*kept, *extra), Next.CONTINUE)
            self.findings.append(finding.note)
        return Step((*kept, *extra, stop), step.next) if extra else step

    async def _control(self) -> Stop | None:
        """Step A: the caller's cancel lands ``cancelled``; a pause holds here until resumed (events record both)."""
        mailbox = self.loop.mailbox
        if mailbox is None:
            return None
        state = mailbox.control()
        if state == PAUSE:
            self._event(self.gov.calls, EventKind.PAUSED, "pause requested — holding at turn boundary")
            self._flush_events()
            state = await mailbox.resumed()
            if state != CANCEL:
                self._event(self.gov.calls, EventKind.RESUMED, "resumed by the caller")
        if state == CANCEL:
            return self._own_stop(StopReason.CANCELLED, "cancel requested — stopping at turn boundary")
        return None

    def _read_steering(self, turn: int, guidance: list[str] | None = None) -> None:
        """The seed's ``readSteering``: the job board drains first, then the person's guidance, each appended as a
        user message in the seed's words and recorded as an event (``board``, ``guidance``)."""
        mailbox = self.loop.mailbox
        if mailbox is None:
            return
        for note in mailbox.board(turn):
            if note.strip():
                self._event(turn, EventKind.BOARD, note.strip())
                self.transcript.append(Message(role="user", content=board_text(note), kind="board"))
        for line in mailbox.guidance(turn) if guidance is None else guidance:
            if line.strip():
                self._event(turn, EventKind.GUIDANCE, line.strip())
                self.transcript.append(Message(role="user", content=guidance_text(line), kind="guidance"))

    def _tool_spend(self, usage: Usage, turn: int | None, *, recorded: bool = False) -> None:
        """Bill a tool's own model call to the node. Spend carried on a ToolResult is recorded there; other spend
        (before any turn) is recorded as a ``tool-spend`` event."""
        spend = {k: getattr(usage, k) or 0 for k in ("prompt", "cached", "completion")}
        self.gov.tool_spend(spend["prompt"], spend["cached"], spend["completion"])
        if not recorded:
            self._event(turn, EventKind.TOOL_SPEND, **spend, calls=1)

    def _decay(self, turn: int) -> None:
        """Steps E and F: retire spent observations, then fold aged reasoning, when the window is exceeded."""
        if self.decayer is None:
            return
        self.transcript, retired = self.decayer.decay_within(self.transcript, self.working, self.safety)
        self.transcript, folded = self.decayer.fold_within(self.transcript, self.working, self.safety)
        if retired or folded:
            why = f"{retired} observation(s) retired, {folded} turn(s) folded; this turn re-reads cold"
            sizes = {"working": self.working, "safety": self.safety}
            self._event(turn, EventKind.PREFIX_REWRITTEN, why, retired=retired, folded=folded, **sizes)

    def _left(self, lease: float | None) -> float | None:
        """Seconds until the lease ends (None: no lease, or the clock cannot tell)."""
        elapsed = self.elapsed()
        return None if lease is None or elapsed is None else lease - elapsed

    async def _call(self, send: Sequence[Message], deadline_s: float | None) -> Completion:
        """The model call, cut by the clock when the leaf's lease (or landing clock) runs out (``TimeoutError``)."""
        request = self.loop.provider.complete(send, list(self.schemas))
        deadline = None if deadline_s is None or self.started is None else self.started + deadline_s
        return await self.clock.call(request, deadline)

    def _own_stop(self, kind: str, reason: str, verdict: str | None = None) -> Stop:
        """A stop the loop itself meets (the caller's cancel, the end of a recording in recorded mode, a failure
        inside the loop), graded by the same ``verdictFor`` (or ``verdict``), with the Governor's live meter."""
        gov = self.gov
        return Stop(
            max(gov.calls - 1, 0),
            Phase.LOOP,
            kind,
            reason,
            gov.last_text,
            verdict=verdict or verdict_for(kind, gov.exhausted, gov.last_text),
            meter=gov.meter,
            exhausted=gov.exhausted,
        )

    def _land(self, stop: Stop, detail: str | None = None) -> LoopResult:
        """Every way out: re-read the live meters (cost ⇒ spent, deadline ⇒ elapsed), write the Outcome."""
        gov = self.gov
        if stop not in self.decisions:
            self._take([stop])
        meter = stop.meter.reread(gov.spent, self.elapsed()) if stop.meter is not None else None
        outcome = Outcome(
            stop_reason=stop.kind,
            verdict=stop.verdict,
            text=stop.text or None,
            exhausted=stop.exhausted,
            meter=meter.to_trace() if meter is not None else None,
            detail=detail or stop.reason or None,
            parts=list(stop.data.get("parts", [])) if stop.kind == StopReason.SPLIT else None,
            findings=list(self.findings) or None,
        )
        self._flush_events()
        trace = None
        if self.recorder is not None:
            self.recorder.finish(outcome)
            trace = self.recorder.path
        return LoopResult(
            run_id=self.loop.run_id,
            outcome=outcome,
            turns=gov.calls,
            spent=gov.spent,
            raw=gov.raw,
            grant=self.loop.policy.grant,
            decisions=tuple(self.decisions),
            retries=self.retries,
            trace=trace,
            error=self.error,
        )
