"""Every relative Markdown link in the repository's pages leads somewhere: the file exists and, when
the link names a heading (``page.md#anchor``), the page has that heading (issue 30 moved sections
between pages; a link left pointing at the old place fails here). Links to the web are not fetched.
The checker is shown to fail on a broken file link, a broken anchor and a broken image."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# [text](target) and ![alt](target); a target may carry a title: (path "title").
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+).*?\1")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def pages(root: Path) -> list[Path]:
    """The Markdown files git tracks (README.md, docs/, the packages' and the solver families'
    pages), so a stray file in an ignored folder (node_modules) is never read."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.md"], cwd=root, capture_output=True, text=True, check=True
    )
    return sorted(root / name for name in listed.stdout.split("\0") if name)


def outside_fences(text: str) -> list[str]:
    """The page's lines outside fenced code blocks (``` or ~~~, closed by a fence at least as long)."""
    lines, fence = [], ""
    for line in text.splitlines():
        marker = re.match(r"\s*(```+|~~~+)", line)
        if marker and not fence:
            fence = marker.group(1)
        elif marker and marker.group(1).startswith(fence):
            fence = ""
        elif not fence:
            lines.append(line)
    return lines


def prose(text: str) -> list[str]:
    """The lines outside fences with inline code removed (a link shown as code is an example)."""
    return [INLINE_CODE.sub("", line) for line in outside_fences(text)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (hyphens and underscores
    kept), each space a hyphen; inline code and links count by their text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor; a repeated heading gets -1, -2, … as on GitHub."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in outside_fences(page.read_text(encoding="utf-8")):
        heading = HEADING.match(line)
        if not heading:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(root: Path, files: list[Path]) -> list[str]:
    """Each link that leads nowhere, as ``page: target (why)``."""
    broken, cache = [], {}
    for page in files:
        for line in prose(page.read_text(encoding="utf-8")):
            for target in LINK.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                dest = (page.parent / path).resolve() if path else page
                where = f"{page.relative_to(root)}: {target}"
                if not dest.exists():
                    broken.append(f"{where} (no such file)")
                elif anchor and dest.suffix == ".md":
                    if dest not in cache:
                        cache[dest] = anchors(dest)
                    if anchor not in cache[dest]:
                        broken.append(f"{where} (no such heading)")
    return broken


def test_every_relative_link_in_the_pages_resolves() -> None:
    files = pages(ROOT)
    assert ROOT / "README.md" in files and ROOT / "docs" / "performance.md" in files
    assert broken_links(ROOT, files) == []


def test_the_check_finds_a_broken_file_an_anchor_and_an_image(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# A page\n\n## Every core: `--workers`\n\n## Notes\n\n## Notes\n\n```sh\n# not a heading\n```\n"
    )
    (tmp_path / "README.md").write_text(
        "See [a](docs/a.md), [workers](docs/a.md#every-core---workers), [notes](docs/a.md#notes-1),\n"
        "[the web](https://example.org/x.md), `[code](nowhere.md)`, [top](#readme).\n"
        "# README\n"
        "Broken: [gone](docs/gone.md), [anchor](docs/a.md#not-a-heading), ![img](docs/none.png),\n"
        "[old](docs/a.md#notes-2).\n"
        "```md\n[in a fence](fenced.md)\n```\n"
    )
    found = broken_links(tmp_path, [tmp_path / "README.md", tmp_path / "docs" / "a.md"])
    assert found == [
        "README.md: docs/gone.md (no such file)",
        "README.md: docs/a.md#not-a-heading (no such heading)",
        "README.md: docs/none.png (no such file)",
        "README.md: docs/a.md#notes-2 (no such heading)",
    ]
