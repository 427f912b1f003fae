"""Policy: every parameter a replay or a live run is governed by, and the named rule sets (docs/governors.md,
"The rule sets" and §5.21; the agents' own limits under "Other agents' own limits").

``context_length=None`` means no context-window manager (ADR-107: an absent manager is a no-op); ``window`` is the
model's own context size for the reuse ceiling (None: the run's recorded ``context_length``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any

from workbench.estimate.constants import STRATEGIES
from workbench.govern import (
    cost,
    deadline,
    landing,
    minisweagent,
    noprogress,
    openhands,
    raw,
    sweagent,
    tooltimeout,
    turncap,
    wrapup,
)
from workbench.govern.ablation_names import without_overrides

RULE_SETS_DOC = {
    "current": "cost meter lands; turn backstop, no-progress and tool-timeout guards stop; raw/reuse are pressure",
    "ink-s9": "cost OR raw OR reuse ceiling lands (4 turns, no token share); no no-progress guard; grant 150,000",
    "older": "ink-s9 governors without the reuse ceiling; window = grant/6 clamped 24-64 KiB; call-keyed memo",
    "openhands": "OpenHands max_iterations, max_budget_per_task and stuck detection; the finish tool ends the run",
    "mini-swe-agent": "mini-swe-agent step_limit and cost_limit (USD, its recorded LiteLLM cost), checked before a call",
    "swe-agent": "SWE-agent per_instance_cost_limit and per_instance_call_limit, checked after a call; autosubmit",
    "claude-code": "Claude Code max_turns and max_budget_usd (genai-prices), checked before the next call",
    "inspect": "Inspect AI message_limit, token_limit, cost_limit and time_limit, as Inspect checks them",
}
AGENT_RULES = ("openhands", "mini-swe-agent", "swe-agent", "claude-code", "inspect")
"""The rule sets of other agents' own limits (``workbench.govern.agent_limits.rules_for``)."""
LIMIT_FIELDS = ("step_limit", "cost_limit_usd", "call_limit", "token_limit", "message_limit", "time_limit_s")
"""The Policy fields holding an agent's own limits (None: no limit)."""
NO_SEED_TURN_CAP = (
    1_000_000_000  # the agents' rule sets have no turn cap of the seed's: their own limits stand
)
INK_S9_GRANT = (
    150_000  # seed 001 linear.go DefaultLeafTokens comment / docs/governors.md §2 (150,000 until PR 931)
)


class FastPath(Enum):
    """How the vectorised fast path (``workbench.replay.fast``) treats a Policy field. Every field says which in
    its metadata (``"fast"``, and ``"why"``; ``treated``); the fast path's eligibility and grouping are derived from it, and
    ``tests/replay/test_fast_fields.py`` fails on a field left unclassified and checks each class's claim."""

    GRID = "grid"  # a swept axis: the vectorised stages compute each policy's own value (fast.FAST_FIELDS)
    GROUP = (
        "group"  # read by the vectorised stages, one value for a group of policies (part of fast.group_key)
    )
    PROBE = "probe"  # read run by run by fast.probe (the guards and reply rules; the sheet's probe_key)
    TIMED = "timed"  # a non-default value sends a timed run (every turn stamped) down the governor path
    DISQUALIFYING = "disqualifying"  # a non-default value sends the policy down the governor path
    IRRELEVANT = "irrelevant"  # cannot change a cost-meter decision while no disqualifying field is set

    def __call__(self, default: Any, why: str) -> Any:
        """A Policy field with this treatment, and why."""
        return field(default=default, metadata={"fast": self, "why": why})


_GRID, _GROUP, _PROBE, _TIMED, _OFF, _IRRELEVANT = FastPath
_SHEET = "read by fast.probe into the sheet"
_EXTRA = {"fast": FastPath.IRRELEVANT, "why": "carried along, never compared, read by no governor"}
_CLOCK = "read only under a deadline on a timed run (deadline_s), which takes the governor path"
_STUCK = "read only by OpenHands' stuck detector (stuck_detection, disqualifying)"
_AGENT = "read only under another agent's rule set (rules, disqualifying)"
_CONTEXT = "read only by the context-window manager (context_length, disqualifying) and workbench.context"


