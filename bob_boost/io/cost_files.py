"""Cost files: a class cost matrix, and example-dependent costs (a row of costs per sample), from text or NPY."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..costs import check_cost_matrix
from ..exceptions import DataFormatError
from . import _delimited
from .tables import format_suffix

__all__ = ["read_cost_matrix", "read_sample_costs"]


def read_cost_matrix(path: str | Path) -> np.ndarray:
    """Read a square cost matrix from CSV/TSV/whitespace-separated text (optionally .gz) or NPY.

    Parameters
    ----------
    path : path
        The file; rows are the true class, columns the predicted class.

    Returns
    -------
    numpy.ndarray
        (K, K) float64 costs, checked by :func:`bob_boost.costs.check_cost_matrix`.

    Raises
    ------
    DataFormatError
        If the file is missing or unreadable or does not hold a valid cost matrix.
    """
    path = Path(path)
    matrix = _number_matrix(path, "cost-matrix", "cost matrix")
    try:
        return check_cost_matrix(matrix, "cost matrix")
    except (TypeError, ValueError) as error:
        raise DataFormatError(f"{path}: {error}") from None


def read_sample_costs(path: str | Path) -> np.ndarray:
    """Read example-dependent costs, a row per sample, from CSV/TSV/whitespace-separated text (optionally .gz)
    or NPY.

    Parameters
    ----------
    path : path
        The file: row ``n`` holds the cost of predicting each class (in sorted label order) for sample ``n``.

    Returns
    -------
    numpy.ndarray
        (#samples, K) float64 costs, finite and non-negative (the trainer checks them against the labels:
        :func:`bob_boost.costs.check_sample_costs`).

    Raises
    ------
    DataFormatError
        If the file is missing or unreadable, or does not hold a 2-D matrix of finite non-negative numbers.
    """
    path = Path(path)
    matrix = np.asarray(_number_matrix(path, "sample-costs", "sample costs"))
    if matrix.ndim != 2 or matrix.dtype.kind not in "biuf":
        raise DataFormatError(f"{path}: the sample costs must be a 2-D matrix of numbers (a row per sample), got "
                              f"shape {matrix.shape} of dtype {matrix.dtype}")
    matrix = matrix.astype(np.float64)
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise DataFormatError(f"{path}: the sample costs must be finite and non-negative")
    return matrix


def _number_matrix(path: Path, kind: str, what: str) -> np.ndarray:
    """The numbers of an NPY file, or of a text file's rows (commas, tabs or whitespace between them); ``kind``
    and ``what`` name the file and its contents in messages."""
    if not path.is_file():
        raise DataFormatError(f"{path}: no such {kind} file")
    if format_suffix(path) == ".npy":
        try:
            return np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError) as error:
            raise DataFormatError(f"{path}: not a readable NPY file ({error})") from None
    rows = _delimited.rows(*_delimited.read_text(path, format_suffix(path)))
    if all(len(row) == 1 for row in rows):  # no commas or tabs: whitespace-separated
        rows = [row[0].split() for row in rows]
    try:
        return np.array(rows, dtype=np.float64)
    except ValueError:
        raise DataFormatError(f"{path}: the {what} must hold numbers only, with the same count per row") from None
