"""The API key: read from an environment variable the user names, held by a masked :class:`Secret`, and kept out of
every text the loop writes (:meth:`Secret.redact`: fragments, reversed and encoded copies too; weak keys refused).
docs/loop.md, "Secrets".
"""

from __future__ import annotations

import base64
import bisect
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from workbench.context.spill import SpillStore

MASK = "[redacted]"
# The shortest key the loop accepts. Hosted API keys are 40-110 characters; below this a key's fragments are
# common enough in ordinary text that masking them would damage records (a one-letter key masked every "e").
MIN_KEY_CHARS = 16
# The shortest run of the key's characters (or of an encoding of it) that is masked wherever it appears: a
# truncated error body that ends 10 characters into the key still leaks nothing that can be reused.
FRAGMENT_CHARS = 10
# The fewest distinct characters a key may have: a key of 25 zeros would mask every long number ("id=1[redacted]").
# Hosted keys (hex, base62) use 16 or more.
MIN_DISTINCT_CHARS = 8
# A window of the key with fewer distinct characters than this is not matched on its own (it would match ordinary
# runs such as "0000000000"); the windows around it still mask the key, and grow across it.
MIN_WINDOW_DISTINCT = 4
# Characters a leak may carry between the key's characters and still be the key: white space and the zero-width
# and invisible formatting characters (soft hyphen, ZWSP/ZWNJ/ZWJ, LRM/RLM, word joiner, BOM, Mongolian vowel sep).
SEPARATORS = "\\s\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff"


class KeyRefused(ValueError):
    """A key the loop will not use (too short to redact safely)."""


def _encodings(value: str) -> tuple[str, ...]:
    """The texts a leaked key may take: itself, reversed, hex, and base64 at each byte alignment (the characters
    of an aligned encoding that depend on the key's bytes alone)."""
    raw = value.encode("utf-8")
    forms = {value, value[::-1], raw.hex(), raw.hex().upper()}
    for offset, skip in ((0, 0), (1, 2), (2, 3)):
        padded = b"\0" * offset + raw
        whole = 4 * (len(padded) // 3)  # full groups only: a partial group mixes in the bytes that follow
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(padded).decode("ascii")[skip:whole]
            if len(text) >= FRAGMENT_CHARS:
                forms.add(text)
    return tuple(sorted(f for f in forms if len(f) >= FRAGMENT_CHARS))


def key_problem(value: str) -> str | None:
    """Why ``value`` cannot serve as a key the loop redacts (too short, too few distinct characters, a long run of
    one character), or None."""
    if len(value) < MIN_KEY_CHARS:
        return f"a key of {len(value)} characters; keys shorter than {MIN_KEY_CHARS}"
    if len(set(value)) < MIN_DISTINCT_CHARS:
        return f"a key of only {len(set(value))} distinct characters; keys of fewer than {MIN_DISTINCT_CHARS}"
    if re.search(rf"(.)\1{{{FRAGMENT_CHARS - 1}}}", value, re.DOTALL):
        return f"a key with a run of one character {FRAGMENT_CHARS} or more long; such keys"
    return None


# What the skeleton drops or decodes: a run of separators, or one %XX escape.
_SKIP = re.compile(f"[{SEPARATORS}]+|%[0-9A-Fa-f]{{2}}")
_SEPARATOR_RUN = re.compile(f"[{SEPARATORS}]+")
# Lower-casing that keeps every position (str.lower can lengthen a text: "İ" becomes two characters).
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _unescape(m: re.Match[str]) -> str:
    return chr(int(m.group()[1:], 16)) if m.group()[0] == "%" else ""


def _flatten(text: str) -> str:
    """The skeleton's text alone (fast: no map back, which is built only when a window matched)."""
    if "%" not in text:
        return _SEPARATOR_RUN.sub("", text)
    return _SKIP.sub(_unescape, text)


@dataclass(frozen=True)
class _Skeleton:
    """A text with separators dropped and %XX escapes decoded (what the key's windows are matched in), and the
    way back: piece k starts at ``at[k]`` in the skeleton and ``origin[k]`` in the text; ``escape[k]`` says it is
    one decoded %XX (one character there, three in the text)."""

    text: str
    at: list[int]
    origin: list[int]
    escape: list[bool]

    @classmethod
    def of(cls, text: str) -> _Skeleton:
        parts: list[str] = []
        at: list[int] = []
        origin: list[int] = []
        escape: list[bool] = []
        here = last = 0
        for m in _SKIP.finditer(text):
            if m.start() > last:
                parts.append(text[last : m.start()])
                at.append(here)
                origin.append(last)
                escape.append(False)
                here += m.start() - last
            if m.group()[0] == "%":
                parts.append(chr(int(m.group()[1:], 16)))
                at.append(here)
                origin.append(m.start())
                escape.append(True)
                here += 1
            last = m.end()
        if last < len(text):
            parts.append(text[last:])
            at.append(here)
            origin.append(last)
            escape.append(False)
        return cls("".join(parts), at, origin, escape)

    def start(self, k: int) -> int:
        """Where skeleton character ``k`` starts in the text."""
        p = bisect.bisect_right(self.at, k) - 1
        return self.origin[p] + (0 if self.escape[p] else k - self.at[p])

    def stop(self, k: int) -> int:
        """Where skeleton character ``k - 1`` ends in the text (an exclusive end)."""
        p = bisect.bisect_right(self.at, k - 1) - 1
        return self.origin[p] + (3 if self.escape[p] else k - self.at[p])


def _trie_regex(words: list[str]) -> str:
    """An alternation of ``words`` (all the same length) as a prefix tree, so a position that starts no word is
    rejected at its first character (a flat alternation of hundreds of literals tries each one: 2 MB/s)."""
    trie: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})

    def build(node: dict) -> str:  # type: ignore[type-arg]
        if not node:
            return ""
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items())]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return build(trie)


