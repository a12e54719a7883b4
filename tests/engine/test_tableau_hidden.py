"""Hidden information in tableau games: nothing a player is shown names a face-down card or
tells the stock's order, unless the game was dealt ``open``; and the masks round-trip."""

from __future__ import annotations

import random
import re

import pytest

from accordion.engine import EngineError, Game, all_variants, card_text, new_game
from accordion.engine.cards import card_code, parse_card
from accordion.engine.hint import suggest
from accordion.engine.record import decode_state, encode_state
from accordion.engine.rng import SplitMix64
from accordion.engine.tableau import DOWN, TABLEAU, TableauRules

HIDING = sorted(
    v.id
    for v in all_variants()
    if issubclass(v.rules, TableauRules) and any(o.name == "open" for o in v.options)
)
TABLEAU_GAMES = sorted(v.id for v in all_variants() if issubclass(v.rules, TableauRules))
_CARD_RE = re.compile(r"(10|[2-9AJQKT])([SHDC♠♥♦♣])")


def hidden_cards(game: Game) -> set[int]:
    """The cards a player may not see now: face-down tableau cards and the stock; in a two-deck
    game (Emperor, Spider) only those with no copy in sight, as a text naming a card cannot
    tell which copy it means."""
    state = game.state
    down = {c for pile, n in zip(TABLEAU.get(state), DOWN.get(state)) for c in pile[:n]}
    seen = {c for zone in game.zones() for pile in zone.piles for c in pile.cards}
    return (down | set(state.stock)) - seen


def cards_named(text: str) -> set[int]:
    return {parse_card(m.group(0)) for m in _CARD_RE.finditer(text)}


def shown_texts(game: Game) -> list[str]:
    """Everything a player is shown of the game now (no error message: see below)."""
    view = game.view()
    out = [
        game.state_string(hide_stock=True),
        game.render(True),
        game.render(False),
        view.text,
        *view.legal_moves,
        *view.extras,
        repr(game),
    ]
    for zone in game.zones():
        for pile in zone.piles:
            assert not pile.face_down_cards  # never named in a game not dealt open
            out.append(" ".join(card_code(c) for c in pile.cards))
    hint = suggest(game)
    if hint is not None:
        out.append(game.move_text(hint))
    return out


# The card parser's fixed advice names example cards whatever the position: not a leak.
EXAMPLES = "e.g. 8D, 8♦, 10H or TH"
PROBES = ("1>1", "1>2", "2>1", "w>1", "w>f", "f1>1", "1>f", "9>1", "x1,2", "x1,9", "3>7 x4", "zz")


def error_texts(game: Game) -> list[str]:
    """The messages of moves refused now (none of them names a card)."""
    out = []
    for probe in PROBES:
        try:
            game.parse_move(probe)
        except EngineError as exc:
            out.append(str(exc).replace(EXAMPLES, "e.g. <cards>"))
    return out


@pytest.mark.parametrize("variant", HIDING)
@pytest.mark.parametrize("seed", [1, 7, 42])
def test_nothing_shown_names_a_hidden_card(variant: str, seed: int) -> None:
    game = new_game(variant, seed=seed)
    rnd = random.Random(seed)
    for _ in range(40):
        hidden = hidden_cards(game)
        assert hidden  # the probe means something only while cards are hidden
        for text in shown_texts(game) + error_texts(game):
            assert not cards_named(text) & hidden, text
        masked = game.state_string(hide_stock=True)
        assert masked.count("??") == sum(DOWN.get(game.state))
        legal = game.legal_moves()
        if not legal:
            break
        game.play(rnd.choice(legal))


@pytest.mark.parametrize("variant", HIDING)
def test_naming_a_face_down_card_answers_as_naming_any_hidden_card(variant: str) -> None:
    game = new_game(variant, seed=3)
    answers = set()
    for card in hidden_cards(game):
        for form in ("{}>1", "x{},1"):
            try:
                game.parse_move(form.format(card_text(card)))
            except EngineError as exc:
                # (the card as typed, and as the words write it: 10♠)
                answers.add(
                    str(exc).replace(card_text(card), "<card>").replace(card_text(card, True), "<card>")
                )
    assert len(answers) <= 2  # one answer per form, whichever hidden card is named


@pytest.mark.parametrize("variant", HIDING)
def test_open_games_show_every_card(variant: str) -> None:
    game = new_game(variant, {"open": True}, seed=5)
    shown = set()
    for zone in game.zones():
        for pile in zone.piles:
            shown |= set(pile.cards) | set(pile.face_down_cards)
    assert sorted(shown) == sorted(set(game.rules.deck()))
    assert not game.hides_anything()
    assert "??" not in game.state_string(hide_stock=True)
    assert new_game(variant, seed=5).hides_anything()


