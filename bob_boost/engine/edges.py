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

from dataclasses import dataclass

import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError
from ..sparse import column_value_counts, is_sparse
from .threads import run_blocks

#: Rows sampled (without replacement, seed 0) to place the quantile cuts; all rows when there are fewer.
SAMPLE_SIZE = 50_000

#: Fewest rows an equal-mass bin holds when the cuts come from more rows than the sample (:data:`SAMPLE_SIZE`):
#: those of a feature re-binned from every row because its sample showed few distinct values (a mostly-zero
#: column of a sparse matrix, whose non-zeros would otherwise get a bin for every one or two of them) or of an
#: integer feature's count table. LightGBM's ``min_data_in_bin`` default. Cuts from the sample, and any data
#: set of at most :data:`SAMPLE_SIZE` rows, give bins of a single row where the values are that spread.
MIN_BIN_ROWS = 3

#: Cuts from more rows than this give bins of :data:`MIN_BIN_ROWS` rows per this many rows: the resolution
#: LightGBM's bins get from its 200,000-row binning sample (``bin_construct_sample_cnt``), whose bins hold
#: ``min_data_in_bin`` sampled rows. A re-binned sparse column of a million rows then has bins of 15 rows.
BIN_RATE_ROWS = 200_000

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
    """At most ``max_bins - 1`` thresholds cutting sorted distinct ``values`` (with ``counts``) into equal masses.

    A value holding at least ``2/max_bins`` of the mass (the zero of a mostly-zero feature), inside which
    equal-mass cuts would fall, gets a bin of its own, and the other bins are shared by the runs of values
    between such heavy values in proportion to their mass, each run cut the same way (as LightGBM's greedy
    binning gives a frequent value its own bin); equal-mass cuts of the whole would put every cut inside the
    heavy value and leave the rest of the feature in one or two bins. Cuts of more than :data:`SAMPLE_SIZE` rows
    give each equal-mass bin of a run at least :data:`MIN_BIN_ROWS` of them (a run that holds fewer is one bin).
    """
    return _cut(values, counts, max_bins, min_bin_rows(int(counts.sum())))


