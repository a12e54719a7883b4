"""The start-up banner ``accordion-server`` prints once it listens: where it listens, its store,
grpcurl lines to try, and (ops) where the metrics, the access log and the admin port are. It
only reads a Config (``accordion.config``); the server and the workers' parent print it.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from accordion.config import Config


def store_label(config: Config) -> str:
    if config.memory_store:
        return "memory (embedded; games live in this process)"
    parts = urlsplit(config.redis_url)  # never print credentials
    if "," in parts.netloc or "+" in parts.scheme:  # sentinel or cluster: several hosts
        return f"{parts.scheme.split('+')[-1]} at {parts.netloc.rpartition('@')[2]}{parts.path}"
    return f"redis at {parts.hostname or parts.path}{f':{parts.port}' if parts.port else ''}"


def banner(config: Config, port: int) -> str:
    host = config.listen.rsplit(":", 1)[0].strip("[]") or "127.0.0.1"
    host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    addr = f"{host}:{port}"
    text = "\n".join(
        [
            f"accordion-server listening on {addr} (store: {store_label(config)})",
            "Try it (grpcurl; the server has reflection):"
            if config.reflection == "on"
            else "Try it (grpcurl; reflection is off: give it the .proto files with -import-path/-proto):",
            f"  grpcurl -plaintext {addr} list accordion.v1.AccordionService",
            (
                f'  grpcurl -plaintext -d \'{{"variant": "accordion", "seed": 7}}\' {addr} '
                "accordion.v1.AccordionService/NewGame"
            ),
            (
                f'  grpcurl -plaintext -H \'authorization: Bearer <token>\' -d \'{{"game_id": "<id>", '
                f'"move": {{"notation": "<move>"}}}}\' {addr} accordion.v1.AccordionService/ApplyMove'
            ),
            f"  grpcurl -plaintext {addr} grpc.health.v1.Health/Check",
            *_ops_lines(config, host),
            "Stop with Ctrl-C (SIGINT) or SIGTERM.",
        ]
    )
    return text.replace("-plaintext", "-cacert ca.pem") if config.tls_cert else text


def _ops_lines(config: Config, host: str) -> list[str]:
    """ops: where the metrics, the access log and the admin port are (issue 34)."""
    lines = []
    if config.metrics_port:
        lines.append(f"Metrics: http://{host}:{config.metrics_port}/metrics")
    if config.access_log:
        lines.append(f"Access log (one JSON line per call): {os.path.abspath(config.access_log)}")
    if config.admin_port:
        last = config.admin_port + max(1, config.workers) - 1
        ports = (
            f"{config.admin_port}"
            if last == config.admin_port
            else f"{config.admin_port}-{last} (one per worker)"
        )
        lines.append(f"Admin (channelz, health; operators only): {host}:{ports}")
    return lines
