"""The web page in a real headless Chromium (Debian's `chromium`, `make web-test` installs it):
`npm run build` of clients/web, then its browser tests (every file in clients/web/test/, their
shared set-up in clients/web/test-support/browser.mjs; node:test + playwright-core attached to
/usr/bin/chromium) against the stack on free ports."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from .conftest import WEB, WebStack

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SHOTS = WEB / "test-results"


def npm(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    npm_bin = shutil.which("npm")
    assert npm_bin, "npm is missing"
    if not (WEB / "node_modules" / ".package-lock.json").exists():
        done = subprocess.run(
            [npm_bin, "ci", "--no-audit", "--no-fund"],
            cwd=WEB,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    return subprocess.run([npm_bin, *args], cwd=WEB, capture_output=True, text=True, timeout=timeout)


def test_the_page_builds_offline_into_a_small_bundle() -> None:
    done = npm("run", "build")
    assert done.returncode == 0, done.stdout + done.stderr
    dist = WEB / "dist"
    html = (dist / "index.html").read_text()
    assert "http://" not in html and "https://" not in html, "no CDN: every asset is bundled"
    scripts = sorted((dist / "assets").glob("main-*.js"))
    assert scripts, list((dist / "assets").iterdir())
    size = sum(p.stat().st_size for p in scripts)
    print(f"page bundle: {size} bytes ({', '.join(p.name for p in scripts)})")
    assert size < 400_000, f"the page's JavaScript grew to {size} bytes"
    assert (dist / "docs" / "index.html").exists()
    assert not re.search(r"node:http2|Http2SessionManager\(", "".join(p.read_text() for p in scripts))


def test_the_page_in_headless_chromium(web: WebStack) -> None:
    assert Path(CHROMIUM).exists(), (
        f"{CHROMIUM} is missing: apt-get install -y chromium (make web-test does it)"
    )
    if not (WEB / "dist" / "index.html").exists():
        assert npm("run", "build").returncode == 0
    SHOTS.mkdir(exist_ok=True)
    env = {**os.environ, "BASE_URL": web.base, "SCREENSHOTS": str(SHOTS), "CHROMIUM": CHROMIUM}
    done = subprocess.run(
        ["node", "--test", "--test-concurrency=1", "test/"],
        cwd=WEB,
        env=env,
        capture_output=True,
        text=True,
        timeout=480,
    )
    print(done.stdout[-4000:])
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-4000:]
    assert re.search(r"^# pass 23$", done.stdout, re.M) and re.search(r"^# fail 0$", done.stdout, re.M), (
        done.stdout
    )
    for shot in (
        "1-new-game.png",
        "2-illegal-move.png",
        "3-spectator.png",
        "4-won.png",
        "5-docs.png",
        "6-stock.png",
        "7-resigned.png",
        "8-klondike.png",
        "9-klondike-played.png",
        "10-spider.png",
    ):
        assert (SHOTS / shot).stat().st_size > 5_000, shot
