"""The script of tests/security/test_hidden_information.py: a player's every call on one deal,
over gRPC and REST (Envoy), and the transcript of everything the service said, ids and tokens
replaced so that two deals' transcripts compare byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import grpc
from google.api.httpbody_pb2 import HttpBody
from google.protobuf import text_format
from google.protobuf.message import Message
from grpc_status import rpc_status

from accordion import engine
from accordion.engine.cards import card_text
from accordion.engine.tableau import DOWN, TABLEAU
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from tests.rest.conftest import Rest
from tests.security.hidden_truth import _games_in, hidden_cards, visible_cards

MOVES_PLAYED = 8


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
