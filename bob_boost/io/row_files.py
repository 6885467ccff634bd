"""HDF5 and NPY data files read by ranges of rows.

:func:`hdf5_rows` and :func:`npy_rows` find where a file keeps its features and labels and check them from
the header alone (shapes and dtypes: every problem a :class:`~bob_boost.exceptions.DataFormatError` naming the
file); the :class:`RowFile` they return reads any rows ``start:stop``, each call opening and closing the file
itself. :func:`bob_boost.io.tables.read_table` reads every row at once; the lazy reader
(:func:`bob_boost.dask.read_lazy_table`) gives each of its tasks a range, so that workers in other processes
read their own rows. Both therefore accept and refuse the same files.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from ..exceptions import DataFormatError

__all__ = ["FEATURE_KEYS", "LABEL_KEYS", "RowFile", "hdf5_rows", "located", "npy_rows"]

#: Names under which NPZ archives and HDF5 groups hold the features and the labels, in order of preference.
FEATURE_KEYS = ("features", "data", "x", "X")
LABEL_KEYS = ("labels", "targets", "target", "y")


@dataclass(frozen=True)
class RowFile:
    """Where a file keeps its samples, and readers of their rows.

    Attributes
    ----------
    rows : int
        Number of samples.
    shape : tuple of int
        A sample's features (more than one axis for images, whose pixels are then one row).
    dtype : numpy.dtype
        The stored features' dtype.
    features : callable
        ``features(start, stop)``: the features of samples ``start:stop``, (stop - start, *shape).
    name : str
        The features' dataset, as messages name it.
    stored_rows : int or None
        Rows of the file's own chunks (HDF5), read whole however few rows are asked for; None: contiguous.
    labels : callable or None
        ``labels(start, stop)``: those samples' labels, (stop - start,) numbers or an object array of str;
        None when the file has none or they were not asked for.
    label_dtype : numpy.dtype or type or None
        The labels' dtype (``object`` for text).
    """

    rows: int
    shape: tuple[int, ...]
    dtype: np.dtype
    features: Callable[[int, int], np.ndarray]
    name: str = "values"
    stored_rows: int | None = None
    labels: Callable[[int, int], np.ndarray] | None = None
    label_dtype: np.dtype | type | None = None


def _dataset_rows(path: str, name: str, text: bool, flat: bool, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of a dataset (text as an object array of str; ``flat``: a column as a vector)."""
    with h5py.File(path, "r") as handle:
        item = handle[name]
        try:
            block = item.asstr()[start:stop] if text else item[start:stop]
        except UnicodeDecodeError as error:
            raise DataFormatError(f"{path}:{name}: text that is not {error.encoding}") from None
    block = np.asarray(block, dtype=object) if text else np.asarray(block)
    return block.reshape(-1) if flat else block


def _npy_rows(path: str, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of an NPY matrix, through a memory map of the file."""
    return np.array(np.load(path, mmap_mode="r", allow_pickle=False)[start:stop])


def located(path: Path) -> str:
    """The absolute path a reader opens: a worker may run in another directory than the caller."""
    return str(path.resolve())


def hdf5_rows(path: Path, group: str | None, with_labels: bool) -> RowFile:
    """The features (the first of :data:`FEATURE_KEYS`) and, with ``with_labels``, the labels (the first of
    :data:`LABEL_KEYS`, one per sample) of the HDF5 group ``group`` (None: the file's root).

    Raises
    ------
    DataFormatError
        For a file h5py cannot open, a missing group or features dataset, features that are not numeric or
        not at least 2-D, and labels of another length.
    """
    try:
        handle = h5py.File(path, "r")
    except OSError as error:
        raise DataFormatError(f"{path}: not a readable HDF5 file ({error})") from None
    with handle:
        if group and group not in handle:
            raise DataFormatError(f"{path}: no group {group!r} (top level: {', '.join(handle.keys())})")
        node = handle[group] if group else handle
        if not isinstance(node, h5py.Group):
            raise DataFormatError(f"{path}: {group!r} is not a group")
        datasets = {key: item for key, item in node.items() if isinstance(item, h5py.Dataset)}
        feature_key = next((k for k in FEATURE_KEYS if k in datasets), None)
        label_key = next((k for k in LABEL_KEYS if k in datasets), None)
        if feature_key is None:
            found = sorted(node.keys())
            listing = ", ".join(found[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
            raise DataFormatError(f"{path}:{node.name}: no features dataset (looked for {', '.join(FEATURE_KEYS)}; "
                                  f"found {listing or 'nothing'}; choose a group with --group)")
        item = datasets[feature_key]
        if h5py.check_string_dtype(item.dtype) is not None or item.dtype.kind not in "biuf":
            raise DataFormatError(f"{path}: {feature_key!r} must be numeric, got dtype {item.dtype}")
        if item.ndim < 2:
            raise DataFormatError(f"{path}: {feature_key!r} must be 2-D (#samples, #features), has shape "
                                  f"{item.shape}")
        rows = item.shape[0]
        source = RowFile(rows, tuple(item.shape[1:]), item.dtype,
                         functools.partial(_dataset_rows, located(path), item.name, False, False),
                         repr(feature_key), item.chunks[0] if item.chunks else None)
        if label_key is None or not with_labels:
            return source
        labels = datasets[label_key]
        if labels.shape not in ((rows,), (rows, 1)):
            raise DataFormatError(f"{path}: {label_key!r} must hold one label per sample, has shape "
                                  f"{labels.shape} for {rows} samples")
        text = h5py.check_string_dtype(labels.dtype) is not None
        read = functools.partial(_dataset_rows, located(path), labels.name, text, labels.ndim == 2)
        return RowFile(source.rows, source.shape, source.dtype, source.features, source.name, source.stored_rows,
                       read, object if text else labels.dtype)


def npy_rows(path: Path) -> RowFile:
    """The (#samples, #columns) numeric matrix of an NPY file (a target column among them or not).

    Raises
    ------
    DataFormatError
        For a file NumPy cannot read, or a matrix that is not 2-D or not numeric.
    """
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)  # the header only
    except (ValueError, OSError, EOFError) as error:
        raise DataFormatError(f"{path}: not a readable NPY file ({error})") from None
    if matrix.ndim != 2:
        raise DataFormatError(f"{path}: expected a 2-D (#samples, #columns) array, got shape {matrix.shape}")
    if matrix.dtype.kind not in "biuf":
        raise DataFormatError(f"{path}: values must be numeric, got dtype {matrix.dtype}")
    return RowFile(matrix.shape[0], (matrix.shape[1],), matrix.dtype, functools.partial(_npy_rows, located(path)))
