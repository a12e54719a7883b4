"""GetGamePicture over REST: the transcoder serves the google.api.HttpBody raw, as an SVG image a
chat bot can post, with the same token rules as every other read of a game."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import grpc
from google.api.httpbody_pb2 import HttpBody

from accordion.v1 import accordion_pb2 as pb

from .conftest import Rest, RestStack


def test_the_picture_is_an_svg_image(rest: Rest) -> None:
    game = rest.new_game("accordion-stock", seed=11)
    reply = rest.get(f"/v1/games/{game['id']}/picture")
    assert reply.status == 200, reply.text
    assert reply.headers["content-type"] == "image/svg+xml"
    root = ET.fromstring(reply.text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert f"stock: {game['stockSize']} cards" in reply.text
    tops = [p["cards"][-1]["text"] for p in game["piles"]]
    assert all(f'data-card="{top}"' in reply.text for top in tops)
    # A move shows in the next picture.
    move = game["legalMoves"][0]
    assert rest.post(f"/v1/games/{game['id']}/moves", {"move": {"notation": move["notation"]}}).status == 200
    after = rest.get(f"/v1/games/{game['id']}/picture").text
    assert after != reply.text and "move 1" in after


def test_the_picture_needs_the_token(rest: Rest) -> None:
    gid = rest.new_game()["id"]
    assert rest.get(f"/v1/games/{gid}/picture", token="").status == 401
    assert rest.get(f"/v1/games/{gid}/picture", token="wrong-token").status in (403, 404)


def test_the_picture_over_grpc(rest_stack: RestStack, rest: Rest) -> None:
    gid = rest.new_game()["id"]
    with grpc.insecure_channel(rest_stack.grpc_addr) as channel:
        call = channel.unary_unary(
            "/accordion.v1.AccordionService/GetGamePicture",
            request_serializer=pb.GetGamePictureRequest.SerializeToString,
            response_deserializer=HttpBody.FromString,
        )
        body = call(
            pb.GetGamePictureRequest(game_id=gid),
            metadata=(("authorization", f"Bearer {rest.token}"),),
            timeout=10,
        )
    assert body.content_type == "image/svg+xml"
    ET.fromstring(body.data)
