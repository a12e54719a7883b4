"""An example chat bot: each line on stdin is a message, each reply goes to stdout.

    python clients/python/examples/chat_bot.py --target 127.0.0.1:50051

A real chat platform plugs in the same way: keep one ``ChatSession`` per conversation (here
keyed by the user before ``:`` on a line such as ``alice: new royal-marriage``, or one
session when lines have no ``name:``), pass each message's text to ``handle``, post the
reply. ``ChatSession`` knows nothing about the transport; the bot knows nothing about games.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from accordion_client import AccordionClient
from accordion_client.chat import ChatSession

SPEAKER = re.compile(r"^([A-Za-z0-9_.-]{1,32}):\s+(.*)$")


def main() -> int:
    parser = argparse.ArgumentParser(description="Accordion chat bot on stdin/stdout")
    parser.add_argument("--target", default=os.environ.get("ACCORDION_TARGET", "127.0.0.1:50051"))
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--variant", default="accordion", help="what a bare 'new' deals")
    args = parser.parse_args()

    sessions: dict[str, ChatSession] = {}
    with AccordionClient(args.target, tls=args.tls) as client:
        print("Accordion bot ready: say help.", flush=True)
        for line in sys.stdin:
            match = SPEAKER.match(line.strip())
            user, text = match.groups() if match else ("", line.strip())
            session = sessions.setdefault(user, ChatSession(client, variant=args.variant))
            reply = session.handle(text)
            prefix = f"@{user} " if user else ""
            print(prefix + reply.replace("\n", "\n" + " " * len(prefix)), flush=True)
            print(flush=True)  # a blank line between replies
    return 0


if __name__ == "__main__":
    sys.exit(main())
