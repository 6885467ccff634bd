"""What every subcommand shares: the parser type, option types, logging, error handling, labels and models.

The label helpers (:func:`class_list`, :func:`class_indices`, :func:`_model_classes`) are the command line's
own label codec; they sit together here so that one class-encoding type can replace them in one place.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..exceptions import BobBoostError
from ..machine import BoostedMachine

logger = logging.getLogger(__name__)

#: Errors that are the user's to fix (bad files, options, models), shown as one line. bob_boost's public
#: functions document ValueError and TypeError for bad input; OSError covers unreadable or unwritable files.
EXPECTED_ERRORS = (BobBoostError, ValueError, TypeError, OSError)


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


# -- labels <-> class indices --------------------------------------------------------
def class_list(labels: np.ndarray, positive_label: str | None) -> list:
    """Sorted distinct labels; with two classes and ``positive_label`` that class comes last (it gets +1)."""
    classes = np.unique(labels).tolist()  # Python scalars, as JSON metadata needs
    if len(classes) < 2:
        raise CommandError(f"the labels hold a single class ({classes[0]!r}); need at least two")
    if positive_label is not None:
        match = [c for c in classes if str(c) == positive_label]
        if not match:
            raise CommandError(f"--positive-label {positive_label!r} is not one of the classes "
                               f"{[str(c) for c in classes]}")
        if len(classes) != 2:
            raise CommandError("--positive-label needs exactly two classes")
        classes = [c for c in classes if c != match[0]] + match
    return classes


def class_indices(labels: np.ndarray, classes: list, source: str) -> np.ndarray:
    """Map ``labels`` to positions in ``classes``; an unknown label is an error naming ``source``."""
    as_text = np.array([str(c) for c in classes])
    text = labels.astype(str) if labels.dtype.kind != "U" else labels
    if labels.dtype.kind in "iuf" and all(isinstance(c, (int, float)) for c in classes):
        keys, values = np.asarray(classes, dtype=np.float64), labels.astype(np.float64)
    else:
        keys, values = as_text, text
    order = np.argsort(keys)
    position = np.clip(np.searchsorted(keys[order], values), 0, len(classes) - 1)
    found = keys[order][position] == values
    if not np.all(found):
        unknown = np.unique(text[~found])[:5].tolist()
        raise CommandError(f"{source}: labels {unknown} were not seen in training (classes: {as_text.tolist()})")
    return order[position]


def _model_classes(machine: BoostedMachine, model: str = "the model") -> list:
    """The class labels of the model's predictions: metadata ``classes``, checked against the outputs."""
    outputs = machine.number_of_outputs or 1
    count = 2 if outputs == 1 else outputs
    classes = machine.metadata.get("classes")
    if classes is None:
        # a model written elsewhere (or a regression model): univariate ones label -1/+1, others 0..K-1
        return [-1, 1] if outputs == 1 else list(range(outputs))
    problem = None
    if not isinstance(classes, list) or len(classes) != count:
        problem = f"expected a list of {count} class labels for {outputs} output(s)"
    elif not all(isinstance(c, (str, int, float)) for c in classes):
        problem = "class labels must be single values (text or numbers)"
    elif len({str(c) for c in classes}) != count:
        problem = "class labels must be distinct"
    if problem:
        shown = repr(classes)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise CommandError(f"{model}: metadata 'classes': {problem}, got {shown}")
    return classes


# -- models --------------------------------------------------------------------------
def load_model(path: str, check_classes: bool = True) -> BoostedMachine:
    """Load a model; a missing or invalid file (or, if ``check_classes``, class list) is a one-line error."""
    if not Path(path).is_file():
        raise CommandError(f"{path}: no such model file")
    machine = BoostedMachine.load(path)
    logger.debug("%s: %d weak machines, %s output(s)", path, len(machine), machine.number_of_outputs)
    if check_classes:
        _model_classes(machine, path)
    return machine


def predicted_indices(machine: BoostedMachine, features: np.ndarray) -> np.ndarray:
    """Class index of each sample: 1 for a positive univariate score, else the machine's multi-class rule."""
    return machine.class_indices_from_scores(machine.decision_scores(features))
