"""Data tables: features and labels from CSV/TSV/TXT (optionally .gz), NPY, NPZ, HDF5, Parquet and Arrow (Feather)
files, and predictions back.

Every problem with a file is a :class:`~bob_boost.exceptions.DataFormatError`
whose message names the file and what is wrong, fit to show a user as it is. The rules that say how a
file reads (:func:`format_suffix`, :func:`has_header`, :func:`has_target`, :func:`column_index`) are
public so that the lazy reader, :func:`bob_boost.dask._files.read_lazy_table`, follows the same ones.
"""
from __future__ import annotations

import csv
import gzip
import io
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from ..exceptions import DataFormatError
from . import _delimited, arrow_files, row_files
from .row_files import FEATURE_KEYS, LABEL_KEYS
from .svmlight import SVMLIGHT_SUFFIXES, read_svmlight

__all__ = ["ARROW_SUFFIXES", "FEATURE_KEYS", "HDF5_SUFFIXES", "LABEL_KEYS", "TABLE_SUFFIXES", "Table", "column_index",
           "format_suffix", "has_header", "has_target", "read_table", "write_predictions"]

logger = logging.getLogger(__name__)

TABLE_SUFFIXES = (".csv", ".tsv", ".txt")
HDF5_SUFFIXES = (".h5", ".hdf5", ".hdf")
#: Parquet and Arrow IPC (Feather) files, read with pyarrow (the ``arrow`` extra).
ARROW_SUFFIXES = (".parquet", ".feather", ".arrow")


@dataclass
class Table:
    """Features and (optional) labels read from a data file.

    Attributes
    ----------
    features : numpy.ndarray or scipy.sparse.csr_matrix
        (#samples, #features); int64 when every value is a whole number, else float64; a LibSVM file's are
        a float64 CSR matrix.
    labels : numpy.ndarray or None
        (#samples,) numbers or strings; None when the file has no target column.
    feature_names : list of str or None
        Column names from a header line (or a Parquet or Arrow file's schema).
    categories : dict or None
        Parquet and Arrow files: for each feature column of categories (dictionary) or text, its
        categories (the feature holds each value's position among them; see :mod:`bob_boost.io.frames`).
    """

    features: np.ndarray
    labels: np.ndarray | None
    feature_names: list[str] | None = None
    categories: dict[int, list] | None = None


def format_suffix(path: Path) -> str:
    """The lower-case format suffix of ``path``, looking through a final ``.gz``.

    Parameters
    ----------
    path : Path
        A data or output file.

    Returns
    -------
    str
        ``".csv"`` for ``data.CSV.gz``, say; ``""`` when the name has no suffix (or only ``.gz``).
    """
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        return suffixes[-2] if len(suffixes) > 1 else ""
    return suffixes[-1] if suffixes else ""


def column_index(target: str | None, names: list[str] | None, width: int, path: Path) -> int:
    """Index of the target column: a header name, an integer (negative counts from the end), or the default.

    Parameters
    ----------
    target : str or None
        A header name or an index as text; None: the column named ``target``, else the last one.
    names : list of str or None
        The header's column names, if the table has a header.
    width : int
        Number of columns.
    path : Path
        The file, for error messages.

    Raises
    ------
    DataFormatError
        For a name that is not a column or an index out of range.
    """
    if target is None:
        return names.index("target") if names and "target" in names else width - 1
    if names and target in names:
        return names.index(target)
    try:
        index = int(target)
    except ValueError:
        raise DataFormatError(f"{path}: no column named {target!r}"
                              + (f" (columns: {', '.join(names)})" if names else " (the file has no header)")
                              ) from None
    if not -width <= index < width:
        raise DataFormatError(f"{path}: target column {index} is out of range for {width} columns")
    return index % width


