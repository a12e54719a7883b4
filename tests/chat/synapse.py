"""A real Matrix homeserver for tests: Synapse on SQLite, on a free loopback port.

Synapse lives in its own virtual environment (``make synapse``: .venv/synapse), apart from the
service's, so its pins (Twisted, pydantic, ...) never meet ours. ``Synapse(tmp).start()`` writes
a small config (registration only by the shared secret, rate limits on, no federation, no
metrics, no URL previews), makes its signing key, starts it and waits until the client API
answers. ``stop()`` / ``start()`` again keep the port, the database and the media.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from redis_server import free_port
from server_launcher import ROOT, START_TIMEOUT

SYNAPSE_PYTHON = ROOT / ".venv" / "synapse" / "bin" / "python"
# Rate limits on, as a homeserver has them, and slow: a burst of 3, then one message per 10 s, so
# that a bot answering a few messages at once certainly meets 429s and must wait them out, however
# slow the machine (at 1 a second, a loaded machine's bot answered too slowly to meet one). The
# accounts of tests that do not test the limit are exempt (``exempt_from_rate_limit``: Synapse's
# per-user override), so their messages do not wait.
RC_MESSAGE = {"per_second": 0.1, "burst_count": 3}

CONFIG = """\
server_name: "localhost"
pid_file: "{dir}/homeserver.pid"
public_baseurl: "http://127.0.0.1:{port}/"
listeners:
  - port: {port}
    bind_addresses: ["127.0.0.1"]
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: "{dir}/homeserver.db"
media_store_path: "{dir}/media"
signing_key_path: "{dir}/signing.key"
registration_shared_secret: "{secret}"
enable_registration: false
macaroon_secret_key: "{macaroon}"
form_secret: "{form}"
report_stats: false
enable_metrics: false
url_preview_enabled: false
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
presence:
  enabled: false
rc_message: {rc_message}
rc_joins:
  local: {{per_second: 1, burst_count: 20}}
rc_invites:
  per_room: {{per_second: 1, burst_count: 20}}
  per_user: {{per_second: 1, burst_count: 20}}
rc_login:
  address: {{per_second: 1, burst_count: 20}}
  account: {{per_second: 1, burst_count: 20}}
"""


class Synapse:
    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.secret = secrets.token_hex(16)
        self.config = workdir / "homeserver.yaml"
        self.log_path = workdir / "synapse.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.config.write_text(
            CONFIG.format(
                dir=workdir,
                port=self.port,
                secret=self.secret,
                macaroon=secrets.token_hex(16),
                form=secrets.token_hex(16),
                rc_message=json.dumps(RC_MESSAGE),
            )
        )
        # An ed25519 key is any 32 random bytes (its seed): written here, not by a second Synapse
        # start with --generate-keys (7 s on a loaded machine).
        seed = base64.b64encode(secrets.token_bytes(32)).decode().rstrip("=")
        (workdir / "signing.key").write_text(f"ed25519 a_test {seed}\n")

    def start(self) -> Synapse:
        assert SYNAPSE_PYTHON.exists(), f"{SYNAPSE_PYTHON} is missing: run `make synapse`"
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [str(SYNAPSE_PYTHON), "-m", "synapse.app.homeserver", "-c", str(self.config)],
            cwd=self.dir,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"synapse exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                self.request("GET", "/_matrix/client/versions")
                return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"synapse did not answer within {START_TIMEOUT:g} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, token: str = ""
    ) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=30) as resp:
            result: dict[str, Any] = json.loads(resp.read())
            return result

    def exempt_from_rate_limit(self, admin_token: str, user_id: str, exempt: bool = True) -> None:
        """Lift the message rate limit for ``user_id`` (both values 0: Synapse's admin API), or
        put it back (the override deleted: RC_MESSAGE again)."""
        path = f"/_synapse/admin/v1/users/{urllib.parse.quote(user_id)}/override_ratelimit"
        if exempt:
            self.request("POST", path, {"messages_per_second": 0, "burst_count": 0}, token=admin_token)
        else:
            self.request("DELETE", path, token=admin_token)

    def register(self, name: str, password: str, *, admin: bool = False) -> dict[str, Any]:
        """A new account by the shared secret (Synapse's admin register API): its ``user_id``,
        ``access_token`` and ``device_id``."""
        nonce = self.request("GET", "/_synapse/admin/v1/register")["nonce"]
        mac = hmac.new(self.secret.encode(), digestmod=hashlib.sha1)
        mac.update(
            b"\x00".join(
                [nonce.encode(), name.encode(), password.encode(), b"admin" if admin else b"notadmin"]
            )
        )
        reply = self.request(
            "POST",
            "/_synapse/admin/v1/register",
            {
                "nonce": nonce,
                "username": name,
                "password": password,
                "admin": admin,
                "mac": mac.hexdigest(),
            },
        )
        return reply
