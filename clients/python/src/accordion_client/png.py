"""The server's SVG picture as a PNG, for chat platforms that do not show SVG (most do not).

    png = svg_to_png(game.picture())   # needs the extra: pip install 'accordion-client[pictures]'
    width, height = png_size(png)

Rendered by resvg (``resvg-py``: Rust's resvg in a binary wheel, no system library to install,
unlike cairosvg's libcairo). Its text needs a font with the suit symbols ♠♥♦♣ among the system
fonts (DejaVu Sans has them: Debian's ``fonts-dejavu-core``; ACCORDION_PICTURE_FONT names another).
"""

from __future__ import annotations

import os
import struct
from typing import Any

PNG_TYPE = "image/png"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# resvg maps the generic sans-serif (the picture's font) to Arial, absent from most Linux
# machines: the text would vanish. DejaVu Sans has every glyph the picture uses (♠♥♦♣, ·).
SANS_FAMILY = os.environ.get("ACCORDION_PICTURE_FONT", "DejaVu Sans")


class PicturesUnavailable(RuntimeError):
    """The PNG renderer is not installed (the ``pictures`` extra)."""


def _renderer() -> Any:
    try:
        import resvg_py  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:  # the extra is optional: say which one
        raise PicturesUnavailable("PNG pictures need: pip install 'accordion-client[pictures]'") from exc
    return resvg_py


def svg_to_png(svg: bytes | str) -> bytes:
    """The PNG of an SVG picture at its own size (the SVG's width and height, in pixels)."""
    text = svg.decode() if isinstance(svg, bytes) else svg
    return bytes(
        _renderer().svg_to_bytes(svg_string=text, font_family=SANS_FAMILY, sans_serif_family=SANS_FAMILY)
    )


def png_size(png: bytes) -> tuple[int, int]:
    """A PNG's width and height in pixels, from its header (IHDR, the first chunk)."""
    if not png.startswith(PNG_SIGNATURE) or png[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)
