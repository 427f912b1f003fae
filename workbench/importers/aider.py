"""Aider chat histories (``.aider.chat.history.md``): a run per ``# aider chat started at`` session, a call per
``> Tokens:`` usage report. Every variant of that line Aider has written (0.46-0.86) and the mapping:
docs/importers/aider.md."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from workbench.importers._common import Fields
from workbench.importers.contract import NO_ROUTE, NOT_RECORDED, declare, inferred, recorded, unknown
from workbench.importers.shell import classify
from workbench.importers.transcript import TranscriptBuilder, origin
from workbench.trace.errors import TraceError
from workbench.trace.limits import read_document
from workbench.trace.schema import Diagnostic, EventKind, Message, Run, Segment, Turn, Usage

NAME = "aider"
VERSION = "1"

FACTS = declare(
    mutated=inferred(
        "'Applied edit to' lines; the user's /run and /test commands parsed (workbench.importers.shell) into "
        "shell-run events (write / read-only / unknown)"
    ),
    new_info=unknown("tool results are not recorded as such"),
    tool_error=NOT_RECORDED,
    tool_timeout=NOT_RECORDED,
    ending=recorded("each reply ends its exchange"),
    tool_usage=NOT_RECORDED,
    cache_read=recorded("'cache hit' in the Tokens line"),
    cache_write=recorded("'cache write' in the Tokens line"),
    route=NO_ROUTE,
)

CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)

HEADER = re.compile(r"^# aider chat started at (?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
_NUM = r"[\d,]+(?:\.\d+)?k?"
TOKENS = re.compile(
    rf"^> Tokens: (?P<sent>{_NUM}) sent"
    rf"(?:, (?P<cached>{_NUM}) cached)?"
    rf"(?:, (?P<write>{_NUM}) cache write)?"
    rf"(?:, (?P<hit>{_NUM}) cache hit)?"
    rf", (?P<received>{_NUM}) received\."
    r"(?:\s+(?P<cost>Cost: .*))?\s*$"
)
COST = re.compile(
    r"^(?:> )?Cost: \$(?P<message>\d+(?:\.\d+)?) (?:message|request), \$(?P<session>\d+(?:\.\d+)?) session\."
)
_MODEL = re.compile(r"^> (?:Main model|Model): (?P<model>\S+)")
_VERSION = re.compile(r"^> Aider v(?P<version>\S+)")
_EDIT = re.compile(r"^> Applied edit to (?P<file>.+?)\s*$")

ROUNDED = (
    "token figures rounded by Aider to k (1.2k: to the nearest 100 below 10k; 12k: to the nearest 1000 above)"
)
ALWAYS = (
    "requests not recorded: Aider sends the repo map, file contents and its system prompt, which the history "
    "does not keep",
    "no per-call timestamps: the session start only (local time with no zone, read as UTC)",
    "a usage line reports one user message: a reply continued after the output limit is one call here",
    "'sent' is read as the whole prompt (Aider adds cache writes to the provider's prompt tokens; since 0.51 "
    "the cache reads too)",
)


def sniff(path: Path, head: list[bytes]) -> bool:
    """A session header on any line of the bounded head: an editor mode line or a pre-commit hook's output may
    come first (Aider's own ``split_chat_history_markdown`` needs no header at the top)."""
    return any(HEADER.match(raw.decode("utf-8", "replace").rstrip("\r\n")) for raw in head)


# Aider 0.51 (August 2024) began counting cache reads in `sent`; before it, `sent` was the provider's prompt
# tokens without them (the one 0.50.x form that printed reads says "cached"): read by version.
SENT_WITH_READS_SINCE = (0, 51)


def sent_includes_reads(version: str | None, form: str) -> bool:
    """Does `sent` count the cache reads? By the session's ``> Aider v`` version; without one, by the line's
    form (``cached``: 0.50.x; ``cache hit``: 0.51 and later)."""
    m = re.match(r"(\d+)\.(\d+)", version or "")
    if m:
        return (int(m.group(1)), int(m.group(2))) >= SENT_WITH_READS_SINCE
    return form != "cached"


def _tokens(text: str | None, f: Fields, line: int, field: str) -> tuple[int | None, bool]:
    """A token figure as Aider printed it, and whether it was rounded to k."""
    if text is None:
        return None, False
    rounded = text.endswith("k")
    try:
        value = float(text.removesuffix("k").replace(",", ""))
    except ValueError:
        f.bad(line, field, f"not a token figure: {text!r}")
        return None, False
    if rounded:
        value *= 1000
    return f.tokens(round(value), line, field), rounded


class _Session(TranscriptBuilder):
    """One session as its lines arrive: user lines, reply text, usage lines (a call each), Aider's own output."""

    def __init__(self, index: int, start: datetime | None, line: int) -> None:
        super().__init__()
        self.index, self.start, self.line = index, start, line
        self.model: str | None = None
        self.version: str | None = None
        self.reply_lines: list[str] = []
        self.rounded = 0
        self.reads_added = 0
        self.session_cost: float | None = None
        self.pending_cost: Turn | None = None  # a usage line whose Cost: part is on the next line
        self.replies_without_usage = 0

    def user(self, text: str, continues: bool) -> None:
        self.close_reply()
        if continues and self.messages and self.messages[-1].role == "user":
            self.messages[-1] = Message(role="user", content=f"{self.messages[-1].content}\n{text}")
            self.segments[-1] = self.segments[-1].model_copy(update={"prompt": self.messages[-1].content})
            return
        self.messages.append(Message(role="user", content=text))
        n = len(self.turns)
        self.segments.append(Segment(index=len(self.segments), start=n, stop=n, prompt=text))

    def close_reply(self) -> None:
        """Reply text seen with no usage line after it (a version that wrote none, or an interrupted call)."""
        text = "\n".join(self.reply_lines).strip()
        self.reply_lines = []
        if text:
            self.messages.append(Message(role="assistant", content=text))
            self.replies_without_usage += 1


def load(path: Path) -> list[Run]:
    path = Path(path)
    f = Fields(path)
    try:
        raw = read_document(path, "chat history")  # bounded, fd checked (workbench.trace.limits)
    except OSError as exc:
        raise TraceError(str(path), f"cannot open: {exc.strerror or exc}") from exc
    sessions: list[_Session] = []
    cur: _Session | None = None
    before, first_before = 0, 0  # lines before the first session (a mode line, a hook's output): not Aider's
    after_user = False  # the previous non-blank line was a user line (a multi-line prompt continues)
    for number, line in enumerate(raw.decode("utf-8", "replace").splitlines(), start=1):
        was_user, after_user = after_user, line.startswith("#### ") or (after_user and not line.strip())
        m = HEADER.match(line)
        if m:
            if cur is not None:
                cur.close_reply()
            cur = _Session(len(sessions), f.time(m.group("when"), number, "aider chat started at"), number)
            sessions.append(cur)
            continue
        if cur is None:
            if line.startswith(("#### ", "> Tokens:")):  # a session whose header is not in the file
                cur = _Session(0, None, number)
                sessions.append(cur)
            else:
                if line.strip():
                    before += 1
                    first_before = first_before or number
                continue
        if cur.pending_cost is not None:
            turn, cur.pending_cost = cur.pending_cost, None
            c = COST.match(line)
            if c:
                _cost(cur, turn, c, f, number)
                continue
        if line.startswith("#### "):
            said = line[5:].rstrip()
            command = said.split(None, 1)[1:]
            if said.startswith(("/run ", "/test ")) and command:
                # the user's /run (and /test) command ran in the workspace between calls: its effect, parsed
                effect = classify(command[0])
                cur.event(EventKind.SHELL_RUN, effect.rule, {"command": command[0], "effect": effect.kind})
            cur.user(said, was_user)
            continue
        if line.startswith("> Tokens:"):
            t = TOKENS.match(line)
            if t is None:
                f.bad(number, "Tokens", f"an unreadable usage line: {line[:80]!r}")
                continue
            _turn(cur, t, f, number)
            continue
        if line.startswith(">"):
            m2 = _MODEL.match(line)
            if m2 and cur.model is None:
                cur.model = m2.group("model")
            m3 = _VERSION.match(line)
            if m3 and cur.version is None:
                cur.version = m3.group("version")
            e = _EDIT.match(line)
            if e and cur.turns:
                cur.event(EventKind.EDIT_APPLIED, data={"file": e.group("file")})
                cur.turns[-1].mutated = True
            continue
        cur.reply_lines.append(line)
    if cur is not None:
        cur.close_reply()
    if before:
        f.bad(
            first_before,
            "header",
            f"{before} line(s) before the first '# aider chat started at' line are not read",
        )
    if not sessions:
        raise TraceError(str(path), "no '# aider chat started at' line: not an Aider chat history")
    bounds = [s.line for s in sessions[1:]] + [None]
    return [_run(path, s, f, end) for s, end in zip(sessions, bounds, strict=True)]


def _turn(cur: _Session, t: re.Match[str], f: Fields, number: int) -> None:
    sent, r1 = _tokens(t.group("sent"), f, number, "Tokens.sent")
    cached, r2 = _tokens(t.group("cached"), f, number, "Tokens.cached")
    write, r3 = _tokens(t.group("write"), f, number, "Tokens.cache write")
    hit, r4 = _tokens(t.group("hit"), f, number, "Tokens.cache hit")
    received, r5 = _tokens(t.group("received"), f, number, "Tokens.received")
    cur.rounded += sum((r1, r2, r3, r4, r5))
    text = "\n".join(cur.reply_lines).strip() or None
    cur.reply_lines = []
    reads = hit if hit is not None else cached
    if (
        reads
        and sent is not None
        and not sent_includes_reads(cur.version, "cache hit" if hit is not None else "cached")
    ):
        sent += reads  # before 0.51 `sent` left the cache reads out: the whole prompt adds them
        cur.reads_added += 1
    turn = cur.turn(
        sent=None,
        reply=Message(role="assistant", content=text),
        usage=Usage(prompt=sent, cached=reads, cache_write=write, completion=received),
        text=text,
        segment=len(cur.segments) - 1 if cur.segments else None,
        model=cur.model,
    )
    if cur.segments:  # every turn is added here, so the open segment's stop is always current
        cur.segments[-1] = cur.segments[-1].model_copy(update={"stop": len(cur.turns)})
    cost = t.group("cost")
    if cost is not None:
        c = COST.match(cost)
        if c is None:
            f.bad(number, "Cost", f"an unreadable cost: {cost[:80]!r}")
        else:
            _cost(cur, turn, c, f, number)
    else:
        cur.pending_cost = turn  # Aider puts the cost on the next line when both cache figures are shown


def _cost(cur: _Session, turn: Turn, c: re.Match[str], f: Fields, number: int) -> None:
    turn.usage.cost = f.number(float(c.group("message")), number, "Cost.message")
    cur.session_cost = f.number(float(c.group("session")), number, "Cost.session")


def _run(path: Path, s: _Session, f: Fields, end: int | None) -> Run:
    s.note(*ALWAYS)
    if s.reads_added:
        s.note(
            f"Aider {s.version or 'before 0.51'} printed 'sent' without the cache reads: {s.reads_added} call(s)' "
            "prompt is 'sent' plus 'cached'"
        )
    if s.rounded:
        s.note(f"{ROUNDED}: {s.rounded} figure(s)")
    if any(t.usage.cost is not None for t in s.turns):
        s.note("costs as Aider printed them (two significant digits): Usage.cost is rounded")
    s.count_note(
        s.replies_without_usage,
        "{n} model repl(ies) with no usage line after them (an Aider before 0.46, an interrupted call or an "
        "unpriced error): not counted as calls",
    )
    s.note(
        "Aider edits files from the reply text (no tool calls); '> Applied edit to' lines mark the turn "
        "mutated and are kept as events"
    )
    segs = s.segments
    when = s.start.strftime("%Y-%m-%dT%H:%M:%S") if s.start else str(s.index)
    diags = sorted((d for d in f.diagnostics if _in_session(d, s, end)), key=lambda d: d.line or 0)
    return s.run(
        run_id=f"aider:{path.parent.name or '.'}:{when}",
        **origin(NAME, VERSION, path),
        diagnostics=diags,
        model=s.model,
        task=segs[0].prompt if segs else None,
        started_at=s.start,
        recorded_cost_usd=s.session_cost,
        segments=segs if len(segs) > 1 else [],
        outcome=s.ending("an interactive session: the last reply"),
        metadata={"aider_version": s.version, "header_line": s.line},
    )


def _in_session(d: Diagnostic, s: _Session, end: int | None) -> bool:
    """A diagnostic belongs to the session its line is in (text before the first header: the first)."""
    line = d.line if d.line is not None else s.line
    return (line >= s.line or s.index == 0) and (end is None or line < end)
