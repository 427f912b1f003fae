"""The API key: read from an environment variable the user names, and kept out of every text the loop writes.

The key is held by a :class:`Secret` whose ``repr`` and ``str`` are masked; :meth:`Secret.redact` removes its
value from any text (error bodies a server echoes back, exception messages, log lines) before that text goes
anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

MASK = "[redacted]"


@dataclass(frozen=True)
class Secret:
    """An API key read from ``env`` (the variable's name is not secret; its value is)."""

    env: str | None
    _value: str = field(default="", repr=False)

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

    def redact(self, text: str) -> str:
        if self._value and self._value in text:
            return text.replace(self._value, MASK)
        return text

    def __str__(self) -> str:
        return f"Secret(${self.env})" if self.env else "Secret(none)"

    __repr__ = __str__
