"""An example chat bot: each line on stdin is a message, each reply goes to stdout.

    python clients/python/examples/chat_bot.py --target 127.0.0.1:50051 [--pictures DIR]

With ``--pictures DIR`` a reply that changed the position (a new game, a move, an undo; not help,
rules or a hint) is posted with a picture of the layout beside the text (``GetGamePicture``: an
SVG the server draws from what the player sees, face-down cards and the stock as backs, pile
numbers above the piles): here the SVG and its PNG (the ``pictures`` extra: most chat platforms
show no SVG) are written to DIR and their paths posted, where a chat platform would upload the
PNG (clients/python/src/accordion_client/matrix_bot.py does, on Matrix).

A real chat platform plugs in the same way: keep one ``ChatSession`` per conversation (here
keyed by the user before ``:`` on a line such as ``alice: new royal-marriage``, or one
session when lines have no ``name:``), pass each message's text to ``handle``, post the
reply. ``ChatSession`` knows nothing about the transport; the bot knows nothing about games.
``ChatRooms`` (chat_rooms.py) keeps the sessions and decides when a picture is due.

Sharing in a room: ``share`` posts the game's deal code and watch key (never its token);
``play CODE`` deals those cards to whoever says it, ``watch KEY`` shows that game read-only.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from accordion_client import AccordionClient, __version__
from accordion_client.chat_rooms import ChatRooms
from accordion_client.flags import add_connection_flags, client_kwargs
from accordion_client.png import PicturesUnavailable, svg_to_png

SPEAKER = re.compile(r"^([A-Za-z0-9_.-]{1,32}):\s+(.*)$")


def main() -> int:
    parser = argparse.ArgumentParser(prog="chat_bot.py", description="Accordion chat bot on stdin/stdout")
    parser.add_argument("--version", action="version", version=f"%(prog)s (accordion-client {__version__})")
    add_connection_flags(parser)
    parser.add_argument("--variant", default="accordion", help="what a bare 'new' deals")
    parser.add_argument(
        "--pictures", metavar="DIR", help="post a picture of the layout beside each reply (SVGs here)"
    )
    args = parser.parse_args()
    try:
        client = AccordionClient(**client_kwargs(args))
    except (ValueError, OSError) as exc:  # a bad --target, a missing PEM file: one line, no traceback
        print(f"chat_bot.py: {exc}", file=sys.stderr)
        return 2

    rooms = ChatRooms(client, variant=args.variant, pictures=bool(args.pictures))
    png = bool(args.pictures)
    with client:
        print("Accordion bot ready: say help.", flush=True)
        for line in sys.stdin:
            match = SPEAKER.match(line.strip())
            user, text = match.groups() if match else ("", line.strip())
            reply = rooms.handle("", user, text)
            prefix = f"@{user} " if user else ""
            print(prefix + reply.text.replace("\n", "\n" + " " * len(prefix)), flush=True)
            game = rooms.session("", user).shown  # the game played, or the one watched with a watch key
            if reply.picture is not None and game is not None:  # the SVG, drawn from what the player sees
                path = Path(args.pictures) / f"{user or 'chat'}-{game.id}-v{game.version}.svg"
                path.write_bytes(reply.picture)
                posted = f"{path} (image/svg+xml)"
                if png:
                    try:
                        path.with_suffix(".png").write_bytes(svg_to_png(reply.picture))
                        posted = f"{path.with_suffix('.png')} (image/png), {posted}"
                    except PicturesUnavailable as exc:  # SVG only, said once
                        print(f"chat_bot.py: {exc}", file=sys.stderr)
                        png = False
                print(f"{prefix}[picture: {posted}]", flush=True)
            print(flush=True)  # a blank line between replies
    return 0


if __name__ == "__main__":
    sys.exit(main())
