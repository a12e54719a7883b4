"""What the operations tests share: a real ``accordion-server`` process with a metrics port,
a scrape of its /metrics, and a game played to its end over a real gRPC channel."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
from prometheus_client.parser import text_string_to_metric_families

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from redis_server import free_port
from server_launcher import ServerProcess, launch

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@dataclass
class Server:
    process: ServerProcess
    metrics_port: int

    @property
    def addr(self) -> str:
        return self.process.addr

    def stdout_lines(self) -> list[str]:
        return self.process.out_path.read_text(errors="replace").splitlines()

    def stderr_lines(self) -> list[str]:
        return self.process.err_path.read_text(errors="replace").splitlines()


@contextmanager
def running_server(workdir: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    """``accordion-server --metrics-port <free> *args`` (tests/server_launcher.py) until the
    block ends; then SIGTERM (and SIGKILL if it lingers)."""
    metrics_port = free_port()
    process = launch(workdir, "--metrics-port", str(metrics_port), *args, env=env)  # START_TIMEOUT
    try:
        yield Server(process, metrics_port)
    finally:
        try:
            process.terminate(20)
        finally:
            process.close()


def http_get(port: int, path: str) -> tuple[int, str]:
    """The status and body of GET http://127.0.0.1:port/path (an HTTP error's too)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as reply:
            return int(reply.status), reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def scrape(port: int) -> Samples:
    """Every sample of the server's /metrics: (name, sorted labels) → value."""
    status, text = http_get(port, "/metrics")
    assert status == 200, text
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels`` (0 when there are none)."""
    wanted = set(labels.items())
    return sum(v for (n, found), v in samples.items() if n == name and wanted <= set(found))


@dataclass
class Played:
    moves: int
    undos: int
    endings: list[str]  # the status of each end reached ("WON", "LOST")
    reopened: list[str]


def play_to_end(addr: str, variant: str = "accordion", seed: int = 7) -> Played:
    """Deal one game; play the first legal move until the game ends; undo the ending move
    (reopening it) and play to the end again. Everything over one real gRPC channel."""
    with grpc.insecure_channel(addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        dealt = stub.NewGame(pb.NewGameRequest(variant=variant, seed=seed), timeout=10)
        auth = (("authorization", f"Bearer {dealt.token}"),)
        game, played = dealt.game, Played(0, 0, [], [])
        for round_ in range(2):
            while game.status == pb.GAME_STATUS_IN_PROGRESS:
                move = pb.Move(notation=game.legal_moves[0].notation)
                request = pb.ApplyMoveRequest(game_id=game.id, move=move)
                game = stub.ApplyMove(request, metadata=auth, timeout=10).game
                played.moves += 1
            played.endings.append(pb.GameStatus.Name(game.status).removeprefix("GAME_STATUS_"))
            if round_ == 0:
                game = stub.Undo(pb.UndoRequest(game_id=game.id), metadata=auth, timeout=10).game
                played.undos += 1
                played.reopened.append(played.endings[-1])
                assert game.status == pb.GAME_STATUS_IN_PROGRESS
        return played