@dataclass(frozen=True)
class Policy:
    """Every parameter a run is governed by. Frozen; build with ``Policy.named`` and ``replace``. Each field's
    metadata says how the fast path treats it (``FastPath``)."""

    rules: str = _OFF("current", "another rule set brings its own landers or an agent's own limits")
    grant: int = _GRID(cost.DEFAULT_LEAF_TOKENS, "grant 0 is refused (the wrap-up reading divides by it)")
    max_turns: int = _GRID(turncap.MAX_TURN_BACKSTOP, "the turn cap (effective_max_turns)")
    deadline_s: float | None = _TIMED(None, "the deadline landing reads turn timestamps")
    cache_weight_percent: int = _GRID(
        cost.CACHED_TOKEN_WEIGHT_PERCENT, "the cost meter's weight of a cache read"
    )
    # -- landing -----------------------------------------------------------------------------------------------
    cost_lands: bool = _GROUP(True, "without the cost lander no budget landing starts: no crossing")
    raw_lands: bool = _OFF(False, "the fast path's only lander is the cost meter")
    reuse_lands: bool = _OFF(False, "the fast path's only lander is the cost meter")
    raw_ceiling_multiple: int = _GROUP(raw.RAW_TOKEN_CEILING_MULTIPLE, "the raw wrap-up reading")
    landing_turns: int = _GROUP(landing.LANDING_TURNS, "the landing countdown")
    landing_token_share: float | None = _GRID(landing.LANDING_TOKEN_SHARE, "the landing's token ceiling")
    """None: no token half (ink-s9 era). 0.0 is Go's arithmetic: the ceiling is the crossing spend (one turn)."""
    # -- wrap-up and the clock ---------------------------------------------------------------------------------
    wrapup_at: float | None = _GROUP(wrapup.WRAP_UP_AT, "the wrap-up warning")
    """None: no wrap-up warning."""
    wrapup_readings: tuple[str, ...] = _GROUP(("cost", "raw", "reuse"), "the wrap-up warning")
    wall_pace_at: float | None = _IRRELEVANT(deadline.WALL_PACE_AT, _CLOCK)
    watchdog_pad_s: float = _IRRELEVANT(deadline.WATCHDOG_PAD_S, _CLOCK)
    deadline_landing_turns: int = _IRRELEVANT(landing.LANDING_TURNS, _CLOCK)
    # -- turns ----------------------------------------------------------------------------------------------------
    turn_backstop: int | None = _GROUP(turncap.MAX_TURN_BACKSTOP, "the turn cap (effective_max_turns)")
    fold: bool = _OFF(False, "the fold notice and the folded turn cap are the governor's")
    turn_cap_offset: int = _OFF(0, "OpenHands' shifted turn cap is the governor's")
    # -- replies ---------------------------------------------------------------------------------------------------
    empty_abandon: bool = _GROUP(True, "the empty-reply abandonment")
    nudges: bool = _PROBE(True, _SHEET)
    length_batch: bool = _PROBE(True, _SHEET)
    finish_tools: tuple[str, ...] = _OFF((), "the finish tool ending reads the calls")
    # -- the leaf's own endings (seed step J) --------------------------------------------------------------------
    reflex: bool = _OFF(False, "step J's endings read the calls")
    """A reflex micro-leaf: holds ``promote``, never ``request_split``."""
    swarm: bool = _OFF(False, "step J's endings read the calls")
    """The cooperative split is armed: a leaf that is not a reflex holds ``request_split``."""
    # -- no-progress guard --------------------------------------------------------------------------------------
    no_progress: bool = _PROBE(True, _SHEET)
    repeat_cap: int = _PROBE(noprogress.NO_PROGRESS_REPEAT_CAP, _SHEET)
    stagnant_cap: int = _PROBE(noprogress.NO_PROGRESS_STAGNANT_CAP, _SHEET)
    recon_turns: int = _PROBE(noprogress.NO_PROGRESS_RECON_TURNS, _SHEET)
    turn_floor: int = _PROBE(noprogress.NO_PROGRESS_TURN_FLOOR, _SHEET)
    floor_window: int = _PROBE(noprogress.NO_PROGRESS_FLOOR_WINDOW, _SHEET)
    floor_min_productive: int = _PROBE(noprogress.NO_PROGRESS_MIN_PRODUCTIVE, _SHEET)
    conclude_grace: int = _PROBE(landing.LANDING_TURNS, _SHEET)
    # -- tool-timeout guard -------------------------------------------------------------------------------------
    tool_timeouts: bool = _PROBE(True, _SHEET)
    tool_timeout_cap: int = _PROBE(tooltimeout.TOOL_TIMEOUT_REPEAT_CAP, _SHEET)
    # -- OpenHands stuck detection ----------------------------------------------------------------------------
    stuck_detection: bool = _OFF(False, "the stuck detector reads the calls and replies")
    stuck_action_observation: int = _IRRELEVANT(openhands.STUCK_ACTION_OBSERVATION, _STUCK)
    stuck_action_error: int = _IRRELEVANT(openhands.STUCK_ACTION_ERROR, _STUCK)
    stuck_monologue: int = _IRRELEVANT(openhands.STUCK_MONOLOGUE, _STUCK)
    stuck_alternating: int = _IRRELEVANT(openhands.STUCK_ALTERNATING, _STUCK)
    stuck_scan_events: int | None = _IRRELEVANT(None, _STUCK)
    # -- another agent's own limits (workbench.govern.agent_limits; the rule set says how they are checked) -----
    step_limit: int | None = _IRRELEVANT(None, _AGENT)
    cost_limit_usd: float | None = _IRRELEVANT(None, _AGENT)
    call_limit: int | None = _IRRELEVANT(None, _AGENT)
    token_limit: int | None = _IRRELEVANT(None, _AGENT)
    message_limit: int | None = _IRRELEVANT(None, _AGENT)
    time_limit_s: float | None = _IRRELEVANT(None, _AGENT)
    # -- the model and its context (read by workbench.context) -----------------------------------------------
    window: int | None = _GROUP(None, "the reuse wrap-up reading's ceiling")
    observation_window: str = _IRRELEVANT("context", _CONTEXT)
    memo: str = _IRRELEVANT("content", _CONTEXT)
    context_length: int | None = _OFF(None, "the context-window manager rewrites the sends")
    reserve: int | None = _IRRELEVANT(None, _CONTEXT)
    safety: int | None = _IRRELEVANT(None, _CONTEXT)
    calibration: float | None = _IRRELEVANT(None, _CONTEXT)
    estimator: str = _IRRELEVANT("adr", _CONTEXT)
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, metadata=_EXTRA)

    def __post_init__(self) -> None:
        _rule_set(self.rules)
        _check_values(self)

    # -- constructors -----------------------------------------------------------------------------------------
    @classmethod
    def named(cls, name: str, **overrides: Any) -> Policy:
        """A rule set with overrides. Unknown names and unknown parameters raise a ValueError naming them."""
        return RULE_SETS[_rule_set(name)].replace(**overrides)

    def without(self, *guards: str) -> Policy:
        """This policy with guards switched off: ``"no_progress"`` (or ``"no-progress"``), ``"tool_timeouts"``,
        ``"backstop"``, ``"wrap_up"`` (``workbench.govern.ablation_names.ABLATIONS``)."""
        return self.replace(**without_overrides(*guards))

    def replace(self, **overrides: Any) -> Policy:
        names = {f.name for f in dataclasses.fields(self)}
        bad = sorted(set(overrides) - names)
        if bad:
            raise ValueError(f"unknown policy parameter(s) {bad}")
        if "rules" in overrides and overrides["rules"] != self.rules:
            # Changing the rule set means starting from that set's own values.
            rest = {k: v for k, v in overrides.items() if k != "rules"}
            return Policy.named(overrides["rules"], **rest)
        return dataclasses.replace(self, **overrides)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Policy:
        data = dict(data)
        for key in ("wrapup_readings", "finish_tools"):
            if key in data and data[key] is not None:
                data[key] = tuple(data[key])
        rules = data.pop("rules", "current")
        return cls.named(rules, **data)

    @classmethod
    def recorded(cls, run: Any) -> Policy:
        """The policy a run recorded: its own Policy dict when the workbench recorded it
        (``run.policy.params["policy"]``), else the recorded limits over the matching rule set (``openhands`` for
        OpenHands runs, with their ``max_iterations``). Raises ValueError when the run recorded no policy."""
        rp = getattr(run, "policy", None)
        is_openhands = getattr(run, "source", None) == "openhands"
        if rp is None:
            if is_openhands and run.metadata.get("max_iterations"):
                return cls.named("openhands", max_turns=int(run.metadata["max_iterations"]))
            raise ValueError(f"run {run.run_id} recorded no policy")
        if isinstance(rp.params.get("policy"), dict):
            return cls.from_dict(rp.params["policy"])
        agent = _agent_recorded(run, rp)
        if agent is not None:
            return agent
        rules = rp.rules if rp.rules in RULE_SETS else ("openhands" if is_openhands else "current")
        over: dict[str, Any] = {}
        max_turns = rp.max_turns or rp.params.get("max_iterations")
        if max_turns:
            over["max_turns"] = int(max_turns)
        if rp.grant:
            over["grant"] = int(rp.grant)
        if rp.deadline_s:
            over["deadline_s"] = float(rp.deadline_s)
        if rp.context_length:
            over["window"] = int(rp.context_length)
        budget = rp.params.get("max_budget_per_task")
        if rules == "openhands" and isinstance(budget, int | float) and budget > 0:
            over["cost_limit_usd"] = float(budget)
        return cls.named(rules, **over)

    def for_run(self, run: Any) -> Policy:
        """This policy as it applies to ``run``: under the ``openhands`` rules with the rule set's own
        ``max_turns``, the run's recorded ``max_iterations`` is honoured (an OpenHands run replayed under OpenHands
        rules keeps its own iteration limit). Every other policy applies as it is."""
        if self.rules != "openhands" or self.max_turns != RULE_SETS["openhands"].max_turns:
            return self
        rp = getattr(run, "policy", None)
        recorded = None if rp is None else (rp.max_turns or rp.params.get("max_iterations"))
        return self.replace(max_turns=int(recorded)) if recorded else self

    # -- views ------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["wrapup_readings"] = list(self.wrapup_readings)
        out["finish_tools"] = list(self.finish_tools)
        if not out["extra"]:
            out.pop("extra")
        return out

    def overrides(self) -> dict[str, Any]:
        """The fields that differ from this policy's rule set."""
        base = RULE_SETS[self.rules]
        return {
            name: getattr(self, name)
            for name in COMPARED_FIELDS
            if name != "rules" and getattr(self, name) != getattr(base, name)
        }

    @cached_property
    def label(self) -> str:
        """A short name for tables: the rule set, the grant, and any other override."""
        parts = [self.rules] if self.rules in AGENT_RULES else [self.rules, f"g={self.grant:,}"]
        for k, v in self.overrides().items():
            if k != "grant":
                parts.append(f"{k}={v}")
        for k in LIMIT_FIELDS if self.rules in AGENT_RULES else ():
            v = getattr(self, k)
            if v is not None and k not in self.overrides():
                parts.append(f"{k}={v}")
        return " ".join(parts)

    @cached_property
    def effective_max_turns(self) -> int:
        return turncap.clamp_max_turns(self.max_turns, self.turn_backstop)


