"""Raw rows to coded partitions, on any :class:`~bob_boost.boosting.partitions.RowSource`.

The bins are found over all blocks, exactly as :class:`bob_boost.binning.BinnedFeatures` finds them over
the whole matrix in memory, and then every block is coded where it is read:

- stumps and gradient trees (:func:`binned`): integer features from the blocks' counts of every value,
  summed; float features from the rows of the engine's deterministic sample
  (:func:`bob_boost.engine.edges.sample_rows`), gathered once;
- look-up tables (:func:`lut_coded`): the integer values are their own codes (NaN, with ``missing="bin"``,
  one more);
- cost-sensitive trees (:func:`quantized`): the quantised layout from the global ranges
  (:class:`bob_boost.binning.QuantizedLayout`).

The functions named ``*_block`` or taking a ``chunk`` run on one raw block, wherever the source keeps it:
plain numpy, checking the block as the in-memory trainers check the whole matrix.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse

from ..binning import QuantizedLayout
from ..costs import check_class_labels
from ..engine.codes import (CodedFeatures, code_dtype, count_integer_values, encode, integral_features,
                            padded_thresholds, step_codes)
from ..engine.categorical import category_ranks, checked_categories
from ..engine.edges import (all_thresholds, column_holds_unsampled, count_thresholds, holds_unsampled, midpoints,
                            sample_rows, value_thresholds)
from ..engine.listed import integer_entries
from ..engine.threads import check_threads
from ..engine.values import MAX_TABLE_SIZE
from ..exceptions import InvalidValueError
from ..losses import LossFunction
from ..sparse import as_sparse_rows, column_extremes, column_value_counts, is_sparse
from ..weak.lut import check_discrete
from .partitions import LocalPartitions, RowSource, in_order


def global_thresholds(source: RowSource, features, max_bins: int, missing: bool = False,
                      n_threads: int | None = 1) -> list[np.ndarray]:
    """Every feature's thresholds, as the in-memory binning finds them.

    Integer features: from the blocks' counts of every value, summed (unless the value range is too wide for
    a table, as in memory). Float features, and any feature with ``missing`` (NaN a missing value): from the
    rows of the engine's deterministic sample, gathered once; with ``missing`` at most ``max_bins - 1``
    value bins, from the values that are not NaN. As in memory, a feature that got a bin per sampled value
    but has other values in some block gets the thresholds of all its rows (its blocks' value counts,
    summed): one more pass over the blocks, and a second for such features only.
    """
    if np.issubdtype(features.dtype, np.integer) and not missing:
        ranges = source.gather(source.raw(features, integer_range))
        low = np.min([r[0] for r in ranges], axis=0)
        high = np.max([r[1] for r in ranges], axis=0)
        span = int((high - low).max()) + 1
        # the in-memory rule (bob_boost.engine.values.integer_range): a value table only when it is small
        if -(1 << 62) <= int(low.min()) <= int(high.max()) < 1 << 62 and span * features.shape[1] <= MAX_TABLE_SIZE:
            counts = source.combined(in_order, source.raw(features, value_counts, low, span, n_threads))
            return count_thresholds(counts, low, max_bins)
    rows = sample_rows(features.shape[0])
    edges = LocalPartitions.bounds(source.rows)
    picks = [None if rows is None else rows[(rows >= a) & (rows < b)] - a for a, b in zip(edges[:-1], edges[1:])]
    pieces = source.gather(source.raw(features, rows_of, picks))
    sample = scipy.sparse.vstack(pieces, format="csr") if is_sparse(pieces[0]) else np.concatenate(pieces)
    stored = sample.data if is_sparse(sample) else sample
    if np.isinf(stored).any() if missing else not np.isfinite(stored).all():
        raise InvalidValueError("features: contain infinite values" if missing
                                else "features: contain NaN or infinite values")
    bins = max_bins - 1 if missing else max_bins
    thresholds, distinct = all_thresholds(sample, bins, 1, None)
    checked = [f for f, values in enumerate(distinct) if values is not None]
    if rows is None or not checked:
        return thresholds
    # constants of every block's task are tuples and arrays (a list is one field per block)
    unseen = source.gather(source.raw(features, unseen_columns, np.array(checked), tuple(distinct[f] for f in checked)))
    rebinned = sorted(set().union(*unseen))
    if rebinned:
        pieces = source.gather(source.raw(features, column_counts, np.array(rebinned)))
        for j, f in enumerate(rebinned):
            values, inverse = np.unique(np.concatenate([p[j][0] for p in pieces]), return_inverse=True)
            counts = np.bincount(inverse, weights=np.concatenate([p[j][1] for p in pieces]))
            thresholds[f], _ = value_thresholds(values, counts.astype(np.int64), bins)
    return thresholds


def unseen_columns(chunk: np.ndarray, columns: np.ndarray, distinct: tuple) -> set[int]:
    """The ``columns`` of the block holding a value (not NaN) outside their sampled ``distinct`` values."""
    if is_sparse(chunk):
        by_column = _columns(chunk)
        return {int(f) for f, values in zip(columns, distinct) if column_holds_unsampled(by_column, f, values)}
    return {int(f) for f, values in zip(columns, distinct) if holds_unsampled(chunk[:, f], values)}


def column_counts(chunk: np.ndarray, columns: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each of the block's ``columns``' distinct float64 values (NaN last) and their counts."""
    if is_sparse(chunk):
        by_column = _columns(chunk)
        return [column_value_counts(by_column, f) for f in columns]
    return [np.unique(np.asarray(chunk[:, f], dtype=np.float64), return_counts=True) for f in columns]


