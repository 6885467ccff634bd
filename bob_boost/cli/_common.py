"""What every subcommand shares: the parser type, option types, logging, error handling and models.

Class labels go through :class:`bob_boost.labels.ClassEncoding` and trainers are configured by
:mod:`bob_boost.recipes`, as in the scikit-learn estimators, so both front doors read each other's models.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..exceptions import BobBoostError
from ..labels import ClassEncoding, classes_of
from ..machine import BoostedMachine

logger = logging.getLogger(__name__)

#: Errors that are the user's to fix, shown as one line: bob_boost's own (bad arguments, data and model files)
#: and unreadable or unwritable files. Anything else is a bug, and its traceback shows.
EXPECTED_ERRORS = (BobBoostError, OSError)


class CommandError(BobBoostError):
    """A user error with a message fit to print as it is."""


# -- the parser ----------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows "(default: ...)" only for options that take a value and have a default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.nargs == 0:
            return action.help or ""
        return super()._get_help_string(action)


def bin_count(text: str) -> int | None:
    """argparse type: ``exact`` (every distinct value) or a number of bins in [2, 65535]."""
    if text.lower() in ("exact", "none"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'exact' or an integer in [2, 65535], got {text!r}") from None
    if not 2 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected 'exact' or an integer in [2, 65535], got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0 or not np.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return value


def integer_list(text: str) -> list[int]:
    """argparse type: comma-separated integers (``1,0,-1``)."""
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def integer_groups(text: str) -> list[list[int]] | str:
    """argparse type: groups of integers, each comma-separated, the groups separated by ``;`` (``0,1;2,3``), or
    ``no_interactions``."""
    if text == "no_interactions":
        return text
    try:
        return [[int(part) for part in group.split(",")] for group in text.split(";")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected groups like 0,1;2,3 or no_interactions, got {text!r}") from None


def fraction(text: str) -> float:
    """argparse type: a number in (0, 1]."""
    value = positive_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text}")
    return value


def common_options() -> argparse.ArgumentParser:
    """The parent parser of every command: ``-v/--verbose`` and ``-q/--quiet``."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log messages on stderr: -v warnings, -vv information (every round), -vvv "
                             "debugging and a traceback on errors; without it only errors")
    common.add_argument("-q", "--quiet", action="store_true", help="no progress display and no summary lines")
    return common


def data_options(parser: argparse.ArgumentParser, labels: str = "required") -> None:
    """Add ``--target`` and ``--group``, which say where a data file holds its labels and arrays."""
    parser.add_argument("--target", metavar="COLUMN",
                        help="target column of CSV/TSV/NPY data: a header name or an index (negative counts from "
                             "the end); default the column named 'target', else the last one. NPZ/HDF5 data hold "
                             "arrays 'features' (or 'data', 'x', 'X') and 'labels' (or 'targets', 'target', 'y')"
                             + ("" if labels == "required" else "; for prediction the labels are optional"))
    parser.add_argument("--group", metavar="GROUP", help="HDF5 group holding the datasets, e.g. 'train' or 'test' "
                                                         "in bob's MNIST file (default: the root)")


def scheduler_options(parser: argparse.ArgumentParser, work: str, note: str) -> None:
    """Add ``--scheduler`` and ``--chunk-rows``: ``work`` (a phrase) on a Dask cluster, then ``note``."""
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help=f"{work} on the Dask cluster whose scheduler listens at ADDRESS (e.g. "
                             "tcp://scheduler:8786), the workers reading the data file themselves, chunk by chunk "
                             "(HDF5, NPY, or CSV/TSV/TXT with dask.dataframe installed); " + note + "; needs "
                             "pip install \"bob_boost[dask]\"")
    parser.add_argument("--chunk-rows", type=positive_int, metavar="N",
                        help="with --scheduler: rows per chunk (CSV: about N rows per block of the text); default: "
                             "about 64 MiB of features per chunk")


def load_dask_support():
    """The module behind ``--scheduler`` (:mod:`bob_boost.cli._dask_input`), imported only now.

    Raises
    ------
    CommandError
        When Dask or distributed is not installed, naming the extra that installs them.
    """
    try:
        from . import _dask_input
    except ImportError as error:
        # bob_boost.dask's own ImportError names the extra too; show what is missing
        cause = error.__cause__ if isinstance(error.__cause__, ImportError) else error
        raise CommandError(f"--scheduler needs Dask and distributed ({one_line(cause)}): "
                           f"pip install \"bob_boost[dask]\"") from None
    return _dask_input


def check_chunk_rows(args: argparse.Namespace) -> None:
    """``--chunk-rows`` sizes the chunks of ``--scheduler`` only; alone it would be silently ignored."""
    if args.chunk_rows is not None and args.scheduler is None:
        raise CommandError("--chunk-rows: sets the chunks of --scheduler; give --scheduler too, or drop it")


