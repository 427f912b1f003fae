"""A reply body's ``Content-Encoding`` undone as it streams, never past a cap on the *decoded* bytes: each raw chunk
is inflated with ``max_length`` set to the room left, so a gzip bomb costs at most the cap; only ``identity``,
``gzip`` and ``deflate``, one layer at most (docs/loop.md, the limits table).
"""

from __future__ import annotations

import zlib

# The encodings the client asks for (Accept-Encoding) and decodes; anything else is refused.
ACCEPT_ENCODING = "gzip, deflate"
_GZIP = frozenset({"gzip", "x-gzip"})
_DEFLATE = frozenset({"deflate"})


class EncodingRefused(ValueError):
    """A Content-Encoding the client will not decode (stacked, or unknown)."""


class TooLarge(ValueError):
    """The decoded body passed its cap."""


def layers(header: str | None) -> tuple[str, ...]:
    """The encodings a ``Content-Encoding`` header lists, in the order applied, ``identity`` left out."""
    if not header:
        return ()
    return tuple(t for t in (p.strip().lower() for p in header.split(",")) if t and t != "identity")


class Decoder:
    """Decodes one body chunk by chunk; :attr:`size` counts the decoded bytes handed out so far."""

    def __init__(self, content_encoding: str | None, cap: int) -> None:
        found = layers(content_encoding)
        if len(found) > 1:
            raise EncodingRefused(
                f"reply with stacked Content-Encoding {', '.join(found)!r} refused (one layer of gzip or deflate "
                "at most)"
            )
        name = found[0] if found else None
        if name is not None and name not in _GZIP | _DEFLATE:
            raise EncodingRefused(
                f"reply with Content-Encoding {name[:40]!r} refused (only gzip and deflate are decoded)"
            )
        self.cap = cap
        self.size = 0
        self.encoding = name
        self._z: zlib._Decompress | None = None  # type: ignore[name-defined]
        if name in _GZIP:
            self._z = zlib.decompressobj(zlib.MAX_WBITS | 16)

    def _inflate(self, data: bytes) -> bytes:
        if self.encoding in _DEFLATE and self._z is None:
            # "deflate" is zlib-wrapped by the standard, raw by some servers: the first bytes tell (as httpx does)
            self._z = zlib.decompressobj(zlib.MAX_WBITS)
            try:
                return self._bounded(data)
            except zlib.error:
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._bounded(data)

    def _bounded(self, data: bytes) -> bytes:
        """Inflate ``data`` without ever producing more than one byte past the room left."""
        assert self._z is not None
        out = bytearray()
        pending = data
        while True:
            room = self.cap - self.size - len(out)
            piece = self._z.decompress(pending, room + 1)
            out += piece
            if len(out) + self.size > self.cap:
                raise TooLarge(
                    f"reply larger than {self.cap:,} bytes once decoded refused (it is read no further)"
                )
            pending = self._z.unconsumed_tail
            if not pending:
                return bytes(out)

    def feed(self, chunk: bytes) -> bytes:
        """The decoded bytes of ``chunk``; raises :class:`TooLarge` the moment the decoded total passes the cap."""
        if self._z is None and self.encoding is None:
            if self.size + len(chunk) > self.cap:
                raise TooLarge(f"reply larger than {self.cap:,} bytes refused (it is read no further)")
            self.size += len(chunk)
            return chunk
        try:
            out = self._inflate(chunk)
        except zlib.error as exc:
            raise EncodingRefused(f"reply body is not valid {self.encoding} ({exc})") from None
        self.size += len(out)
        return out
