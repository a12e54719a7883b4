"""`make serve-web`: the web page, the REST face and the API docs on one origin,
http://127.0.0.1:8080/, until Ctrl-C or SIGTERM.

* accordion-server (embedded store) on 127.0.0.1:50051;
* Envoy on 127.0.0.1:8080 (deploy/envoy/envoy.yaml): gRPC-Web for the page, REST/JSON, native
  gRPC, and every other path to the static server;
* the static server on 127.0.0.1:8081 (in this process, aiohttp on its own event loop): the built
  page (clients/web/dist, from `npm run build`), Swagger UI at /docs/ and docs/openapi.json at
  /docs/openapi.json; every answer with a Content-Security-Policy and the other security
  headers, no directory listings, bad paths 400/404, slow clients timed out (docs/web.md).

CORS is off by default: only pages of this origin may call the API. `--cors-origin URL`
(repeatable) lets pages of another origin call it too: Envoy then answers preflight OPTIONS
requests and adds the CORS headers for those origins (the config is rendered with a CorsPolicy).

    python tools/serve_web.py [--port 8080] [--cors-origin http://localhost:5173]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import logging
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs here
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/, however this file is loaded (tests/web)
from supervise import Supervisor, executables, refuse_ports_in_use, server_env

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "clients" / "web" / "dist"
OPENAPI = ROOT / "docs" / "openapi.json"
ENVOY_CONFIG = ROOT / "deploy" / "envoy" / "envoy.yaml"
DESCRIPTOR = ROOT / "deploy" / "envoy" / "accordion.pb"
GRPC_PORT, PORT, STATIC_PORT = 50051, 8080, 8081

# The headers a gRPC-Web or REST call from another origin sends, and the ones its page must read.
CORS_ALLOW_HEADERS = (
    "authorization, content-type, x-grpc-web, x-user-agent, grpc-timeout, connect-protocol-version"
)
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


# Every answer of the static server carries these (pages, files, errors, redirects alike).
# The page and Swagger UI call the API on their own origin (window.location.origin, through this
# Envoy), so 'self' is the whole of connect-src; `--cors-origin` lets pages served elsewhere call
# in, which this policy (it is about pages served here) does not concern. The page's script and
# Swagger UI set inline styles (Chromium refuses them under style-src 'self': the browser test
# saw it), hence 'unsafe-inline' for styles only; no script runs inline. img-src data: is the
# page's empty favicon (href="data:,") and Swagger UI's icons.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # the share link's fragment holds a token (index.html says so too)
    "Cache-Control": "no-cache",
}
# A connection gets this long for a request's headers (from its opening, or from the end of its
# previous answer: aiohttp's keep-alive timer, which runs from the connection's start), and an
# answer this long to be sent, so slow clients (slowloris) cannot hold the server's connections.
CLIENT_TIMEOUT = 10.0
SEND_TIMEOUT = 30.0


# In a request's path as sent: a bad percent-encoding (yarl keeps it as typed), or an encoded
# NUL, other control character or backslash. And, decoded: a control character or a backslash.
BAD_RAW_PATH = re.compile(r"%(?![0-9A-Fa-f]{2})|%(?:[01][0-9A-Fa-f]|7[Ff]|5[Cc])")


def bad_path(raw: str, decoded: str) -> bool:
    """Whether a request's path is one no file of ours can have (answered 400)."""
    return BAD_RAW_PATH.search(raw) is not None or any(ord(c) < 0x20 or c in "\\\x7f" for c in decoded)


class _ClientFaults(logging.Filter):
    """aiohttp logs a request it cannot parse (a bad request line, a bad header) as "Error
    handling request" with a traceback, at ERROR. That is the client's fault, answered 400: one
    line at INFO, without the traceback (nor the request's text)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, (HttpProcessingError, ConnectionError)):
            record.msg, record.args = (
                f"%s ({type(exc).__name__}): answered {getattr(exc, 'code', 400)}",
                (record.getMessage(),),
            )
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


STATIC_LOG = logging.getLogger("serve_web.static")
STATIC_LOG.addFilter(_ClientFaults())


class _FileResponse(web.FileResponse):
    """A file, sent once: ``static_app``'s middleware sends it within the send timeout, and
    aiohttp's own prepare after the handler then finds it sent (FileResponse would send twice)."""

    async def prepare(self, request: web.BaseRequest) -> Any:
        if self.prepared:
            return None
        return await super().prepare(request)