@dataclass(frozen=True)
class Secret:
    """An API key read from ``env`` (the variable's name is not secret; its value is)."""

    env: str | None
    _value: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        problem = key_problem(self._value) if self._value else None
        if problem is not None:
            where = f"${self.env}" if self.env else "the API key"
            raise KeyRefused(
                f"{where} holds {problem} cannot be kept out of the trace safely (for a server without "
                "authentication, omit --api-key-env)"
            )

    @classmethod
    def from_env(cls, name: str | None, environ: Mapping[str, str] | None = None) -> Secret:
        """Read ``$name``; a name that is unset or empty is an error naming the variable (never its value)."""
        if not name:
            return cls(env=None)
        source = os.environ if environ is None else environ
        value = source.get(name, "")
        if not value:
            raise KeyError(f"environment variable {name} is not set (it should hold the API key)")
        return cls(env=name, _value=value)

    @property
    def present(self) -> bool:
        return bool(self._value)

    def header(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._value}"} if self._value else {}

    @cached_property
    def _pattern(self) -> tuple[re.Pattern[str], dict[str, list[tuple[str, int]]]] | None:
        """One regex matching any FRAGMENT_CHARS-long window of any encoding (any case, separators between its
        characters, any character URL-encoded), and where each window sits (keyed by its case-folded text)."""
        if not self._value:
            return None
        where: dict[str, list[tuple[str, int]]] = {}
        for form in _encodings(self._value):
            folded = form.lower()
            for i in range(len(form) - FRAGMENT_CHARS + 1):
                window = folded[i : i + FRAGMENT_CHARS]
                if len(set(window)) >= MIN_WINDOW_DISTINCT:
                    where.setdefault(window, []).append((folded, i))
        if not where:
            return None
        return re.compile(_trie_regex(sorted(where))), where

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The ``[start, stop)`` ranges of ``text`` holding the key or a fragment/encoding of it, merged. Matched
        in the text's skeleton (separators dropped, %XX decoded, any case), then mapped back to the text."""
        compiled = self._pattern
        if compiled is None:
            return []
        pattern, where = compiled
        flat = _flatten(text).translate(_ASCII_LOWER)
        found: list[tuple[int, int]] = []
        pos = 0
        while (m := pattern.search(flat, pos)) is not None:
            start, stop = m.start(), m.end()
            for form, i in where[m.group()]:  # grow the window along the encoding it belongs to, both ways
                s, j = m.start(), i
                while s > 0 and j > 0 and flat[s - 1] == form[j - 1]:
                    s, j = s - 1, j - 1
                e, j = m.end(), i + FRAGMENT_CHARS
                while e < len(flat) and j < len(form) and flat[e] == form[j]:
                    e, j = e + 1, j + 1
                start, stop = min(start, s), max(stop, e)
            if found and start <= found[-1][1]:
                found[-1] = (found[-1][0], max(found[-1][1], stop))
            else:
                found.append((start, stop))
            pos = m.start() + 1 if stop <= m.start() + 1 else stop
        if not found or (len(flat) == len(text) and not _SKIP.search(text)):
            return found
        skeleton = _Skeleton.of(text)  # only when something matched: the way back to the text's positions
        mapped: list[tuple[int, int]] = []
        for start, stop in found:
            a, b = skeleton.start(start), skeleton.stop(stop)
            if mapped and a <= mapped[-1][1]:
                mapped[-1] = (mapped[-1][0], max(mapped[-1][1], b))
            else:
                mapped.append((a, b))
        return mapped

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of the key (exact, a fragment, reversed, encoded) replaced by MASK."""
        if not self._value or not text:
            return text
        spans = self.spans(text)
        if not spans:
            return text
        out, last = [], 0
        for start, stop in spans:
            out += (text[last:start], MASK)
            last = stop
        out.append(text[last:])
        return "".join(out)

    def redact_bytes(self, data: bytes) -> bytes:
        """Bytes (a response body) with the key masked; non-UTF-8 bytes are kept as they are."""
        if not self._value or not data:
            return data
        text = data.decode("utf-8", "surrogateescape")
        return self.redact(text).encode("utf-8", "surrogateescape")

    def __str__(self) -> str:
        return f"Secret(${self.env})" if self.env else "Secret(none)"

    __repr__ = __str__


class RedactedSpill:
    """A spill store whose every text is redacted before it is kept (spill files are files the loop writes)."""

    def __init__(self, inner: SpillStore, redact: Callable[[str], str]) -> None:
        self.inner, self.redact = inner, redact

    def preserve(self, key: str, text: str) -> str | None:
        return self.inner.preserve(key, self.redact(text))
