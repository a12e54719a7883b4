"""Shape checks on requests, before any store or engine call: INVALID_ARGUMENT with field violations.

Only what a message's shape can tell (ids, lengths, presence); whether a move or an option
is allowed is the engine's to say.
"""

from __future__ import annotations

from accordion.v1 import accordion_pb2 as pb

from . import auth, codec, errors

MAX_REQUEST_ID = 128
MAX_OPTIONS = 32
MAX_TEXT = 200  # variant names, option names and values, card texts
MAX_DEAL = 2 * 52  # two decks at most (Push Pin)
MAX_DEAL_CODE = 64  # a deal code as typed: 16 characters, dashes and spaces allowed

Problems = list[tuple[str, str]]


def raise_if(problems: Problems) -> None:
    if problems:
        raise errors.invalid_request(problems)


def game_id(value: str) -> Problems:
    if not value:
        return [("game_id", "required")]
    if not auth.GAME_ID_RE.fullmatch(value):
        return [("game_id", "not a game id (22 URL-safe characters)")]
    return []


def request_id(value: str) -> Problems:
    if len(value) > MAX_REQUEST_ID:
        return [("request_id", f"at most {MAX_REQUEST_ID} characters")]
    if value != value.strip() or not value.isprintable():
        return [("request_id", "printable characters without surrounding spaces")]
    return []


def expected_version(request: pb.ApplyMoveRequest | pb.UndoRequest) -> Problems:
    if request.HasField("expected_version") and request.expected_version < 1:
        return [("expected_version", "versions start at 1")]
    return []


def text(field: str, value: str, *, required: bool = False) -> Problems:
    if required and not value.strip():
        return [(field, "required")]
    if len(value) > MAX_TEXT:
        return [(field, f"at most {MAX_TEXT} characters")]
    return []


def new_game(request: pb.NewGameRequest) -> Problems:
    from_code = request.WhichOneof("start") == "deal_code"
    # (From a deal code the variant is the code's: it may be left out.)
    out = text("variant", request.variant, required=not from_code) + request_id(request.request_id)
    if from_code:
        out += text("deal_code", request.deal_code, required=True)
        if len(request.deal_code) > MAX_DEAL_CODE:
            out.append(("deal_code", f"at most {MAX_DEAL_CODE} characters"))
        if request.winnable_only:
            out.append(("winnable_only", "not with a deal code: the deal is already chosen"))
    if len(request.options) > MAX_OPTIONS:
        out.append(("options", f"at most {MAX_OPTIONS} options"))
    for name, value in sorted(request.options.items()):
        out += text(f"options[{name!r}]", name, required=True) + text(f"options[{name!r}]", value)
    if request.winnable_only and request.WhichOneof("start") == "deal":
        out.append(("winnable_only", "not with an explicit deal: the deal is already chosen"))
    if request.WhichOneof("start") == "deal":
        cards = request.deal.cards
        if not cards:
            out.append(("deal.cards", "an explicit deal lists its cards"))
        elif len(cards) > MAX_DEAL:
            out.append(("deal.cards", f"at most {MAX_DEAL} cards"))
        out += [p for i, c in enumerate(cards) for p in text(f"deal.cards[{i}]", c, required=True)]
    return out


def game_request(
    request: pb.GetGameRequest | pb.LegalMovesRequest | pb.ScoreRequest | pb.HintRequest,
) -> Problems:
    """The checks every read of one game shares."""
    return game_id(request.game_id)


def apply_move(request: pb.ApplyMoveRequest) -> Problems:
    out = game_id(request.game_id) + request_id(request.request_id) + expected_version(request)
    if not request.HasField("move"):
        return out + [("move", "required")]
    return out + codec.move_fields_problems(request.move)


def undo(request: pb.UndoRequest) -> Problems:
    return game_id(request.game_id) + request_id(request.request_id) + expected_version(request)


def solve(request: pb.SolveRequest) -> Problems:
    out = game_id(request.game_id)
    if request.max_nodes < 0:
        out.append(("max_nodes", "a number of positions, 0 or more (0: the server's limit)"))
    if request.max_millis < 0:
        out.append(("max_millis", "milliseconds, 0 or more (0: the server's limit)"))
    return out


def watch(request: pb.WatchGameRequest) -> Problems:
    out = game_id(request.game_id)
    if request.after_version < 0:
        out.append(("after_version", "not negative"))
    return out
