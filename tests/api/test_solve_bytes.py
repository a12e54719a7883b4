"""A solved position's Solve reply is written once and served as bytes (issue 28, item 3).

``wire.solve_reply`` must be exactly what protobuf writes for the whole ``SolveResponse``, and a
cached Solve must not write the line's notation again (it cost 6–13 ms of the event loop per
call on a Spider line).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accordion import engine, solver
from accordion.api import servicer as servicer_module
from accordion.api import wire
from accordion.api.solving import solution_texts
from accordion.v1 import accordion_pb2 as pb

from .conftest import Running
from .helpers import Client

POSITIONS: list[tuple[str, dict[str, str], int]] = [
    ("accordion", {}, 7),  # WON, a 51-move line
    ("royal-marriage", {}, 3),
    ("french", {}, 0),  # LOST without the redeal (without_redeal set)
]


def fresh_reply(version: int, result: solver.SolveResult, texts: list[str], cached: bool) -> bytes:
    """The reply as the servicer wrote it before: one protobuf message, serialized whole."""
    return pb.SolveResponse(
        version=version,
        outcome=wire.SOLVE_OUTCOMES[result.outcome],
        moves=[wire.encode_move(m, t) for m, t in zip(result.moves, texts, strict=True)],
        nodes=result.nodes,
        millis=round(result.seconds * 1000, 3),
        without_redeal=result.without_redeal,
        cached=cached,
    ).SerializeToString()


@pytest.mark.parametrize(("variant", "options", "seed"), POSITIONS)
def test_the_kept_reply_equals_the_freshly_built_one_byte_for_byte(
    variant: str, options: dict[str, str], seed: int
) -> None:
    game = engine.new_game(variant, options, seed=seed)
    result = solver.solve(game.state, game.rules, max_seconds=20)
    assert not result.unknown
    texts = solution_texts(game, result.moves)
    body = wire.solve_body(result, texts)
    for version in (0, 1, 2, 127, 128, 300, 1 << 40):
        for cached in (False, True):
            assert wire.solve_reply(version, body, cached) == fresh_reply(version, result, texts, cached)


def test_an_unknown_answer_too() -> None:
    result = solver.SolveResult(solver.Outcome.UNKNOWN, (), 12345, 0.2504, "stack-dfs", "c")
    body = wire.solve_body(result, [])
    assert wire.solve_reply(9, body, False) == fresh_reply(9, result, [], False)


async def test_a_cached_solve_writes_no_notation_again(
    served: Running, connect: Callable[[str], Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[int] = []

    def counting(game: engine.Game, moves: tuple[engine.Move, ...]) -> list[str]:
        written.append(len(moves))
        return solution_texts(game, moves)

    monkeypatch.setattr(servicer_module, "solution_texts", counting)
    client = connect(served.addr)
    game = (await client.new_game("accordion", seed=7)).game
    replies: list[Any] = [
        await client.call("Solve", pb.SolveRequest(game_id=game.id), timeout=30) for _ in range(3)
    ]
    assert [r.cached for r in replies] == [False, True, True]
    assert written == [51], f"the line's notation was written {len(written)} times"
    first = replies[0]
    for again in replies[1:]:
        assert again.version == first.version == game.version and list(again.moves) == list(first.moves)
        assert (again.outcome, again.nodes, again.millis) == (first.outcome, first.nodes, first.millis)
