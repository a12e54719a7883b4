"""Hidden information is sacred: a face-down card, or the stock's order, never leaves the server
(spec: "The other games of seed 004", face-down cards; unless the game was dealt ``open``).

For each variant with face-down cards, an explicit deal is played over real gRPC against a
real ``accordion-server`` process (the embedded store, and a real redis-server), with Envoy's
REST face in front of it: every RPC a player has (NewGame, GetGame, LegalMoves, Score, Hint,
Solve, GetGamePicture, ApplyMove with legal and illegal moves, Undo, WatchGame), and the same
reads over REST. Everything the service says (replies, events, pictures, error messages and
details) and everything it logs is kept; then:

* every Game message shows exactly the zones the deal has visible at its version (computed
  here from the engine's full position), no face-down card named, tableau piles face up only;
* no card hidden throughout (face down, or in the stock, at every version played) appears in
  any of it by name ("7H", "7♥", "TH", "7 of hearts") — the state strings checked card by card;
* the same script on a second deal, which differs only in where those hidden cards lie, gets
  the same answers, byte for byte (ids and tokens aside): nothing said depends on them (the
  Hint heuristic and every error included);
* and with ``open=true`` the same checks see the hidden cards, so they can fail.

Sharing (issue 29) is part of the script: ShareGame; every read again with the watch token
(gRPC and REST) and every call it is refused; NewGame from the deal code (its game checked as
the first position) and the code dealt ``open`` (refused). The watch token, the deal code and
the second game's id and token are replaced like the first's, so the twins compare byte for byte.
"""

from __future__ import annotations

import json
import random
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from google.api.httpbody_pb2 import HttpBody
from google.protobuf import text_format
from google.protobuf.message import Message
from grpc_status import rpc_status

from accordion import engine
from accordion.engine.cards import card_code, card_text
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from redis_server import RedisServer
from server_launcher import ServerProcess
from tests.api.tableau_deals import HIDDEN_VARIANTS
from tests.rest.conftest import EnvoyProcess, Rest, start_envoy, start_server

RANK_NAMES = (
    "ace",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
)
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
MOVES_PLAYED = 8


# --- the truth, from the engine's full position ----------------------------------------------


def hidden_cards(state: engine.State) -> list[int]:
    """Face-down tableau cards and the stock."""
    return [c for pile, n in zip(TABLEAU.get(state), DOWN.get(state)) for c in pile[:n]] + list(state.stock)


def visible_cards(state: engine.State) -> list[int]:
    out = [c for pile, n in zip(TABLEAU.get(state), DOWN.get(state)) for c in pile[n:]]
    return out + [c for pile in FOUNDATIONS.get(state) for c in pile] + list(WASTE.get(state))


