"""The trace schema: what a recorded agent run is, independent of where it was recorded (docs/trace-format.md:
the objects, and the two rules behind every field — missing facts are ``None``, never invented; what each turn
sent is rebuilt from ``[start, stop)`` ranges into one message pool)."""

from __future__ import annotations

import hashlib
import html
import weakref
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, model_validator

SCHEMA_NAME = "budget-workbench/trace"
SCHEMA_VERSION = 1

Role = Literal["system", "user", "assistant", "tool"]


class EventKind(StrEnum):
    """The kinds of :class:`Event` the importers, the loop and the replay write (``Event.kind`` stays a ``str``:
    the governor's decisions are recorded under their own kinds, and a native trace may carry a source's own)."""

    COMPACTION = "compaction"
    PRUNE = "prune"
    PRUNE_DEFERRED = "prune-deferred"
    CONTEXT_TRUNCATED = "context-truncated"
    PREFIX_REWRITTEN = "prefix-rewritten"
    TOOL_SPEND = "tool-spend"
    SELF_CLOSE = "self-close"
    STANDING_FINDING = "standing-finding"
    API_ERROR = "api-error"
    PROVIDER_ERROR = "provider-error"
    ERROR_OBSERVATION = "error-observation"
    CALL_FAILED = "call-failed"
    LOOP_ERROR = "loop-error"
    RETRIES = "retries"
    TURN_ABORTED = "turn-aborted"
    REWIND = "rewind"
    QUEUED_PROMPT = "queued-prompt"
    BRANCHES = "branches"
    SHELL_RUN = "shell-run"
    EDIT_APPLIED = "edit-applied"
    PAUSED = "paused"
    RESUMED = "resumed"
    BOARD = "board"
    GUIDANCE = "guidance"


class LimitStop(StrEnum):
    """The recorded stop reasons that mean a budget or cap cut the recording (``Outcome.cut_by_limit``)."""

    BUDGET = "budget"
    TURN_CAP = "turn-cap"
    DEADLINE = "deadline"
    MAX_ITERATIONS = "max-iterations"
    MAX_BUDGET = "max-budget"


_LIMIT_STOPS = frozenset(LimitStop)


