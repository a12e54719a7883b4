"""The terminal's ANSI styles and the red suits, shared by render.py (the row) and zones.py
(a tableau game's zones)."""

from __future__ import annotations

from .v1 import accordion_pb2 as pb

RED_SUITS = (pb.SUIT_HEARTS, pb.SUIT_DIAMONDS)
RESET, BOLD, DIM, RED, GREEN, YELLOW, CYAN = (
    "\x1b[0m",
    "\x1b[1m",
    "\x1b[2m",
    "\x1b[31m",
    "\x1b[32m",
    "\x1b[33m",
    "\x1b[36m",
)