def read_table(path: str | Path, target: str | None = None, with_target: bool | None = True,
               number_of_features: int | None = None, group: str | None = None,
               categories: dict[int, list] | None = None) -> Table:
    """Read features and labels from CSV/TSV (optionally .gz), NPY, NPZ, HDF5, Parquet, Arrow (Feather) or
    LibSVM (a scipy CSR matrix of features, :mod:`bob_boost.io.svmlight`).

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
    categories : dict, optional
        Parquet and Arrow files: the categories to code each category or text feature column with (a
        trained model's, so that the same values get the same codes); default each column's own.

    Returns
    -------
    Table
        The features, the labels (None when the file has none and ``with_target`` allows that) and the
        column names of a header line.

    Raises
    ------
    DataFormatError
        For every problem with the file, naming the file and what is wrong.
    """
    path = Path(path)
    if not path.is_file():
        raise DataFormatError(f"{path}: no such file")
    suffix = format_suffix(path)
    if suffix in TABLE_SUFFIXES:
        table = _read_delimited(path, target, with_target, number_of_features)
    elif suffix == ".npy":
        source = row_files.npy_rows(path)
        table = _split_matrix(source.features(0, source.rows), path, target, with_target, number_of_features)
    elif suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as archive:
                arrays = {key: archive[key] for key in archive.files}
        except (ValueError, OSError, EOFError) as error:
            raise DataFormatError(f"{path}: not a readable NPZ file ({error})") from None
        table = _from_arrays(arrays, path, target, with_target, number_of_features)
    elif suffix in HDF5_SUFFIXES:
        table = _read_hdf5(path, group, with_target)
    elif suffix in ARROW_SUFFIXES:
        table = arrow_files.read_table(path, suffix, target, with_target, number_of_features, categories)
    elif suffix in SVMLIGHT_SUFFIXES:
        features, labels = read_svmlight(path, number_of_features)
        table = Table(features, _delimited.numeric(labels) if with_target is not False else None)
    else:
        raise DataFormatError(f"{path}: unknown data format {suffix or '(no suffix)'!r}; use .csv, .tsv, .txt "
                              f"(optionally .gz), .npy, .npz, .h5, .hdf5, .parquet, .feather, .arrow or .svm "
                              f"(LibSVM)")
    if with_target and table.labels is None:
        raise DataFormatError(f"{path}: no labels found")
    if number_of_features is not None and table.features.shape[1] != number_of_features:
        raise DataFormatError(f"{path}: has {table.features.shape[1]} feature columns but the model expects "
                              f"{number_of_features}")
    if table.features.shape[0] == 0 or table.features.shape[1] == 0:
        raise DataFormatError(f"{path}: no data (features of shape {table.features.shape})")
    logger.debug("%s: %d samples, %d features, %s", path, *table.features.shape,
                 "no labels" if table.labels is None else "labels")
    return table


def has_target(with_target: bool | None, target: str | None, names: list[str] | None, width: int,
               number_of_features: int | None) -> bool:
    """Whether a table of ``width`` columns holds a target column (see :func:`read_table`'s ``with_target``).

    Parameters
    ----------
    with_target : bool or None
        True or False decides; None: a target column is there when ``target`` is given, when a header
        names a column ``target``, or when the table has one column more than ``number_of_features``.
    target, names, width, number_of_features
        The requested target column, the header's names, the number of columns, a model's width.
    """
    if with_target is not None:
        return with_target
    if target is not None or (names and "target" in names):
        return True
    return number_of_features is not None and width == number_of_features + 1


def has_header(first_rows: list[list[str]]) -> bool:
    """Whether a table's first row is a header: text only, or a text cell above a number in the second row.

    Parameters
    ----------
    first_rows : list of list of str
        The first one or two non-empty rows, as stripped cells.
    """
    first_numeric = [_delimited.is_number(cell) for cell in first_rows[0]]
    return not any(first_numeric) or (len(first_rows) > 1 and any(
        not numeric and _delimited.is_number(cell) for numeric, cell in zip(first_numeric, first_rows[1])))


def _read_delimited(path: Path, target: str | None, with_target: bool | None,
                    number_of_features: int | None) -> Table:
    text, delimiter = _delimited.read_text(path, format_suffix(path))
    first = _delimited.rows(text, delimiter, limit=2)
    if not first:
        raise DataFormatError(f"{path}: empty file")
    width = len(first[0])
    header = has_header(first)
    names = first[0] if header else None
    index = (column_index(target, names, width, path)
             if has_target(with_target, target, names, width, number_of_features) else None)
    features, labels = _delimited.parse(path, text, delimiter, header, width, names, index)
    if not np.all(np.isfinite(features)):
        raise DataFormatError(f"{path}: features contain NaN or infinite values")
    feature_names = [n for c, n in enumerate(names) if c != index] if names else None
    return Table(_delimited.numeric(features), labels, feature_names)


