"""The ``bob-boost`` command line: train, evaluate, predict, inspect, examples and plots.

Every failure the user can cause (a missing or malformed file, a bad
column, a bad option, a corrupt model) ends with one line on stderr and a
non-zero exit status, never a traceback. Run ``bob-boost --help`` or
``bob-boost <command> --help`` for the options.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import inspect
import io
import json
import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import h5py
import numpy as np

from . import __version__, datasets, evaluation
from .costs import check_cost_matrix
from .exceptions import ModelFormatError
from .losses.base import BinaryClassificationLoss, LossFunction
from .losses.cmel import CMELoss
from .machine import BoostedMachine
from .progress import Progress
from .registry import loss_class, loss_names
from .trainers import Boosting, LUTTrainer, StumpTrainer
from .trainers.badacost import BAdaCostTrainer, SAMMETrainer
from .trainers.cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from .trainers.multiclass import CostSensitiveTreeTrainer, MultiClassLUTTrainer, MultiClassStumpTrainer
from .weak.lut import check_discrete

logger = logging.getLogger("bob_boost")

TABLE_SUFFIXES = (".csv", ".tsv", ".txt")
HDF5_SUFFIXES = (".h5", ".hdf5", ".hdf")
FEATURE_KEYS = ("features", "data", "x", "X")
LABEL_KEYS = ("labels", "targets", "target", "y")
TRAINERS = ("boosting", "adaboostdb", "cost-sensitive-adaboost", "badacost", "samme")
#: bob.learn.boosting's short loss names in its MNIST example.
EXAMPLE_LOSSES = {"exp": "exponential", "log": "logit", "tan": "tangential"}


class CommandError(Exception):
    """A user error with a message fit to print as it is."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows "(default: ...)" only for options that take a value and have a default."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.nargs == 0:
            return action.help or ""
        return super()._get_help_string(action)


# -- reading data ------------------------------------------------------------------
@dataclass
class Table:
    """Features and (optional) labels read from a data file.

    Attributes
    ----------
    features : numpy.ndarray
        (#samples, #features); int64 when every value is a whole number, else float64.
    labels : numpy.ndarray or None
        (#samples,) numbers or strings; None when the file has no target column.
    feature_names : list of str or None
        Column names from a header line.
    """

    features: np.ndarray
    labels: np.ndarray | None
    feature_names: list[str] | None = None


def _suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        return suffixes[-2] if len(suffixes) > 1 else ""
    return suffixes[-1] if suffixes else ""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _numeric(array: np.ndarray) -> np.ndarray:
    """Integer array when every value is whole (so LUT trainers accept it), float64 otherwise."""
    array = np.asarray(array, dtype=np.float64)
    if np.all(np.isfinite(array)) and np.all(array == np.round(array)) and np.all(np.abs(array) < 2 ** 53):
        return array.astype(np.int64)
    return array


def _read_text(path: Path) -> tuple[str, str]:
    """The text of a (possibly gzip-compressed) table and its delimiter (tab for .tsv, else comma)."""
    delimiter = "\t" if _suffix(path) == ".tsv" else ","
    with open(path, "rb") as handle:
        compressed = handle.read(2) == b"\x1f\x8b"
    try:
        with (gzip.open(path, "rt", newline="") if compressed else open(path, newline="")) as handle:
            text = handle.read()
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as error:
        raise CommandError(f"{path}: not a readable text table ({error})") from None
    if _suffix(path) == ".txt" and delimiter not in text and "\t" in text:
        delimiter = "\t"
    return text, delimiter


def _rows(text: str, delimiter: str, limit: int | None = None) -> list[list[str]]:
    """Non-empty rows of stripped cells, at most ``limit`` of them."""
    rows = []
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):
        if any(cell.strip() for cell in row):
            rows.append([cell.strip() for cell in row])
            if limit is not None and len(rows) == limit:
                break
    return rows


def _read_text_rows(path: Path) -> list[list[str]]:
    return _rows(*_read_text(path))


def _column_index(target: str | None, names: list[str] | None, width: int, path: Path) -> int:
    """Index of the target column: a header name, an integer (negative counts from the end), or the default."""
    if target is None:
        return names.index("target") if names and "target" in names else width - 1
    if names and target in names:
        return names.index(target)
    try:
        index = int(target)
    except ValueError:
        raise CommandError(f"{path}: no column named {target!r}"
                           + (f" (columns: {', '.join(names)})" if names else " (the file has no header)")) from None
    if not -width <= index < width:
        raise CommandError(f"{path}: target column {index} is out of range for {width} columns")
    return index % width


def read_table(path: str | Path, target: str | None = None, with_target: bool | None = True,
               number_of_features: int | None = None, group: str | None = None) -> Table:
    """Read features and labels from CSV/TSV (optionally .gz), NPY, NPZ or HDF5.

    Parameters
    ----------
    path : path
        The data file; its format follows its suffix.
    target : str, optional
        Target column (name or index) of tables and NPY matrices; default the
        column named ``target``, else the last one.
    with_target : bool or None
        True: the file must hold labels; False: everything is a feature;
        None: labels are split off only when present (a ``target`` header, an
        explicit ``target``, labels in NPZ/HDF5, or one column more than
        ``number_of_features``).
    number_of_features : int, optional
        Width the features must have (that of a trained model).
    group : str, optional
        HDF5 group holding the datasets (default the root).

    Raises
    ------
    CommandError
        For every problem with the file, naming the file and what is wrong.
    """
    path = Path(path)
    if not path.is_file():
        raise CommandError(f"{path}: no such file")
    suffix = _suffix(path)
    if suffix in TABLE_SUFFIXES:
        table = _read_delimited(path, target, with_target, number_of_features)
    elif suffix == ".npy":
        try:
            matrix = np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError) as error:
            raise CommandError(f"{path}: not a readable NPY file ({error})") from None
        table = _split_matrix(matrix, path, target, with_target, number_of_features)
    elif suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as archive:
                arrays = {key: archive[key] for key in archive.files}
        except (ValueError, OSError, EOFError) as error:
            raise CommandError(f"{path}: not a readable NPZ file ({error})") from None
        table = _from_arrays(arrays, path, target, with_target, number_of_features)
    elif suffix in HDF5_SUFFIXES:
        table = _read_hdf5(path, group, target, with_target, number_of_features)
    else:
        raise CommandError(f"{path}: unknown data format {suffix or '(no suffix)'!r}; use .csv, .tsv, .txt "
                           f"(optionally .gz), .npy, .npz, .h5 or .hdf5")
    if with_target and table.labels is None:
        raise CommandError(f"{path}: no labels found")
    if number_of_features is not None and table.features.shape[1] != number_of_features:
        raise CommandError(f"{path}: has {table.features.shape[1]} feature columns but the model expects "
                           f"{number_of_features}")
    if table.features.shape[0] == 0 or table.features.shape[1] == 0:
        raise CommandError(f"{path}: no data (features of shape {table.features.shape})")
    return table


