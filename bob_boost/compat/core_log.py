"""A stand-in for ``bob.core.log``: the three functions bob's scripts call to set up their logging.

bob's scripts (bob.learn.boosting's MNIST example among them) do::

    logger = bob.core.log.setup("bob.learn.boosting")
    bob.core.log.add_command_line_option(parser)
    bob.core.log.set_verbosity_level(logger, args.verbose)

Here these configure a plain :mod:`logging` logger the same way: messages go to the standard error stream,
and ``-v`` repeated 0..3 times selects ERROR, WARNING, INFO or DEBUG.
"""
from __future__ import annotations

import argparse
import logging
import sys

from ..exceptions import InvalidTypeError, InvalidValueError

#: bob's message format.
DEFAULT_FORMAT = "%(name)s@%(asctime)s -- %(levelname)s: %(message)s"

#: Verbosity level (number of ``-v``) -> logging level, as bob.core.log maps them.
LEVELS = (logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever :data:`sys.stderr` is when a message is emitted (test runners replace it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):
        """The current standard error stream."""
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        # StreamHandler assigns its stream on construction; this handler always follows sys.stderr instead
        pass


def setup(logger_name: str, format: str = DEFAULT_FORMAT) -> logging.Logger:  # `format`: bob's keyword name
    """Return the logger ``logger_name``, with one handler printing to standard error in ``format``.

    Parameters
    ----------
    logger_name : str
        The logger's name, e.g. ``"bob.learn.boosting"``.
    format : str
        A :class:`logging.Formatter` format string.

    Returns
    -------
    logging.Logger
        The logger; calling :func:`setup` again does not add a second handler.
    """
    if not isinstance(logger_name, str):
        raise InvalidTypeError(f"logger_name: expected a str, got {type(logger_name).__name__}")
    logger = logging.getLogger(logger_name)
    if not any(isinstance(handler, _StderrHandler) for handler in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter(format))
        logger.addHandler(handler)
    return logger


def add_command_line_option(parser: argparse.ArgumentParser, short_option: str = "-v") -> None:
    """Add bob's ``-v/--verbose`` option (repeatable: ``-vv`` for INFO, ``-vvv`` for DEBUG) to ``parser``."""
    parser.add_argument(short_option, "--verbose", action="count", default=0,
                        help="Increase the verbosity: -v warnings, -vv information, -vvv debug messages.")


def set_verbosity_level(logger: logging.Logger | str, level: int) -> None:
    """Set ``logger``'s level from a bob verbosity ``level``: 0 ERROR, 1 WARNING, 2 INFO, 3 (or more) DEBUG.

    Raises
    ------
    ValueError
        For a negative ``level``.
    """
    if isinstance(level, bool) or not isinstance(level, int):
        raise InvalidTypeError(f"level: expected an int, got {type(level).__name__}")
    if level < 0:
        raise InvalidValueError(f"level: must be 0 or more, got {level}")
    if isinstance(logger, str):
        logger = logging.getLogger(logger)
    logger.setLevel(LEVELS[min(level, len(LEVELS) - 1)])
