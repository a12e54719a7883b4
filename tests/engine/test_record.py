"""The binary state record and the state string are driven by each game's field declarations,
and write exactly the bytes the service stored before the declarations existed.

``frozen_encode``/``frozen_decode`` are a frozen copy of the service's record functions as
they were before (api/codec.py ``_encode_state``/``_decode_state``), reading the extras by
name with their old defaults: every game's record must be byte-identical to theirs, and
records written by them must load.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from accordion.engine import (
    CARDS,
    COUNTS,
    PILES,
    Field,
    Game,
    InvalidStateError,
    all_variants,
    core,
    decode_state,
    encode_state,
    new_game,
)
from accordion.engine.core import Rules, Variant, register
from accordion.engine.fields import Reader, State, fields_of
from accordion.engine.games.accordion import StackingRules

# --- the frozen copy of the record as it was -------------------------------------------------

_OLD_DEFAULTS: dict[str, Any] = {"rng": 0, "score": 0, "redeals": 0, "goal": -1, "marks": ()}


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _zigzag(n: int) -> int:
    return n * 2 if n >= 0 else -n * 2 - 1


def _unzigzag(n: int) -> int:
    return n >> 1 if not n & 1 else -(n >> 1) - 1


def frozen_encode(state: State) -> bytes:
    extra = {k: getattr(state, k, d) for k, d in _OLD_DEFAULTS.items()}
    row = b"".join(bytes((p[0] | 0x80, *p[1:])) for p in state.row)
    out = bytearray(_varint(len(row)))
    out += row
    out += _varint(len(state.stock))
    out += bytes(state.stock)
    if extra["rng"]:
        out += b"\x01" + extra["rng"].to_bytes(8, "little")
    if extra["score"]:
        out += b"\x02" + _varint(_zigzag(extra["score"]))
    if extra["redeals"]:
        out += b"\x03" + _varint(extra["redeals"])
    if extra["goal"] >= 0:
        out += bytes((4, extra["goal"]))
    if extra["marks"]:
        out += b"\x05" + _varint(len(extra["marks"]))
        for mark in extra["marks"]:
            out += _varint(len(mark))
            for card, h in mark:
                out += bytes((card,)) + _varint(_zigzag(h))
    return bytes(out)


def frozen_decode(data: bytes) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], dict[str, Any]]:
    r = Reader(data)
    n = r.varint()
    cards = r.take(n)
    row: list[tuple[int, ...]] = []
    start = 0
    for i in range(1, n + 1):
        if i == n or cards[i] & 0x80:
            row.append((cards[start] & 0x7F, *cards[start + 1 : i]))
            start = i
    stock = tuple(r.take(r.varint()))
    fields: dict[str, Any] = {}
    while not r.at_end():
        tag = r.byte()
        if tag == 1:
            fields["rng"] = int.from_bytes(r.take(8), "little")
        elif tag == 2:
            fields["score"] = _unzigzag(r.varint())
        elif tag == 3:
            fields["redeals"] = r.varint()
        elif tag == 4:
            fields["goal"] = r.byte()
        elif tag == 5:
            fields["marks"] = tuple(
                tuple((r.byte(), _unzigzag(r.varint())) for _ in range(r.varint())) for _ in range(r.varint())
            )
        else:
            raise ValueError(f"unknown state field {tag}")
    return tuple(row), stock, fields


# --- random positions of every variant ---------------------------------------------------------


def random_positions(variant: Variant, games: int, seed: int) -> list[Game]:
    """Positions along random games (moves, and undos now and then), starting from seeded deals."""
    rng = random.Random(seed)
    out: list[Game] = []
    for _ in range(games):
        game = new_game(variant, seed=rng.getrandbits(64))
        out.append(Game.from_state_string(game.state_string()))
        for _ in range(rng.randint(0, 60)):
            legal = game.legal_moves()
            if not legal:
                break
            if game.can_undo() and rng.random() < 0.1:
                game.undo()
            else:
                game.play(rng.choice(legal))
            out.append(Game.from_state_string(game.state_string()))
    return out


VARIANTS = sorted(all_variants(), key=lambda v: v.id)
# The games that had records before the declarations (tableau games came after: their records
# round-trip in test_tableau_hidden.py).
OLD_VARIANTS = [v for v in VARIANTS if v.rules.family != "tableau"]


def test_every_variant_is_covered() -> None:
    assert len(VARIANTS) >= 15


@pytest.mark.parametrize("variant", OLD_VARIANTS, ids=lambda v: v.id)
def test_record_is_byte_identical_to_the_frozen_codec(variant: Variant) -> None:
    extras_seen: set[str] = set()
    for game in random_positions(variant, games=6, seed=hash(variant.id) & 0xFFFF):
        rules, state = game.rules, game.state
        data = encode_state(rules, state)
        assert data == frozen_encode(state)
        # A record written by the old code loads to the same position, of the game's own state type.
        back = decode_state(rules, frozen_encode(state))
        assert back == state and type(back) is type(state) is rules.state_type
        # And the old decoder reads the new record as the same fields.
        row, stock, fields = frozen_decode(data)
        assert (row, stock) == (state.row, state.stock)
        for f in rules.fields:
            assert fields.get(f.name, f.default) == f.get(state)
        extras_seen.update(fields)
    declared = {f.name for f in variant.rules.fields}
    # Every declared field was exercised at a non-default value by some position ...
    assert declared <= extras_seen | ({"redeals"} if variant.id == "french" else set())
    # ... and none that the game does not declare was written.
    assert extras_seen <= declared


def test_french_after_its_redeal_has_both_fields() -> None:
    """French's redeals field needs a stuck game: play first moves until the redeal, then take it."""
    for seed in range(40):
        game = new_game("french", seed=seed)
        while game.legal_moves() and game.legal_texts() != ["redeal"]:
            game.play(game.legal_moves()[0])
        if game.legal_texts() == ["redeal"]:
            game.play("redeal")
            data = encode_state(game.rules, game.state)
            assert data == frozen_encode(game.state) and b"\x03\x01" in data
            assert decode_state(game.rules, data) == game.state
            return
    pytest.fail("no French game reached its redeal in 40 seeds")


