"""Aider chat history: a run per session, a call per usage line, every variant Aider has written."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.importers import aider, detect

# Each session as Aider wrote it in one era (append_chat_history: "> " + text + "  \n"; user lines "#### ").
V046 = """
# aider chat started at 2024-07-29 10:00:00

> /usr/local/bin/aider --model gpt-4o
> Aider v0.46.0
> Model: gpt-4o with diff edit format
> Git repo: .git with 12 files

#### fix the failing test

The test expects 2.

foo.py
```python
<<<<<<< SEARCH
return 1
=======
return 2
>>>>>>> REPLACE
```

> Tokens: 1,234 sent, 56 received. Cost: $0.001234 request, $0.005678 session.
> Applied edit to foo.py
> Commit 1a2b3c4 fix: return 2

#### thanks

You're welcome.

> Tokens: 1,400 sent, 5 received. Cost: $0.0021 request, $0.0078 session.
"""

V050 = """
# aider chat started at 2024-08-18 09:30:00

> Aider v0.50.1
> Main model: claude-3-5-sonnet-20240620 with diff edit format, prompt cache, infinite output

#### explain main.py
#### briefly

It parses arguments.

> Tokens: 2,345 sent, 1,000 cached, 78 received. Cost: $0.0050 message, $0.01 session.
"""

V060 = """
# aider chat started at 2024-10-30 14:05:09

> Aider v0.60.1
> Main model: claude-3-5-sonnet-20241022 with diff edit format, prompt cache, infinite output

#### add a --verbose flag

Here is the change.

> Tokens: 12k sent, 1.2k cache write, 2.5k cache hit, 340 received.
Cost: $0.05 message, $0.31 session.
> Applied edit to cli.py

#### now document it

Done.

> Tokens: 13k sent, 9.8k cache hit, 120 received. Cost: $0.01 message, $0.32 session.

#### use a local model

Sure.

