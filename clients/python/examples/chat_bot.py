"""An example chat bot: each line on stdin is a message, each reply goes to stdout.

    python clients/python/examples/chat_bot.py --target 127.0.0.1:50051 [--pictures DIR]

With ``--pictures DIR`` each reply about a game is posted with a picture of its layout beside the
text (``GetGamePicture``: an SVG the server draws from what the player sees, face-down cards and
the stock as backs): here the SVG is written to DIR and its path posted, where a chat platform
would upload the bytes.

A real chat platform plugs in the same way: keep one ``ChatSession`` per conversation (here
keyed by the user before ``:`` on a line such as ``alice: new royal-marriage``, or one
session when lines have no ``name:``), pass each message's text to ``handle``, post the
reply. ``ChatSession`` knows nothing about the transport; the bot knows nothing about games.

Sharing in a room: ``share`` posts the game's deal code and watch key (never its token);
``play CODE`` deals those cards to whoever says it, ``watch KEY`` shows that game read-only.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from accordion_client import AccordionClient, __version__
from accordion_client.chat import ChatSession
from accordion_client.flags import add_connection_flags, client_kwargs

SPEAKER = re.compile(r"^([A-Za-z0-9_.-]{1,32}):\s+(.*)$")


def main() -> int:
    parser = argparse.ArgumentParser(prog="chat_bot.py", description="Accordion chat bot on stdin/stdout")
    parser.add_argument("--version", action="version", version=f"%(prog)s (accordion-client {__version__})")
    add_connection_flags(parser)
    parser.add_argument("--variant", default="accordion", help="what a bare 'new' deals")
    parser.add_argument("--pictures", metavar="DIR", help="post a picture of the layout beside each reply (SVGs here)")
    args = parser.parse_args()
    try:
        client = AccordionClient(**client_kwargs(args))
    except (ValueError, OSError) as exc:  # a bad --target, a missing PEM file: one line, no traceback
        print(f"chat_bot.py: {exc}", file=sys.stderr)
        return 2

    sessions: dict[str, ChatSession] = {}
    with client:
        print("Accordion bot ready: say help.", flush=True)
        for line in sys.stdin:
            match = SPEAKER.match(line.strip())
            user, text = match.groups() if match else ("", line.strip())
            session = sessions.setdefault(user, ChatSession(client, variant=args.variant))
            reply = session.handle(text)
            prefix = f"@{user} " if user else ""
            print(prefix + reply.replace("\n", "\n" + " " * len(prefix)), flush=True)
            game = session.shown  # the game played, or the one watched with a watch key
            if args.pictures and game is not None:
                picture = game.picture()  # SVG bytes, drawn from what the player sees
                path = Path(args.pictures) / f"{user or 'chat'}-{game.id}-v{game.version}.svg"
                path.write_bytes(picture)
                print(f"{prefix}[picture: {path} (image/svg+xml)]", flush=True)
            print(flush=True)  # a blank line between replies
    return 0


if __name__ == "__main__":
    sys.exit(main())
