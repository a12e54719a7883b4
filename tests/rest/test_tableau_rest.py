"""A tableau game over REST (Envoy's transcoder in front of the real server): zones in JSON,
structured MOVE and DRAW moves with zone names, to_pile 0 to the foundations, shape errors as
400 with field violations."""

from __future__ import annotations

from tests.api.tableau_deals import klondike_win

from .conftest import Rest


def _zone(game: dict, kind: str) -> dict:  # type: ignore[type-arg]
    return [z for z in game["zones"] if z["kind"] == kind][0]


def test_a_klondike_game_over_rest(rest: Rest) -> None:
    deal = klondike_win(1)
    reply = rest.post("/v1/games", {"variant": "Solitaire", "deal": {"cards": deal.texts}})
    assert reply.status == 200, reply.text
    body = reply.json()
    rest.token, game = body["token"], body["game"]
    assert game["variant"] == "klondike-draw-one" and game.get("seed") is None
    tableau = _zone(game, "ZONE_KIND_TABLEAU")["piles"]
    assert [p.get("faceDown", 0) for p in tableau] == list(range(7))
    assert all(len(p["cards"]) == 1 and not p.get("faceDownCards") for p in tableau)
    assert _zone(game, "ZONE_KIND_STOCK")["piles"][0]["faceDown"] == 24 and game["stockSize"] == 24
    moves = f"/v1/games/{game['id']}/moves"
    drawn = rest.post(moves, {"move": {"kind": "MOVE_KIND_DRAW"}, "expectedVersion": "1"})
    assert drawn.status == 200, drawn.text
    assert _zone(drawn.json()["game"], "ZONE_KIND_WASTE")["piles"][0]["cards"][0]["text"] == "A♠"
    up = rest.post(
        moves,
        {
            "move": {
                "kind": "MOVE_KIND_MOVE",
                "fromZone": "ZONE_KIND_WASTE",
                "fromPile": 1,
                "toZone": "ZONE_KIND_FOUNDATION",
                "toPile": 0,
            }
        },
    )
    assert up.status == 200, up.text
    played = up.json()
    assert (
        played["move"]["notation"] == "w>f" and played["move"]["toPile"] == 1 and played["move"]["count"] == 1
    )
    assert _zone(played["game"], "ZONE_KIND_FOUNDATION")["piles"][0]["cards"][0]["text"] == "A♠"
    bad = rest.post(
        moves,
        {
            "move": {
                "kind": "MOVE_KIND_MOVE",
                "fromZone": "ZONE_KIND_TABLEAU",
                "fromPile": 1,
                "toZone": "ZONE_KIND_TABLEAU",
                "toPile": 2,
                "count": 500,
            }
        },
    )
    assert bad.status == 400, bad.text
    assert "move.count" in bad.text
    assert rest.get(f"/v1/games/{game['id']}").json()["game"]["version"] == "3"
