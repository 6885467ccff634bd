"""Scipy sparse feature matrices (CSR and CSC, matrices or arrays), read without densifying them whole.

Training bins a sparse matrix into the bins its dense form gets (:mod:`bob_boost.binning`): each feature's
thresholds come from its stored values and its count of implicit zeros, each stored value is coded by the
comparisons of the dense kernels, and a feature mostly in one bin keeps only its other rows and their codes
(:mod:`bob_boost.engine.listed`). Prediction and the rows a run reads (held-out rows, evaluation sets) go
a block of rows at a time, a dense block of at most :data:`BLOCK_ENTRIES` entries. Every row's codes and
scores depend on that row alone, so a model trained on the sparse, CSR, CSC or dense form of the same data
is the same bit for bit, and so are its predictions. The float matrix is never dense as a whole.
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse

from .exceptions import InvalidTypeError, InvalidValueError

#: Entries of a dense row block (32 MiB of float64): small beside the codes, large enough that a block's
#: kernel call costs more than its Python overhead.
BLOCK_ENTRIES = 1 << 22


def is_sparse(features) -> bool:
    """Whether ``features`` is a scipy sparse matrix or array."""
    return scipy.sparse.issparse(features)


def as_sparse_rows(features, name: str = "features", allow_nan: bool = False):
    """A validated sparse feature matrix as CSR in canonical form (sorted indices, no duplicates).

    A new matrix unless ``features`` already is such a CSR matrix; the caller's is never modified. Booleans
    become uint8, as for dense input; integer and float dtypes are kept.

    Raises
    ------
    TypeError
        For a non-numeric dtype.
    ValueError
        For a matrix that is not 2-D or is empty, infinite stored values, or NaN where ``allow_nan`` is False
        (NaN is a missing value only for a trainer with ``missing='bin'``).
    """
    dtype = features.dtype
    if not (np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating) or dtype.kind == "b"):
        raise InvalidTypeError(f"{name}: expected a numeric sparse matrix, got dtype {dtype}")
    if features.ndim != 2:
        raise InvalidValueError(f"{name}: expected a 2-D sparse matrix (#samples, #features), got shape "
                                f"{features.shape}")
    if features.shape[0] == 0 or features.shape[1] == 0:
        raise InvalidValueError(f"{name}: empty sparse matrix of shape {features.shape}")
    rows = features.tocsr()
    if rows is features and not rows.has_canonical_format:
        rows = rows.copy()
    rows.sum_duplicates()  # in place on a copy or an already canonical matrix (then it does nothing)
    if rows.dtype.kind == "b":
        rows = rows.astype(np.uint8)
    if np.issubdtype(rows.dtype, np.floating):
        stored = rows.data
        if np.any(np.isinf(stored)):
            raise InvalidValueError(f"{name}: contains infinite values")
        if not allow_nan and np.any(np.isnan(stored)):
            raise InvalidValueError(f"{name}: a sparse matrix with NaN stored explicitly (NaN is accepted as a "
                                    f"missing value only by a trainer with missing='bin')")
    return rows


def block_rows(number_of_columns: int) -> int:
    """Rows of a dense block of at most :data:`BLOCK_ENTRIES` entries (at least one row)."""
    return max(1, BLOCK_ENTRIES // max(1, number_of_columns))


def row_blocks(features) -> list[tuple[int, int]]:
    """``(start, stop)`` of consecutive row blocks of ``features``: one block for a dense array."""
    n = features.shape[0]
    if not is_sparse(features):
        return [(0, n)]
    step = block_rows(features.shape[1])
    return [(start, min(start + step, n)) for start in range(0, n, step)]


def dense_rows(features, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of ``features`` as a dense array (of a CSR matrix: a new block)."""
    if is_sparse(features):
        return features[start:stop].toarray()
    return features[start:stop]


def by_row_blocks(function: Callable[[np.ndarray], np.ndarray], features, n_threads: int = 1) -> np.ndarray:
    """``function`` of ``features``, whose result has a row per row: of a sparse matrix, computed on its dense
    row blocks and stacked (the same rows as of the dense matrix, since each depends on its own row only),
    ``n_threads`` blocks at a time (a block is often too short for a compiled kernel's own threads)."""
    if not is_sparse(features):
        return function(features)
    blocks = row_blocks(features)
    if n_threads <= 1 or len(blocks) == 1:
        return np.concatenate([function(dense_rows(features, a, b)) for a, b in blocks])
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        return np.concatenate(list(pool.map(lambda block: function(dense_rows(features, *block)), blocks)))


def column_value_counts(columns, f: int) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of column ``f`` of a canonical CSC matrix, as float64, and their counts,
    its implicit zeros counted with the zeros: what ``numpy.unique`` of the dense column gives (NaN last)."""
    start, stop = columns.indptr[f], columns.indptr[f + 1]
    distinct, counts = np.unique(columns.data[start:stop].astype(np.float64), return_counts=True)
    zeros = columns.shape[0] - (stop - start)
    if zeros == 0:
        return distinct, counts
    at = int(np.searchsorted(distinct, 0.0))  # NaN sorts last, after 0
    if at < distinct.size and distinct[at] == 0.0:
        counts[at] += zeros
        return distinct, counts
    return np.insert(distinct, at, 0.0), np.insert(counts, at, zeros)


def column_extremes(features) -> tuple[np.ndarray, np.ndarray]:
    """Each column's (minimum, maximum), its implicit zeros included."""
    low = np.ravel(features.min(axis=0).toarray())
    high = np.ravel(features.max(axis=0).toarray())
    return low, high