def static_app(dist: Path = DIST, send_timeout: float = SEND_TIMEOUT) -> web.Application:
    """The built page from ``dist`` and the OpenAPI document at /docs/openapi.json (read from
    docs/ on each request, so `make proto` shows without a rebuild). A directory is served as
    its index.html and never listed; a path outside ``dist`` is 404."""
    root = dist.resolve()

    @web.middleware
    async def guarded(request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            response: web.StreamResponse = await handler(request)
        except web.HTTPException as exc:
            response = web.Response(
                status=exc.status,
                reason=exc.reason,
                text=f"{exc.status}: {exc.reason}\n",
                headers={k: v for k, v in exc.headers.items() if k.lower() == "location"},
            )
        response.headers.update(SECURITY_HEADERS)
        # Sent here, within the timeout, rather than after the handler by aiohttp (which would
        # wait on a client that reads a byte a minute for as long as it likes).
        try:
            async with asyncio.timeout(send_timeout):
                await response.prepare(request)
                await response.write_eof()
        except (TimeoutError, ConnectionError):
            if request.transport is not None:
                request.transport.abort()  # a client too slow or gone: nothing more to say to it
        return response

    async def openapi(request: web.Request) -> web.StreamResponse:
        return web.Response(body=OPENAPI.read_bytes(), content_type="application/json")

    async def page(request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        if bad_path(request.raw_path.split("?", 1)[0], path):
            raise web.HTTPBadRequest()
        parts = [p for p in path.split("/") if p]
        if any(p in (".", "..") for p in parts):
            raise web.HTTPNotFound()
        target = root.joinpath(*parts)
        try:
            target = target.resolve(strict=True)
        except (OSError, ValueError):  # missing, or a name the file system refuses
            raise web.HTTPNotFound() from None
        if not target.is_relative_to(root):
            raise web.HTTPNotFound()
        if target.is_dir():
            if not (target / "index.html").is_file():
                raise web.HTTPNotFound()  # no listings
            if not request.path.endswith("/"):
                raise web.HTTPMovedPermanently(request.path + "/")
            target = target / "index.html"
        if not target.is_file():
            raise web.HTTPNotFound()
        return _FileResponse(target)

    app = web.Application(middlewares=[guarded])
    app.router.add_get("/docs/openapi.json", openapi)
    app.router.add_get(r"/{path:[\s\S]*}", page)  # [\s\S]: a decoded newline too (400, not the router's 404)
    return app


class StaticServer:
    """The static server (aiohttp) on its own event loop in a daemon thread."""

    def __init__(self, port: int, dist: Path, client_timeout: float, send_timeout: float) -> None:
        self._loop = asyncio.new_event_loop()
        self._runner = web.AppRunner(
            static_app(dist, send_timeout),
            # quiet: the page's URL fragment (game id and token) never reaches a server anyway
            access_log=None,
            logger=STATIC_LOG,  # aiohttp's own errors, less the tracebacks of requests it cannot parse
            keepalive_timeout=client_timeout,
            handle_signals=False,
            shutdown_timeout=1.0,  # on shutdown, answers in flight get this long
        )
        started: concurrent.futures.Future[int] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(port, started), name="static", daemon=True)
        self._thread.start()
        self.server_address = ("127.0.0.1", started.result(timeout=30))

    def _run(self, port: int, started: concurrent.futures.Future[int]) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", port)
            self._loop.run_until_complete(site.start())
            sockets = self._runner.addresses
            started.set_result(int(sockets[0][1]))
        except BaseException as exc:  # noqa: BLE001 (handed to the starting thread)
            started.set_exception(exc)
            return
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.close()

    def shutdown(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def start_static(
    port: int = STATIC_PORT,
    dist: Path = DIST,
    client_timeout: float = CLIENT_TIMEOUT,
    send_timeout: float = SEND_TIMEOUT,
) -> StaticServer:
    """The static server in a daemon thread; ``port`` 0 picks a free one (``server_address``)."""
    if not (dist / "index.html").exists():
        raise SystemExit(f"serve-web: {dist}/index.html is missing: run `cd clients/web && npm run build`")
    return StaticServer(port, dist, client_timeout, send_timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=PORT, help="the one origin's port (Envoy)")
    parser.add_argument("--grpc-port", type=int, default=GRPC_PORT)
    parser.add_argument("--static-port", type=int, default=STATIC_PORT)
    parser.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="URL",
        help="also allow pages of this origin (e.g. http://localhost:5173); repeatable",
    )
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
            children.start(
                [server, "--listen", f"127.0.0.1:{args.grpc_port}"],
                f"127.0.0.1:{args.grpc_port}",
                "accordion-server",
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
            )
            children.start(
                [
                    envoy,
                    "-c",
                    str(config),
                    "--disable-hot-restart",
                    "--concurrency",
                    "1",
                    "--log-level",
                    "error",
                ],
                f"127.0.0.1:{args.port}",
                "envoy",
                cwd=ROOT,
            )
            base = f"http://127.0.0.1:{args.port}"
            cors = ", ".join(args.cors_origin) or "off (same origin only)"
            print(
                f"{base}/\n  play: {base}/   API docs: {base}/docs/   REST: {base}/v1/variants   CORS: "
                f"{cors}\n"
                "Stop with Ctrl-C (SIGINT) or SIGTERM.",
                flush=True,
            )
            children.wait()
        finally:
            children.stop()
            static.shutdown()
    return children.exit_status()


if __name__ == "__main__":
    sys.exit(main())