# -- logging and errors --------------------------------------------------------------
class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record arrives (tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


@contextlib.contextmanager
def cli_logging(verbosity: int) -> Iterator[None]:
    """Route the package's log to stderr at the ``-v`` level for one command, then restore it.

    The handler sits on the ``bob_boost`` parent logger, so every module's ``logging.getLogger(__name__)``
    reaches it.
    """
    level = {0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO}.get(verbosity, logging.DEBUG)
    package_logger = logging.getLogger("bob_boost")
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("bob-boost: %(levelname)s: %(message)s"))
    saved_level, saved_propagate = package_logger.level, package_logger.propagate
    package_logger.setLevel(level)
    package_logger.addHandler(handler)
    package_logger.propagate = False
    try:
        yield
    finally:
        package_logger.removeHandler(handler)
        package_logger.setLevel(saved_level)
        package_logger.propagate = saved_propagate


def one_line(error: BaseException) -> str:
    """The message of ``error`` on one line (its type's name when it has none)."""
    message = " ".join(str(error).split())
    return message or type(error).__name__


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed command and return its exit status.

    An expected error (see :data:`EXPECTED_ERRORS`) prints one line on stderr and returns 1, or is re-raised
    with ``-vvv`` so that its traceback shows; a reader that closed stdout early (``| head``) ends the command
    quietly with status 0.
    """
    prog = f"bob-boost {args.command}"
    try:
        with cli_logging(args.verbose):
            status = args.handler(args)
            # a closed pipe must show here, where it is handled, not in the interpreter's final flush
            sys.stdout.flush()
        return status
    except BrokenPipeError:
        # as the Python documentation recommends: later writes (the flush at exit) go to devnull
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except EXPECTED_ERRORS as error:
        if args.verbose >= 3:
            raise
        print(f"{prog}: error: {one_line(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


# -- models --------------------------------------------------------------------------
def load_model(path: str, check_classes: bool = True) -> BoostedMachine:
    """Load a model; a missing or invalid file (or, if ``check_classes``, class list) is a one-line error."""
    if not Path(path).is_file():
        raise CommandError(f"{path}: no such model file")
    machine = BoostedMachine.load(path)
    logger.debug("%s: %d weak machines, %s output(s)", path, len(machine), machine.number_of_outputs)
    if check_classes:
        model_classes(machine, path)
    return machine


def model_classes(machine: BoostedMachine, source: str = "the model") -> ClassEncoding | None:
    """The class encoding of a classifier (from its metadata, else the default one); None for regression.

    Raises
    ------
    bob_boost.ModelFormatError
        If the metadata names classes that do not fit the machine.
    """
    return classes_of(machine, source) if machine.is_classifier else None


def model_categories(machine: BoostedMachine) -> dict[int, list] | None:
    """The categories a model trained on a Parquet or Arrow file keeps for its category and text columns (None:
    none), to code new files' columns alike."""
    kept = machine.metadata.get("categories")
    return {int(j): list(values) for j, values in kept.items()} if isinstance(kept, dict) else None


def check_one_label(machine: BoostedMachine, path: str) -> None:
    """Refuse a multi-label model (decision rule ``"multilabel"``), whose predictions are a set of labels per
    sample where the command reads and writes one label column."""
    if machine.decision_rule == "multilabel":
        raise CommandError(f"{path}: a multi-label model predicts a set of labels per sample, and this command "
                           "has one label column; predict it with bob_boost.sklearn.load_estimator, "
                           "BoostedMachine.predict or its ONNX export (bob-boost export)")


def predicted_indices(machine: BoostedMachine, features: np.ndarray) -> np.ndarray:
    """Class index of each sample under the machine's decision rule."""
    return machine.class_indices_from_scores(machine.decision_scores(features))


#: Parameter names of the library, as the options that set them are spelled here.
_OPTIONS = {"cost_matrix": "--cost-matrix", "sample_costs": "--sample-costs", "calibration": "--calibration",
            "calibration_fraction": "--calibration-fraction", "cost_positive": "--cost-positive",
            "cost_negative": "--cost-negative",
            "positive_label": "--positive-label", "weak_learner": "--weak-learner", "loss": "--loss",
            "trainer": "--trainer", "selection_style": "--selection-style", "lut_entries": "--lut-entries",
            "selection": "--selection", "max_bins": "--max-bins", "chunk_rows": "--chunk-rows",
            "quantized_gradients": "--tree-quantized-gradients", "subsample": "--subsample",
            "subsample_freq": "--subsample-freq", "method": "--sampling", "top_rate": "--top-rate",
            "other_rate": "--other-rate", "colsample_bytree": "--colsample-bytree",
            "colsample_bynode": "--colsample-bynode", "random_state": "--seed",
            "sampling": "--sampling", "top_rate, other_rate": "--top-rate, --other-rate",
            "min_weight_fraction_leaf": "--min-weight-fraction-leaf", "monotonic_cst": "--monotonic-cst",
            "interaction_cst": "--interaction-cst", "categorical_features": "--categorical"}


def as_options(error: ValueError) -> CommandError:
    """``error`` with the library's parameter names replaced by the options that set them.

    Only where a message names a parameter: its leading ``name:`` and a ``needs name``.
    """
    names = "|".join(_OPTIONS)
    message = re.sub(rf"^({names}):", lambda match: _OPTIONS[match.group(1)] + ":", str(error))
    message = re.sub(rf"\bneeds ({names})\b", lambda match: "needs " + _OPTIONS[match.group(1)], message)
    return CommandError(message)
