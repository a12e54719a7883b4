"""The byte codec every record shares: varints, zigzag, and a reader front to back.

Neutral ground: it imports nothing of the package, so the engine (the state record), the session
layer (the stored game, its log, the access record) and the wire (protobuf's varint) read and
write bytes through it without climbing into one another. Compiled with the hot path
(build_info.py).
"""

from __future__ import annotations

_SMALL = tuple(bytes((n,)) for n in range(0x80))


class RecordError(ValueError):
    """A record that is truncated or malformed (a ValueError: the bytes are the bad value)."""


def varint(n: int) -> bytes:
    """``n`` ≥ 0 as a protobuf-style varint (7 bits a byte, low first)."""
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def zigzag(n: int) -> int:
    """Any integer as one ≥ 0, small for small magnitudes (protobuf's sint encoding)."""
    return n * 2 if n >= 0 else -n * 2 - 1


def unzigzag(n: int) -> int:
    return n >> 1 if not n & 1 else -(n >> 1) - 1


class Reader:
    """Reads a record front to back; every overrun raises ``self.error(...)`` (a ``RecordError``
    here; the engine's reader raises its own ``InvalidStateError``)."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes, pos: int = 0) -> None:
        self.buf, self.pos = buf, pos

    def error(self, message: str) -> ValueError:
        """The exception this reader raises on bad bytes (a subclass may name its own)."""
        return RecordError(message)

    def at_end(self) -> bool:
        return self.pos >= len(self.buf)

    def byte(self) -> int:
        if self.pos >= len(self.buf):
            raise self.error("the record is truncated")
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result
            shift += 7
            if shift > 70:
                raise self.error("a varint in the record is too long")

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.buf):
            raise self.error("the record is truncated")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def text(self) -> str:
        """A length-prefixed UTF-8 text (a varint, then the bytes)."""
        return self.take(self.varint()).decode()