class SharedFields(set[str]):
    """The names of the fields a model was built with (pydantic's ``model_fields_set``), one object for every
    model of a cache entry built with the same names (``workbench.scale.pickling``): a set per model was a quarter
    of a loaded run's memory. It is never changed in place: an assignment gives its model a set of its own first
    (``_Model.__setattr__``), a copy is a plain set (what ``model_copy`` changes), and changing it otherwise is a
    ``TypeError``."""

    __slots__ = ()

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: Any) -> set[str]:
        return set(self)

    def _shared(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "a restored model's field-name set is shared with others of its kind: copy it to change it"
        )

    add = discard = remove = pop = clear = update = _shared
    difference_update = intersection_update = symmetric_difference_update = _shared
    __ior__ = __iand__ = __isub__ = __ixor__ = _shared


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, validate_assignment=False)

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic adds ``name`` to the model's field-name set: a shared one is first made this model's own
        if type(self.__pydantic_fields_set__) is SharedFields:
            object.__setattr__(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        super().__setattr__(name, value)


class _Frozen(_Model):
    """A part of a run that nothing edits once read: assigning to it raises (a copy is ``model_copy(update=...)``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_SEALED: set[int] = set()
"""The ids of the Runs and Outcomes a corpus handed out (each dropped from here when its object is freed)."""


class ReadOnlyRunError(TypeError):
    """A corpus's run (or its outcome) assigned to in place. A corpus's runs are read-only at every size: an edit
    is a new corpus (``Corpus.with_labels``, ``Corpus.with_runs``) or an edited copy (``run.model_copy``)."""


def seal(run: Run) -> Run:
    """``run`` and its outcome refuse assignment from now on (``ReadOnlyRunError``); a copy of either does not.
    What a corpus does to every run it gives out, so that an edit in place is refused whatever the corpus's size
    (a large corpus builds a run afresh when it is read again, and would lose the edit)."""
    for obj in (run, run.outcome):
        key = id(obj)
        if key not in _SEALED:
            _SEALED.add(key)
            weakref.finalize(obj, _SEALED.discard, key)
    return run


def is_sealed(run: Run) -> bool:
    """Whether ``run`` was given out by a corpus (and so is as that corpus holds it)."""
    return id(run) in _SEALED


class _Sealable(_Model):
    def __setattr__(self, name: str, value: Any) -> None:
        if id(self) in _SEALED:
            raise ReadOnlyRunError(
                f"{type(self).__name__}.{name} cannot be set: a corpus's runs are read-only "
                "(corpus.with_labels(...) or corpus.with_runs(...) give a new corpus; run.model_copy(update=...) "
                "an edited copy)"
            )
        super().__setattr__(name, value)


class Usage(_Model):
    """Token usage of one model call, ``None`` where the source does not say; ``prompt`` is the whole prompt
    (fresh + cache read + cache write), ``cached`` and ``cache_write`` parts of it."""

    prompt: NonNegativeInt | None = None
    cached: NonNegativeInt | None = None
    cache_write: NonNegativeInt | None = None
    cache_write_1h: NonNegativeInt | None = None
    """The part of ``cache_write`` written with a one-hour lifetime (Anthropic's
    ``cache_creation.ephemeral_1h_input_tokens``, priced at 2x input against 1.25x for five minutes); ``None``
    when the source does not split its writes by lifetime."""
    completion: NonNegativeInt | None = None
    reasoning: NonNegativeInt | None = None
    cost: float | None = None
    """USD the source itself recorded for this call (OpenRouter ``usage.cost``, LiteLLM, Aider …); the
    workbench's own price for it is ``workbench.pricing.price_usage``."""

    @property
    def known(self) -> bool:
        return self.prompt is not None or self.completion is not None


class ToolCall(_Frozen):
    """One tool call as the model emitted it; ``arguments`` is the exact argument text."""

    id: str | None = None
    name: str
    arguments: str = ""


class ToolResult(_Frozen):
    """The result a tool call produced: ``content`` is the text returned to the model (``None`` when a source
    withholds it; ``size`` in bytes and ``sha256`` still identify it)."""

    call_id: str | None = None
    content: str | None = None
    size: NonNegativeInt | None = None
    sha256: str | None = None
    is_error: bool = False
    timed_out: bool = False
    duration_s: float | None = None
    usage: Usage | None = None
    """Tool-side model spend: a tool that itself called a model bills that usage to the leaf's node row (never to
    the turn's own send)."""

    @classmethod
    def of(cls, content: str, **kw: Any) -> ToolResult:
        data = content.encode("utf-8", "surrogatepass")
        return cls(content=content, size=len(data), sha256=hashlib.sha256(data).hexdigest(), **kw)

    def digest(self) -> str | None:
        """sha256 of the content, or the recorded hash when the content was withheld."""
        if self.content is not None:
            return hashlib.sha256(self.content.encode("utf-8", "surrogatepass")).hexdigest()
        return self.sha256


class Message(_Model):
    """One chat message in the pool a run's requests are built from; ``kind`` labels what a loop injected
    (``"wrapup"``, ``"landing"`` …) so a replay tells an injection from a user's words (``None``: ordinary)."""

    role: Role
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    kind: str | None = None
    reasoning: str | None = None
    """The model's visible reasoning (thinking) that came with an assistant message, kept apart from
    ``content``: whether a provider resends it is provider-specific, so estimators choose."""


Span = tuple[int, int]


class Route(_Frozen):
    """The provider path one model call went through: ``provider``, ``via``, ``basis``, ``rule``, ``endpoint``
    (each field's meaning: docs/trace-format.md, "Routes"). Unknown is ``Turn.route = None``: nothing cached."""

    provider: str | None = None
    via: str | None = None
    basis: Literal["recorded", "inferred"] = "recorded"
    rule: str | None = None
    endpoint: str | None = None

    @property
    def key(self) -> str:
        """The route as one label to group calls by: ``google via openrouter``, ``unknown via localhost:2600``,
        ``anthropic``. Two calls share a key exactly when they share provider and gateway."""
        served = self.provider or "unknown"
        return f"{served} via {self.via}" if self.via else served


class Turn(_Model):
    """One model call."""

    index: NonNegativeInt
    started_at: datetime | None = None
    ended_at: datetime | None = None
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_results: list[ToolResult] = Field(default_factory=list)
    mutated: bool | None = None
    """Did the workspace change across this turn's tool execution? ``None`` when not known."""
    mutated_rule: str | None = None
    """The rule ``mutated`` was inferred by (``workbench.importers.mutation``, e.g. ``bash: sed -i``); ``None`` when
    it was recorded. With ``mutated`` ``None`` it says why the fact stays unknown."""
    format_error: str | None = None
    """The agent answered this reply as malformed and went on (a format error, a blocklisted command, a retry
    request): its words, shortened. Such a reply is not an ending; ``None`` for an ordinary reply."""
    sent: list[Span] | None = None
    """The request's messages as ``[start, stop)`` ranges into ``Run.messages``; ``None`` if not recorded."""
    response_id: str | None = None
    retries: NonNegativeInt = 0
    segment: NonNegativeInt | None = None
    model: str | None = None
    route: Route | None = None
    """The provider path the call went through (:class:`Route`); ``None`` when the log does not tell (unknown:
    :func:`workbench.trace.route.route_of` then infers the model's vendor, or leaves it unknown)."""

    @model_validator(mode="after")
    def _spans_ordered(self) -> Turn:
        if self.sent is not None:
            for start, stop in self.sent:
                if start < 0 or stop < start:
                    raise ValueError(f"sent span [{start}, {stop}) is not a range")
        return self


class Event(_Frozen):
    """Something that happened around the turns (a governor decision, a compaction, a prune, an injection) after
    turn ``turn`` (``None``: before the first); ``data`` carries the numbers that triggered it."""

    turn: int | None = None
    kind: str
    reason: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class Meter(_Frozen):
    """The bound that ended a run (the seed's Meter: name, reached, allowed, unit)."""

    name: str
    reached: float = 0
    allowed: float = 0
    unit: str = "tokens"

    def words(self) -> str:
        if not self.name:
            return ""
        if self.allowed <= 0:
            return self.name
        return f"{self.name}: {self.reached:,.0f} of {self.allowed:,.0f} {self.unit}"


class Outcome(_Sealable):
    """How a run ended, as recorded: ``stop_reason`` in the seed's vocabulary where it maps, else the source's
    words; ``label``/``score``/``label_source`` an external grade, ``None`` where nothing graded it (docs/labels.md)."""

    stop_reason: str | None = None
    verdict: str | None = None
    text: str | None = None
    label: str | None = None
    label_source: str | None = None
    score: float | None = None
    exhausted: str | None = None
    meter: Meter | None = None
    detail: str | None = None
    parts: list[str] | None = None
    """A ``split`` stop's parts (the cooperative split's briefs)."""
    findings: list[str] | None = None
    """Findings of the leaf's own landing check that still stood when it landed."""

    @property
    def cut_by_limit(self) -> bool:
        """The recording ended because a budget or cap cut it (not on its own)."""
        return self.stop_reason in _LIMIT_STOPS


class RecordedPolicy(_Frozen):
    """The limits a run ran under, as its source recorded them (``None`` where unknown)."""

    rules: str | None = None
    grant: int | None = None
    max_turns: int | None = None
    deadline_s: float | None = None
    context_length: int | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class Segment(_Frozen):
    """A slice of an interactive session that starts at one real user prompt: turns ``[start, stop)``."""

    index: NonNegativeInt
    start: NonNegativeInt
    stop: NonNegativeInt
    prompt: str | None = None


class Diagnostic(_Model):
    """A problem met while reading a file: where, which field, what."""

    file: str
    line: int | None = None
    field: str | None = None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        what = f"{self.field}: {self.message}" if self.field else self.message
        return f"{where}: {what}"


class Run(_Sealable):
    """One recorded agent run (or one interactive session) and everything the workbench knows of it."""

    run_id: str
    source: str
    """Where it came from: ``native``, ``claude-code``, ``openhands``, ``codex-cli``, ``openai-log``,
    ``synthetic`` (generated; see ``metadata['generator']``), ``workbench`` (recorded by the live loop)."""
    source_file: str | None = None
    """The file the run was originally recorded in (for an imported run, the foreign file)."""
    loaded_from: str | None = Field(default=None, exclude=True)
    """The file this object was read from (not written back, so a read-write round trip is byte-identical)."""
    importer: str | None = None
    """Importer name and version that produced this run."""
    lossy: list[str] = Field(default_factory=list)
    """What the importer could not map. A lossy mapping is never silent."""
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    model: str | None = None
    context_length: int | None = None
    output_cap: int | None = None
    policy: RecordedPolicy | None = None
    task: str | None = None
    tool_schemas: list[dict[str, Any]] | None = None
    started_at: datetime | None = None
    parent_run_id: str | None = None
    parent_tool_call_id: str | None = None
    role: Literal["main", "subagent", "compaction"] = "main"
    messages: list[Message] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)
    segments: list[Segment] = Field(default_factory=list)
    outcome: Outcome = Field(default_factory=Outcome)
    recorded_cost_usd: float | None = None
    """The run's total cost in USD as its source recorded it, where the source gives a run total (per-call
    recorded costs are ``Usage.cost``). Kept beside the workbench's own pricing (``workbench.pricing``)."""
    metadata: dict[str, Any] = Field(default_factory=dict)

    # -- requests -------------------------------------------------------------------------------------

    def request(self, turn: int | Turn) -> list[Message]:
        """The messages turn ``turn`` sent, rebuilt from the pool (empty when not recorded)."""
        t = self.turns[turn] if isinstance(turn, int) else turn
        if t.sent is None:
            return []
        return [m for start, stop in t.sent for m in self.messages[start:stop]]

    # -- totals ---------------------------------------------------------------------------------------

    def total(self, field: str) -> int | None:
        """Sum of one Usage field over all turns; ``None`` when no turn reports it."""
        values = [getattr(t.usage, field) for t in self.turns]
        known = [v for v in values if v is not None]
        return sum(known) if known else None

    def segment_run(self, segment: int | Segment) -> Run:
        """This session's turns of one segment as a run of its own (replayable as a leaf)."""
        seg = self.segments[segment] if isinstance(segment, int) else segment
        turns = [t.model_copy(update={"index": i}) for i, t in enumerate(self.turns[seg.start : seg.stop])]
        events = [
            e.model_copy(update={"turn": e.turn - seg.start})
            for e in self.events
            if e.turn is not None and seg.start <= e.turn < seg.stop
        ]
        last = seg.stop >= len(self.turns)
        return self.model_copy(
            update={
                "run_id": f"{self.run_id}#s{seg.index}",
                "turns": turns,
                "events": events,
                "segments": [],
                "task": seg.prompt or self.task,
                "outcome": self.outcome if last else Outcome(stop_reason="done", detail="next user prompt"),
                "metadata": {**self.metadata, "segment_of": self.run_id, "segment": seg.index},
            }
        )

    def leaves(self) -> list[Run]:
        """The run split into its segments, or the run itself when it has none."""
        if len(self.segments) <= 1:
            return [self]
        return [self.segment_run(s) for s in self.segments]

    def facts(self) -> dict[str, Any]:
        """The figures one looks at first, as a plain dict (``None`` where the source does not say). A view of
        this run alone; :func:`workbench.trace.frames.run_summary` adds the workbench's priced cost."""
        peak = [t.usage.prompt for t in self.turns if t.usage.prompt is not None]
        counts: dict[str, int] = {}
        for e in self.events:
            counts[e.kind] = counts.get(e.kind, 0) + 1
        return {
            "run_id": self.run_id,
            "source": self.source,
            "role": self.role,
            "parent_run_id": self.parent_run_id,
            "model": self.model,
            "calls": len(self.turns),
            "prompt_tokens": self.total("prompt"),
            "cached_tokens": self.total("cached"),
            "cache_write_tokens": self.total("cache_write"),
            "completion_tokens": self.total("completion"),
            "reasoning_tokens": self.total("reasoning"),
            "recorded_cost_usd": self.recorded_cost_usd,
            "peak_prompt_tokens": max(peak) if peak else None,
            "context_length": self.context_length,
            "segments": len(self.segments),
            "stop": self.outcome.stop_reason,
            "label": self.outcome.label,
            "label_source": self.outcome.label_source,
            "events": ", ".join(f"{k} x{n}" for k, n in sorted(counts.items())),
            "lossy": list(self.lossy),
            "diagnostics": [str(d) for d in self.diagnostics],
            "source_file": self.source_file,
        }

    def _repr_html_(self) -> str:
        def cell(v: Any) -> str:
            if isinstance(v, list):
                return "<br>".join(html.escape(str(x)) for x in v) or "—"
            return "—" if v is None else html.escape(f"{v:,}" if isinstance(v, int) else str(v))

        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>{cell(v)}</td></tr>"
            for k, v in self.facts().items()
        )
        return f"<table><caption>Run {html.escape(self.run_id)}</caption>{rows}</table>"

    def __repr__(self) -> str:
        return (
            f"Run(run_id={self.run_id!r}, source={self.source!r}, model={self.model!r}, "
            f"turns={len(self.turns)}, stop={self.outcome.stop_reason!r})"
        )
