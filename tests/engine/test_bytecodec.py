"""accordion/bytecodec.py, the byte codec every record shares, and the engine's reader on top of it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from accordion import bytecodec, engine
from accordion.engine import InvalidStateError
from accordion.engine.fields import Reader as EngineReader

# protobuf's varint (its encoding guide: 300 is ac 02), as the wire and the stored record write it
VARINTS = [
    (0, "00"),
    (1, "01"),
    (127, "7f"),
    (128, "8001"),
    (300, "ac02"),
    (16384, "808001"),
    (2**64 - 1, "ff" * 9 + "01"),
]


@pytest.mark.parametrize("n,hexed", VARINTS)
def test_a_varint_is_protobufs_form_and_reads_back(n: int, hexed: str) -> None:
    blob = bytecodec.varint(n)
    assert blob.hex() == hexed
    reader = bytecodec.Reader(blob + b"\x07")
    assert reader.varint() == n and reader.byte() == 7 and reader.at_end()


@pytest.mark.parametrize("n", [0, 1, -1, 2, -2, 2**40, -(2**40)])
def test_zigzag_round_trips_and_keeps_small_magnitudes_small(n: int) -> None:
    assert bytecodec.unzigzag(bytecodec.zigzag(n)) == n
    assert bytecodec.zigzag(n) <= 2 * abs(n)


def test_a_length_prefixed_text_reads_back() -> None:
    word = "tableau ♠"
    blob = bytecodec.varint(len(word.encode())) + word.encode()
    assert bytecodec.Reader(blob).text() == word


@pytest.mark.parametrize(
    "blob,read",
    [
        (b"", lambda r: r.byte()),
        (b"\x80\x80", lambda r: r.varint()),  # the varint's last byte is missing
        (b"\x05abc", lambda r: r.take(r.varint())),
        (b"\xff" * 11 + b"\x01", lambda r: r.varint()),  # longer than any 64-bit number
    ],
)
def test_bad_bytes_are_a_record_error_here_and_an_invalid_state_in_the_engine(
    blob: bytes, read: Callable[[bytecodec.Reader], object]
) -> None:
    with pytest.raises(bytecodec.RecordError):
        read(bytecodec.Reader(blob))
    with pytest.raises(InvalidStateError):
        read(EngineReader(blob))


def test_a_truncated_state_record_is_still_an_invalid_state() -> None:
    game = engine.new_game("klondike", seed=1)
    data = engine.encode_state(game.rules, game.state)
    with pytest.raises(InvalidStateError):
        engine.decode_state(game.rules, data[: len(data) // 2])
