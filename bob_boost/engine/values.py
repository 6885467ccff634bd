"""Distinct values of features: the exact coding by sorting or by a per-value table, for the sparse-product path.

:class:`bob_boost.binning.BinnedFeatures` uses these where every distinct value keeps its own bin and the
codes do not fit the compiled engine (more than 65536 values per feature, or exact sums).
"""
from __future__ import annotations

import numpy as np

from ..sparse import column_extremes, is_sparse

#: Largest (#features x value range) for which integer features are coded by table instead of sorting.
MAX_TABLE_SIZE = 1 << 24


def distinct_value_bins(features: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Give every distinct value of every feature its own bin, by one sort per feature.

    Returns
    -------
    bins : numpy.ndarray
        (#samples, #features) int64 global bin of every entry; feature ``f``
        owns bins ``offsets[f]:offsets[f+1]`` in increasing order of value.
    offsets : numpy.ndarray
        (#features + 1,) bin offsets.
    values : numpy.ndarray
        float64 feature value of every bin.
    """
    columns = np.ascontiguousarray(features.T)
    order = np.argsort(columns, axis=1, kind="stable")
    ordered = np.take_along_axis(columns, order, axis=1)
    is_new = np.ones(ordered.shape, dtype=bool)
    is_new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    ranks = np.cumsum(is_new, axis=1, dtype=np.int64) - 1
    offsets = np.concatenate([[0], np.cumsum(ranks[:, -1] + 1)])
    ranks += offsets[:-1, np.newaxis]
    bins = np.empty_like(ranks)
    np.put_along_axis(bins, order, ranks, axis=1)
    return np.ascontiguousarray(bins.T), offsets, ordered[is_new].astype(np.float64)


def integer_range(features: np.ndarray) -> tuple[np.ndarray, int] | None:
    """``(low, span)`` of integer features coded by a per-value table, or None (sort them instead).

    The table needs ``value - min`` in int64 and at most ``MAX_TABLE_SIZE``
    slots; floats and huge spans are sorted.
    """
    if not (np.issubdtype(features.dtype, np.integer)
            and -(1 << 62) <= int(features.min()) <= int(features.max()) < 1 << 62):
        return None
    low, high = column_extremes(features) if is_sparse(features) else (features.min(axis=0), features.max(axis=0))
    low = low.astype(np.int64)
    span = int((high.astype(np.int64) - low).max()) + 1
    if span * features.shape[1] > MAX_TABLE_SIZE:
        return None
    return low, span


def integer_table(features: np.ndarray):
    """``(slots, counts, low, span)`` of the sparse-product coding of integer features, or None."""
    found = integer_range(features)
    if found is None:
        return None
    low, span = found
    slots, counts = value_slots(features, low, span)
    return slots, counts, low, span


def value_slots(features: np.ndarray, low: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """Map entry (n, f) to ``f * span + x[n, f] - low[f]`` (int32), with the count of every slot."""
    n_features = features.shape[1]
    shift = (np.arange(n_features, dtype=np.int64) * span - low).astype(np.int32)
    slots = np.empty(features.shape, dtype=np.int32)
    np.add(features, shift, out=slots, casting="unsafe")
    counts = np.bincount(slots.ravel(), minlength=span * n_features)
    return slots, counts


def segment_argmax(counts: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """First position of the largest count within each segment."""
    starts = offsets[:-1]
    sizes = np.diff(offsets)
    is_max = counts == np.repeat(np.maximum.reduceat(counts, starts), sizes)
    positions = np.flatnonzero(is_max)
    segment = np.repeat(np.arange(starts.size), sizes)[positions]
    first = np.flatnonzero(np.concatenate([[True], segment[1:] != segment[:-1]]))
    return positions[first]