def global_categories(source: RowSource, features, indices: np.ndarray | None, max_bins: int,
                      missing: bool) -> dict[int, np.ndarray]:
    """The categorical features' (``indices``) categories over every block, checked as in memory
    (:func:`~bob_boost.weak_trainers.tree_categories.feature_categories`)."""
    if indices is None:
        return {}
    pieces = source.gather(source.raw(features, distinct_columns, np.asarray(indices), missing))
    return {int(f): checked_categories(int(f), np.unique(np.concatenate([p[j] for p in pieces])), max_bins, missing)
            for j, f in enumerate(indices)}


def distinct_columns(chunk: np.ndarray, indices: np.ndarray, missing: bool) -> list[np.ndarray]:
    """The block's distinct values of each column in ``indices`` (NaN left out with ``missing``)."""
    if is_sparse(chunk):  # a column's stored values, and 0 where it has implicit zeros
        by_column = _columns(chunk)
        distinct = [column_value_counts(by_column, f)[0] for f in indices]
    else:
        distinct = [np.unique(np.asarray(chunk[:, f], dtype=np.float64)) for f in indices]
    return [d[~np.isnan(d)] if missing else d for d in distinct]


def binned(source: RowSource, features, max_bins: int, missing: bool = False,
           n_threads: int | None = 1, categories: dict[int, np.ndarray] | None = None
           ) -> tuple[list, np.ndarray, np.ndarray]:
    """Handles of every block's codes, the bins' ``offsets`` and each bin's upper threshold (NaN for a last bin).

    With ``missing``, every feature's last bin holds its NaN values, as in memory (``missing="bin"``); the
    blocks' kernels run on ``n_threads`` (None: every core where the block is). A feature of ``categories``
    (:func:`global_categories`) has a bin per category.
    """
    thresholds = global_thresholds(source, features, max_bins, missing, n_threads)
    for f, values in (categories or {}).items():
        thresholds[f] = midpoints(values[:-1], values[1:])
    sizes = np.array([t.size + 1 + missing for t in thresholds], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    tail = [np.nan, np.nan] if missing else [np.nan]
    split = np.concatenate([np.append(t, tail) for t in thresholds])
    padded = padded_thresholds(thresholds)  # in the tasks themselves, so lost blocks can be recomputed
    missing_codes = sizes - 1 if missing else None
    return (source.raw(features, coded_bins, padded, int(sizes.max()), missing_codes, n_threads), offsets, split)


def lut_coded(source: RowSource, features, entries: int | None, missing: bool,
              n_threads: int | None) -> tuple[list, np.ndarray, int, np.ndarray | None]:
    """Handles of every block's codes for look-up tables, the bins' ``offsets``, the entries per table and,
    with ``missing``, which features hold NaN only (else None).

    ``entries`` (None: the largest value + 1, at least 2) value rows per table; with ``missing`` NaN is code
    ``entries`` of its feature, the tables' last row, as
    :meth:`bob_boost.binning.BinnedFeatures.from_integers` codes it in memory.
    """
    if entries is None:
        largest = max(source.gather(source.raw(features, finite_max, missing)))
        entries = max(2, int(largest) + 1) if np.isfinite(largest) else 2  # every value NaN: the smallest table
    coded = source.raw(features, coded_values, entries, n_threads, missing)
    offsets = np.arange(features.shape[1] + 1, dtype=np.int64) * (entries + missing)
    all_missing = None
    if missing:  # counted on the codes: the raw blocks are not read again
        all_missing = source.combined(in_order, source.each(code_counts, coded, entries)) == features.shape[0]
    return coded, offsets, entries, all_missing


def quantized(source: RowSource, features, n_threads: int | None, missing: bool,
              categories: dict[int, np.ndarray] | None = None) -> tuple[QuantizedLayout, list]:
    """The global quantised layout and the handles of every block's codes (with ``missing``, a NaN bin after
    each feature's value bins, as :meth:`bob_boost.binning.BinnedFeatures.quantize` makes it). A feature of
    ``categories`` (:func:`global_categories`) is coded by its categories' ranks, a bin each, as the
    cost-sensitive trees code it in memory."""
    ranges = source.gather(source.raw(features, value_range, n_threads, missing))
    low = np.min([r[0] for r in ranges], axis=0)
    high = np.max([r[1] for r in ranges], axis=0)
    empty = low > high  # NaN in every row: the range 0 .. 0, as in memory
    low, high = np.where(empty, 0.0, low), np.where(empty, 0.0, high)
    integral = np.all([r[2] for r in ranges], axis=0)
    for f, values in (categories or {}).items():
        low[f], high[f], integral[f] = 0.0, values.size - 1.0, True
    layout = QuantizedLayout.of(low, high, integral, missing)
    coded = source.raw(features, quantized_codes, layout.low, layout.step, layout.top, layout.bins_per_feature,
                       n_threads, layout.missing_codes, categories or {})
    return layout, coded


# -- what runs on one raw block ------------------------------------------------------------------------------

def _rows(chunk):
    """A scipy sparse block as canonical CSR (a copy where it is not), as the in-memory trainers read a sparse
    matrix; a dense block as it is."""
    return as_sparse_rows(chunk, allow_nan=True) if is_sparse(chunk) else chunk


def _columns(chunk):
    """A scipy sparse block by column (CSC), from its canonical rows."""
    return _rows(chunk).tocsc()


def integer_range(chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's smallest and largest value (a sparse block's implicit zeros included)."""
    low, high = column_extremes(chunk) if is_sparse(chunk) else (chunk.min(axis=0), chunk.max(axis=0))
    return low.astype(np.int64), high.astype(np.int64)


def value_counts(chunk: np.ndarray, low: np.ndarray, span: int, n_threads: int | None = 1) -> np.ndarray:
    """(#features, span) counts of every integer value ``low[f] + k``."""
    return count_integer_values(_rows(chunk), low, span, check_threads(n_threads))


def rows_of(chunk: np.ndarray, rows) -> np.ndarray:
    """The block's ``rows`` (all for None): its part of the deterministic sample."""
    chunk = _rows(chunk)
    return chunk if rows is None else chunk[rows]


def finite_max(chunk: np.ndarray, allow_nan: bool = False) -> float:
    """The block's largest value; infinity is an error, and so is NaN unless ``allow_nan`` (a missing value,
    skipped: -inf for a block of NaN only)."""
    _check_finite(chunk, allow_nan)
    if is_sparse(chunk):  # the stored values, and 0 where a column has implicit zeros
        rows = _rows(chunk)
        implicit = [0.0] if rows.nnz < rows.shape[0] * rows.shape[1] else []
        chunk = np.concatenate([np.asarray(rows.data, dtype=np.float64), implicit])
    if allow_nan and chunk.dtype.kind == "f":
        present = chunk[~np.isnan(chunk)]
        return float(present.max()) if present.size else -np.inf
    return float(chunk.max())


def _check_finite(chunk: np.ndarray, allow_nan: bool) -> None:
    """Raise for infinity in the block, and for NaN unless ``allow_nan`` (NaN a missing value)."""
    if chunk.dtype.kind != "f":
        return
    if is_sparse(chunk):  # implicit zeros are finite
        chunk = chunk.data
    if allow_nan:
        if np.isinf(chunk).any():
            raise InvalidValueError("features: contain infinite values")
    elif not np.isfinite(chunk).all():
        raise InvalidValueError("features: contain NaN or infinite values")


def coded_bins(chunk: np.ndarray, padded: np.ndarray, number_of_bins: int,
               missing_codes: np.ndarray | None = None, n_threads: int | None = 1) -> CodedFeatures:
    """The block's bin codes against the global thresholds, ready for histograms (built once per run).

    NaN or infinity anywhere is an error, as in memory (the sample that placed the bins may have missed it);
    with ``missing_codes`` NaN is a missing value and gets its feature's code (infinity is still an error).
    ``n_threads`` (None: every core where the block is, as in memory) code the block and build its histograms.
    """
    threads = check_threads(n_threads)
    _check_finite(chunk, missing_codes is not None)
    return CodedFeatures(encode(_rows(chunk), padded, threads, missing_codes), number_of_bins, threads)


def coded_values(chunk: np.ndarray, entries: int, n_threads: int | None = 1, missing: bool = False) -> CodedFeatures:
    """The block's integer values as their own codes, for look-up tables of ``entries`` value rows (their
    histograms built on ``n_threads``).

    With ``missing`` NaN is a missing value with code ``entries`` (one more bin per feature), as
    :meth:`bob_boost.binning.BinnedFeatures.from_integers` codes it in memory; infinity is an error either way.
    """
    _check_finite(chunk, missing)
    bins = entries + int(missing)
    if is_sparse(chunk):
        rows = _rows(chunk)
        check_discrete(rows, entries, allow_nan=missing)
        return CodedFeatures(integer_entries(rows, entries if missing else None, code_dtype(bins)), bins,
                             check_threads(n_threads))
    check_discrete(chunk, entries, allow_nan=missing)
    codes = np.empty((chunk.shape[1], chunk.shape[0]), dtype=code_dtype(bins))
    codes[...] = np.where(np.isnan(chunk), entries, chunk).T if missing and chunk.dtype.kind == "f" else chunk.T
    return CodedFeatures(codes, bins, check_threads(n_threads))


def code_counts(coded: CodedFeatures, code: int) -> np.ndarray:
    """(#features,) rows of the block whose code is ``code`` (a look-up table's NaN code: its missing values)."""
    return coded.counts[:, code].copy()


def holds_sparse(features) -> bool:
    """Whether ``features`` (rows in a source's form) are scipy sparse: a sparse matrix, or a Dask array whose
    chunks are."""
    return is_sparse(features) or is_sparse(getattr(features, "_meta", None))


def value_range(chunk: np.ndarray, n_threads: int | None = 1,
                missing: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's smallest and largest value and whether it holds only integers; NaN is an error, unless
    ``missing`` (NaN a missing value, skipped: a column of NaN only gives +inf and -inf). Infinity is an error
    either way."""
    if missing and chunk.dtype.kind == "f":
        if np.isinf(chunk).any():
            raise InvalidValueError("features: contain infinite values")
        present = ~np.isnan(chunk)
        low = np.where(present, chunk, np.inf).min(axis=0, initial=np.inf)
        high = np.where(present, chunk, -np.inf).max(axis=0, initial=-np.inf)
    else:
        if not np.isfinite(chunk).all():
            raise InvalidValueError("features: contain NaN or infinite values")
        low, high = chunk.min(axis=0), chunk.max(axis=0)
    # the in-memory test, which skips NaN, on the block's rows: all blocks integral is the whole matrix integral
    return low.astype(np.float64), high.astype(np.float64), integral_features(chunk, check_threads(n_threads))


def quantized_codes(chunk: np.ndarray, low: np.ndarray, step: np.ndarray, top: int, bins: int,
                    n_threads: int | None = 1, missing_codes: np.ndarray | None = None,
                    categories: dict[int, np.ndarray] | None = None) -> CodedFeatures:
    """The block coded into the global quantised bins (:class:`bob_boost.binning.QuantizedLayout`), NaN as its
    feature's ``missing_codes`` (with missing values), the features of ``categories`` by their categories'
    ranks, its node histograms built on ``n_threads``."""
    threads = check_threads(n_threads)
    ranked = category_ranks(chunk, categories or {})
    return CodedFeatures(step_codes(ranked, low, step, threads, top, missing_codes), bins, threads)


# -- the targets of one block ---------------------------------------------------------------------------------

def _read_targets(chunk: np.ndarray, loss: LossFunction) -> np.ndarray:
    """The block's targets as the loss reads them; NaN, and what the loss rejects, are errors."""
    if np.isnan(chunk).any():
        raise InvalidValueError("targets: contain NaN")
    try:
        return loss.check_chunk_targets(chunk)
    except InvalidValueError as error:
        raise InvalidValueError(f"{error}, in one chunk ({type(loss).__name__} checks the targets of each chunk "
                                f"on their own)") from None


def checked_targets(chunk: np.ndarray, loss: LossFunction, columns: int) -> np.ndarray:
    """The block's targets as the loss reads them, ``columns`` of them; NaN is an error."""
    targets = _read_targets(chunk, loss)
    if targets.shape[1] != columns:
        raise InvalidValueError(f"targets: {type(loss).__name__} reads this chunk as {targets.shape[1]} columns, "
                                f"the first as {columns} (a loss that counts the classes of its labels needs "
                                f"their number given)")
    return targets


def loss_columns(chunk: np.ndarray, loss: LossFunction) -> tuple[int, int]:
    """Columns of the targets as the loss reads them, and of its per-sample values (one per output for a
    separable loss, one for a loss that couples the outputs)."""
    targets = _read_targets(chunk, loss)[:1]
    return int(targets.shape[1]), int(loss.loss(targets, np.zeros_like(targets)).shape[1])


def binary_labels(chunk: np.ndarray) -> np.ndarray:
    """The block's +-1 targets (checked); NaN and other values are errors."""
    if np.isnan(chunk).any():
        raise InvalidValueError("targets: contain NaN")
    if not np.all(np.abs(chunk) == 1.0):
        raise InvalidValueError("targets: must be -1 or +1")
    return chunk


def class_indices(chunk: np.ndarray, number_of_classes: int) -> np.ndarray:
    """The block's labels as int64 classes ``0 .. K-1`` (checked)."""
    return check_class_labels(chunk, number_of_classes)


def largest_label(chunk: np.ndarray) -> int:
    """The largest label of the block (labels must be integers >= 0)."""
    return int(check_class_labels(chunk, np.iinfo(np.int64).max).max(initial=0))
