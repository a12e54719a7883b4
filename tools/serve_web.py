"""`make serve-web`: the web page, the REST face and the API docs on one origin,
http://127.0.0.1:8080/, until Ctrl-C or SIGTERM.

* accordion-server (embedded store) on 127.0.0.1:50051;
* Envoy on 127.0.0.1:8080 (deploy/envoy/envoy.yaml): gRPC-Web for the page, REST/JSON, native
  gRPC, and every other path to the static server;
* the static server on 127.0.0.1:8081 (in this process): the built page (clients/web/dist, from
  `npm run build`), Swagger UI at /docs/ and docs/openapi.json at /docs/openapi.json.

CORS is off by default: only pages of this origin may call the API. `--cors-origin URL`
(repeatable) lets pages of another origin call it too: Envoy then answers preflight OPTIONS
requests and adds the CORS headers for those origins (the config is rendered with a CorsPolicy).

    python tools/serve_web.py [--port 8080] [--cors-origin http://localhost:5173]
"""

from __future__ import annotations

import argparse
import http.server
import subprocess
import sys
import tempfile
import threading
from functools import partial
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs here

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/, however this file is loaded (tests/web)
from supervise import Supervisor, executables, refuse_ports_in_use, server_env

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "clients" / "web" / "dist"
OPENAPI = ROOT / "docs" / "openapi.json"
ENVOY_CONFIG = ROOT / "deploy" / "envoy" / "envoy.yaml"
DESCRIPTOR = ROOT / "deploy" / "envoy" / "accordion.pb"
GRPC_PORT, PORT, STATIC_PORT = 50051, 8080, 8081

# The headers a gRPC-Web or REST call from another origin sends, and the ones its page must read.
CORS_ALLOW_HEADERS = "authorization, content-type, x-grpc-web, x-user-agent, grpc-timeout, connect-protocol-version"
CORS_EXPOSE_HEADERS = "grpc-status, grpc-message, grpc-status-details-bin"


def render_config(
    grpc_port: int = GRPC_PORT,
    port: int = PORT,
    static_port: int = STATIC_PORT,
    cors_origins: tuple[str, ...] = (),
    admin_port: int | None = None,
) -> str:
    """deploy/envoy/envoy.yaml with these ports, the descriptor set's absolute path, and a
    CorsPolicy on the virtual host when ``cors_origins`` are given."""
    config: dict[str, Any] = yaml.safe_load(ENVOY_CONFIG.read_text())
    resources = config["static_resources"]
    (listener,) = resources["listeners"]
    listener["address"]["socket_address"]["port_value"] = port
    for chain in listener["filter_chains"]:
        for net in chain["filters"]:
            typed = net["typed_config"]
            for f in typed.get("http_filters", []):
                if f["name"] == "envoy.filters.http.grpc_json_transcoder":
                    f["typed_config"]["proto_descriptor"] = str(DESCRIPTOR)
            for host in typed.get("route_config", {}).get("virtual_hosts", []):
                if cors_origins:
                    host.setdefault("typed_per_filter_config", {})["envoy.filters.http.cors"] = {
                        "@type": "type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy",
                        "allow_origin_string_match": [{"exact": o} for o in cors_origins],
                        "allow_methods": "GET, POST, OPTIONS",
                        "allow_headers": CORS_ALLOW_HEADERS,
                        "expose_headers": CORS_EXPOSE_HEADERS,
                        "max_age": "600",
                    }
    ports = {"accordion_grpc": grpc_port, "web_static": static_port}
    for cluster in resources["clusters"]:
        for locality in cluster["load_assignment"]["endpoints"]:
            for endpoint in locality["lb_endpoints"]:
                endpoint["endpoint"]["address"]["socket_address"]["port_value"] = ports[cluster["name"]]
    if admin_port is not None:
        config["admin"] = {"address": {"socket_address": {"address": "127.0.0.1", "port_value": admin_port}}}
    return str(yaml.safe_dump(config, sort_keys=False))


class StaticHandler(http.server.SimpleHTTPRequestHandler):
    """The built page from clients/web/dist, and the OpenAPI document at /docs/openapi.json
    (read from docs/ on each request, so `make proto` shows without a rebuild)."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.split("?", 1)[0] == "/docs/openapi.json":
            body = OPENAPI.read_bytes()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def end_headers(self) -> None:
        self.send_header("x-content-type-options", "nosniff")
        self.send_header("cache-control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # quiet: the page's URL fragment (game id and token) never reaches a server anyway


def start_static(port: int = STATIC_PORT, dist: Path = DIST) -> http.server.ThreadingHTTPServer:
    """The static server in a daemon thread; ``port`` 0 picks a free one (``server_address``)."""
    if not (dist / "index.html").exists():
        raise SystemExit(f"serve-web: {dist}/index.html is missing: run `cd clients/web && npm run build`")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), partial(StaticHandler, directory=str(dist)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="static", daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=PORT, help="the one origin's port (Envoy)")
    parser.add_argument("--grpc-port", type=int, default=GRPC_PORT)
    parser.add_argument("--static-port", type=int, default=STATIC_PORT)
    parser.add_argument("--cors-origin", action="append", default=[], metavar="URL",
                        help="also allow pages of this origin (e.g. http://localhost:5173); repeatable")
    args = parser.parse_args(argv)
    envoy, server = executables("serve-web")
    ports = (args.grpc_port, args.port, args.static_port)
    refuse_ports_in_use("serve-web", [f"127.0.0.1:{port}" for port in ports])
    static = start_static(args.static_port)
    env = server_env()
    children = Supervisor("serve-web")
    with tempfile.TemporaryDirectory(prefix="serve-web-") as tmp:
        config = Path(tmp) / "envoy.yaml"
        config.write_text(render_config(args.grpc_port, args.port, args.static_port, tuple(args.cors_origin)))
        try:
            children.start([server, "--listen", f"127.0.0.1:{args.grpc_port}"], f"127.0.0.1:{args.grpc_port}",
                           "accordion-server", cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
            children.start([envoy, "-c", str(config), "--disable-hot-restart", "--concurrency", "1",
                            "--log-level", "error"], f"127.0.0.1:{args.port}", "envoy", cwd=ROOT)
            base = f"http://127.0.0.1:{args.port}"
            cors = ", ".join(args.cors_origin) or "off (same origin only)"
            print(f"{base}/\n  play: {base}/   API docs: {base}/docs/   REST: {base}/v1/variants   CORS: {cors}\n"
                  "Stop with Ctrl-C (SIGINT) or SIGTERM.", flush=True)
            children.wait()
        finally:
            children.stop()
            static.shutdown()
    return children.exit_status()


if __name__ == "__main__":
    sys.exit(main())