> Tokens: 3.4k sent, 120 received.
"""


def independent_totals(text: str) -> list[dict[str, float]]:
    """Per session: the sum of each figure, read with plain string operations (not the importer's regex).
    ``prompt``: the whole prompt, ``sent`` plus the cache reads before Aider 0.51 (its ``> Aider v`` line)."""

    def num(s: str) -> float:
        s = s.replace(",", "")
        return float(s[:-1]) * 1000 if s.endswith("k") else float(s)

    sessions: list[dict[str, float]] = []
    for line in text.splitlines():
        if line.startswith("# aider chat started at"):
            sessions.append(
                {"calls": 0, "sent": 0, "hit": 0, "write": 0, "received": 0, "cost": 0, "prompt": 0, "v": 99}
            )
        elif line.startswith("> Aider v"):
            major, minor = line[len("> Aider v") :].split(".")[:2]
            sessions[-1]["v"] = int(major) * 100 + int(minor)
        elif line.startswith("> Tokens: "):
            s = sessions[-1]
            s["calls"] += 1
            body = line[len("> Tokens: ") :].split(". Cost:")[0].rstrip(". ")
            for part in body.split(", "):
                value, _, what = part.partition(" ")
                key = {
                    "sent": "sent",
                    "cache hit": "hit",
                    "cached": "hit",
                    "cache write": "write",
                    "received": "received",
                }[what]
                s[key] += num(value)
                if key == "sent" or (key == "hit" and s["v"] < 51):
                    s["prompt"] += num(value)
        if "Cost: $" in line:
            sessions[-1]["cost"] += float(line.split("Cost: $")[1].split(" ")[0])
    return sessions


def aider_lines(text: str) -> str:
    """Aider's line ends: its own output and user lines end in two spaces (a Markdown line break), except a
    usage line whose cost part Aider put on the next line (the two spaces end the pair)."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        marked = line.startswith(("> ", "#### ", "Cost: "))
        out.append(line + "  " if marked and not nxt.startswith("Cost: ") else line)
    return "\n".join(out)


def write(tmp: Path, *parts: str) -> Path:
    path = tmp / ".aider.chat.history.md"
    path.write_text(aider_lines("".join(parts)))
    return path


def test_every_version_of_the_usage_line_equals_an_independent_reading(tmp_path: Path) -> None:
    text = V046 + V050 + V060
    path = write(tmp_path, text)
    assert detect(path).NAME == "aider"
    runs = aider.load(path)
    expected = independent_totals(text)
    assert len(runs) == len(expected) == 3
    for run, want in zip(runs, expected, strict=True):
        assert len(run.turns) == want["calls"]
        assert (run.total("prompt") or 0) == want["prompt"]
        assert (run.total("cached") or 0) == want["hit"]
        assert (run.total("cache_write") or 0) == want["write"]
        assert (run.total("completion") or 0) == want["received"]
        assert round(sum(t.usage.cost or 0 for t in run.turns), 6) == round(want["cost"], 6)


def test_the_mapping_of_one_session(tmp_path: Path) -> None:
    runs = aider.load(write(tmp_path, V046, V060))
    old, new = runs
    assert old.run_id == f"aider:{tmp_path.name}:2024-07-29T10:00:00"
    assert old.model == "gpt-4o" and old.metadata["aider_version"] == "0.46.0"
    assert [t.usage.prompt for t in old.turns] == [1234, 1400]
    assert [t.usage.cost for t in old.turns] == [0.001234, 0.0021]
    assert old.recorded_cost_usd == 0.0078
    assert old.turns[0].mutated is True and old.turns[1].mutated is None
    assert [e.data["file"] for e in old.events] == ["foo.py"]
    assert old.turns[0].text.startswith("The test expects 2.")
    assert [(s.start, s.stop, s.prompt) for s in old.segments] == [
        (0, 1, "fix the failing test"),
        (1, 2, "thanks"),
    ]
    assert not any(n.startswith(aider.ROUNDED) for n in old.lossy)
    # 0.60: rounded figures, the cost on the next line, an unpriced call
    u0, u1, u2 = (t.usage for t in new.turns)
    assert (u0.prompt, u0.cache_write, u0.cached, u0.completion, u0.cost) == (12000, 1200, 2500, 340, 0.05)
    assert (u1.prompt, u1.cache_write, u1.cached, u1.cost) == (13000, None, 9800, 0.01)
    assert (u2.prompt, u2.cost) == (3400, None)
    assert new.recorded_cost_usd == 0.32
    assert f"{aider.ROUNDED}: 6 figure(s)" in new.lossy
    assert new.started_at.isoformat() == "2024-10-30T14:05:09+00:00"


def test_a_multi_line_prompt_is_one_user_message(tmp_path: Path) -> None:
    (run,) = aider.load(write(tmp_path, V050))
    assert [m.content for m in run.messages if m.role == "user"] == ["explain main.py\nbriefly"]
    assert run.turns[0].usage.cached == 1000


def test_unreadable_usage_lines_are_diagnostics_with_their_line(tmp_path: Path) -> None:
    bad = V046.replace("> Tokens: 1,400 sent", "> Tokens: lots sent")
    path = write(tmp_path, "stray text\n", bad)
    (run,) = aider.load(path)
    where = 1 + path.read_text().splitlines().index(
        "> Tokens: lots sent, 5 received. Cost: $0.0021 request, $0.0078 session.  "
    )
    assert [(d.line, d.field) for d in run.diagnostics] == [(1, "header"), (where, "Tokens")]
    assert len(run.turns) == 1


def test_replies_with_no_usage_line_are_said(tmp_path: Path) -> None:
    text = "\n# aider chat started at 2024-05-01 08:00:00\n\n> Aider v0.35.0  \n\n#### hi  \n\nHello.\n\n"
    (run,) = aider.load(write(tmp_path, text))
    assert run.turns == []
    assert any(n.startswith("1 model repl(ies) with no usage line") for n in run.lossy)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    inserts=st.lists(
        st.tuples(
            st.integers(0, 60),
            st.one_of(
                st.text(max_size=40).filter(lambda t: "\n" not in t and "\r" not in t),
                st.sampled_from(
                    ["> Tokens: ", "> Tokens: 1k sent, x received.", "Cost: $", "#### ", "> Tokens: 9" * 30]
                ),
            ),
        ),
        max_size=6,
    )
)
def test_inserted_lines_never_crash_and_valid_calls_survive(
    tmp_path: Path, inserts: list[tuple[int, str]]
) -> None:
    lines = V060.splitlines()
    calls = sum(1 for x in lines if x.startswith("> Tokens:"))
    for at, text in sorted(inserts, key=lambda x: -x[0]):
        if text.startswith("# aider chat started at") or at < 2:
            continue
        lines.insert(min(at, len(lines)), text)
    path = write(tmp_path, "\n".join(lines) + "\n")
    runs = aider.load(path)
    assert sum(len(r.turns) for r in runs) >= calls
    for r in runs:
        for d in r.diagnostics:
            assert d.file == str(path) and d.line is not None


def test_sent_is_read_by_version(tmp_path: Path) -> None:
    """Before 0.51 `sent` left the cache reads out (0.50.x's "cached"); since 0.51 it counts them."""
    old = aider.load(write(tmp_path, V050))[0]
    assert (old.turns[0].usage.prompt, old.turns[0].usage.cached) == (3345, 1000)
    assert any("printed 'sent' without the cache reads: 1 call(s)" in n for n in old.lossy)
    new = aider.load(write(tmp_path, V060))[0]
    assert (new.turns[0].usage.prompt, new.turns[0].usage.cached) == (12000, 2500)
    # no version line: the line's form tells ("cached" is 0.50.x's)
    bare = aider.load(write(tmp_path, V050.replace("> Aider v0.50.1\n", "")))[0]
    assert bare.turns[0].usage.prompt == 3345
    assert aider.sent_includes_reads("0.86.1", "cached") and not aider.sent_includes_reads(
        "0.50.1", "cache hit"
    )


@pytest.mark.parametrize(
    "preamble",
    [
        "<!-- vim: set ft=markdown: -->\n",
        "check yaml...............................................................Passed\n" * 12,
        "\n".join(f"line {i}" for i in range(150)) + "\n",
    ],
)
def test_a_history_whose_first_header_comes_after_other_lines_is_detected(
    tmp_path: Path, preamble: str
) -> None:
    path = write(tmp_path, preamble, V060)
    assert detect(path).NAME == "aider"
    runs = aider.load(path)
    assert len(runs) == 1 and len(runs[0].turns) == 3
    assert [d.message for d in runs[0].diagnostics if d.field == "header"] == [
        f"{preamble.count(chr(10))} line(s) before the first '# aider chat started at' line are not read"
    ]
