"""Codes kept per listed entry: a sparse feature's codes are its frequent bin except at its listed rows, so a
feature that is mostly one bin costs memory for its other rows only.

:class:`~bob_boost.engine.codes.CodedFeatures` keeps the codes of its *stored* features in a matrix (row
``code_rows[f]`` of ``codes``; every feature of a dense matrix is stored) and, for every sparse feature,
the rows outside its frequent bin (``rows[row_starts[f]:row_starts[f + 1]]``, ascending) with their codes
(``listed_codes``, alongside). A feature coded from a sparse matrix's non-zeros is only listed
(``code_rows[f] == -1``). A sparse matrix is coded per stored value (:class:`CodedEntries`), never as a
(#features, #samples) array; the compiled kernels here build the storage from that and give the codes of one
listed feature where a grower needs them.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .kernels import _code
from .threads import balanced_ranges, run_blocks

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Steps of a binary search among a feature's listed rows, about log2 of a large count: a node of fewer rows
#: than its feature's listed rows over this looks its rows up instead of setting all the listed ones.
SEARCH_STEPS = 24


class CodedEntries(NamedTuple):
    """A CSC matrix's bin codes per stored value: ``stored[k]`` is the code of ``data[k]`` (row ``indices[k]``
    of feature ``f`` for ``indptr[f] <= k < indptr[f + 1]``), ``zero_codes[f]`` that of the feature's
    implicit zeros."""

    indptr: np.ndarray
    indices: np.ndarray
    stored: np.ndarray
    zero_codes: np.ndarray
    n_samples: int


def sparse_entries(features, kernel, arguments: tuple, dtype: type, n_threads: int) -> CodedEntries:
    """A sparse matrix's :class:`CodedEntries` by ``kernel`` (:func:`code_entries` or :func:`rank_entries` and
    their ``arguments``), a block of features a task."""
    columns = _sorted_columns(features)
    stored = np.empty(columns.data.size, dtype=dtype)
    zero_codes = np.empty(features.shape[1], dtype=dtype)
    blocks = [(columns.indptr, columns.data) + arguments + (a, b, stored, zero_codes)
              for a, b in balanced_ranges(np.diff(columns.indptr) + 1, 4 * n_threads)]
    run_blocks(kernel, blocks, n_threads)
    return CodedEntries(columns.indptr, columns.indices, stored, zero_codes, features.shape[0])


def _sorted_columns(features):
    """The matrix in CSC form with each column's rows ascending (a copy where it was not so already)."""
    columns = features.tocsc()
    return columns if columns.has_sorted_indices else columns.sorted_indices()


def integer_entries(features, missing_code: int | None, dtype: type) -> CodedEntries:
    """A sparse matrix of integer values as their own codes (look-up tables), NaN as ``missing_code``."""
    columns = _sorted_columns(features)
    data = columns.data
    if missing_code is not None and data.dtype.kind == "f":
        data = np.where(np.isnan(data), missing_code, data)
    return CodedEntries(columns.indptr, columns.indices, data.astype(dtype), np.zeros(features.shape[1], dtype=dtype),
                        features.shape[0])


@numba.njit(**_JIT)
def code_entries(indptr, data, thresholds, missing_codes, feature_start, feature_stop, stored, zero_codes):
    """The code of every stored value of a CSC matrix's features ``feature_start:feature_stop`` (into
    ``stored``, alongside ``data``) and each feature's code of 0: the comparisons of the dense kernels."""
    for f in range(feature_start, feature_stop):
        edges = thresholds[f]
        zero_codes[f] = _code(edges, missing_codes[f], 0.0)
        for k in range(indptr[f], indptr[f + 1]):
            stored[k] = _code(edges, missing_codes[f], np.float64(data[k]))


@numba.njit(**_JIT)
def rank_entries(indptr, data, low, ranks, feature_start, feature_stop, stored, zero_codes):
    """:func:`code_entries` of integer features coded by rank (``ranks[f, v - low[f]]``)."""
    for f in range(feature_start, feature_stop):
        zero_codes[f] = ranks[f, -low[f]] if low[f] <= 0 else 0
        for k in range(indptr[f], indptr[f + 1]):
            stored[k] = ranks[f, np.int64(data[k]) - low[f]]


@numba.njit(**_JIT)
def count_entries(indptr, stored, zero_codes, n_samples, feature_start, feature_stop, counts):
    """``counts[f, b]``, the samples of feature ``f`` in bin ``b``, from the stored entries' codes and the
    implicit zeros."""
    for f in range(feature_start, feature_stop):
        row = counts[f]
        row[zero_codes[f]] += n_samples - (indptr[f + 1] - indptr[f])
        for k in range(indptr[f], indptr[f + 1]):
            row[stored[k]] += 1