def min_bin_rows(rows: int) -> int:
    """The fewest rows an equal-mass bin of cuts from ``rows`` rows holds: 1 up to :data:`SAMPLE_SIZE` rows,
    :data:`MIN_BIN_ROWS` up to :data:`BIN_RATE_ROWS`, and that many per :data:`BIN_RATE_ROWS` rows above."""
    if rows <= SAMPLE_SIZE:
        return 1
    return max(MIN_BIN_ROWS, -(-MIN_BIN_ROWS * rows // BIN_RATE_ROWS))


def _cut(values: np.ndarray, counts: np.ndarray, max_bins: int, min_rows: int) -> np.ndarray:
    """:func:`quantile_thresholds` with bins of at least ``min_rows`` rows."""
    heavy = counts * max_bins >= 2 * counts.sum()
    if heavy.any():
        thresholds = _around_heavy(values, counts, heavy, max_bins, min_rows)
        if thresholds is not None:
            return thresholds
    return _equal_masses(values, counts, max_bins, min_rows)


def _equal_masses(values: np.ndarray, counts: np.ndarray, bins: int, min_rows: int) -> np.ndarray:
    """At most ``bins - 1`` thresholds cutting ``values`` into ``bins`` equal masses of at least ``min_rows``
    rows (fewer bins where the rows are too few, or a value's mass spans several)."""
    cumulative = np.cumsum(counts)
    bins = max(1, min(bins, int(cumulative[-1]) // min_rows))
    targets = cumulative[-1] * np.arange(1, bins) / bins
    cuts = np.unique(np.searchsorted(cumulative, targets, side="left"))
    cuts = cuts[cuts < values.size - 1]
    return midpoints(values[cuts], values[cuts + 1])


def _around_heavy(values: np.ndarray, counts: np.ndarray, heavy: np.ndarray, max_bins: int,
                  min_rows: int) -> np.ndarray | None:
    """Thresholds around each heavy value, and within the runs between them (:func:`quantile_thresholds`); None
    when the heavy values and the runs between them need more than ``max_bins`` bins."""
    # runs of light values: starts and stops of the maximal stretches where heavy is False
    edges = np.flatnonzero(np.diff(np.concatenate([[True], heavy, [True]]).astype(np.int8)))
    starts, stops = edges[0::2], edges[1::2]
    budget = max_bins - int(heavy.sum())
    if starts.size > budget:
        return None
    masses = np.array([counts[a:b].sum() for a, b in zip(starts, stops)], dtype=np.float64)
    shares = np.maximum(1, np.floor(budget * masses / max(masses.sum(), 1.0))).astype(np.int64)
    while shares.sum() > budget:  # the floors of at least one bin each can overrun it: take from the largest
        shares[np.argmax(shares)] -= 1
    pieces = [midpoints(values[:-1], values[1:])[np.flatnonzero(heavy[:-1] | heavy[1:])]]
    for (a, b), bins in zip(zip(starts, stops), shares):
        pieces.append(_cut(values[a:b], counts[a:b], int(bins), min_rows))  # heavy within its run too
    return np.unique(np.concatenate(pieces))


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
    return value_thresholds(*np.unique(column.astype(np.float64, copy=False), return_counts=True), max_bins)


def value_thresholds(distinct: np.ndarray, counts: np.ndarray,
                     max_bins: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`feature_thresholds` of a feature whose sorted distinct float64 values (NaN last) occur
    ``counts`` times."""
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
    # a sparse matrix: each column's stored values and its count of implicit zeros, no dense column
    columns = (features if rows is None else features[rows]).tocsc() if is_sparse(features) else None

    def block(start: int, stop: int) -> None:
        for f in range(start, stop):
            if columns is not None:
                thresholds[f], distinct[f] = value_thresholds(*column_value_counts(columns, f), max_bins)
                continue
            column = features[:, f] if rows is None else features[rows, f]
            thresholds[f], distinct[f] = feature_thresholds(column, max_bins)

    step = max(1, -(-n_features // (4 * n_threads)))
    run_blocks(block, [(s, min(s + step, n_features)) for s in range(0, n_features, step)], n_threads)
    return thresholds, distinct


def holds_unsampled(column: np.ndarray, values: np.ndarray) -> bool:
    """Whether ``column`` holds a value (NaN aside) outside the sampled distinct ``values``."""
    column = np.asarray(column, dtype=np.float64)
    return not np.all(np.isin(column[~np.isnan(column)], values))


def sparse_rebinned(features, distinct: list, thresholds: list, max_bins: int | None) -> bool:
    """The binning's re-check of sampled thresholds (``BinnedFeatures._check_sampled_distinct``) for a sparse
    matrix, before its coding: a feature whose sampled distinct values miss one of its values (a stored one, or
    0 where it has implicit zeros) gets the thresholds of all its rows; whether any did. A value is among the
    sampled ones exactly when its code's bin value is itself, the dense matrix's test."""
    columns = features.tocsc()
    changed = False
    for f, values in enumerate(distinct):
        if values is None or not column_holds_unsampled(columns, f, values):
            continue
        thresholds[f], _ = value_thresholds(*column_value_counts(columns, f), max_bins)
        changed = True
    return changed


def column_holds_unsampled(columns, f: int, values: np.ndarray) -> bool:
    """:func:`holds_unsampled` of column ``f`` of a CSC matrix: a stored value, or 0 where it has implicit
    zeros, outside the sampled distinct ``values``."""
    start, stop = columns.indptr[f], columns.indptr[f + 1]
    zeros = stop - start < columns.shape[0]
    return holds_unsampled(columns.data[start:stop], values) or (zeros and not np.any(values == 0.0))


#: Number of bins of the quantised (uint8) feature coding.
QUANTIZATION_BINS = 256


@dataclass(frozen=True)
class QuantizedLayout:
    """The bins of :meth:`bob_boost.binning.BinnedFeatures.quantize`, from each feature's range alone.

    Attributes
    ----------
    low, step : numpy.ndarray
        (#features,) code ``round((x - low) / step)``, clipped to ``0 .. top``.
    top : int
        The largest value code (255, or 254 with missing values).
    offsets : numpy.ndarray
        (#features + 1,) feature ``f``'s bins are ``offsets[f]:offsets[f + 1]`` (with its NaN bin last when
        missing values are handled).
    bin_values : numpy.ndarray
        (#bins,) the raw value each bin stands for (NaN for a missing-value bin).
    missing_codes : numpy.ndarray or None
        (#features,) the code of NaN, when missing values are handled.
    """

    low: np.ndarray
    step: np.ndarray
    top: int
    offsets: np.ndarray
    bin_values: np.ndarray
    missing_codes: np.ndarray | None

    @property
    def bins_per_feature(self) -> int:
        """The most bins of any feature (the width of the class trees' padded histograms)."""
        return int(np.diff(self.offsets).max())

    @classmethod
    def of(cls, low: np.ndarray, high: np.ndarray, integral: np.ndarray, missing: bool = False) -> "QuantizedLayout":
        """The layout for features with these ranges, and whether each holds only integers.

        A feature of integers spanning at most 255 (254 with missing values) gets one bin per value
        (lossless), any other 256 (255) equal steps between its smallest and largest value.
        """
        levels = QUANTIZATION_BINS - 1 if missing else QUANTIZATION_BINS
        # halved before subtracting: max - min overflows for features spanning the float range
        half_span = high / 2 - low / 2
        lossless = integral & (half_span <= (levels - 1) / 2)
        step = np.where(lossless | (half_span == 0), 1.0, half_span / ((levels - 1) / 2))
        sizes = np.where(lossless, 2 * np.where(lossless, half_span, 0.0) + 1, levels).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        owner = np.repeat(np.arange(low.size), sizes)
        bin_values = 2 * (low[owner] / 2 + (np.arange(offsets[-1]) - offsets[owner]) * (step[owner] / 2))
        missing_codes = sizes if missing else None
        if missing:  # a NaN bin after each feature's value bins
            bin_values = np.insert(bin_values, offsets[1:], np.nan)
            offsets = np.concatenate([[0], np.cumsum(sizes + 1)])
        return cls(low, step, levels - 1, offsets, bin_values, missing_codes)
