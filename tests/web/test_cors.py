"""CORS on the one origin: off by default (no preflight answered, no CORS headers), and with
`serve_web.py --cors-origin URL` the preflight is answered for that origin only."""

from __future__ import annotations

import urllib.error
import urllib.request

from .conftest import WebStack


def preflight(base: str, origin: str) -> tuple[int, dict[str, str]]:
    req = urllib.request.Request(f"{base}/v1/games", method="OPTIONS")
    req.add_header("origin", origin)
    req.add_header("access-control-request-method", "POST")
    req.add_header("access-control-request-headers", "authorization, content-type")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}


def test_cors_is_off_by_default(web: WebStack) -> None:
    status, headers = preflight(web.base, "http://allowed.example")
    assert "access-control-allow-origin" not in headers
    assert status >= 400


def test_a_configured_origin_gets_its_preflight_answered(web_cors: WebStack) -> None:
    status, headers = preflight(web_cors.base, "http://allowed.example")
    assert status == 200, headers
    assert headers["access-control-allow-origin"] == "http://allowed.example"
    assert "authorization" in headers["access-control-allow-headers"]
    assert "POST" in headers["access-control-allow-methods"]
    # A simple GET from that origin carries the header; another origin gets none.
    req = urllib.request.Request(f"{web_cors.base}/v1/variants", headers={"origin": "http://allowed.example"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.headers["access-control-allow-origin"] == "http://allowed.example"
    status, headers = preflight(web_cors.base, "http://other.example")
    assert "access-control-allow-origin" not in headers


def test_page_docs_and_rest_share_one_origin(web: WebStack) -> None:
    for path, kind in (
        ("/", "text/html"),
        ("/docs/", "text/html"),
        ("/docs/openapi.json", "application/json"),
        ("/v1/variants", "application/json"),
    ):
        with urllib.request.urlopen(web.base + path, timeout=10) as r:
            assert r.status == 200 and r.headers["content-type"].startswith(kind), (path, r.headers)