def _card(c: int) -> pb.Card:
    return pb.Card(rank=c % 13 + 1, suit=pb.Suit.ValueType(c // 13 + 1), text=card_text(c, symbols=True))


def check_game_message(game: pb.Game, state: engine.State, open_: bool) -> None:
    """The message shows exactly what the position has visible (all of it when open)."""
    check_state_string(game.state, state, open_)
    tableau, down = TABLEAU.get(state), DOWN.get(state)
    by_kind = {z.kind: z for z in game.zones}
    expect_tableau = [
        pb.ZonePile(
            face_down=n,
            cards=[_card(c) for c in pile[n:]],
            face_down_cards=[_card(c) for c in pile[:n]] if open_ else [],
        )
        for pile, n in zip(tableau, down)
    ]
    assert list(by_kind[pb.ZONE_KIND_TABLEAU].piles) == expect_tableau
    assert [list(p.cards) for p in game.piles] == [list(p.cards) for p in expect_tableau]
    assert [list(p.cards) for p in by_kind[pb.ZONE_KIND_FOUNDATION].piles] == [
        [_card(c) for c in pile] for pile in FOUNDATIONS.get(state)
    ]
    if pb.ZONE_KIND_STOCK in by_kind:
        (stock,) = by_kind[pb.ZONE_KIND_STOCK].piles
        assert stock.face_down == len(state.stock) == game.stock_size and not stock.cards
        assert list(stock.face_down_cards) == ([_card(c) for c in state.stock] if open_ else [])
    else:
        assert not state.stock
    if pb.ZONE_KIND_WASTE in by_kind:
        (waste,) = by_kind[pb.ZONE_KIND_WASTE].piles
        assert list(waste.cards) == [_card(c) for c in WASTE.get(state)] and not waste.face_down
    # Hidden cards (or open, with a stock still to come): no seed; open with nothing to come: shown.
    assert game.HasField("seed") == open_


def check_state_string(text: str, state: engine.State, open_: bool) -> None:
    """The player's state string names only visible cards (its card codes are two characters)."""
    shown: Counter[str] = Counter()
    for token in re.split(r"[^0-9A-Z?]+", text):
        if len(token) >= 2 and len(token) % 2 == 0 and re.fullmatch(r"(?:[2-9TJQKA][SHDC]|\?\?)+", token):
            shown.update(token[i : i + 2] for i in range(0, len(token), 2) if token[i] != "?")
    may_show = Counter(card_code(c) for c in (visible_cards(state) + (hidden_cards(state) if open_ else [])))
    assert not shown - may_show, f"state string names {shown - may_show}: {text}"


def card_patterns(c: int) -> list[re.Pattern[str]]:
    words = {card_text(c), card_code(c)}
    # Not inside a word, nor inside an id or token (base64url: "-" and "_" too: a game id
    # "AD_Ks75…" names no ace of diamonds).
    out = [re.compile(rf"(?<![0-9A-Za-z_-]){re.escape(w)}(?![0-9A-Za-z_-])") for w in words]
    out.append(re.compile(rf"(?<![0-9]){re.escape(card_text(c, symbols=True))}"))
    rank, suit = c % 13, c // 13
    out.append(
        re.compile(rf"\b(?:{RANK_NAMES[rank]}|{rank + 1}|{card_text(c)[:-1]}) of {SUIT_NAMES[suit]}\b", re.I)
    )
    return out


# --- one script, everything said -------------------------------------------------------------


@dataclass
class Transcript:
    """What the service said, in order (ids and tokens replaced), and the versions it went through."""

    said: list[tuple[str, str]] = field(default_factory=list)
    games: list[pb.Game] = field(default_factory=list)
    states: dict[int, engine.State] = field(default_factory=dict)  # version → the full position
    game_id: str = ""
    token: str = ""
    secrets: list[tuple[str, str]] = field(default_factory=list)  # more (secret, name) to replace
    sent: list[str] = field(default_factory=list)  # texts we sent (echoed in errors)
    rest_states: list[tuple[str, int]] = field(default_factory=list)  # REST's state strings, by version
    tries: list[int] = field(default_factory=list)  # hidden cards named in illegal moves

    def clean(self, text: str) -> str:
        for secret, name in ((self.game_id, "<GAME>"), (self.token, "<TOKEN>"), *self.secrets):
            if secret:
                text = text.replace(secret, name)
        return text

    def reply(self, label: str, msg: Message) -> None:
        self.said.append((label, self.clean(text_format.MessageToString(msg, as_utf8=True))))
        for game in _games_in(msg):
            self.games.append(game)

    def error(self, label: str, exc: grpc.RpcError) -> None:
        status = rpc_status.from_call(exc)  # type: ignore[arg-type]
        details = "" if status is None else text_format.MessageToString(status, as_utf8=True)
        self.said.append((label, self.clean(f"{exc.code()} {exc.details()} {details}")))

    def text(self, label: str, body: str) -> None:
        self.said.append((label, self.clean(body)))


def _games_in(msg: Message) -> Iterator[pb.Game]:
    if isinstance(msg, pb.Game):
        yield msg
    for desc, value in msg.ListFields():
        if desc.message_type is not None:
            items = [value] if isinstance(value, Message) else list(value)
            for item in items:
                if isinstance(item, Message):
                    yield from _games_in(item)


class Player:
    """The script: a player's every call, on one deal, over gRPC and REST."""

    def __init__(
        self,
        grpc_addr: str,
        rest_base: str,
        variant: str,
        options: dict[str, str],
        cards: list[int],
        tries: list[int] | None = None,
    ):
        self.channel = grpc.insecure_channel(grpc_addr)
        self.stub = pb_grpc.AccordionServiceStub(self.channel)
        self.rest = Rest(rest_base)
        self.variant, self.options, self.cards = variant, options, cards
        self.truth = engine.new_game(variant, {k: v for k, v in options.items()}, deal=cards)
        self.t = Transcript()
        state = self.truth.state
        if tries is None:  # two face-down tableau cards and two of the stock (no copy of them visible)
            seen = visible_cards(state)
            down = [
                c for pile, n in zip(TABLEAU.get(state), DOWN.get(state)) for c in pile[:n] if c not in seen
            ]
            tries = down[:2] + [c for c in state.stock if c not in seen][:2]
        self.t.tries = tries
        self.version = 1

    def close(self) -> None:
        self.channel.close()

    def _md(self, token: str = "") -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token or self.t.token}"),)

    def call(self, label: str, method: str, request: Message, token: str = "") -> Message | None:
        try:
            reply = getattr(self.stub, method)(request, metadata=self._md(token), timeout=20)
        except grpc.RpcError as exc:
            self.t.error(label, exc)
            return None
        if isinstance(reply, HttpBody):
            self.t.text(label, reply.data.decode())
        else:
            self.t.reply(label, reply)
        return reply

    def reads(self, label: str) -> pb.Game:
        game_id = self.t.game_id
        got = self.call(f"{label} GetGame", "GetGame", pb.GetGameRequest(game_id=game_id))
        assert isinstance(got, pb.GetGameResponse)
        self.call(f"{label} LegalMoves", "LegalMoves", pb.LegalMovesRequest(game_id=game_id))
        self.call(f"{label} Score", "Score", pb.ScoreRequest(game_id=game_id))
        self.call(f"{label} Hint", "Hint", pb.HintRequest(game_id=game_id))
        self.call(f"{label} Solve", "Solve", pb.SolveRequest(game_id=game_id, max_millis=200))
        self.call(f"{label} Picture", "GetGamePicture", pb.GetGamePictureRequest(game_id=game_id))
        return got.game

    def apply(self, label: str, move: pb.Move) -> pb.ApplyMoveResponse | None:
        if move.notation:
            self.t.sent.append(move.notation)
        reply = self.call(label, "ApplyMove", pb.ApplyMoveRequest(game_id=self.t.game_id, move=move))
        if isinstance(reply, pb.ApplyMoveResponse):
            self.truth.play(self.truth.parse_move(reply.move.notation))
            self.version = reply.game.version
            self.t.states[self.version] = self.truth.state
        return reply if isinstance(reply, pb.ApplyMoveResponse) else None

    def run(self) -> Transcript:
        request = pb.NewGameRequest(
            variant=self.variant,
            options=self.options,
            deal=pb.CardList(cards=[card_text(c) for c in self.cards]),
        )
        dealt = self.stub.NewGame(request, timeout=20)
        self.t.game_id, self.t.token = dealt.game.id, dealt.token
        self.watch_token, self.deal_code = dealt.watch_token, dealt.deal_code
        assert self.watch_token and self.deal_code
        self.t.secrets += [(self.watch_token, "<WATCH>"), (self.deal_code, "<CODE>")]
        self.t.reply("NewGame", dealt)
        self.t.states[1] = self.truth.state
        game = self.reads("start")
        for step in range(MOVES_PLAYED):
            # Illegal tries: naming hidden cards, and taking more cards than are face up.
            state = self.truth.state
            illegal_hidden = [
                c for c in self.t.tries if c in hidden_cards(state) and c not in visible_cards(state)
            ]
            for c in illegal_hidden:
                self.apply(f"{step} name hidden", pb.Move(notation=f"{card_text(c)}>f"))
            for c in illegal_hidden[step % 2 :: 2][:1]:
                self.apply(f"{step} name hidden too", pb.Move(notation=f"{card_text(c, symbols=True)}>1"))
            tableau = [z for z in game.zones if z.kind == pb.ZONE_KIND_TABLEAU][0]
            for i, pile in enumerate(tableau.piles):
                if pile.face_down:
                    self.apply(
                        f"{step} too many",
                        pb.Move(
                            kind=pb.MOVE_KIND_MOVE,
                            from_zone=pb.ZONE_KIND_TABLEAU,
                            to_zone=pb.ZONE_KIND_TABLEAU,
                            from_pile=i + 1,
                            to_pile=(i + 1) % len(tableau.piles) + 1,
                            count=len(pile.cards) + 1,
                        ),
                    )
                    break
            if not game.legal_moves:
                break
            legal = list(game.legal_moves)
            move = legal[(3 * step) % len(legal)]
            played = self.apply(f"{step} move", move)
            assert played is not None
            game = played.game
            if step == 3:
                game = self.undo("undo")
                game = self.undo("undo again")
            if step % 3 == 2:
                game = self.reads(f"after {step}")
        self.watch()
        self.rest_reads()
        self.share()
        return self.t

    def share(self) -> None:
        """ShareGame; the watch token's reads (gRPC, REST) and refusals; the deal code's game."""
        game_id, watch = self.t.game_id, self.watch_token
        self.call("ShareGame", "ShareGame", pb.ShareGameRequest(game_id=game_id))
        self.call("watch GetGame", "GetGame", pb.GetGameRequest(game_id=game_id), token=watch)
        self.call("watch LegalMoves", "LegalMoves", pb.LegalMovesRequest(game_id=game_id), token=watch)
        self.call("watch Score", "Score", pb.ScoreRequest(game_id=game_id), token=watch)
        self.call("watch Picture", "GetGamePicture", pb.GetGamePictureRequest(game_id=game_id), token=watch)
        stream = self.stub.WatchGame(
            pb.WatchGameRequest(game_id=game_id, after_version=0), metadata=self._md(watch), timeout=20
        )
        for item in stream:
            self.t.reply("watch stream", item)
            if item.event.version >= self.version:
                stream.cancel()
                break
        for label, method, request in (
            (
                "watch token ApplyMove refused",
                "ApplyMove",
                pb.ApplyMoveRequest(game_id=game_id, move=pb.Move(notation="d")),
            ),
            ("watch token Undo refused", "Undo", pb.UndoRequest(game_id=game_id)),
            ("watch token Hint refused", "Hint", pb.HintRequest(game_id=game_id)),
            ("watch token Solve refused", "Solve", pb.SolveRequest(game_id=game_id, max_millis=200)),
            (
                "watch token ShareGame refused",
                "ShareGame",
                pb.ShareGameRequest(game_id=game_id, rotate_watch_token=True),
            ),
        ):
            assert self.call(label, method, request, token=watch) is None, f"{label} was not refused"
        self.rest.token = watch
        reply = self.rest.get(f"/v1/games/{game_id}")
        data = json.loads(reply.text)
        self.t.rest_states.append((data["game"].pop("state", ""), int(data["game"]["version"])))
        self.t.text(
            "watch rest game", f"{reply.status} {json.dumps(data, ensure_ascii=False, sort_keys=True)}"
        )
        self.t.text(
            "watch rest move",
            f"{self.rest.post(f'/v1/games/{game_id}/moves', {'move': {'notation': 'd'}}).status}",
        )
        share = self.rest.post(f"/v1/games/{game_id}:share", {}, token=self.t.token)
        self.t.text("rest ShareGame", f"{share.status} {json.dumps(json.loads(share.text), sort_keys=True)}")
        assert share.status == 200 and json.loads(share.text)["watchToken"] == watch
        # The deal code: the same first position, under another id and token; never open.
        coded = self.stub.NewGame(pb.NewGameRequest(deal_code=self.deal_code), timeout=20)
        self.t.secrets += [
            (coded.game.id, "<GAME2>"),
            (coded.token, "<TOKEN2>"),
            (coded.watch_token, "<WATCH2>"),
        ]
        assert coded.deal_code == self.deal_code and coded.game.version == 1
        self.t.reply("NewGame from the code", coded)
        if self.options.get("open") == "true":
            return  # (the code's game is open already)
        try:
            self.stub.NewGame(
                pb.NewGameRequest(deal_code=self.deal_code, options={"open": "true"}), timeout=20
            )
            raise AssertionError("a deal code was dealt open")
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT
            self.t.error("NewGame from the code, open", exc)

    def undo(self, label: str) -> pb.Game:
        reply = self.call(label, "Undo", pb.UndoRequest(game_id=self.t.game_id))
        assert isinstance(reply, pb.UndoResponse)
        self.truth.undo()
        self.version = reply.game.version
        self.t.states[self.version] = self.truth.state
        return reply.game

    def watch(self) -> None:
        stream = self.stub.WatchGame(
            pb.WatchGameRequest(game_id=self.t.game_id, after_version=0), metadata=self._md(), timeout=20
        )
        for item in stream:
            self.t.reply("watch", item)
            if item.event.version >= self.version:
                stream.cancel()
                break

    def rest_reads(self) -> None:
        self.rest.token = self.t.token
        base = f"/v1/games/{self.t.game_id}"
        for label, reply in (
            ("rest game", self.rest.get(base)),
            ("rest legal", self.rest.get(f"{base}/legal-moves")),
            ("rest score", self.rest.get(f"{base}/score")),
            ("rest hint", self.rest.get(f"{base}/hint")),
            ("rest solve", self.rest.post(f"{base}:solve", {"maxMillis": 200})),
            ("rest picture", self.rest.get(f"{base}/picture")),
            (
                "rest illegal",
                self.rest.post(
                    f"{base}/moves",
                    {
                        "move": {
                            "kind": "MOVE_KIND_MOVE",
                            "fromZone": "ZONE_KIND_TABLEAU",
                            "toZone": "ZONE_KIND_FOUNDATION",
                            "fromPile": 2,
                            "count": 9,
                        }
                    },
                ),
            ),
        ):
            body = reply.text
            if reply.headers.get("content-type", "").startswith("application/json"):
                data = json.loads(body)
                games = [data["game"]] if "game" in data else []
                for g in games:  # the state string is checked as in gRPC; keep it out of the text scan
                    self.t.rest_states.append((g.pop("state", ""), int(g["version"])))
                body = json.dumps(data, ensure_ascii=False, sort_keys=True)
            self.t.text(label, f"{reply.status} {body}")


# --- servers -----------------------------------------------------------------------------------


@dataclass
class Stack:
    server: ServerProcess
    envoy: EnvoyProcess

    @property
    def rest_base(self) -> str:
        return f"http://127.0.0.1:{self.envoy.port}"


@pytest.fixture(scope="module", params=["memory", "redis"])
def stack(request: pytest.FixtureRequest) -> Iterator[Stack]:
    with tempfile.TemporaryDirectory(prefix="acc-hidden-") as tmp:
        redis = None
        # The sampled Hint (hidden Klondike) is bounded by positions searched; its time cap
        # could cut one twin's search on a busy machine and not the other's: set it out of reach.
        args: list[str] = ["--hint-max-seconds", "10"]
        if request.param == "redis":
            redis = RedisServer()
            redis.start()
            args += ["--redis-url", redis.url]
        server = start_server(Path(tmp), *args)
        try:
            envoy = start_envoy(int(server.addr.rsplit(":", 1)[1]), Path(tmp))
            try:
                yield Stack(server, envoy)
            finally:
                envoy.close()
        finally:
            server.close()
            if redis is not None:
                redis.close()


def a_deal(variant: str, seed: int) -> list[int]:
    """A shuffled deck of the variant in which the first player has moves to make."""
    rules = engine.find_variant(variant).make_rules()
    for s in range(seed, seed + 200):
        cards = rules.deck()
        random.Random(s).shuffle(cards)
        if len(engine.new_game(variant, deal=cards).legal_moves()) >= 2:
            return cards
    raise AssertionError("no playable deal")


def always_hidden(t: Transcript) -> set[int]:
    """Cards hidden at every version played, with no copy of them ever visible (two decks)."""
    hidden = set.intersection(*(set(hidden_cards(s)) for s in t.states.values()))
    ever_seen = {c for s in t.states.values() for c in visible_cards(s)}
    return hidden - ever_seen


def without_named(t: Transcript, label: str, text: str) -> str:
    """``text`` without our own words: what we sent, and the card we named (an error repeats
    it, in its own form; that it says the same of every hidden card is checked apart)."""
    for sent in t.sent:
        text = text.replace(sent, "<SENT>")
    if "name hidden" in label:
        for c in t.tries:
            for pattern in card_patterns(c):
                text = pattern.sub("<CARD>", text)
    return text


def scan(t: Transcript, extra: str, cards: set[int]) -> list[str]:
    """Every (label, card, excerpt) where a card of ``cards`` is named."""
    texts = [(label, text) for label, text in t.said] + [("server log", extra)]
    found = []
    for label, text in texts:
        text = without_named(t, label, text)
        text = re.sub(r'(?m)^\s*state: ".*"$', "", text)  # state strings: checked card by card
        for c in cards:
            for pattern in card_patterns(c):
                if m := pattern.search(text):
                    found.append(
                        f"{label}: {card_text(c)} in …{text[max(0, m.start() - 40) : m.end() + 40]}…"
                    )
    return found


@pytest.mark.parametrize("variant", HIDDEN_VARIANTS)
def test_no_hidden_card_leaves_the_server(stack: Stack, variant: str) -> None:
    cards = a_deal(variant, 1)
    player = Player(stack.server.addr, stack.rest_base, variant, {}, cards)
    try:
        t = player.run()
    finally:
        player.close()
    assert len(t.states) > 3, "the script played moves"
    assert t.games and t.rest_states
    for game in t.games:
        check_game_message(game, t.states[game.version], open_=False)
    for text, version in t.rest_states:
        check_state_string(text, t.states[version], open_=False)
    secret = always_hidden(t)
    assert len(secret) >= 3, "some cards stayed hidden throughout"
    log = t.clean(stack.server.output())
    leaks = scan(t, log, secret)
    assert not leaks, "\n".join(leaks[:20])
    # Solve is refused while anything is hidden, over gRPC and REST.
    # Naming a face-down card or a stock card gets one answer, whichever card it is.
    assert len(t.tries) >= 2
    for step in range(MOVES_PLAYED):
        named = {without_named(t, label, text) for label, text in t.said if label == f"{step} name hidden"}
        assert len(named) <= 1, named
    solves = [text for label, text in t.said if label.endswith("Solve") or label == "rest solve"]
    # (refused: cards are hidden; or the solver does not play the game at all)
    assert solves and all("HIDDEN_INFORMATION" in text or "SOLVER_UNSUPPORTED" in text for text in solves), (
        solves
    )

    # The same script on a deal where the always-hidden cards lie elsewhere says the same.
    positions = [i for i, c in enumerate(cards) if c in secret]
    moved = [cards[i] for i in positions]
    moved = moved[1:] + moved[:1]  # each to the place of the next
    other = list(cards)
    for i, c in zip(positions, moved, strict=True):
        other[i] = c
    assert other != cards
    twin = Player(stack.server.addr, stack.rest_base, variant, {}, other, tries=t.tries)
    try:
        t2 = twin.run()
    finally:
        twin.close()
    assert [label for label, _ in t2.said] == [label for label, _ in t.said]
    for (label, a), (_, b) in zip(t.said, t2.said, strict=True):
        assert a == b, f"{label} differs between deals that differ only in hidden cards:\n{a}\n---\n{b}"


@pytest.mark.parametrize("variant", HIDDEN_VARIANTS)
def test_an_open_game_shows_the_hidden_cards(stack: Stack, variant: str) -> None:
    """The same checks, with open=true: they find the cards (so the test above can fail)."""
    cards = a_deal(variant, 1)
    player = Player(stack.server.addr, stack.rest_base, variant, {"open": "true"}, cards)
    try:
        t = player.run()
    finally:
        player.close()
    for game in t.games:
        check_game_message(game, t.states[game.version], open_=True)
    secret = always_hidden(t)
    found = scan(t, "", secret)
    named = {line.split(": ", 2)[1].split(" in ")[0] for line in found}
    assert named >= {card_text(c) for c in secret}, "every face-down card is shown in an open game"