_REST = "5S6S7S8S9STSJSQSAH2H3H4H5H6H7H8H9HTHJHQHKHAD2D3D4D5D6D7D8D9DTDJDQDKDAC2C3C4C5C6C7C8C9CTCJCQCKC"
GOLDEN = [
    # (state string, its record as the service wrote it before the declarations: golden bytes)
    ("french 5S/9H/JD/3C/7S - rng=0000000000000001 redeals=1", "058495a4a986000101000000000000000301"),
    (
        "accordions-revenge AS2S3S4S5S6S8S9STSJSQSKSAH2H3H4H5H6H8H9HTHJHQHKHAD2D3D4D5D6D7D8D9DTDJDQDKDAC2C3"
        "C4C5C6C7C8C9CTCJCQCKC7S/7H - goal=7H",
        "348001020304050708090a0b0c0d0e0f1011121415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031"
        "32330693000413",
    ),
    (
        "cribbage-solitaire ASKS/2S 3S4S" + _REST + " score=5 marks=AS1.KS1;-",
        "03800c813102030405060708090a0b0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e"
        "2f30313233020a05020200020c0200",
    ),
    (
        "cribbage-solitaire AS/2SKS 3S4S" + _REST + " score=-3 marks=-;AS1.2S1",
        "0380810c3102030405060708090a0b0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e"
        "2f3031323302050502000200020102",
    ),
]


@pytest.mark.parametrize("text,hexdata", GOLDEN)
def test_golden_records(text: str, hexdata: str) -> None:
    game = Game.from_state_string(text)
    assert game.state_string() == text  # the text form is unchanged too
    assert encode_state(game.rules, game.state).hex() == hexdata
    assert decode_state(game.rules, bytes.fromhex(hexdata)) == game.state