def _check_numeric(array: np.ndarray, what: str, path: Path) -> np.ndarray:
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise DataFormatError(f"{path}: {what} must be numeric, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.floating) and not np.all(np.isfinite(array)):
        raise DataFormatError(f"{path}: {what} contain NaN or infinite values")
    return array


def _split_matrix(matrix: np.ndarray, path: Path, target: str | None, with_target: bool | None,
                  number_of_features: int | None) -> Table:
    if matrix.ndim != 2:
        raise DataFormatError(f"{path}: expected a 2-D (#samples, #columns) array, got shape {matrix.shape}")
    matrix = _check_numeric(matrix, "values", path)
    if not has_target(with_target, target, None, matrix.shape[1], number_of_features):
        return Table(matrix, None)
    index = column_index(target, None, matrix.shape[1], path)
    return Table(np.delete(matrix, index, axis=1), matrix[:, index])


def _from_arrays(arrays: dict[str, np.ndarray], path: Path, target: str | None, with_target: bool | None,
                 number_of_features: int | None) -> Table:
    feature_key = next((k for k in FEATURE_KEYS if k in arrays), None)
    if feature_key is None:
        if len(arrays) == 1:
            return _split_matrix(next(iter(arrays.values())), path, target, with_target, number_of_features)
        raise DataFormatError(f"{path}: no features array (looked for {', '.join(FEATURE_KEYS)}; "
                              f"found {', '.join(sorted(arrays)) or 'nothing'})")
    features = _check_numeric(np.asarray(arrays[feature_key]), f"{feature_key!r}", path)
    if features.ndim > 2:  # images: one row per sample
        features = features.reshape(features.shape[0], -1)
    if features.ndim != 2:
        raise DataFormatError(f"{path}: {feature_key!r} must be 2-D (#samples, #features), has shape "
                              f"{features.shape}")
    label_key = next((k for k in LABEL_KEYS if k in arrays), None)
    if label_key is None or with_target is False:
        return Table(features, None)
    labels = np.asarray(arrays[label_key])
    if labels.dtype.kind == "S":
        labels = labels.astype(str)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1 or labels.shape[0] != features.shape[0]:
        raise DataFormatError(f"{path}: {label_key!r} must hold one label per sample, has shape {labels.shape} "
                              f"for {features.shape[0]} samples")
    return Table(features, labels)


def _read_hdf5(path: Path, group: str | None, with_target: bool | None) -> Table:
    source = row_files.hdf5_rows(path, group, with_target is not False)
    features = _check_numeric(source.features(0, source.rows), source.name, path)
    features = features.reshape(source.rows, int(np.prod(source.shape)))  # images: one row per sample
    if source.labels is None:
        return Table(features, None)
    labels = source.labels(0, source.rows)
    return Table(features, labels.astype(str) if labels.dtype == object else labels)


def write_predictions(path: str | Path, labels: np.ndarray, scores: np.ndarray, score_names: list[str]) -> None:
    """Write predicted labels and scores in the format the suffix of ``path`` names.

    Parameters
    ----------
    path : path
        ``.csv``/``.tsv``/``.txt`` (optionally ``.gz``): a header ``label, *score_names`` and one row per
        sample; ``.npz`` and ``.hdf5``: arrays ``labels`` and ``scores``; ``.npy``: the scores only;
        ``"-"``: CSV on standard output.
    labels : numpy.ndarray
        (#samples,) predicted labels, numbers or strings.
    scores : numpy.ndarray
        (#samples, #outputs) scores.
    score_names : list of str
        Column names of the scores in text tables.

    Raises
    ------
    DataFormatError
        If the suffix names no known format.
    """
    path = str(path)
    target = Path(path)
    suffix = format_suffix(target) if path != "-" else ".csv"
    if suffix in TABLE_SUFFIXES:
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
        raise DataFormatError(f"{path}: unknown output format {suffix or '(no suffix)'!r}; use .csv, .tsv "
                              f"(.gz), .npz, .npy or .hdf5")


def __getattr__(name: str):
    """``read_cost_matrix`` and ``read_sample_costs`` at their import path before
    :mod:`bob_boost.io.cost_files` (imported on use: that module reads this one's suffixes)."""
    if name in ("read_cost_matrix", "read_sample_costs"):
        from . import cost_files

        return getattr(cost_files, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