def _has_target(with_target, target, names, width, number_of_features) -> bool:
    if with_target is not None:
        return with_target
    if target is not None or (names and "target" in names):
        return True
    return number_of_features is not None and width == number_of_features + 1


def _read_delimited(path: Path, target, with_target, number_of_features) -> Table:
    text, delimiter = _read_text(path)
    first = _rows(text, delimiter, limit=2)
    if not first:
        raise CommandError(f"{path}: empty file")
    width = len(first[0])
    first_numeric = [_is_number(cell) for cell in first[0]]
    # a header has a text cell where the next row has a number, or text only
    header = not any(first_numeric) or (len(first) > 1 and any(
        not numeric and _is_number(cell) for numeric, cell in zip(first_numeric, first[1])))
    names = first[0] if header else None
    has_target = _has_target(with_target, target, names, width, number_of_features)
    index = _column_index(target, names, width, path) if has_target else None
    matrix = _all_numbers(text, delimiter, header, width)
    if matrix is not None:
        labels = None if index is None else _numeric(matrix[:, index])
        features = matrix if index is None else np.delete(matrix, index, axis=1)
    else:
        features, labels = _parse_cells(path, text, delimiter, header, width, names, index)
    if not np.all(np.isfinite(features)):
        raise CommandError(f"{path}: features contain NaN or infinite values")
    feature_names = [n for c, n in enumerate(names) if c != index] if names else None
    return Table(_numeric(features), labels, feature_names)


def _all_numbers(text: str, delimiter: str, header: bool, width: int) -> np.ndarray | None:
    """Fast path: the whole table parsed by numpy, or None when some cell is not a plain number."""
    body = text
    if header:  # drop the header line
        stripped = text.lstrip("\r\n")
        newline = stripped.find("\n")
        body = "" if newline < 0 else stripped[newline + 1:]
    if not body.strip():
        return None
    try:
        matrix = np.loadtxt(io.StringIO(body), delimiter=delimiter, dtype=np.float64, ndmin=2, comments=None)
    except ValueError:
        return None
    return matrix if matrix.shape[0] and matrix.shape[1] == width else None