def test_state_strings_are_unchanged() -> None:
    """The text form is driven by the declarations too; these are strings the old code wrote."""
    for text in (
        "french 5S/9H/JD/3C/7S - rng=0000000000000001 redeals=1",
        "french 5S/5D - rng=0000000000000000",
        *(text for text, _ in GOLDEN),
    ):
        assert Game.from_state_string(text).state_string() == text
    # What a player sees leaves the generator out (it tells the next shuffle).
    hidden = Game.from_state_string("french 5S/9H/JD/3C/7S - rng=0000000000000001 redeals=1")
    assert hidden.state_string(hide_stock=True) == "french 5S/9H/JD/3C/7S #0 redeals=1"


def test_a_field_the_game_does_not_declare_is_refused() -> None:
    with pytest.raises(InvalidStateError, match="unknown field 'goal'"):
        Game.from_state_string(GOLDEN[1][0].replace("accordions-revenge", "accordion"))
    accordion = new_game("accordion", seed=1)
    revenge = new_game("accordions-revenge", seed=1)
    record = encode_state(revenge.rules, revenge.state)
    with pytest.raises(InvalidStateError, match="tag 4"):
        decode_state(accordion.rules, record)
    with pytest.raises(InvalidStateError, match="truncated"):
        decode_state(revenge.rules, record[:-1])
    with pytest.raises(InvalidStateError, match="no state field"):
        accordion.rules.state(((1,),), goal=3)


def test_rules_build_their_own_state_type() -> None:
    french = new_game("french", seed=2)
    assert french.rules.state_type is not State and isinstance(french.state, State)
    assert [f.name for f in fields_of(french.state)] == ["rng", "redeals"]
    assert type(new_game("accordion", seed=2).state) is State
    assert fields_of(new_game("accordion", seed=2).state) == ()


# --- a new game declares its own fields: no shared code changes ------------------------------

FOUNDATIONS = Field("foundations", ((), (), (), ()), PILES, tag=6, show=lambda f: f"{sum(map(len, f))} home")
WASTE = Field("waste", (), CARDS, tag=7)
DOWN = Field("down", (), COUNTS, tag=8)


class _ZonesRules(StackingRules):
    """A test-only game: Accordion that also carries zones, as a tableau game will."""

    fields = (FOUNDATIONS, WASTE, DOWN)


@pytest.fixture
def zones_variant() -> Iterator[Variant]:
    """The test game, registered for the test only (other tests list every variant)."""
    variant = register(
        Variant(id="test-zones", name="Test zones", rules=_ZonesRules, description="test only")
    )
    try:
        yield variant
    finally:
        core._REGISTRY.pop(variant.id)
        core._BY_NAME.pop(core.normalize_name(variant.id))  # (its name normalizes to the same key)


def test_a_new_game_declares_zones_as_fields(zones_variant: Variant) -> None:
    game = new_game(zones_variant, seed=9)
    state = DOWN.set(WASTE.set(FOUNDATIONS.set(game.state, ((0, 1), (), (13,), ())), (5, 6)), (0, 1, 2))
    rules: Rules = game.rules
    text_game = Game(game.variant, rules, 0, None, state)
    text = text_game.state_string()
    assert text.endswith("foundations=AS2S/-/AH/- waste=6S7S down=0.1.2")
    assert Game.from_state_string(text).state == state
    data = encode_state(rules, state)
    assert decode_state(rules, data) == state
    assert data.endswith(bytes((8, 3, 0, 1, 2)))
    assert rules.summary(state) == ["3 home"]
    # At their defaults the fields are left out of both forms.
    assert Game.from_state_string(game.state_string()).state == game.state
    assert "foundations" not in game.state_string()
    assert encode_state(rules, game.state) == encode_state(new_game("accordion", seed=9).rules, game.state)
