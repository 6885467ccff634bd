"""The ``bob-boost`` command line: train, evaluate, predict, explain, inspect, export, detect, train-cascade, examples
and plots.

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
from ..examples.mnist import EXAMPLE_LOSSES, example_accuracy, train_example
from ..io.cost_files import read_cost_matrix
from ..io.tables import FEATURE_KEYS, HDF5_SUFFIXES, LABEL_KEYS, TABLE_SUFFIXES, Table, read_table, write_predictions
from ..recipes import TRAINERS
from ..registry import loss_class, loss_names
from . import detect as _detect_command
from . import evaluate as _evaluate_command
from . import example as _example_command
from . import explain as _explain_command
from . import export as _export_command
from . import inspect as _inspect_command
from . import plot as _plot_command
from . import predict as _predict_command
from . import train as _train_command
from . import train_cascade as _train_cascade_command
from ._common import CommandError, Parser, common_options, load_model, predicted_indices, run_command
from .evaluate import command_evaluate, evaluate
from .example import command_example
from .inspect import command_inspect, describe
from .plot import command_plot
from .predict import command_predict
from .train import command_train, train_machine

# the names bob_boost 0.1's single cli module offered, so that scripts importing them keep working
# (``evaluate`` is the function, as it was; the subcommand's module is bob_boost.cli.evaluate in sys.modules)
__all__ = ["CommandError", "EXAMPLE_LOSSES", "FEATURE_KEYS", "HDF5_SUFFIXES", "LABEL_KEYS", "TABLE_SUFFIXES",
           "TRAINERS", "Table", "build_parser", "command_evaluate", "command_example", "command_inspect",
           "command_plot", "command_predict", "command_train", "describe", "evaluate", "example_accuracy",
           "load_model", "loss_class", "loss_names", "main", "predicted_indices", "read_cost_matrix", "read_table",
           "train_example", "train_machine", "write_predictions"]

_COMMANDS = (_train_command, _evaluate_command, _predict_command, _explain_command, _inspect_command, _export_command,
             _detect_command, _train_cascade_command, _example_command, _plot_command)


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
    for module in _COMMANDS:
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
