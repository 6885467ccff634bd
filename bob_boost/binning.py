"""The one binned representation of the training features, and histograms from it.

:class:`BinnedFeatures` codes every feature into consecutive bins once per
training run; every weak trainer works on it:

- :meth:`BinnedFeatures.from_values`: a bin per distinct value (stumps, and
  the cost-sensitive stump pool with ``exact=True``);
- :meth:`BinnedFeatures.from_integers`: a bin per value ``0 .. V-1``
  (look-up tables);
- :meth:`BinnedFeatures.quantize`: at most 256 bins per feature, lossless for
  integer features of small range (the multi-class trees; the histogram
  engine will add its quantile bins here);
- :meth:`BinnedFeatures.distinct`: a bin per distinct value, keeping the raw
  features (exact multi-class trees).

Per-feature histograms of per-sample values are computed as one sparse product.

Each feature's values are coded into consecutive bins; a sparse
(#samples, #bins) indicator matrix ``M`` then turns any (#samples, #outputs)
array ``G`` into per-bin sums ``M.T @ G`` in one pass. The most frequent bin
of each feature is left out of ``M`` and recovered as "column total minus
the other bins", which makes sparse data (MNIST is mostly zeros) cheap.
Coding the features costs a few passes over the data (integer features) or
one sort per feature (float features), once per training run; every
boosting round after that costs one sparse product.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse

from .exceptions import InvalidValueError

#: Largest (#features x value range) for which integer features are coded by table instead of sorting.
_MAX_TABLE_SIZE = 1 << 24

#: Number of bins of the quantised (uint8) feature coding.
QUANTIZATION_BINS = 256

#: Largest histogram (#features x #values x #outputs) a look-up-table trainer may allocate (1 GiB of float64).
MAX_HISTOGRAM_SIZE = 1 << 27


def check_histogram_size(number_of_features: int, number_of_values: int, number_of_outputs: int) -> None:
    """Raise ``ValueError`` if a per-value histogram of this size would be unreasonably large."""
    size = number_of_features * number_of_values * number_of_outputs
    if size > MAX_HISTOGRAM_SIZE:
        raise InvalidValueError(
            f"maximum_feature_value: {number_of_values} values x {number_of_features} features x "
            f"{number_of_outputs} output(s) need a {size}-entry histogram, more than {MAX_HISTOGRAM_SIZE}; "
            f"quantise the features to fewer values")


class BinnedFeatures:
    """Features coded into per-feature bins, ready for repeated histograms.

    Build with :meth:`from_values` (bins = the distinct values of each
    feature, for stumps), :meth:`from_integers` (bins = 0 ..
    number_of_values-1, for look-up tables), :meth:`quantize` or
    :meth:`distinct` (for trees, which also keep the raw features).

    Attributes
    ----------
    number_of_samples, number_of_features : int
        Shape of the original feature matrix.
    offsets : numpy.ndarray
        (#features + 1,) start of each feature's bins; feature ``f`` owns
        bins ``offsets[f]:offsets[f+1]``, in increasing order of value.
    bin_values : numpy.ndarray or None
        Feature value of each bin (not for :meth:`from_integers`).
    codes : numpy.ndarray
        (#samples, #features) global bin of every entry.
    raw : numpy.ndarray or None
        The features as given (:meth:`quantize` and :meth:`distinct`): trees
        route samples with these raw values, exactly as the trained machine will.
    quantized : bool
        Whether the bins come from :meth:`quantize`.
    number_of_values : int or None
        ``V`` of :meth:`from_integers`.
    """

    def __init__(self, bins: np.ndarray, offsets: np.ndarray, counts: np.ndarray | None,
                 bin_values: np.ndarray | None = None, exact: bool = False, raw: np.ndarray | None = None,
                 quantized: bool = False, number_of_values: int | None = None) -> None:
        """Store ``bins``, the (#samples, #features) global bin of every entry, with per-bin ``counts``.

        By default each feature's most frequent bin is left out of the sparse
        matrix and recovered as "column total minus the rest", which saves
        work but gives that bin only absolute precision; ``exact=True`` keeps
        every entry, so that every bin's sum is a plain sum (relative
        precision, exactly 0 without weight). The matrix is built on the first
        :meth:`histograms` call: trees never need it.
        """
        n_samples, n_features = bins.shape
        self.number_of_samples = n_samples
        self.number_of_features = n_features
        self.codes = bins
        self.offsets = offsets
        self.bin_values = bin_values
        self.raw = raw
        self.quantized = quantized
        self.number_of_values = number_of_values
        self._counts = counts
        self._exact = exact
        self._mode_bins: np.ndarray | None = None
        self._transposed = None
        self._values: np.ndarray | None = None

    @property
    def number_of_bins(self) -> int:
        """Total number of bins over all features."""
        return int(self.offsets[-1])

    @property
    def values(self) -> np.ndarray:
        """(#samples, #features) int64 bin of every entry within its feature (the value, for integer coding)."""
        if self._values is None:
            self._values = self.codes - self.offsets[np.newaxis, :-1]
        return self._values

    def _indicator(self):
        """The transposed sparse (#samples, #bins) indicator, built once."""
        if self._transposed is None:
            bins, offsets = self.codes, self.offsets
            counts = self._counts if self._counts is not None else np.bincount(bins.ravel(),
                                                                                minlength=int(offsets[-1]))
            self._mode_bins = None if self._exact else _segment_argmax(counts, offsets)
            keep = (np.ones(bins.shape, dtype=bool) if self._exact
                    else bins != self._mode_bins[np.newaxis, :].astype(bins.dtype))
            indptr = np.zeros(self.number_of_samples + 1, dtype=np.int64)
            np.cumsum(keep.sum(axis=1), out=indptr[1:])
            indices = bins[keep]
            self._transposed = scipy.sparse.csr_matrix(
                (np.ones(indices.size), indices, indptr), shape=(self.number_of_samples, int(offsets[-1]))).T
        return self._transposed

    @classmethod
    def from_values(cls, features: np.ndarray, exact: bool = False) -> "BinnedFeatures":
        """Bin each feature by its distinct values.

        Integer features of moderate range are coded through a per-feature
        value table (no sort); other features are sorted once. ``exact``:
        see the class constructor.
        """
        n_features = features.shape[1]
        # the table needs value - min in int64; values beyond +-2**62 (uint64) are sorted instead
        if (np.issubdtype(features.dtype, np.integer)
                and -(1 << 62) <= int(features.min()) <= int(features.max()) < 1 << 62):
            low = features.min(axis=0).astype(np.int64)
            span = int((features.max(axis=0).astype(np.int64) - low).max()) + 1
            if span * n_features <= _MAX_TABLE_SIZE:
                slots, counts = _slots(features, low, span)
                present = counts > 0
                sizes = present.reshape(n_features, span).sum(axis=1)
                offsets = np.concatenate([[0], np.cumsum(sizes)])
                table = (np.cumsum(present) - 1).astype(np.int32)
                values = np.nonzero(present.reshape(n_features, span))[1] + np.repeat(low, sizes)
                return cls(table[slots], offsets, counts[present], values.astype(np.float64), exact)
        bins, offsets, values = distinct_value_bins(features)
        counts = np.bincount(bins.ravel(), minlength=int(offsets[-1]))
        return cls(bins, offsets, counts, values, exact)

    @classmethod
    def from_integers(cls, features: np.ndarray, number_of_values: int) -> "BinnedFeatures":
        """Bin integer features in ``[0, number_of_values)`` by value."""
        slots, counts = _slots(features, np.zeros(features.shape[1], dtype=np.int64), number_of_values)
        offsets = np.arange(features.shape[1] + 1, dtype=np.int64) * number_of_values
        return cls(slots, offsets, counts, number_of_values=number_of_values)

    @classmethod
    def quantize(cls, features: np.ndarray) -> "BinnedFeatures":
        """Code each feature into at most 256 bins (uint8 quantisation).

        A feature whose values are integers spanning at most 255 is coded
        losslessly, ``x_q = x - min``; any other feature as
        ``x_q = round((x - min) / step)`` with ``step = (max - min) / 255``.
        Bin ``b`` stands for the raw value ``min + b * step``.
        """
        raw = np.asarray(features)
        values = raw.astype(np.float64)
        low = values.min(axis=0)
        high = values.max(axis=0)
        # halved before subtracting: max - min overflows for features spanning the float range
        half_span = high / 2 - low / 2
        integer_valued = np.all(values == np.round(values), axis=0)
        lossless = integer_valued & (half_span <= (QUANTIZATION_BINS - 1) / 2)
        step = np.where(lossless | (half_span == 0), 1.0, half_span / ((QUANTIZATION_BINS - 1) / 2))
        local = np.round((values / 2 - low / 2) / (step / 2)).astype(np.int64)
        np.clip(local, 0, QUANTIZATION_BINS - 1, out=local)
        sizes = np.where(lossless, 2 * np.where(lossless, half_span, 0.0) + 1, QUANTIZATION_BINS).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        owner = np.repeat(np.arange(raw.shape[1]), sizes)
        bin_values = 2 * (low[owner] / 2 + (np.arange(offsets[-1]) - offsets[owner]) * (step[owner] / 2))
        return cls(local + offsets[np.newaxis, :-1], offsets, None, bin_values, raw=raw, quantized=True)

    @classmethod
    def distinct(cls, features: np.ndarray) -> "BinnedFeatures":
        """Give every distinct value of a feature its own bin (exact float path)."""
        raw = np.asarray(features)
        bins, offsets, values = distinct_value_bins(raw.astype(np.float64, copy=False))
        return cls(bins, offsets, None, values, raw=raw)

    def histograms(self, values: np.ndarray) -> np.ndarray:
        """Per-bin sums of ``values`` over the samples falling into each bin.

        Parameters
        ----------
        values : numpy.ndarray
            (#samples, #outputs) float array.

        Returns
        -------
        numpy.ndarray
            (#bins, #outputs) sums; each feature's bins add up to the column totals.
        """
        sums = np.asarray(self._indicator() @ values)
        if self._mode_bins is None:
            return sums
        partial = np.add.reduceat(sums, self.offsets[:-1], axis=0)
        sums[self._mode_bins] = values.sum(axis=0) - partial
        return sums


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


def midpoints(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Thresholds strictly above ``low`` and at most ``high`` (for ``low < high``).

    ``(low + high) / 2`` can overflow to infinity near the float limits and
    round down onto ``low`` for neighbouring floats, which would give a
    stump that splits nothing; then ``high`` itself is the threshold.
    """
    middle = np.asarray(low, dtype=np.float64) / 2 + np.asarray(high, dtype=np.float64) / 2
    return np.where(middle > low, middle, high)


def _slots(features: np.ndarray, low: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """Map entry (n, f) to ``f * span + x[n, f] - low[f]`` (int32), with the count of every slot."""
    n_features = features.shape[1]
    shift = (np.arange(n_features, dtype=np.int64) * span - low).astype(np.int32)
    slots = np.empty(features.shape, dtype=np.int32)
    np.add(features, shift, out=slots, casting="unsafe")
    counts = np.bincount(slots.ravel(), minlength=span * n_features)
    return slots, counts


def _segment_argmax(counts: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """First position of the largest count within each segment."""
    starts = offsets[:-1]
    sizes = np.diff(offsets)
    is_max = counts == np.repeat(np.maximum.reduceat(counts, starts), sizes)
    positions = np.flatnonzero(is_max)
    segment = np.repeat(np.arange(starts.size), sizes)[positions]
    first = np.flatnonzero(np.concatenate([[True], segment[1:] != segment[:-1]]))
    return positions[first]
