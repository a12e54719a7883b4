"""accordion/bytecodec.py, the byte codec every record shares, and the engine's reader on top of it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from accordion import bytecodec, engine
from accordion.engine import InvalidStateError
from accordion.engine.fields import Reader as EngineReader


@pytest.mark.parametrize("n", [0, 1, 127, 128, 300, 16383, 16384, 2**63 - 1, 2**64 - 1])
def test_a_varint_reads_back_and_matches_protobufs_form(n: int) -> None:
    from google.protobuf.internal.encoder import _VarintBytes  # protobuf's own encoder

    blob = bytecodec.varint(n)
    assert blob == _VarintBytes(n)
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
