"""One module per game; importing this package registers every variant."""

from . import accordion  # noqa: F401