# The values the replay knows for the era fields (workbench.context.decay_replay reads them).
OBSERVATION_WINDOWS = ("context", "grant/6")
MEMOS = ("content", "call-keyed")


def _rule_set(name: str) -> str:
    if name not in RULE_SETS_DOC:
        raise ValueError(f"unknown rule set {name!r}; known: {', '.join(RULE_SETS_DOC)}")
    return name


def _check_values(p: Policy) -> None:
    """Values no run could be governed by are refused when the policy is made, not met mid-replay."""

    def bad(name: str, value: object, want: str) -> ValueError:
        return ValueError(f"{name} must be {want}, got {value!r}")

    if not isinstance(p.grant, int) or isinstance(p.grant, bool):
        raise bad("grant", p.grant, "an int")
    if not isinstance(p.cache_weight_percent, int):
        raise bad("cache_weight_percent", p.cache_weight_percent, "an int percentage")
    unknown = set(p.wrapup_readings) - set(wrapup.READINGS)
    if unknown:
        raise bad("wrapup_readings", sorted(unknown), "among " + ", ".join(wrapup.READINGS))
    if p.grant < 0:
        raise bad("grant", p.grant, "a token count >= 0")
    if p.deadline_s is not None and not (math.isfinite(p.deadline_s) and p.deadline_s > 0):
        raise bad("deadline_s", p.deadline_s, "None or a finite number of seconds > 0")
    for name in ("context_length", "window"):
        value = getattr(p, name)
        if value is not None and (not isinstance(value, int) or value <= 0):
            raise bad(name, value, "None or a whole number of tokens > 0")
    for name in ("reserve", "safety"):
        value = getattr(p, name)
        if value is not None and value < 0:
            raise bad(name, value, "None or a token count >= 0")
    if p.calibration is not None and not (math.isfinite(p.calibration) and p.calibration >= 1):
        raise bad(
            "calibration", p.calibration, "None or a finite factor >= 1 (ADR-107's factor only grows from 1)"
        )
    for name in LIMIT_FIELDS:
        value = getattr(p, name)
        if value is not None and (isinstance(value, bool) or not math.isfinite(value) or value < 0):
            raise bad(name, value, "None or a number >= 0 (0: no limit)")
    if p.estimator not in STRATEGIES:
        raise bad("estimator", p.estimator, "one of " + ", ".join(STRATEGIES))
    if p.observation_window not in OBSERVATION_WINDOWS:
        raise bad("observation_window", p.observation_window, "one of " + ", ".join(OBSERVATION_WINDOWS))
    if p.memo not in MEMOS:
        raise bad("memo", p.memo, "one of " + ", ".join(MEMOS))