def _parse_cells(path: Path, text: str, delimiter: str, header: bool, width: int, names: list[str] | None,
                 index: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Slow path with exact error messages: text labels, bad cells, ragged rows."""
    rows = _rows(text, delimiter)
    for line, row in enumerate(rows, 1):
        if len(row) != width:
            raise CommandError(f"{path}: row {line} has {len(row)} columns, the first row has {width}")
    body = rows[1:] if header else rows
    if not body:
        raise CommandError(f"{path}: no data rows")
    cells = np.array(body, dtype=object)
    labels = None
    feature_columns = [c for c in range(width) if c != index]
    if index is not None:
        column = cells[:, index]
        labels = _numeric(column.astype(np.float64)) if all(map(_is_number, column)) else column.astype(str)
    features = np.empty((len(body), len(feature_columns)))
    for j, column in enumerate(feature_columns):
        try:
            features[:, j] = cells[:, column].astype(np.float64)
        except ValueError:
            bad = next(i for i, cell in enumerate(cells[:, column]) if not _is_number(cell))
            name = f"{names[column]!r}" if names else str(column)
            raise CommandError(f"{path}: column {name}, data row {bad + 1}: {cells[bad, column]!r} is not a number"
                               ) from None
    return features, labels


def _check_numeric(array: np.ndarray, what: str, path: Path) -> np.ndarray:
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise CommandError(f"{path}: {what} must be numeric, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.floating) and not np.all(np.isfinite(array)):
        raise CommandError(f"{path}: {what} contain NaN or infinite values")
    return array


def _split_matrix(matrix: np.ndarray, path: Path, target, with_target, number_of_features) -> Table:
    if matrix.ndim != 2:
        raise CommandError(f"{path}: expected a 2-D (#samples, #columns) array, got shape {matrix.shape}")
    matrix = _check_numeric(matrix, "values", path)
    if not _has_target(with_target, target, None, matrix.shape[1], number_of_features):
        return Table(matrix, None)
    index = _column_index(target, None, matrix.shape[1], path)
    return Table(np.delete(matrix, index, axis=1), matrix[:, index])


def _from_arrays(arrays: dict[str, np.ndarray], path: Path, target, with_target, number_of_features) -> Table:
    feature_key = next((k for k in FEATURE_KEYS if k in arrays), None)
    if feature_key is None:
        if len(arrays) == 1:
            return _split_matrix(next(iter(arrays.values())), path, target, with_target, number_of_features)
        raise CommandError(f"{path}: no features array (looked for {', '.join(FEATURE_KEYS)}; "
                           f"found {', '.join(sorted(arrays)) or 'nothing'})")
    features = _check_numeric(np.asarray(arrays[feature_key]), f"{feature_key!r}", path)
    if features.ndim > 2:  # images: one row per sample
        features = features.reshape(features.shape[0], -1)
    if features.ndim != 2:
        raise CommandError(f"{path}: {feature_key!r} must be 2-D (#samples, #features), has shape {features.shape}")
    label_key = next((k for k in LABEL_KEYS if k in arrays), None)
    if label_key is None or with_target is False:
        return Table(features, None)
    labels = np.asarray(arrays[label_key])
    if labels.dtype.kind == "S":
        labels = labels.astype(str)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1 or labels.shape[0] != features.shape[0]:
        raise CommandError(f"{path}: {label_key!r} must hold one label per sample, has shape {labels.shape} for "
                           f"{features.shape[0]} samples")
    return Table(features, labels)


def _dataset_array(item: h5py.Dataset, path: Path) -> np.ndarray:
    """A dataset's values; strings (which h5py returns as bytes objects) as a str array."""
    if h5py.check_string_dtype(item.dtype) is None:
        return np.asarray(item[()])
    try:
        return np.asarray(item.asstr()[()], dtype=str)
    except UnicodeDecodeError as error:
        raise CommandError(f"{path}:{item.name}: text that is not {error.encoding}") from None


def _read_hdf5(path: Path, group: str | None, target, with_target, number_of_features) -> Table:
    try:
        handle = h5py.File(path, "r")
    except OSError as error:
        raise CommandError(f"{path}: not a readable HDF5 file ({error})") from None
    with handle:
        node = handle[group] if group and group in handle else handle
        if group and group not in handle:
            raise CommandError(f"{path}: no group {group!r} (top level: {', '.join(handle.keys())})")
        if not isinstance(node, h5py.Group):
            raise CommandError(f"{path}: {group!r} is not a group")
        arrays = {key: _dataset_array(item, path) for key, item in node.items()
                  if isinstance(item, h5py.Dataset) and (key in FEATURE_KEYS or key in LABEL_KEYS)}
        if not arrays:
            found = sorted(node.keys())
            listing = ", ".join(found[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
            raise CommandError(f"{path}:{node.name}: no dataset named {', '.join(FEATURE_KEYS + LABEL_KEYS)} "
                               f"(found: {listing or 'nothing'}; choose a group with --group)")
    return _from_arrays(arrays, path, target, with_target, number_of_features)


def read_cost_matrix(path: str | Path) -> np.ndarray:
    """Read a square cost matrix from CSV/TSV/whitespace text (.gz too) or NPY; rows: true class."""
    path = Path(path)
    if not path.is_file():
        raise CommandError(f"{path}: no such cost-matrix file")
    if _suffix(path) == ".npy":
        try:
            matrix = np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError) as error:
            raise CommandError(f"{path}: not a readable NPY file ({error})") from None
    else:
        rows = _read_text_rows(path)
        if all(len(row) == 1 for row in rows):  # no commas or tabs: whitespace-separated
            rows = [row[0].split() for row in rows]
        try:
            matrix = np.array(rows, dtype=np.float64)
        except ValueError:
            raise CommandError(f"{path}: the cost matrix must hold numbers only, with the same count per row"
                               ) from None
    try:
        return check_cost_matrix(matrix, "cost matrix")
    except (TypeError, ValueError) as error:
        raise CommandError(f"{path}: {error}") from None


# -- labels <-> targets --------------------------------------------------------------
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


# -- training ------------------------------------------------------------------------
def build_loss(name: str, args: argparse.Namespace, cost_matrix: np.ndarray | None) -> LossFunction:
    """Instantiate the registered loss ``name``, passing the cost options its constructor takes."""
    try:
        cls = loss_class(name)
    except KeyError:
        raise CommandError(f"unknown loss {name!r}; known losses: {', '.join(loss_names())}") from None
    available = {"cost_matrix": cost_matrix, "cost_positive": args.cost_positive,
                 "cost_negative": args.cost_negative}
    kwargs = {}
    for parameter in inspect.signature(cls).parameters.values():
        if parameter.name in available and available[parameter.name] is not None:
            kwargs[parameter.name] = available[parameter.name]
        elif parameter.default is inspect.Parameter.empty and parameter.kind in (
                parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            option = "--" + parameter.name.replace("_", "-")
            raise CommandError(f"loss {name!r} needs {option}")
    return cls(**kwargs)


def _lut_entries(features: np.ndarray, requested: int | None, source: str) -> int:
    """LUT size: ``requested`` or the largest value + 1; every value of ``source`` must index the table."""
    # a LUT needs at least two entries even when every training value is 0
    entries = max(2, int(features.max()) + 1) if requested is None else requested
    try:
        check_discrete(features, entries)
    except ValueError as error:
        raise CommandError(f"{source}: {error} (LUT weak learners; see --lut-entries)") from None
    return entries


def train_machine(args: argparse.Namespace, table: Table) -> BoostedMachine:
    """Train the machine the options of ``bob-boost train`` describe."""
    features, labels = table.features, table.labels
    cost_matrix = read_cost_matrix(args.cost_matrix) if args.cost_matrix else None
    rounds = args.rounds
    metadata: dict[str, Any] = {"trainer": args.trainer, "command": "bob-boost train"}
    if table.feature_names:
        metadata["feature_names"] = table.feature_names

    if args.trainer in ("badacost", "samme"):
        classes = class_list(labels, args.positive_label)
        indices = class_indices(labels, classes, args.data)
        if args.weak_learner == "lut":
            entries = _lut_entries(features, args.lut_entries, args.data)
            weak = MultiClassLUTTrainer(entries)
            metadata["lut_entries"] = entries
        elif args.weak_learner == "stump":
            weak = MultiClassStumpTrainer()
        else:
            weak = CostSensitiveTreeTrainer(max_depth=args.tree_depth)
        options = dict(weak_learner=weak, number_of_rounds=rounds, shrinkage=args.shrinkage,
                       feature_fraction=args.feature_fraction, random_state=args.seed)
        if args.trainer == "badacost":
            if cost_matrix is None:
                raise CommandError("--trainer badacost needs --cost-matrix FILE")
            if cost_matrix.shape[0] != len(classes):
                raise CommandError(f"the cost matrix is {cost_matrix.shape[0]}x{cost_matrix.shape[0]} but the data "
                                   f"has {len(classes)} classes")
            trainer = BAdaCostTrainer(cost_matrix, **options)
        else:
            trainer = SAMMETrainer(number_of_classes=len(classes), **options)
        # the trainers minimise the CMEL of their cost matrix: progress shows it and the cost-sensitive error
        with Progress(rounds, CMELoss(trainer.cost_matrix), indices, quiet=args.quiet) as progress:
            machine = trainer.train(features, indices, callback=progress)
        task = "multiclass"
    elif args.trainer in ("adaboostdb", "cost-sensitive-adaboost"):
        classes = class_list(labels, args.positive_label)
        if len(classes) != 2:
            raise CommandError(f"--trainer {args.trainer} is binary but the data has {len(classes)} classes")
        targets = np.where(class_indices(labels, classes, args.data) == 1, 1.0, -1.0)
        costs = (1.0 if args.cost_positive is None else args.cost_positive,
                 1.0 if args.cost_negative is None else args.cost_negative)
        trainer = (AdaBoostDBTrainer(*costs, selection=args.selection) if args.trainer == "adaboostdb"
                   else CostSensitiveAdaBoostTrainer(*costs))
        with Progress(rounds, trainer.loss_function, targets, quiet=args.quiet) as progress:
            machine = trainer.train(features, targets, rounds, callback=progress)
        task = "binary"
    else:
        machine, classes, task = _train_generic(args, features, labels, cost_matrix, metadata)
    machine.metadata.update(metadata)
    machine.metadata.update({"task": task, "classes": classes})
    return machine


def _train_generic(args, features, labels, cost_matrix, metadata) -> tuple[BoostedMachine, list | None, str]:
    regression = args.loss is not None and not issubclass(_loss_type(args.loss), BinaryClassificationLoss) \
        and "cost_matrix" not in inspect.signature(_loss_type(args.loss)).parameters
    if regression:
        if labels.dtype.kind not in "iuf":
            raise CommandError(f"loss {args.loss!r} is a regression loss but the labels are not numbers")
        classes, task = None, "regression"
        targets = labels.astype(np.float64)
        loss = build_loss(args.loss, args, cost_matrix)
    else:
        classes = class_list(labels, args.positive_label)
        indices = class_indices(labels, classes, args.data)
        name = args.loss or ("exponential" if len(classes) == 2 else "logit")
        loss = build_loss(name, args, cost_matrix)
        if getattr(loss, "cost_matrix", None) is not None:
            targets, task = indices, "multiclass"
        elif len(classes) == 2:
            targets, task = np.where(indices == 1, 1.0, -1.0), "binary"
        else:
            # bob's multi-variate convention: +1 for the true class, -1 for the others
            targets = np.full((indices.size, len(classes)), -1.0)
            targets[np.arange(indices.size), indices] = 1.0
            task = "multiclass"
    number_of_outputs = loss.check_targets(targets).shape[1]
    if args.weak_learner == "lut":
        entries = _lut_entries(features, args.lut_entries, args.data)
        weak = LUTTrainer(entries, number_of_outputs, args.selection_style)
        metadata["lut_entries"] = entries
    elif args.weak_learner == "stump":
        if number_of_outputs != 1:
            raise CommandError(f"stumps are univariate but this task has {number_of_outputs} outputs; "
                               f"use --weak-learner lut")
        weak = StumpTrainer()
    else:
        raise CommandError(f"--weak-learner {args.weak_learner} needs --trainer badacost or samme")
    metadata["weak_learner"] = args.weak_learner
    with Progress(args.rounds, loss, targets, quiet=args.quiet) as progress:
        machine = Boosting(weak, loss).train(features, targets, args.rounds, callback=progress)
    return machine, classes, task


def _loss_type(name: str) -> type:
    try:
        return loss_class(name)
    except KeyError:
        raise CommandError(f"unknown loss {name!r}; known losses: {', '.join(loss_names())}") from None


# -- using a model -------------------------------------------------------------------
def load_model(path: str, check_classes: bool = True) -> BoostedMachine:
    """Load a model; a missing or invalid file (or, if ``check_classes``, class list) is a one-line error."""
    if not Path(path).is_file():
        raise CommandError(f"{path}: no such model file")
    machine = BoostedMachine.load(path)
    if check_classes:
        _model_classes(machine, path)
    return machine


def predicted_indices(machine: BoostedMachine, features: np.ndarray) -> np.ndarray:
    """Class index of each sample: 1 for a positive univariate score, else the machine's multi-class rule."""
    return machine.class_indices_from_scores(machine.decision_scores(features))


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


def evaluate(machine: BoostedMachine, table: Table, source: str, cost_matrix: np.ndarray | None,
             cost_positive: float, cost_negative: float, prior_positive: float) -> dict[str, Any]:
    """Accuracy, confusion matrix, average cost and (binary) FN/FP/NEC of ``machine`` on ``table``."""
    if machine.metadata.get("task") == "regression":
        scores = np.asarray(machine(table.features), dtype=np.float64)
        errors = scores - table.labels.astype(np.float64)
        return {"samples": int(errors.size), "mean_squared_error": float(np.mean(errors ** 2)),
                "mean_absolute_error": float(np.mean(np.abs(errors)))}
    classes = _model_classes(machine)
    truth = class_indices(table.labels, classes, source)
    predicted = predicted_indices(machine, table.features)
    k = len(classes)
    confusion = np.bincount(truth * k + predicted, minlength=k * k).reshape(k, k)
    result: dict[str, Any] = {"samples": int(truth.size), "classes": classes,
                              "accuracy": float(np.mean(truth == predicted)), "confusion_matrix": confusion.tolist()}
    if cost_matrix is not None:
        if cost_matrix.shape[0] != k:
            raise CommandError(f"the cost matrix is {cost_matrix.shape[0]}x{cost_matrix.shape[0]} but the model has "
                               f"{k} classes")
        result["average_cost"] = float(np.mean(cost_matrix[truth, predicted]))
    if k == 2:
        targets, predictions = np.where(truth == 1, 1, -1), np.where(predicted == 1, 1, -1)
        fn = evaluation.false_negative_rate(targets, predictions) if np.any(truth == 1) else float("nan")
        fp = evaluation.false_positive_rate(targets, predictions) if np.any(truth == 0) else float("nan")
        pcf = evaluation.probability_cost_function(cost_positive, cost_negative, prior_positive)
        # a rate is undefined (NaN) when the data lacks one class, and so is the NEC
        nec = evaluation.normalized_expected_cost(fn, fp, pcf) if np.isfinite(fn + fp) else float("nan")
        result.update({"positive_class": classes[1], "false_negative_rate": fn, "false_positive_rate": fp,
                       "pcf": pcf, "normalized_expected_cost": nec})
    return result


def _format_evaluation(result: dict[str, Any]) -> str:
    if "mean_squared_error" in result:
        return (f"samples: {result['samples']}\nmean squared error: {result['mean_squared_error']:.6g}\n"
                f"mean absolute error: {result['mean_absolute_error']:.6g}")
    names = [str(c) for c in result["classes"]]
    width = max(6, *(len(n) for n in names), *(len(str(v)) for row in result["confusion_matrix"] for v in row))
    lines = [f"samples: {result['samples']}", f"accuracy: {result['accuracy']:.2%}",
             "confusion matrix (rows: true class, columns: predicted class):",
             " " * width + " " + " ".join(n.rjust(width) for n in names)]
    for name, row in zip(names, result["confusion_matrix"]):
        lines.append(name.rjust(width) + " " + " ".join(str(v).rjust(width) for v in row))
    if "average_cost" in result:
        lines.append(f"average cost: {result['average_cost']:.6g}")
    if "false_negative_rate" in result:
        lines += [f"positive class: {result['positive_class']}",
                  f"false-negative rate: {result['false_negative_rate']:.2%}",
                  f"false-positive rate: {result['false_positive_rate']:.2%}",
                  f"normalized expected cost: {result['normalized_expected_cost']:.4f} (PCF {result['pcf']:.3f})"]
    return "\n".join(lines)


def write_predictions(path: str, labels: np.ndarray, scores: np.ndarray, score_names: list[str]) -> None:
    """Write labels and scores; the format follows the suffix (CSV/TSV(.gz), NPZ, NPY scores only, HDF5)."""
    target = Path(path)
    suffix = _suffix(target) if path != "-" else ".csv"
    if suffix in (".csv", ".tsv", ".txt"):
        delimiter = "\t" if suffix == ".tsv" else ","
        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
        writer.writerow(["label", *score_names])
        for label, row in zip(labels.tolist(), scores.tolist()):
            writer.writerow([label, *(repr(float(v)) for v in row)])
        if path == "-":
            sys.stdout.write(buffer.getvalue())
        elif target.name.lower().endswith(".gz"):
            with gzip.open(target, "wt") as handle:
                handle.write(buffer.getvalue())
        else:
            target.write_text(buffer.getvalue())
    elif suffix == ".npz":
        np.savez(target, labels=labels, scores=scores)
    elif suffix == ".npy":
        np.save(target, scores)
    elif suffix in HDF5_SUFFIXES:
        with h5py.File(target, "w") as handle:
            handle.create_dataset("labels", data=labels.astype(h5py.string_dtype()) if labels.dtype.kind == "U"
                                  else labels)
            handle.create_dataset("scores", data=scores)
    else:
        raise CommandError(f"{path}: unknown output format {suffix or '(no suffix)'!r}; use .csv, .tsv (.gz), "
                           f".npz, .npy or .hdf5")


def describe(machine: BoostedMachine, path: str, rounds: int | None) -> dict[str, Any]:
    """A JSON-able summary of a model: types, rounds, features used, weights."""
    weak = machine.weak_machines
    weights = machine.weights
    types: dict[str, int] = {}
    for m in weak:
        types[m.machine_type] = types.get(m.machine_type, 0) + 1
    shown = len(weak) if rounds is None else min(rounds, len(weak))
    return {
        "file": path, "weak_machines": len(weak), "outputs": machine.number_of_outputs,
        "number_of_features": machine.number_of_features, "machine_types": types,
        "features_used": machine.feature_indices().tolist(),
        "cost_matrix": None if machine.cost_matrix is None else machine.cost_matrix.tolist(),
        "metadata": machine.metadata,
        "rounds": [{"round": i + 1, "machine": repr(weak[i]), "features": weak[i].feature_indices().tolist(),
                    "weights": weights[i].tolist()} for i in range(shown)],
    }


def _format_description(summary: dict[str, Any]) -> str:
    used = summary["features_used"]
    preview = ", ".join(map(str, used[:30])) + (", ..." if len(used) > 30 else "")
    lines = [f"model: {summary['file']}",
             f"weak machines (rounds): {summary['weak_machines']}",
             "machine types: " + ", ".join(f"{k} x{v}" for k, v in summary["machine_types"].items()),
             f"outputs: {summary['outputs']}",
             f"features: {summary['number_of_features']} in the input, {len(used)} used: {preview}"]
    if summary["cost_matrix"] is not None:
        lines.append(f"cost matrix: {summary['cost_matrix']}")
    for key, value in sorted(summary["metadata"].items()):
        if key != "feature_names":
            lines.append(f"{key}: {value}")
    if summary["rounds"]:
        lines.append("round  weights  weak machine")
        for entry in summary["rounds"]:
            weights = " ".join(f"{w:.4g}" for w in entry["weights"])
            lines.append(f"{entry['round']:5d}  {weights}  {entry['machine']}")
        hidden = summary["weak_machines"] - len(summary["rounds"])
        if hidden:
            lines.append(f"... {hidden} more (use --rounds N or --all)")
    return "\n".join(lines)


# -- commands ------------------------------------------------------------------------
def command_train(args: argparse.Namespace) -> int:
    """``bob-boost train``."""
    if Path(args.output).exists() and not args.force:
        raise CommandError(f"{args.output}: exists; use --force to overwrite it")
    table = read_table(args.data, args.target, True, group=args.group)
    start = time.perf_counter()
    machine = train_machine(args, table)
    seconds = time.perf_counter() - start
    machine.save(args.output)
    if not args.quiet:
        print(f"trained {len(machine)} weak machines on {table.features.shape[0]} samples in {seconds:.2f} s; "
              f"wrote {args.output}")
    return 0


def command_evaluate(args: argparse.Namespace) -> int:
    """``bob-boost evaluate``."""
    machine = load_model(args.model)
    table = read_table(args.data, args.target, True, machine.number_of_features, args.group)
    cost_matrix = read_cost_matrix(args.cost_matrix) if args.cost_matrix else None
    result = evaluate(machine, table, args.data, cost_matrix, args.cost_positive, args.cost_negative,
                      args.prior_positive)
    print(json.dumps(result, indent=2) if args.json else _format_evaluation(result))
    return 0


def command_predict(args: argparse.Namespace) -> int:
    """``bob-boost predict``."""
    machine = load_model(args.model)
    table = read_table(args.data, args.target, None, machine.number_of_features, args.group)
    scores = machine.decision_scores(table.features)
    if machine.metadata.get("task") == "regression":
        labels = scores[:, 0]
    else:
        labels = np.array(_model_classes(machine))[predicted_indices(machine, table.features)]
    classes = _model_classes(machine)
    if scores.shape[1] == 1:
        names = ["score"]
    elif len(classes) == scores.shape[1]:
        names = [f"score_{c}" for c in classes]
    else:
        names = [f"score_{i}" for i in range(scores.shape[1])]
    write_predictions(args.output, labels, scores, names)
    return 0


def command_inspect(args: argparse.Namespace) -> int:
    """``bob-boost inspect``."""
    machine = load_model(args.model, check_classes=False)  # show whatever metadata the file holds
    summary = describe(machine, args.model, None if args.all else args.rounds)
    print(json.dumps(summary, indent=2) if args.json else _format_description(summary))
    return 0


def train_example(data: datasets.MNIST, digits: list[int], trainer_type: str = "stump", loss_type: str = "exp",
                  rounds: int = 100, multi_variate: bool = False, selection_style: str = "independent",
                  entries: int = 256, quiet: bool = True) -> BoostedMachine:
    """Train as bob.learn.boosting's MNIST example does.

    Parameters
    ----------
    data : datasets.MNIST
        Images (integers in ``0 .. entries-1``) and digit labels.
    digits : list of int
        Digits to separate; univariate training takes exactly two, the first
        gets target +1. Multi-variate training has one output per digit with
        +1 for the true digit and -1 for the others.
    trainer_type : {"stump", "lut"}
        The weak trainer; stumps are univariate only.
    loss_type : {"exp", "log", "tan"}
        Exponential, logit or tangential loss.
    rounds : int
        Number of boosting rounds.
    multi_variate : bool
        One output per digit (needs ``trainer_type="lut"``).
    selection_style : {"independent", "shared"}
        Feature selection of multi-variate LUTs.
    entries : int
        LUT size: 256 for MNIST pixels, 17 for :func:`datasets.make_digits`.
    quiet : bool
        No progress display.

    Returns
    -------
    BoostedMachine
        Its metadata ``classes`` maps predictions to digits as ``bob-boost evaluate`` expects.
    """
    _check_example_options(digits, trainer_type, multi_variate)
    targets = _example_targets(data.train_labels, digits, multi_variate)
    loss = loss_class(EXAMPLE_LOSSES[loss_type])()
    if trainer_type == "stump":
        weak = StumpTrainer()
    else:
        weak = LUTTrainer(entries, len(digits) if multi_variate else 1, selection_style)
    with Progress(rounds, loss, targets, quiet=quiet) as progress:
        machine = Boosting(weak, loss).train(data.train_data, targets, rounds, callback=progress)
    machine.metadata.update({"task": "multiclass" if multi_variate else "binary",
                             "classes": list(digits) if multi_variate else list(digits[::-1])})
    return machine


def _check_example_options(digits: list[int], trainer_type: str, multi_variate: bool) -> None:
    if not multi_variate and len(digits) != 2:
        raise CommandError(f"univariate training compares exactly two digits, got {digits}; "
                           f"use -m/--multi-variate for more")
    if trainer_type == "stump" and multi_variate:
        raise CommandError("stumps are univariate; use -t lut with -m/--multi-variate")


def example_accuracy(machine: BoostedMachine, features: np.ndarray, labels: np.ndarray, digits: list[int],
                     multi_variate: bool) -> float:
    """Fraction of correctly classified digits; multi-variate machines predict the digit of the largest score."""
    if labels.size == 0:
        return float("nan")
    predicted = np.asarray(machine.predict(features))
    if multi_variate:
        return float(np.mean(np.asarray(digits)[predicted] == labels))
    return float(np.mean(np.where(predicted > 0, digits[0], digits[1]) == labels))


def command_example(args: argparse.Namespace) -> int:
    """``bob-boost example mnist|digits``: bob.learn.boosting's MNIST example."""
    def say(line: str) -> None:
        if not args.quiet:
            print(line)

    if args.number_of_elements is not None and args.number_of_elements < 1:
        raise CommandError("-n/--number-of-elements must be at least 1")
    digits = list(range(10)) if args.all_digits else list(dict.fromkeys(args.digits))
    _check_example_options(digits, args.trainer_type, args.multi_variate)
    if args.dataset == "mnist":
        data = datasets.load_mnist(args.data, download=not args.no_download)
        entries = 256
    else:
        train_x, train_y = datasets.make_digits(args.samples, random_state=args.seed)
        test_x, test_y = datasets.make_digits(max(args.samples // 2, 1), random_state=args.seed + 1)
        data = datasets.MNIST(train_x, train_y, test_x, test_y)
        entries = 17
    data = data.subset(digits, args.number_of_elements)

    classifier = Path(args.classifier_file) if args.classifier_file else None
    settings = {"dataset": args.dataset, "digits": digits, "multi_variate": bool(args.multi_variate)}
    if classifier is not None and classifier.exists() and not args.force:
        machine = load_model(str(classifier))
        stored = machine.metadata.get("example")
        if stored != settings:
            raise CommandError(f"{classifier}: was trained for {stored or 'something else than this example'}, "
                               f"not for {settings}; use -F/--force to train again")
        say(f"loaded the classifier from {classifier} (use -F/--force to train again)")
    else:
        say(f"training on {data.train_labels.size} {args.dataset} images of digits {digits}: "
            f"{args.trainer_type} weak machines, {EXAMPLE_LOSSES[args.loss_type]} loss, "
            f"{args.number_of_boosting_rounds} rounds"
            + (f", {args.feature_selection_style} feature selection" if args.multi_variate else ""))
        start = time.perf_counter()
        machine = train_example(data, digits, args.trainer_type, args.loss_type, args.number_of_boosting_rounds,
                                args.multi_variate, args.feature_selection_style, entries, args.quiet)
        machine.metadata["command"] = f"bob-boost example {args.dataset}"
        machine.metadata["example"] = settings
        say(f"trained {len(machine)} weak machines in {time.perf_counter() - start:.2f} s")
        if classifier is not None:
            machine.save(classifier)
            say(f"wrote the classifier to {classifier}")
    for split, features, labels in (("training", data.train_data, data.train_labels),
                                    ("test", data.test_data, data.test_labels)):
        accuracy = example_accuracy(machine, features, labels, digits, args.multi_variate)
        print(f"classification performance on the {split} set: {accuracy:.2%}")
    return 0


def _example_targets(labels: np.ndarray, digits: list[int], multi_variate: bool) -> np.ndarray:
    """bob's targets: +1 for the first digit and -1 for the second, or per-digit +1/-1 columns."""
    if multi_variate:
        return np.where(labels[:, np.newaxis] == np.asarray(digits)[np.newaxis, :], 1.0, -1.0)
    return np.where(labels == digits[0], 1.0, -1.0)


def command_plot(args: argparse.Namespace) -> int:
    """``bob-boost plot errors|confusion|features|cost-curves``."""
    from . import plots

    if args.plot == "cost-curves":
        fn_rates, fp_rates, names = [], [], []
        for model in args.models:
            machine = load_model(model)
            result = evaluate(machine, read_table(args.data, args.target, True, machine.number_of_features,
                                                  args.group), args.data, None, 1.0, 1.0, 0.5)
            if "false_negative_rate" not in result:
                raise CommandError(f"{model}: cost curves need binary models")
            fn_rates.append(result["false_negative_rate"])
            fp_rates.append(result["false_positive_rate"])
            names.append(Path(model).stem)
        plots.plot_cost_curves(fn_rates, fp_rates, names, path=args.output)
    else:
        machine = load_model(args.model)
        if args.plot == "features":
            shape = tuple(args.image_shape) if args.image_shape else None
            plots.plot_feature_map(machine, shape, path=args.output)
        else:
            table = read_table(args.data, args.target, True, machine.number_of_features, args.group)
            classes = _model_classes(machine)
            truth = class_indices(table.labels, classes, args.data)
            if args.plot == "confusion":
                predicted = predicted_indices(machine, table.features)
                plots.plot_confusion_matrix(truth, predicted, [str(c) for c in classes], path=args.output)
            else:
                curves = {"training": plots.errors_per_round(machine, table.features, truth)}
                if args.test:
                    test = read_table(args.test, args.target, True, machine.number_of_features, args.group)
                    curves["test"] = plots.errors_per_round(machine, test.features,
                                                            class_indices(test.labels, classes, args.test))
                plots.plot_error_curves(curves, path=args.output)
    if not args.quiet:
        print(f"wrote {args.output}")
    return 0


# -- the parser ----------------------------------------------------------------------
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0 or not np.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return value


def _fraction(text: str) -> float:
    value = _positive_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text}")
    return value


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log messages on stderr: -v warnings, -vv information (every round), -vvv "
                             "debugging; without it only errors")
    common.add_argument("-q", "--quiet", action="store_true", help="no progress display and no summary lines")
    return common


def _data_options(parser: argparse.ArgumentParser, labels: str = "required") -> None:
    parser.add_argument("--target", metavar="COLUMN",
                        help="target column of CSV/TSV/NPY data: a header name or an index (negative counts from "
                             "the end); default the column named 'target', else the last one. NPZ/HDF5 data hold "
                             "arrays 'features' (or 'data', 'x', 'X') and 'labels' (or 'targets', 'target', 'y')"
                             + ("" if labels == "required" else "; for prediction the labels are optional"))
    parser.add_argument("--group", metavar="GROUP", help="HDF5 group holding the datasets, e.g. 'train' or 'test' "
                                                         "in bob's MNIST file (default: the root)")


def build_parser() -> argparse.ArgumentParser:
    """The ``bob-boost`` argument parser with all subcommands."""
    common = _common_options()
    parser = _Parser(prog="bob-boost", description="Train, evaluate and inspect boosted classifiers "
                     "(bob.learn.boosting style) from the shell.",
                     epilog="Data files: CSV/TSV/TXT (optionally .gz, with or without a header line), NPY (a "
                            "matrix whose target column is chosen with --target), NPZ and HDF5 (arrays 'features' "
                            "and 'labels'). Models are HDF5 files that bob.learn.boosting can read.")
    parser.add_argument("--version", action="version", version=f"bob-boost {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser,
                                     help="run 'bob-boost COMMAND --help' for its options")
    commands.required = True
    formatter = _HelpFormatter

    train = commands.add_parser("train", parents=[common], formatter_class=formatter,
                                help="train a boosted machine from a data file and write it to HDF5",
                                description="Train a boosted machine. Binary labels become +1 (the larger label, or "
                                            "--positive-label) and -1; more classes become one +1/-1 output per "
                                            "class (generic boosting with LUTs) or class indices (BAdaCost, SAMME, "
                                            "the cmel loss); regression losses (squared) use the labels as numbers.")
    train.add_argument("data", help="training data file")
    train.add_argument("-o", "--output", required=True, help="model file to write (HDF5)")
    _data_options(train)
    train.add_argument("--trainer", choices=TRAINERS, default="boosting",
                       help="boosting: generic loss-driven boosting; adaboostdb / cost-sensitive-adaboost: "
                            "cost-sensitive binary boosting of stumps; badacost / samme: multi-class boosting of "
                            "cost-sensitive trees, stumps or LUTs")
    train.add_argument("-l", "--loss", help="loss of the generic trainer, one of: " + ", ".join(loss_names() or [])
                       + " (default: exponential for two classes, logit for more)")
    train.add_argument("-w", "--weak-learner", choices=("stump", "lut", "tree"), default="stump",
                       help="weak learner; LUTs need integer features >= 0, trees are for badacost/samme")
    train.add_argument("-r", "--rounds", type=_positive_int, default=100, metavar="N", help="number of boosting rounds")
    train.add_argument("-s", "--selection-style", choices=("independent", "shared"), default="independent",
                       help="multi-output LUTs: one feature per output, or one shared by all outputs")
    train.add_argument("--lut-entries", type=_positive_int, metavar="N",
                       help="entries of each LUT (feature values 0..N-1); default: largest training value + 1")
    train.add_argument("--positive-label", help="the class that gets target +1 in binary problems")
    train.add_argument("--cost-positive", type=_positive_float,
                       help="cost of a false negative (adaboostdb, cost-sensitive-adaboost, double_base loss; "
                            "default 1)")
    train.add_argument("--cost-negative", type=_positive_float,
                       help="cost of a false positive (as --cost-positive)")
    train.add_argument("--selection", choices=("alpha", "loss"), default="alpha",
                       help="adaboostdb: keep the stump with the largest step (alpha, the paper's rule) or the one "
                            "that lowers the cost-sensitive bound most (loss, as cost-sensitive-adaboost does)")
    train.add_argument("--cost-matrix", metavar="FILE",
                       help="K x K cost matrix (CSV/TSV/text/NPY; rows: true class, columns: predicted class, in "
                            "sorted label order) for badacost and the cmel loss")
    train.add_argument("--tree-depth", type=_positive_int, default=2, help="depth of badacost/samme trees")
    train.add_argument("--shrinkage", type=_fraction, default=1.0, help="badacost/samme learning rate in (0, 1]")
    train.add_argument("--feature-fraction", type=_fraction, default=1.0,
                       help="badacost/samme: fraction of the features each round may use")
    train.add_argument("--seed", type=int, default=0, help="seed of the badacost/samme feature sampling")
    train.add_argument("-F", "--force", action="store_true", help="overwrite an existing model file")
    train.set_defaults(handler=command_train)

    evaluate_parser = commands.add_parser("evaluate", parents=[common], formatter_class=formatter,
                                          help="accuracy, confusion matrix, costs and FN/FP/NEC of a model on data")
    evaluate_parser.add_argument("model", help="model file (HDF5)")
    evaluate_parser.add_argument("data", help="labelled data file")
    _data_options(evaluate_parser)
    evaluate_parser.add_argument("--cost-matrix", metavar="FILE",
                                 help="K x K cost matrix; prints the average cost 1/N sum C[true, predicted]")
    evaluate_parser.add_argument("--cost-positive", type=_positive_float, default=1.0,
                                 help="binary: cost of a false negative, for the PCF and NEC")
    evaluate_parser.add_argument("--cost-negative", type=_positive_float, default=1.0,
                                 help="binary: cost of a false positive, for the PCF and NEC")
    evaluate_parser.add_argument("--prior-positive", type=_fraction, default=0.5,
                                 help="binary: prior p(+) in the PCF (0.5 as in the AdaBoostDB paper)")
    evaluate_parser.add_argument("--json", action="store_true", help="print the results as JSON")
    evaluate_parser.set_defaults(handler=command_evaluate)

    predict = commands.add_parser("predict", parents=[common], formatter_class=formatter,
                                  help="write predicted labels and scores")
    predict.add_argument("model", help="model file (HDF5)")
    predict.add_argument("data", help="data file (a target column, if present, is ignored)")
    predict.add_argument("-o", "--output", default="-",
                         help="output file: .csv/.tsv (optionally .gz; columns label, score...), .npz (labels, "
                              "scores), .npy (scores) or .hdf5 (labels, scores); '-' writes CSV to stdout")
    _data_options(predict, labels="optional")
    predict.set_defaults(handler=command_predict)

    inspect_parser = commands.add_parser("inspect", parents=[common], formatter_class=formatter,
                                         help="weak machine types, rounds, features used and weights of a model")
    inspect_parser.add_argument("model", help="model file (HDF5)")
    inspect_parser.add_argument("--rounds", type=int, default=10, help="number of rounds to list")
    inspect_parser.add_argument("--all", action="store_true", help="list every round")
    inspect_parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    inspect_parser.set_defaults(handler=command_inspect)

    example = commands.add_parser("example", formatter_class=formatter,
                                  help="bob.learn.boosting's MNIST example (mnist), or the same on generated "
                                       "8x8 digits that need no download (digits)")
    datasets_parsers = example.add_subparsers(dest="dataset", metavar="DATASET", parser_class=_Parser,
                                              help="the data set")
    datasets_parsers.required = True
    for name, text in (("mnist", "MNIST: --data PATH, else the cache (~/.cache/bob_boost or $BOB_BOOST_DATA), "
                                 "else a verified download"),
                       ("digits", "generated 8x8 digits with values 0..16 (offline)")):
        sub = datasets_parsers.add_parser(name, parents=[common], formatter_class=formatter, help=text,
                                          description=text)
        if name == "mnist":
            sub.add_argument("--data", metavar="PATH",
                             help="MNIST in bob's HDF5 layout, or a folder of the four original IDX files")
            sub.add_argument("--no-download", action="store_true", help="fail instead of downloading MNIST")
        else:
            sub.add_argument("--samples", type=_positive_int, default=3000,
                             help="number of generated training images (half as many test images)")
            sub.add_argument("--seed", type=int, default=0, help="seed of the generated training images")
        sub.add_argument("-t", "--trainer-type", choices=("stump", "lut"), default="stump",
                         help="the weak trainer")
        sub.add_argument("-l", "--loss-type", choices=tuple(EXAMPLE_LOSSES), default="exp",
                         help="the loss: exponential, logit or tangential")
        sub.add_argument("-r", "--number-of-boosting-rounds", type=_positive_int, default=100, metavar="N",
                         help="number of boosting rounds (weak machines)")
        sub.add_argument("-m", "--multi-variate", action="store_true",
                         help="one output per digit (+1 for the true digit, -1 for the others; needs -t lut)")
        sub.add_argument("-s", "--feature-selection-style", choices=("independent", "shared"),
                         default="independent", help="multi-variate LUTs: a feature per output or one shared")
        sub.add_argument("-d", "--digits", type=int, nargs="+", choices=range(10), default=[5, 6], metavar="DIGIT",
                         help="the digits to classify (univariate: exactly two; the first one gets +1)")
        sub.add_argument("-a", "--all-digits", action="store_true", help="use all ten digits (overrides -d)")
        sub.add_argument("-n", "--number-of-elements", type=int, metavar="N",
                         help="use only the first N training and N test images of each digit")
        sub.add_argument("-c", "--classifier-file", metavar="FILE",
                         help="store the trained classifier here, or load it from here if the file exists")
        sub.add_argument("-F", "--force", action="store_true",
                         help="train again even if the --classifier-file exists")
        sub.set_defaults(handler=command_example)

    plot = commands.add_parser("plot", help="write PNG figures (needs matplotlib: pip install bob_boost[plot])")
    kinds = plot.add_subparsers(dest="plot", metavar="KIND", parser_class=_Parser, help="the figure to draw")
    kinds.required = True
    errors = kinds.add_parser("errors", parents=[common], formatter_class=formatter,
                              help="training (and test) error after every round")
    errors.add_argument("model", help="model file (HDF5)")
    errors.add_argument("data", help="labelled training data")
    errors.add_argument("--test", metavar="DATA", help="labelled test data for a second curve")
    confusion = kinds.add_parser("confusion", parents=[common], formatter_class=formatter,
                                 help="confusion matrix of a model on labelled data")
    confusion.add_argument("model", help="model file (HDF5)")
    confusion.add_argument("data", help="labelled data")
    features = kinds.add_parser("features", parents=[common], formatter_class=formatter,
                                help="where the selected features lie in the image, weighted by |weight|")
    features.add_argument("model", help="model file (HDF5)")
    features.add_argument("--image-shape", type=_positive_int, nargs=2, metavar=("HEIGHT", "WIDTH"),
                          help="image height and width (default: square images)")
    curves = kinds.add_parser("cost-curves", parents=[common], formatter_class=formatter,
                              help="Drummond-Holte cost lines of binary models and their lower envelope")
    curves.add_argument("models", nargs="+", help="binary model files (HDF5)")
    curves.add_argument("--data", required=True, help="labelled data the models are evaluated on")
    for sub in (errors, confusion, features, curves):
        sub.add_argument("-o", "--output", required=True, help="PNG file to write")
        if sub is not features:
            _data_options(sub)
        sub.set_defaults(handler=command_plot)
    return parser


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a record arrives (tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


@contextlib.contextmanager
def _cli_logging(verbosity: int) -> Iterator[None]:
    """Route the package's log to stderr at the ``-v`` level for one command, then restore it."""
    level = {0: logging.ERROR, 1: logging.WARNING, 2: logging.INFO}.get(verbosity, logging.DEBUG)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("bob-boost: %(levelname)s: %(message)s"))
    saved_level, saved_propagate = logger.level, logger.propagate
    logger.setLevel(level)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved_level)
        logger.propagate = saved_propagate


def _one_line(error: BaseException) -> str:
    message = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
    message = " ".join(str(message).split())
    return message or type(error).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bob-boost`` with ``argv`` (default ``sys.argv[1:]``) and return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
    prog = f"bob-boost {args.command}"
    try:
        with _cli_logging(args.verbose):
            return args.handler(args)
    except (CommandError, ModelFormatError, ValueError, TypeError, KeyError, OSError, ImportError) as error:
        print(f"{prog}: error: {_one_line(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
