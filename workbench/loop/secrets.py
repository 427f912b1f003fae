"""The API key: read from an environment variable the user names, and kept out of every text the loop writes.

The key is held by a :class:`Secret` whose ``repr`` and ``str`` are masked. :meth:`Secret.redact` removes it from
any text before that text goes anywhere (error bodies a server echoes back, exception messages, log lines, tool
results, spill files, the trace). It removes more than the exact value: every run of at least
:data:`FRAGMENT_CHARS` characters of the key, of the key reversed, of its base64 (standard and URL-safe, at each
of the three byte alignments it can take inside a longer encoded text) and of its hex — so a prefix cut by a
truncation, a reversed or an encoded copy is masked too. A key shorter than :data:`MIN_KEY_CHARS` is refused:
its text would match ordinary words and the redaction would corrupt the records it cleans.
"""

from __future__ import annotations

import base64
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
        if self._value and len(self._value) < MIN_KEY_CHARS:
            where = f"${self.env}" if self.env else "the API key"
            raise KeyRefused(
                f"{where} holds a key of {len(self._value)} characters; keys shorter than {MIN_KEY_CHARS} cannot "
                "be kept out of the trace safely (for a server without authentication, omit --api-key-env)"
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
        """One regex matching any FRAGMENT_CHARS-long window of any encoding, and where each window sits."""
        if not self._value:
            return None
        where: dict[str, list[tuple[str, int]]] = {}
        for form in _encodings(self._value):
            for i in range(len(form) - FRAGMENT_CHARS + 1):
                where.setdefault(form[i : i + FRAGMENT_CHARS], []).append((form, i))
        return re.compile(_trie_regex(sorted(where))), where

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The ``[start, stop)`` ranges of ``text`` holding the key or a fragment/encoding of it, merged."""
        compiled = self._pattern
        if compiled is None:
            return []
        pattern, where = compiled
        found: list[tuple[int, int]] = []
        pos = 0
        while (m := pattern.search(text, pos)) is not None:
            start, stop = m.start(), m.end()
            for form, i in where[m.group()]:  # grow the window along the encoding it belongs to, both ways
                s, e = m.start(), m.end()
                while s > 0 and i - (m.start() - s) > 0 and text[s - 1] == form[i - (m.start() - s) - 1]:
                    s -= 1
                j = i + FRAGMENT_CHARS
                while e < len(text) and j + (e - m.end()) < len(form) and text[e] == form[j + (e - m.end())]:
                    e += 1
                start, stop = min(start, s), max(stop, e)
            if found and start <= found[-1][1]:
                found[-1] = (found[-1][0], max(found[-1][1], stop))
            else:
                found.append((start, stop))
            pos = m.start() + 1 if stop <= m.start() + 1 else stop
        return found

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of the key (exact, a fragment, reversed, encoded) replaced by MASK."""
        if not self._value or not text:
            return text
        spans = self.spans(text)
        if not spans:
            return text
        out, last = [], 0
        for start, stop in spans:
            out.append(text[last:start])
            out.append(MASK)
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