def _agent_recorded(run: Any, rp: Any) -> Policy | None:
    """A mini-swe-agent or Inspect run's own recorded limits under its agent's rule set (None for other runs)."""

    def num(value: Any) -> float | None:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
        return float(value) if ok else None

    source = getattr(run, "source", None)
    if source == "mini-swe-agent":
        step = rp.max_turns
        return Policy.named(
            "mini-swe-agent",
            step_limit=int(step) if step else None,
            cost_limit_usd=num(rp.params.get("cost_limit_usd")),
            time_limit_s=num(rp.deadline_s),
        )
    if rp.rules == "swe-agent" or source == "swe-agent":
        calls = rp.params.get("per_instance_call_limit")
        return Policy.named(
            "swe-agent",
            cost_limit_usd=num(rp.params.get("per_instance_cost_limit")),
            call_limit=int(calls) if num(calls) else None,
        )
    if rp.rules == "inspect" or source == "inspect-ai":
        token = rp.params.get("sample_token_limit", rp.params.get("token_limit"))
        message = rp.params.get("message_limit")
        return Policy.named(
            "inspect",
            message_limit=int(message) if num(message) else None,
            token_limit=int(token) if num(token) and isinstance(token, int) else None,
            cost_limit_usd=num(rp.params.get("cost_limit")),
            time_limit_s=num(rp.deadline_s),
        )
    return None


