"""Delimited text (CSV/TSV/TXT, optionally gzip-compressed) parsed into numbers, quickly and exactly.

A table whose every cell is a plain number is parsed in one go (by pandas' C reader for large tables when
pandas is installed, else by numpy); any other table is read cell by cell, which gives the exact error
messages (the row of a ragged line, the column and row of a cell that is not a number). Both ways give the
same numbers: pandas is used only where it agrees with numpy and Python's ``float``.
"""
from __future__ import annotations

import csv
import gzip
import io
import logging
from pathlib import Path

import numpy as np

from .._optional import import_or_none
from ..exceptions import DataFormatError

logger = logging.getLogger(__name__)

#: Numeric tables of at least this many characters are parsed by pandas when it is installed: its C reader is
#: about five times faster than ``numpy.loadtxt``, which pays for importing pandas (~0.2 s) from about this size.
PANDAS_MIN_CHARS = 1 << 24


def is_number(text: str) -> bool:
    """Whether Python's ``float`` reads ``text``."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def numeric(array: np.ndarray) -> np.ndarray:
    """Integer array when every value is whole (so LUT trainers accept it), float64 otherwise."""
    array = np.asarray(array, dtype=np.float64)
    if np.all(np.isfinite(array)) and np.all(array == np.round(array)) and np.all(np.abs(array) < 2 ** 53):
        return array.astype(np.int64)
    return array


def read_text(path: Path, suffix: str) -> tuple[str, str]:
    """The text of a (possibly gzip-compressed) table and its delimiter.

    The delimiter is a tab for ``.tsv`` files and for ``.txt`` files that hold tabs but no comma, else a comma.
    """
    delimiter = "\t" if suffix == ".tsv" else ","
    with open(path, "rb") as handle:
        compressed = handle.read(2) == b"\x1f\x8b"
    try:
        with (gzip.open(path, "rt", newline="") if compressed else open(path, newline="")) as handle:
            text = handle.read()
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as error:
        raise DataFormatError(f"{path}: not a readable text table ({error})") from None
    if suffix == ".txt" and delimiter not in text and "\t" in text:
        delimiter = "\t"
    return text, delimiter


def rows(text: str, delimiter: str, limit: int | None = None) -> list[list[str]]:
    """Non-empty rows of stripped cells, at most ``limit`` of them."""
    found = []
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):
        if any(cell.strip() for cell in row):
            found.append([cell.strip() for cell in row])
            if limit is not None and len(found) == limit:
                break
    return found


def parse(path: Path, text: str, delimiter: str, header: bool, width: int, names: list[str] | None,
          index: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Features (float64, without the target column) and labels (None when ``index`` is None) of a table.

    Parameters
    ----------
    path : Path
        The file, for error messages.
    text, delimiter : str
        Its text and the delimiter of its cells.
    header : bool
        Whether the first non-empty row holds column names.
    width : int
        Number of columns of the first row, which every row must have.
    names : list of str or None
        Column names, for error messages.
    index : int or None
        Column of the labels.
    """
    matrix = _all_numbers(text, delimiter, header, width)
    if matrix is None:
        return _parse_cells(path, text, delimiter, header, width, names, index)
    labels = None if index is None else numeric(matrix[:, index])
    return (matrix if index is None else np.delete(matrix, index, axis=1)), labels


def _all_numbers(text: str, delimiter: str, header: bool, width: int) -> np.ndarray | None:
    """Fast path: the whole table as float64, or None when some cell is not a plain number."""
    body = text
    if header:  # drop the header line
        stripped = text.lstrip("\r\n")
        newline = stripped.find("\n")
        body = "" if newline < 0 else stripped[newline + 1:]
    if not body.strip():
        return None
    matrix = _pandas_numbers(body, delimiter) if len(body) >= PANDAS_MIN_CHARS else None
    if matrix is None or not matrix.shape[0] or matrix.shape[1] != width or not np.all(np.isfinite(matrix)):
        # numpy decides every doubtful case, so the result never depends on whether pandas is installed
        matrix = _numpy_numbers(body, delimiter)
        parser = "numpy"
    else:
        parser = "pandas"
    if matrix is None or not matrix.shape[0] or matrix.shape[1] != width:
        return None
    logger.debug("parsed a %d x %d table with %s", *matrix.shape, parser)
    return matrix


def _numpy_numbers(body: str, delimiter: str) -> np.ndarray | None:
    try:
        return np.loadtxt(io.StringIO(body), delimiter=delimiter, dtype=np.float64, ndmin=2, comments=None)
    except ValueError:
        return None


def _pandas_numbers(body: str, delimiter: str) -> np.ndarray | None:
    """The table parsed by pandas' C reader, or None when pandas is missing or a cell is not a number."""
    first = rows(body, delimiter, limit=1)
    # pandas reads a column of true/false words as 1/0 where Python's float() refuses them; such a
    # column shows in the first row
    if not first or not all(map(is_number, first[0])):
        return None
    pandas = import_or_none("pandas")  # the only import of pandas in bob_boost.io: optional, and slow to load
    if pandas is None:
        return None
    try:
        frame = pandas.read_csv(io.StringIO(body), sep=delimiter, header=None, dtype=np.float64, na_filter=False,
                                engine="c")
    except (ValueError, pandas.errors.ParserError):
        return None
    return frame.to_numpy(dtype=np.float64)


def _parse_cells(path: Path, text: str, delimiter: str, header: bool, width: int, names: list[str] | None,
                 index: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Slow path with exact error messages: text labels, bad cells, ragged rows."""
    table = rows(text, delimiter)
    for line, row in enumerate(table, 1):
        if len(row) != width:
            raise DataFormatError(f"{path}: row {line} has {len(row)} columns, the first row has {width}")
    body = table[1:] if header else table
    if not body:
        raise DataFormatError(f"{path}: no data rows")
    cells = np.array(body, dtype=object)
    labels = None
    feature_columns = [c for c in range(width) if c != index]
    if index is not None:
        column = cells[:, index]
        labels = numeric(column.astype(np.float64)) if all(map(is_number, column)) else column.astype(str)
    features = np.empty((len(body), len(feature_columns)))
    for j, column in enumerate(feature_columns):
        try:
            features[:, j] = cells[:, column].astype(np.float64)
        except ValueError:
            bad = next(i for i, cell in enumerate(cells[:, column]) if not is_number(cell))
            name = f"{names[column]!r}" if names else str(column)
            raise DataFormatError(f"{path}: column {name}, data row {bad + 1}: {cells[bad, column]!r} is not a "
                                  f"number") from None
    return features, labels