@pytest.mark.parametrize("variant", HIDING)
@pytest.mark.parametrize("seed", [2, 11, 99])
def test_deals_differing_only_in_hidden_cards_look_and_hint_the_same(variant: str, seed: int) -> None:
    order = new_game(variant, seed=0).rules.order_deal(SplitMix64(seed))
    first = new_game(variant, deal=order)
    # Where the deal's hidden cards are: shuffle them among themselves.
    hidden = hidden_cards(first)
    places = [i for i, c in enumerate(order) if c in hidden]
    cards = [order[i] for i in places]
    random.Random(seed).shuffle(cards)
    other = list(order)
    for i, c in zip(places, cards):
        other[i] = c
    second = new_game(variant, deal=other)
    assert second.state != first.state
    assert shown_texts(second) == shown_texts(first)
    assert error_texts(second) == error_texts(first)
    assert second.zones() == first.zones()
    assert suggest(second) == suggest(first) is not None


@pytest.mark.parametrize("variant", TABLEAU_GAMES)
def test_state_strings_and_records_round_trip(variant: str) -> None:
    game = new_game(variant, seed=8)
    rnd = random.Random(8)
    for _ in range(30):
        text = game.state_string()
        assert Game.from_state_string(text).state == game.state
        assert decode_state(game.rules, encode_state(game.rules, game.state)) == game.state
        legal = game.legal_moves()
        if not legal:
            break
        game.play(rnd.choice(legal))
    with pytest.raises(EngineError):
        Game.from_state_string(game.state_string(hide_stock=True))


# Every tableau game is searched now (issue 13: tests/solver/test_klondike.py,
# test_streets_wish.py, test_emperor_spider.py). What holds for all of them: a deal that hides
# cards is refused, and its hint comes from what the player sees.
@pytest.mark.parametrize("variant", sorted(HIDING))
def test_the_solver_refuses_hidden_tableau_deals_and_hints_from_what_is_seen(variant: str) -> None:
    from accordion import solver

    game = new_game(variant, seed=4)
    with pytest.raises(solver.HiddenInformationError):
        solver.solve(game)
    hint = solver.hint(game)
    assert hint.source == "heuristic" and hint.move == suggest(game) is not None


# --- the undo option (issue 29) -----------------------------------------------------------------


def test_undo_visible_refuses_exactly_the_moves_that_revealed_a_card() -> None:
    """Every move of a few Klondike and Spider games under undo=visible: taking it back is
    refused exactly when fewer cards were hidden after it than before (a turn-up, a DRAW, a
    DEAL), and refused with the rule named, never a card; undo=all takes everything back."""
    import re

    from accordion.engine import UndoNotAllowedError, new_game

    refused = allowed = 0
    for variant in ("klondike", "spider"):
        for seed in range(3):
            game = new_game(variant, {"undo": "visible"}, seed=seed)
            free = new_game(variant, seed=seed)
            for step in range(40):
                legal = game.legal_moves()
                if not legal:
                    break
                before = game.rules.hidden_cards(game.state)
                move = legal[(7 * step) % len(legal)]
                game.play(move)
                free.play(move)
                revealed = game.rules.hidden_cards(game.state) < before
                if revealed:
                    with pytest.raises(UndoNotAllowedError) as caught:
                        game.undo()
                    assert "undo=visible" in str(caught.value)
                    assert not re.search(r"\b(10|[2-9AJQK])[SHDC♠♥♦♣]", str(caught.value))
                    refused += 1
                else:
                    game.undo()
                    game.play(move)
                    allowed += 1
            while free.can_undo():  # undo=all: any move
                free.undo()
    assert refused > 5 and allowed > 5, (refused, allowed)


def test_undo_none_refuses_every_undo_and_open_deals_hide_nothing() -> None:
    from accordion.engine import UndoNotAllowedError, new_game

    game = new_game("klondike", {"undo": "none"}, seed=1)
    game.play(game.legal_moves()[0])
    with pytest.raises(UndoNotAllowedError, match="undo=none"):
        game.undo()
    opened = new_game("klondike", {"undo": "visible", "open": "true"}, seed=1)
    draw = [m for m in opened.legal_moves() if m.kind.value == "DRAW"][0]
    opened.play(draw)
    opened.undo()  # nothing is hidden in an open game: nothing to protect