COMPARED_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Policy) if f.compare)
"""The fields that define a policy (``extra`` is carried along but never compared)."""


def treated(how: FastPath) -> tuple[str, ...]:
    """The Policy fields the fast path treats ``how``, in field order."""
    return tuple(f.name for f in dataclasses.fields(Policy) if f.metadata.get("fast") is how)


# Every seed governor off: the agents' rule sets replay their own limits alone.
_NO_SEED_GOVERNORS: dict[str, Any] = dict(
    max_turns=NO_SEED_TURN_CAP,
    turn_backstop=None,
    cost_lands=False,
    wrapup_at=None,
    wall_pace_at=None,
    empty_abandon=False,
    nudges=False,
    length_batch=False,
    no_progress=False,
    tool_timeouts=False,
)
RULE_SETS: dict[str, Policy] = {
    "current": Policy("current"),
    "ink-s9": Policy(
        "ink-s9",
        grant=INK_S9_GRANT,
        raw_lands=True,
        reuse_lands=True,
        landing_token_share=None,
        wrapup_readings=("cost", "raw"),
        no_progress=False,
    ),
    "older": Policy(
        "older",
        grant=INK_S9_GRANT,
        raw_lands=True,
        landing_token_share=None,
        wrapup_readings=("cost", "raw"),
        no_progress=False,
        observation_window="grant/6",
        memo="call-keyed",
    ),
    "openhands": Policy(
        "openhands",
        **{**_NO_SEED_GOVERNORS, "max_turns": openhands.OH_MAX_ITERATIONS},
        turn_cap_offset=openhands.OPENHANDS_TURN_CAP_OFFSET,
        stuck_detection=True,
        finish_tools=openhands.FINISH_TOOLS,
    ),
    "mini-swe-agent": Policy(
        "mini-swe-agent", **_NO_SEED_GOVERNORS, cost_limit_usd=minisweagent.DEFAULT_COST_LIMIT
    ),
    "swe-agent": Policy(
        "swe-agent", **_NO_SEED_GOVERNORS, cost_limit_usd=sweagent.DEFAULT_PER_INSTANCE_COST_LIMIT
    ),
    "claude-code": Policy("claude-code", **_NO_SEED_GOVERNORS),
    "inspect": Policy("inspect", **_NO_SEED_GOVERNORS),
}
