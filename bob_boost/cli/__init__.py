"""The ``bob-boost`` command line: train, evaluate, predict, inspect, examples and plots.

Every failure the user can cause (a missing or malformed file, a bad
column, a bad option, a corrupt model) ends with one line on stderr and a
non-zero exit status; ``-vvv`` shows its traceback instead. Run
``bob-boost --help`` or ``bob-boost <command> --help`` for the options.

Each subcommand is a module of this package with an ``add_parser`` function
and a ``command_*`` handler; the code they run lives in the library
(:mod:`bob_boost.io.tables`, :mod:`bob_boost.evaluation`,
:mod:`bob_boost.examples.mnist`, ...).
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence

from .. import __version__
from ..examples.mnist import example_accuracy, train_example
from ..io.tables import Table, read_cost_matrix, read_table
from . import evaluate, example, inspect, plot, predict, train
from ._common import CommandError, Parser, common_options, run_command

__all__ = ["CommandError", "Table", "build_parser", "example_accuracy", "main", "read_cost_matrix", "read_table",
           "train_example"]


def build_parser() -> argparse.ArgumentParser:
    """The ``bob-boost`` argument parser with all subcommands."""
    parser = Parser(prog="bob-boost", description="Train, evaluate and inspect boosted classifiers "
                    "(bob.learn.boosting style) from the shell.",
                    epilog="Data files: CSV/TSV/TXT (optionally .gz, with or without a header line), NPY (a "
                           "matrix whose target column is chosen with --target), NPZ and HDF5 (arrays 'features' "
                           "and 'labels'). Models are HDF5 files that bob.learn.boosting can read.")
    parser.add_argument("--version", action="version", version=f"bob-boost {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser,
                                     help="run 'bob-boost COMMAND --help' for its options")
    commands.required = True
    common = common_options()
    for module in (train, evaluate, predict, inspect, example, plot):
        module.add_parser(commands, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bob-boost`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name.

    Returns
    -------
    int
        0 on success, 1 for an error the user can fix (reported in one line on stderr), 2 for bad
        arguments, 130 when interrupted.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
    return run_command(args)
