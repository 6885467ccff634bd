"""Where each feature's bins end: thresholds between distinct values, or at quantiles.

A feature with at most ``max_bins`` distinct values gets one bin per value
and the thresholds half-way between consecutive values, exactly the
candidates of the exact search. A feature with more is cut at the
``1/max_bins .. (max_bins-1)/max_bins`` quantiles of a deterministic sample of
its values (as LightGBM and scikit-learn's HistGradientBoosting do), each cut
moved to the next boundary between two distinct sampled values, so that a
threshold never falls inside a run of equal values.
"""
from __future__ import annotations

import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError
from .threads import run_blocks

#: Rows sampled (without replacement, seed 0) to place the quantile cuts; all rows when there are fewer.
SAMPLE_SIZE = 50_000

#: Largest and smallest accepted ``max_bins`` (codes are uint16 at most).
MAX_BINS_LIMIT = 65535
MIN_BINS = 2


def check_max_bins(max_bins, name: str = "max_bins") -> int | None:
    """``None`` (exact mode) or an integer in ``[2, 65535]``."""
    if max_bins is None:
        return None
    if isinstance(max_bins, bool) or not isinstance(max_bins, (int, np.integer)):
        raise InvalidTypeError(f"{name}: expected None or an integer, got {type(max_bins).__name__}")
    if not MIN_BINS <= max_bins <= MAX_BINS_LIMIT:
        raise InvalidValueError(f"{name}: must be None or in [{MIN_BINS}, {MAX_BINS_LIMIT}], got {max_bins}")
    return int(max_bins)


def midpoints(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Thresholds strictly above ``low`` and at most ``high`` (for ``low < high``).

    ``(low + high) / 2`` can overflow to infinity near the float limits and
    round down onto ``low`` for neighbouring floats, which would give a
    stump that splits nothing; then ``high`` itself is the threshold.
    """
    middle = np.asarray(low, dtype=np.float64) / 2 + np.asarray(high, dtype=np.float64) / 2
    return np.where(middle > low, middle, high)


def quantile_thresholds(values: np.ndarray, counts: np.ndarray, max_bins: int) -> np.ndarray:
    """At most ``max_bins - 1`` thresholds cutting sorted distinct ``values`` (with ``counts``) into equal masses."""
    cumulative = np.cumsum(counts)
    targets = cumulative[-1] * np.arange(1, max_bins) / max_bins
    cuts = np.unique(np.searchsorted(cumulative, targets, side="left"))
    cuts = cuts[cuts < values.size - 1]
    return midpoints(values[cuts], values[cuts + 1])


def count_thresholds(counts: np.ndarray, low: np.ndarray, max_bins: int | None) -> list[np.ndarray]:
    """Every integer feature's thresholds from its value counts.

    ``counts[f, v]`` counts the value ``low[f] + v`` of feature ``f`` (over all rows, or summed over chunks).
    A feature with at most ``max_bins`` distinct values (or any number, for None) gets a threshold between
    each two consecutive ones; one with more is cut into equal masses (:func:`quantile_thresholds`).
    """
    thresholds = []
    for f, row in enumerate(counts > 0):
        values = np.flatnonzero(row) + low[f]
        if max_bins is None or values.size <= max_bins:
            thresholds.append(midpoints(values[:-1], values[1:]))
        else:
            thresholds.append(quantile_thresholds(values.astype(np.float64), counts[f][row], max_bins))
    return thresholds


def feature_thresholds(column: np.ndarray, max_bins: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Thresholds of one feature from (a sample of) its values, and its distinct values when each has a bin."""
    distinct, counts = np.unique(column.astype(np.float64, copy=False), return_counts=True)
    if distinct.size and np.isnan(distinct[-1]):  # missing values (sorted last) have a bin of their own
        distinct, counts = distinct[:-1], counts[:-1]
    if max_bins is None or distinct.size <= max_bins:
        return midpoints(distinct[:-1], distinct[1:]), distinct
    return quantile_thresholds(distinct, counts, max_bins), None


def sample_rows(number_of_samples: int, size: int = SAMPLE_SIZE) -> np.ndarray | None:
    """Sorted rows of the deterministic sample (seed 0), or None when every row is used."""
    if number_of_samples <= size:
        return None
    return np.sort(np.random.default_rng(0).choice(number_of_samples, size, replace=False))


def all_thresholds(features: np.ndarray, max_bins: int | None, n_threads: int,
                   rows: np.ndarray | None = None) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """Every feature's thresholds from ``rows`` (all when None), computed in threads (sorting releases the GIL).

    Returns the per-feature threshold arrays and, per feature, its distinct
    (sampled) values when it was given one bin per value, else None.
    """
    n_features = features.shape[1]
    thresholds: list[np.ndarray] = [np.empty(0)] * n_features
    distinct: list[np.ndarray | None] = [None] * n_features

    def block(start: int, stop: int) -> None:
        for f in range(start, stop):
            column = features[:, f] if rows is None else features[rows, f]
            thresholds[f], distinct[f] = feature_thresholds(column, max_bins)

    step = max(1, -(-n_features // (4 * n_threads)))
    run_blocks(block, [(s, min(s + step, n_features)) for s in range(0, n_features, step)], n_threads)
    return thresholds, distinct