@numba.njit(**_JIT)
def fill_entries(indptr, indices, stored, zero_codes, mode_bins, code_rows, row_starts, n_samples, feature_start,
                 feature_stop, codes, rows, listed_codes):
    """Store features ``feature_start:feature_stop`` of a CSC matrix from their entries' codes: a dense
    feature (``code_rows[f] >= 0``) into its row of ``codes``; a sparse one's rows outside its frequent bin,
    ascending, with their codes, into its range of ``rows`` and ``listed_codes``. Where the frequent bin is
    that of 0 the listed rows are stored entries only (a pass over the non-zeros); otherwise the implicit
    zeros are listed too, and the feature holds more stored values than zeros."""
    for f in range(feature_start, feature_stop):
        zero = zero_codes[f]
        low, high = indptr[f], indptr[f + 1]
        if code_rows[f] >= 0:
            target = codes[code_rows[f]]
            target[:] = zero
            for k in range(low, high):
                target[indices[k]] = stored[k]
            continue
        mode = mode_bins[f]
        position = row_starts[f]
        if zero == mode:
            for k in range(low, high):
                if stored[k] != mode:
                    rows[position] = indices[k]
                    listed_codes[position] = stored[k]
                    position += 1
            continue
        k = low
        for i in range(n_samples):
            code = zero
            if k < high and indices[k] == i:
                code = stored[k]
                k += 1
            if code != mode:
                rows[position] = i
                listed_codes[position] = code
                position += 1


@numba.njit(**_JIT)
def list_codes(codes, mode_bins, row_starts, feature_start, feature_stop, rows, listed_codes):
    """Fill ``rows[row_starts[f]:row_starts[f + 1]]`` with the rows of stored feature ``f`` outside its
    frequent bin, and ``listed_codes`` with their codes."""
    n_samples = codes.shape[1]
    for f in range(feature_start, feature_stop):
        mode = mode_bins[f]
        if mode < 0:
            continue
        position = row_starts[f]
        feature_codes = codes[f]
        for i in range(n_samples):
            if feature_codes[i] != mode:
                rows[position] = i
                listed_codes[position] = feature_codes[i]
                position += 1


@numba.njit(**_JIT)
def node_codes(stored, mode_bins, f, order, start, stop):
    """Feature ``f``'s codes, readable at the rows ``order[start:stop]``: its row of the stored codes, or (a
    listed feature) the scratch column ``stored[5]`` set at those rows, which costs the node's rows and the
    feature's listed rows (a node far smaller looks each row up instead), not a pass over every sample."""
    codes, code_rows, row_starts, rows, listed_codes, column = stored
    if code_rows[f] >= 0:
        return codes[code_rows[f]]
    if (stop - start) * SEARCH_STEPS < row_starts[f + 1] - row_starts[f]:
        # a node far smaller than the feature's listed rows: a binary search per row costs less than them
        for p in range(start, stop):
            column[order[p]] = code_at(stored, mode_bins, f, order[p])
        return column
    mode = mode_bins[f]
    for p in range(start, stop):
        column[order[p]] = mode
    # rows outside the node get codes too; nothing reads them before the next node sets its own
    for e in range(row_starts[f], row_starts[f + 1]):
        column[rows[e]] = listed_codes[e]
    return column


@numba.njit(**_JIT)
def code_at(stored, mode_bins, f, i):
    """The code of feature ``f`` at row ``i`` (a listed feature's by a binary search of its listed rows)."""
    codes, code_rows, row_starts, rows, listed_codes = stored[0], stored[1], stored[2], stored[3], stored[4]
    if code_rows[f] >= 0:
        return np.intp(codes[code_rows[f], i])
    low, high = row_starts[f], row_starts[f + 1]
    while low < high:
        middle = (low + high) >> 1
        if rows[middle] < i:
            low = middle + 1
        else:
            high = middle
    if low < row_starts[f + 1] and rows[low] == i:
        return np.intp(listed_codes[low])
    return np.intp(mode_bins[f])


@numba.njit(**_JIT)
def codes_at(stored, mode_bins, features, rows, out):
    """``out[k]``: the code of feature ``features[k]`` at row ``rows[k]`` (:func:`code_at`)."""
    for k in range(rows.size):
        out[k] = code_at(stored, mode_bins, features[k], rows[k])
