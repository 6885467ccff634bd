"""The one binned representation of the training features, and histograms from it.

:class:`BinnedFeatures` codes every feature into consecutive bins once per
training run; every weak trainer works on it:

- :meth:`BinnedFeatures.from_values`: a bin per distinct value, or with
  ``max_bins`` at most that many bins per feature, cut at quantiles
  (:mod:`bob_boost.engine.edges`) where a feature has more distinct values
  (stumps; the cost-sensitive stump pool uses ``exact=True``);
- :meth:`BinnedFeatures.from_integers`: a bin per value ``0 .. V-1``
  (look-up tables);
- :meth:`BinnedFeatures.quantize`: at most 256 bins per feature, lossless for
  integer features of small range (the multi-class trees; the histogram
  engine will add its quantile bins here);
- :meth:`BinnedFeatures.distinct`: a bin per distinct value, keeping the raw
  features (exact multi-class trees).

With ``missing`` (``from_values``, ``quantize``, ``distinct``) every feature
gets one more bin, after its value bins, for its NaN samples
(:attr:`BinnedFeatures.missing`).

Histograms of per-sample values come from the compiled kernels of the
histogram engine (:mod:`bob_boost.engine`) over uint8/uint16 codes, in
threads, whenever every feature has at most 65536 bins and the sums need not
be exact (``exact=False``); otherwise from one sparse product, as follows.

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

import warnings

import numpy as np
import scipy.sparse

from .engine.codes import (CodedFeatures, code_dtype, count_integer_values, encode, integral_features,
                           padded_thresholds, rank_codes, step_codes)
from .engine.edges import (MAX_BINS_LIMIT, QuantizedLayout, all_thresholds, check_max_bins, count_thresholds,
                           feature_thresholds, midpoints, sample_rows, sparse_rebinned)
from .engine.edges import QUANTIZATION_BINS  # noqa: F401  (its old import path)
from .engine.listed import integer_entries
from .engine.threads import check_threads
from .engine.values import distinct_value_bins, integer_range, integer_table, segment_argmax, value_slots
from .exceptions import InvalidValueError
from .sparse import is_sparse


#: Largest histogram (#features x #values x #outputs) a look-up-table trainer may allocate (1 GiB of float64).
MAX_HISTOGRAM_SIZE = 1 << 27


#: The values of the weak trainers' ``missing`` option: None rejects NaN, "bin" gives it a bin of its own.
MISSING_MODES = (None, "bin")


def check_missing(missing, name: str = "missing") -> str | None:
    """Return ``missing`` if it is one of :data:`MISSING_MODES`, else raise ``ValueError`` naming ``name``."""
    if not (missing is None or (isinstance(missing, str) and missing in MISSING_MODES)):
        raise InvalidValueError(f"{name}: must be None or 'bin', got {missing!r}")
    return missing


def check_histogram_size(number_of_features: int, number_of_values: int, number_of_outputs: int) -> None:
    """Raise ``ValueError`` if a per-value histogram of this size would be unreasonably large."""
    size = number_of_features * number_of_values * number_of_outputs
    if size > MAX_HISTOGRAM_SIZE:
        raise InvalidValueError(
            f"maximum_feature_value: {number_of_values} values x {number_of_features} features x "
            f"{number_of_outputs} output(s) need a {size}-entry histogram, more than {MAX_HISTOGRAM_SIZE}; "
            f"quantise the features to fewer values")


def _nan_range(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature float64 minimum and maximum ignoring NaN (0 and 0 for a feature that is all NaN)."""
    with warnings.catch_warnings():  # an all-NaN feature warns; it gets the range 0 .. 0
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanmin(features, axis=0).astype(np.float64)
        high = np.nanmax(features, axis=0).astype(np.float64)
    empty = np.isnan(low)
    return np.where(empty, 0.0, low), np.where(empty, 0.0, high)


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
    missing : bool
        Whether each feature's last bin holds its NaN samples (missing values).
    number_of_values : int or None
        ``V`` of :meth:`from_integers`.
    """

    def __init__(self, bins: np.ndarray | None, offsets: np.ndarray, counts: np.ndarray | None,
                 bin_values: np.ndarray | None = None, exact: bool = False, raw: np.ndarray | None = None,
                 quantized: bool = False, number_of_values: int | None = None,
                 coded: CodedFeatures | None = None, split_thresholds: np.ndarray | None = None,
                 lossy: bool = False) -> None:
        """Store ``bins``, the (#samples, #features) global bin of every entry, with per-bin ``counts``.

        By default each feature's most frequent bin is left out of the sparse
        matrix and recovered as "column total minus the rest", which saves
        work but gives that bin only absolute precision; ``exact=True`` keeps
        every entry, so that every bin's sum is a plain sum (relative
        precision, exactly 0 without weight). The matrix is built on the first
        :meth:`histograms` call: trees never need it. With ``coded`` (the
        engine's codes) the histograms come from the compiled kernels and
        ``bins`` may be None (built from the codes when asked for).
        """
        self.number_of_features = len(offsets) - 1
        self.number_of_samples = bins.shape[0] if bins is not None else coded.n_samples
        self._codes = bins
        self.offsets = offsets
        self.bin_values = bin_values
        self.raw = raw
        self.quantized = quantized
        self.number_of_values = number_of_values
        self.coded = coded
        self.lossy = lossy
        self.missing = False
        #: Categorical features' sorted categories, one bin each, and their layout for the trees' machines
        #: (set by the trees' ``prepare``).
        self.categories: dict[int, np.ndarray] = {}
        self.category_table = None
        self.n_threads = coded.n_threads if coded is not None else 1
        self._split_thresholds = split_thresholds
        self._counts = counts
        self._exact = exact
        self._mode_bins: np.ndarray | None = None
        self._transposed = None
        self._values: np.ndarray | None = None
        self._flat: np.ndarray | None = None

    @property
    def codes(self) -> np.ndarray:
        """(#samples, #features) global bin of every entry."""
        if self._codes is None:
            self._codes = self.coded.whole_codes().T + self.offsets[np.newaxis, :-1]
        return self._codes

    @property
    def split_thresholds(self) -> np.ndarray | None:
        """(#bins,) threshold between each bin and the next of its feature (NaN after a feature's last bin).

        None for :meth:`from_integers` (look-up tables split nothing).
        """
        if self._split_thresholds is None and self.bin_values is not None:
            following = np.append(self.bin_values[1:], np.nan)
            thresholds = midpoints(self.bin_values, following)
            thresholds[self.offsets[1:] - 1] = np.nan
            self._split_thresholds = thresholds
        return self._split_thresholds

    @property
    def number_of_bins(self) -> int:
        """Total number of bins over all features."""
        return int(self.offsets[-1])

    @property
    def values(self) -> np.ndarray:
        """(#samples, #features) int64 bin of every entry within its feature (the value, for integer coding)."""
        if self._values is None:
            if self.coded is not None:
                self._values = self.coded.whole_codes().T.astype(np.int64)
            else:
                self._values = self.codes - self.offsets[np.newaxis, :-1]
        return self._values

    def _indicator(self):
        """The transposed sparse (#samples, #bins) indicator, built once."""
        if self._transposed is None:
            bins, offsets = self._codes, self.offsets
            counts = self._counts if self._counts is not None else np.bincount(bins.ravel(),
                                                                                minlength=int(offsets[-1]))
            self._mode_bins = None if self._exact else segment_argmax(counts, offsets)
            keep = (np.ones(bins.shape, dtype=bool) if self._exact
                    else bins != self._mode_bins[np.newaxis, :].astype(bins.dtype))
            indptr = np.zeros(self.number_of_samples + 1, dtype=np.int64)
            np.cumsum(keep.sum(axis=1), out=indptr[1:])
            indices = bins[keep]
            self._transposed = scipy.sparse.csr_matrix(
                (np.ones(indices.size), indices, indptr), shape=(self.number_of_samples, int(offsets[-1]))).T
        return self._transposed

    @classmethod
    def from_values(cls, features: np.ndarray, exact: bool = False, max_bins: int | None = None,
                    n_threads: int | None = 1, missing: bool = False) -> "BinnedFeatures":
        """Bin each feature by its distinct values, or into at most ``max_bins`` bins.

        Parameters
        ----------
        features : numpy.ndarray
            Validated (#samples, #features) matrix.
        exact : bool
            Keep every entry in the sparse matrix (plain sums for every bin; see
            the class constructor); implies ``max_bins=None``.
        max_bins : int, optional
            ``None``: a bin per distinct value (bob.learn.boosting's candidate
            thresholds). An integer in [2, 65535]: a feature with at most that
            many distinct values still gets a bin per value; one with more is
            cut at quantiles (:mod:`bob_boost.engine.edges`).
        n_threads : int, optional
            Threads for binning and for every later :meth:`histograms` call
            (None: every core).
        missing : bool
            Give every feature one more bin, after its value bins, for its NaN
            samples (missing values); the value bins then number at most
            ``max_bins - 1``.
        """
        max_bins = check_max_bins(max_bins)
        n_threads = check_threads(n_threads)
        if exact:
            return cls._sparse_from_values(features, exact=True)
        # a scipy sparse matrix (canonical CSR) takes the same steps: the engine reads its stored values
        # and implicit zeros per column, and codes it a block of rows at a time (bob_boost.sparse)
        if missing:
            return cls._with_missing(features, max_bins, n_threads)
        limit = max_bins if max_bins is not None else MAX_BINS_LIMIT + 1
        found = integer_range(features)
        if found is not None:
            low, span = found
            counts = count_integer_values(features, low, span, n_threads)
            present = counts > 0
            sizes = present.sum(axis=1)
            if max_bins is None and sizes.max() > limit:
                return cls._sparse_from_values(features, exact=False)
            thresholds = count_thresholds(counts, low, max_bins)
            if sizes.max() <= limit:  # a bin per value: the codes are the values' ranks
                ranks = np.cumsum(present, axis=1) - 1
                codes = rank_codes(features, low, ranks, n_threads)
                return cls._coded(codes, thresholds, n_threads, lossy=False)
            return cls._encoded(features, thresholds, n_threads, lossy=True)
        rows = sample_rows(features.shape[0]) if max_bins is not None else None
        thresholds, distinct = all_thresholds(features, max_bins, n_threads, rows)
        if max(t.size for t in thresholds) + 1 > limit:
            return cls._sparse_from_values(features, exact=False)
        return cls._sample_coded(features, thresholds, distinct, rows is not None, max_bins, n_threads)

    @classmethod
    def _with_missing(cls, features: np.ndarray, max_bins: int | None, n_threads: int) -> "BinnedFeatures":
        """Value bins from the non-missing values (at most ``max_bins - 1``), then a NaN bin per feature."""
        value_bins = None if max_bins is None else max_bins - 1
        rows = sample_rows(features.shape[0]) if max_bins is not None else None
        thresholds, distinct = all_thresholds(features, value_bins, n_threads, rows)
        if max(t.size for t in thresholds) + 2 > MAX_BINS_LIMIT + 1:
            raise InvalidValueError("max_bins: with missing values every feature needs at most 65535 value bins; "
                                    "set max_bins")
        return cls._sample_coded(features, thresholds, distinct, rows is not None, value_bins, n_threads, missing=True)

    @classmethod
    def _sample_coded(cls, features, thresholds: list, distinct: list, sampled: bool, max_bins: int | None,
                      n_threads: int, missing: bool = False) -> "BinnedFeatures":
        """The codes of ``thresholds`` found from the sample's rows (``sampled``) or from every row. A feature whose
        sample got a bin per value but whose rows hold another value is re-binned from all its rows: a sparse
        matrix's stored values are checked before coding (its codes are then made once), a dense matrix's codes
        after (comparing codes is cheaper than searching each value among the sampled ones)."""
        lossy = any(d is None for d in distinct)
        if sampled and is_sparse(features):
            lossy = sparse_rebinned(features, distinct, thresholds, max_bins) or lossy
            sampled = False
        binned = cls._encoded(features, thresholds, n_threads, lossy=lossy, missing=missing)
        if sampled:
            binned._check_sampled_distinct(features, distinct, thresholds, max_bins)
        return binned

    @classmethod
    def _sparse_from_values(cls, features: np.ndarray, exact: bool) -> "BinnedFeatures":
        """The sparse-product binning by distinct values (exact sums, or features with more than 65536 values)."""
        if is_sparse(features):
            raise InvalidValueError("max_bins: a sparse matrix is binned into at most 65536 bins per feature "
                                    "(exact sums and max_bins=None with more distinct values need dense features)")
        table = integer_table(features)
        if table is not None:
            slots, counts, low, span = table
            n_features = features.shape[1]
            present = counts > 0
            sizes = present.reshape(n_features, span).sum(axis=1)
            offsets = np.concatenate([[0], np.cumsum(sizes)])
            ranks = (np.cumsum(present) - 1).astype(np.int32)
            values = np.nonzero(present.reshape(n_features, span))[1] + np.repeat(low, sizes)
            return cls(ranks[slots], offsets, counts[present], values.astype(np.float64), exact)
        bins, offsets, values = distinct_value_bins(features)
        counts = np.bincount(bins.ravel(), minlength=int(offsets[-1]))
        return cls(bins, offsets, counts, values, exact)

    @classmethod
    def _encoded(cls, features: np.ndarray, thresholds: list[np.ndarray], n_threads: int,
                 lossy: bool, missing: bool = False) -> "BinnedFeatures":
        """Code ``features`` against per-feature ``thresholds`` with the compiled kernel (NaN to its own bin)."""
        missing_codes = np.array([t.size + 1 for t in thresholds], dtype=np.int64) if missing else None
        codes = encode(features, padded_thresholds(thresholds), n_threads, missing_codes)
        return cls._coded(codes, thresholds, n_threads, lossy, missing)

    @classmethod
    def from_codes(cls, codes: np.ndarray, thresholds: list[np.ndarray], n_threads: int | None = 1) -> "BinnedFeatures":
        """Features already coded elsewhere, used as they are (trusted; copied only when not C-ordered).

        ``codes`` is the (#features, #samples) uint8 or uint16 bin of every entry; feature ``f`` has
        ``thresholds[f].size + 1`` bins, and its bin ``c`` holds the values between ``thresholds[f][c-1]``
        and ``thresholds[f][c]``, the thresholds its stumps will use.

        Raises
        ------
        ValueError
            For a code outside its feature's bins (it would be counted in the next feature's).
        """
        binned = cls._coded(codes, thresholds, check_threads(n_threads), lossy=False)
        counts, sizes = binned.coded.counts, np.diff(binned.offsets)
        outside = (counts > 0) & (np.arange(counts.shape[1]) >= sizes[:, np.newaxis])
        if outside.any():
            f, code = np.argwhere(outside)[0]
            raise InvalidValueError(f"codes: feature {f} holds code {code} but its {thresholds[f].size} thresholds "
                                    f"give it {sizes[f]} bins")
        return binned

    @classmethod
    def _coded(cls, codes: np.ndarray, thresholds: list[np.ndarray], n_threads: int,
               lossy: bool, missing: bool = False) -> "BinnedFeatures":
        sizes = np.array([t.size + 1 + missing for t in thresholds], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        tail = [np.nan, np.nan] if missing else [np.nan]
        split = np.concatenate([np.append(t, tail) for t in thresholds])
        coded = CodedFeatures(codes, int(sizes.max()), n_threads)
        binned = cls(None, offsets, None, coded=coded, split_thresholds=split, lossy=lossy)
        binned.missing = missing
        return binned

    def _check_sampled_distinct(self, features: np.ndarray, distinct: list, thresholds: list,
                                max_bins: int) -> None:
        """Re-bin from every row a feature whose sample showed few distinct values but whose data has others."""
        changed = False
        for f, values in enumerate(distinct):
            if values is None:
                continue
            column, codes = features[:, f], self.coded.codes[f]
            if self.missing:
                present = ~np.isnan(column)
                column, codes = column[present], codes[present]
            if np.array_equal(values[codes], column):
                continue
            thresholds[f], _ = feature_thresholds(features[:, f], max_bins)
            changed = True
        if changed:  # rare: rebuild the codes and their layout from the corrected thresholds
            rebuilt = self._encoded(features, thresholds, self.coded.n_threads, lossy=True, missing=self.missing)
            self.__dict__.update(rebuilt.__dict__)

    @classmethod
    def from_integers(cls, features: np.ndarray, number_of_values: int,
                      n_threads: int | None = 1, missing: bool = False) -> "BinnedFeatures":
        """Bin integer features in ``[0, number_of_values)`` by value (histograms in ``n_threads`` threads).

        With ``missing`` NaN is a missing value with bin ``number_of_values`` of its feature (each
        feature then owns ``number_of_values + 1`` bins).
        """
        if missing:
            return cls._integers_with_missing(features, number_of_values, check_threads(n_threads))
        n_features = features.shape[1]
        offsets = np.arange(n_features + 1, dtype=np.int64) * number_of_values
        if number_of_values <= MAX_BINS_LIMIT + 1:
            if is_sparse(features):
                codes = integer_entries(features, None, code_dtype(number_of_values))
            else:
                codes = np.empty((n_features, features.shape[0]), dtype=code_dtype(number_of_values))
                codes[...] = features.T
            coded = CodedFeatures(codes, number_of_values, check_threads(n_threads))
            return cls(None, offsets, None, number_of_values=number_of_values, coded=coded)
        if is_sparse(features):
            raise InvalidValueError(f"maximum_feature_value: a sparse matrix's look-up tables have at most "
                                    f"{MAX_BINS_LIMIT + 1} entries, got {number_of_values}")
        slots, counts = value_slots(features, np.zeros(n_features, dtype=np.int64), number_of_values)
        return cls(slots, offsets, counts, number_of_values=number_of_values)

    @classmethod
    def _integers_with_missing(cls, features: np.ndarray, number_of_values: int,
                               n_threads: int) -> "BinnedFeatures":
        """:meth:`from_integers` with a NaN bin ``number_of_values`` after each feature's value bins."""
        bins = number_of_values + 1
        if bins > MAX_BINS_LIMIT + 1:
            raise InvalidValueError(f"maximum_feature_value: with missing values at most {MAX_BINS_LIMIT} values, "
                                    f"got {number_of_values}")
        n_features = features.shape[1]
        if is_sparse(features):
            codes = integer_entries(features, number_of_values, code_dtype(bins))
        else:
            codes = np.empty((n_features, features.shape[0]), dtype=code_dtype(bins))
            for f in range(n_features):  # a column at a time: no float copy of the whole matrix
                column = features[:, f]
                codes[f] = np.where(np.isnan(column), number_of_values, column) if column.dtype.kind == "f" else column
        offsets = np.arange(n_features + 1, dtype=np.int64) * bins
        binned = cls(None, offsets, None, number_of_values=number_of_values,
                     coded=CodedFeatures(codes, bins, n_threads))
        binned.missing = True
        return binned

    @classmethod
    def quantize(cls, features: np.ndarray, n_threads: int | None = 1, missing: bool = False) -> "BinnedFeatures":
        """Code each feature into at most 256 bins (uint8 quantisation).

        A feature whose values are integers spanning at most 255 is coded
        losslessly, ``x_q = x - min``; any other feature as
        ``x_q = round((x - min) / step)`` with ``step = (max - min) / 255``.
        Bin ``b`` stands for the raw value ``min + b * step``.

        With ``missing`` NaN is a missing value with a bin of its own after
        each feature's value bins (bin value NaN); the value bins then number
        at most 255 (lossless up to a span of 254, else ``step = (max - min) / 254``),
        so that the codes still fit in a byte.
        """
        raw = np.asarray(features)
        n_threads = check_threads(n_threads)
        if missing and raw.dtype.kind == "f":
            low, high = _nan_range(raw)
        else:
            low = raw.min(axis=0).astype(np.float64)
            high = raw.max(axis=0).astype(np.float64)
        layout = QuantizedLayout.of(low, high, integral_features(raw, n_threads), missing)
        codes = step_codes(raw, low, layout.step, n_threads, layout.top, layout.missing_codes)
        coded = CodedFeatures(codes, layout.bins_per_feature, n_threads)
        binned = cls(None, layout.offsets, None, layout.bin_values, raw=raw, quantized=True, coded=coded)
        binned.missing = missing
        return binned

    @classmethod
    def distinct(cls, features: np.ndarray, missing: bool = False) -> "BinnedFeatures":
        """Give every distinct value of a feature its own bin (exact float path).

        With ``missing`` NaN is a missing value with a bin of its own after
        each feature's value bins (bin value NaN), whether or not the feature has NaN.
        """
        raw = np.asarray(features)
        values = raw.astype(np.float64, copy=False)
        if not missing:
            bins, offsets, bin_values = distinct_value_bins(values)
            return cls(bins, offsets, None, bin_values, raw=raw)
        # NaN as +inf (which features never hold) sorts last and forms one bin; a row of +inf gives
        # every feature that bin, NaN or not
        sentinel = np.full((1, raw.shape[1]), np.inf)
        bins, offsets, bin_values = distinct_value_bins(np.vstack([np.where(np.isnan(values), np.inf, values),
                                                                   sentinel]))
        bin_values[offsets[1:] - 1] = np.nan
        binned = cls(np.ascontiguousarray(bins[:-1]), offsets, None, bin_values, raw=raw)
        binned.missing = True
        return binned

    def padded_positions(self) -> np.ndarray:
        """(#bins,) position of each global bin in a padded (#features x bins-per-feature) layout: the cost-sensitive
        class trees' node histograms (the gradient trees' hold each feature's own bins, at its offsets)."""
        if self._flat is None:
            sizes = np.diff(self.offsets)
            starts = np.arange(self.number_of_features) * self.coded.number_of_bins
            self._flat = np.repeat(starts - self.offsets[:-1], sizes) + np.arange(self.number_of_bins)
        return self._flat

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
        if self.coded is not None:
            return self.coded.histograms(np.ascontiguousarray(values, dtype=np.float64), self.offsets)
        sums = np.asarray(self._indicator() @ values)
        if self._mode_bins is None:
            return sums
        partial = np.add.reduceat(sums, self.offsets[:-1], axis=0)
        sums[self._mode_bins] = values.sum(axis=0) - partial
        return sums
