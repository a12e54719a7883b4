"""One module per game; importing this package registers every variant."""

# isort: skip_file
# (the imports' order is the variants' registration order: the order every listing shows)

from . import accordion  # noqa: F401
from . import royal_marriage  # noqa: F401
from . import push_pin  # noqa: F401
from . import double_jump  # noqa: F401
from . import french  # noqa: F401
from . import concertina  # noqa: F401
from . import queen_and_her_lad  # noqa: F401
from . import relaxed_accordion  # noqa: F401
from . import accordions_revenge  # noqa: F401
from . import twenty_three_skidoo  # noqa: F401
from . import bayan  # noqa: F401
from . import cribbage_solitaire  # noqa: F401
from . import klondike  # noqa: F401
from . import streets_and_alleys  # noqa: F401
from . import wish  # noqa: F401
from . import emperor  # noqa: F401
from . import spider  # noqa: F401
