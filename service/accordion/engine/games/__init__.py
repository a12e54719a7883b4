"""One module per game; importing this package registers every variant."""

from . import (
    accordion,  # noqa: F401
    accordions_revenge,  # noqa: F401
    bayan,  # noqa: F401
    concertina,  # noqa: F401
    cribbage_solitaire,  # noqa: F401
    double_jump,  # noqa: F401
    emperor,  # noqa: F401
    french,  # noqa: F401
    klondike,  # noqa: F401
    push_pin,  # noqa: F401
    queen_and_her_lad,  # noqa: F401
    relaxed_accordion,  # noqa: F401
    royal_marriage,  # noqa: F401
    spider,  # noqa: F401
    streets_and_alleys,  # noqa: F401
    twenty_three_skidoo,  # noqa: F401
    wish,  # noqa: F401
)
