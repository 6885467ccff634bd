"""The pool of every decision stump of a feature matrix, with exact class-wise errors.

:class:`StumpPool` evaluates the class-conditional weighted errors of the whole pool (every feature, every
threshold half-way between consecutive distinct values, both polarities) at once: one sparse product per
round gives per-bin sums of the class-wise weights, and running sums within each feature (in rows of a
fixed width, plus the rows' totals) turn them into the errors of all thresholds without any subtraction.

A categorical feature's stumps output one sign on a set of its categories. Each round its categories are put in
the order of their share of positive weight ``P_c / (P_c + N_c)`` (categories without weight first, then ties in
category order) and its candidates are the cuts of that order, the set being the categories above the cut. The
best of all its sets is one of these cuts for both selection rules: for a fixed step the bound is linear in the
two class errors, so the best set puts each category on its side by its ratio ``P_c / N_c`` alone, and the
largest root is reached where the bound's derivative, also linear in the errors, is smallest. A category without
weight in the round, like one never seen in training, is outside the set.
"""
from __future__ import annotations

import numpy as np

from ..._validation import as_feature_matrix
from ...exceptions import InvalidValueError
from ...binning import BinnedFeatures, midpoints
from ...weak.stump import StumpMachine
from ..partitioned import stump_outputs
from ..stump import set_outputs
from ..tree_categories import check_categorical_features, feature_categories

#: Bins per row of ``StumpPool``'s grid of class-wise sums.
_ROW_WIDTH = 32


class StumpPool:
    """Every decision stump of a feature matrix, with vectorised class-wise errors.

    Candidate ``k`` is split ``k // 2`` (splits ordered by feature, then
    threshold) with polarity +1 for even ``k`` and -1 for odd ``k``; a stump
    of polarity +1 outputs +1 at or above its threshold.

    Parameters
    ----------
    features : array_like
        (#samples, #features) matrix; binned once here.
    categorical_features : sequence of int, boolean mask or None
        Features whose values are categories (integers in ``[0, 2^31)``): their stumps split sets of them (see
        the module).
    """

    def __init__(self, features, categorical_features=None) -> None:
        array = as_feature_matrix(features)
        categories = feature_categories(array, check_categorical_features(categorical_features, array.shape[1]),
                                        None, False)
        # every bin summed directly, so that tiny class errors keep their relative precision
        binned = BinnedFeatures.from_values(array, exact=True)
        values = binned.bin_values
        last = np.zeros(values.size, dtype=bool)
        last[binned.offsets[1:] - 1] = True
        with np.errstate(invalid="ignore"):  # the last bins' "thresholds" are never used
            thresholds = np.where(last, np.nan, midpoints(values, np.append(values[1:], np.nan)))
        self._layout(binned.offsets, thresholds, categories)
        self._binned = binned

    @classmethod
    def from_bins(cls, offsets: np.ndarray, thresholds: np.ndarray,
                  categories: dict[int, np.ndarray] | None = None) -> "StumpPool":
        """The pool of bins given by their layout, whose class-wise sums come from elsewhere (a cluster).

        Parameters
        ----------
        offsets : numpy.ndarray
            (#features + 1,) feature ``f``'s bins are ``offsets[f]:offsets[f + 1]``.
        thresholds : numpy.ndarray
            (#bins,) the threshold between each bin and the next of its feature (any value for a last bin).
        categories : dict, optional
            The categorical features' categories, one bin each in this order.

        Use :meth:`errors_from_sums` rather than :meth:`class_errors` on it.
        """
        pool = cls.__new__(cls)
        pool._layout(np.asarray(offsets, dtype=np.int64), np.asarray(thresholds, dtype=np.float64), categories or {})
        pool._binned = None
        return pool

    def _layout(self, offsets: np.ndarray, thresholds: np.ndarray, categories: dict[int, np.ndarray]) -> None:
        sizes = np.diff(offsets)
        n_features = sizes.size
        self._offsets = offsets
        self._thresholds = thresholds
        self._feature_of_bin = np.repeat(np.arange(n_features), sizes)
        self._categories = {int(f): np.asarray(values, dtype=np.float64) for f, values in categories.items()}
        # the categorical features' bins, and the round's order of them (the identity until a round sorts them)
        self._category_bins = np.flatnonzero(np.isin(self._feature_of_bin, list(self._categories)))
        self._bin_order = np.arange(offsets[-1])
        last_bin = offsets[1:] - 1
        splits = np.ones(offsets[-1], dtype=bool)
        splits[last_bin] = False
        self._splits = np.flatnonzero(splits)
        if self._splits.size == 0:
            raise InvalidValueError("features: every feature is constant, so no stump can split them")
        # Each feature's bins are cut into rows of _ROW_WIDTH bins (plus an always-empty column), laid out
        # in one grid. Sums below and above a threshold are then sums of non-negative terms within a row
        # plus the totals of the feature's other rows -- never differences -- so they keep their relative
        # precision however small, are exactly 0 over bins without weight, and one wide feature does
        # not pad the grid of the others.
        position = np.arange(offsets[-1]) - np.repeat(offsets[:-1], sizes)
        # flat positions in the (#rows, _ROW_WIDTH + 1) grid and in the (#features, most rows + 1) grid
        # of row totals, for the bins, the rows and the splits
        rows_per_feature = -(-sizes // _ROW_WIDTH)
        first_row = np.concatenate([[0], np.cumsum(rows_per_feature)[:-1]])
        chunk = position // _ROW_WIDTH
        width, chunks = _ROW_WIDTH + 1, int(rows_per_feature.max()) + 1
        bin_row = first_row[self._feature_of_bin] + chunk
        self._bin_cell = bin_row * width + position % _ROW_WIDTH
        self._grid_size = int(rows_per_feature.sum()) * width
        row_feature = np.repeat(np.arange(n_features), rows_per_feature)
        self._row_chunk = row_feature * chunks + np.arange(rows_per_feature.sum()) - first_row[row_feature]
        self._row_last = np.arange(1, rows_per_feature.sum() + 1) * width - 1
        self._chunk_grid = (n_features, chunks)
        split_bin = self._splits
        self._split_cell = self._bin_cell[split_bin]
        self._split_chunk = self._feature_of_bin[split_bin] * chunks + chunk[split_bin]
        self.size = 2 * self._splits.size

    def class_errors(self, class_weights: np.ndarray) -> tuple[np.ndarray, ...]:
        """Misclassified and correctly classified weight of every candidate, per class.

        Parameters
        ----------
        class_weights : numpy.ndarray
            (#samples, 2) non-negative weights: column 0 the weights of the
            positive samples (zero on negatives), column 1 those of the
            negatives (zero on positives).

        Returns
        -------
        tuple of numpy.ndarray
            ``(wrong_positive, right_positive, wrong_negative, right_negative)``,
            each of shape (#candidates,).
        """
        # plain sums of non-negative weights: >= 0, and exactly 0 over bins without weight
        return self.errors_from_sums(self._binned.histograms(class_weights))

    @property
    def number_of_bins(self) -> int:
        """Bins of all features together (the rows of :meth:`errors_from_sums`' argument)."""
        return int(self._offsets[-1])

    def errors_from_sums(self, sums: np.ndarray) -> tuple[np.ndarray, ...]:
        """:meth:`class_errors` from the (#bins, 2) per-bin sums of the class-wise weights (a categorical feature's
        bins first put in the round's order, which :meth:`stump` then reads)."""
        if self._category_bins.size:
            sums = self._sorted_categories(sums)
        grid = np.zeros((2, self._grid_size))
        grid[:, self._bin_cell] = sums.T
        rows = grid.reshape(2, -1, _ROW_WIDTH + 1)
        up_to = np.cumsum(rows, axis=2).reshape(2, -1)  # within a row, up to and including each bin
        from_here = np.cumsum(rows[:, :, ::-1], axis=2)[:, :, ::-1].reshape(2, -1)  # from each bin to the row's end
        # each row's total, placed so that running sums over a feature's rows give the totals of the
        # rows before (first grid) and after (second grid) a given row
        totals = up_to[:, self._row_last]
        before, after = np.zeros((2,) + self._chunk_grid), np.zeros((2,) + self._chunk_grid)
        before.reshape(2, -1)[:, self._row_chunk + 1] = totals
        after.reshape(2, -1)[:, self._row_chunk] = totals
        before = np.cumsum(before, axis=2).reshape(2, -1)
        after = np.cumsum(after[:, :, ::-1], axis=2)[:, :, ::-1].reshape(2, -1)
        below = before[:, self._split_chunk] + up_to[:, self._split_cell]
        above = from_here[:, self._split_cell + 1] + after[:, self._split_chunk + 1]
        # candidates 2k and 2k+1: polarity +1 (misclassifies the positives below the threshold) and -1
        wrong_positive, right_positive = np.empty(2 * below.shape[1]), np.empty(2 * below.shape[1])
        wrong_negative, right_negative = np.empty(2 * below.shape[1]), np.empty(2 * below.shape[1])
        wrong_positive[0::2], wrong_positive[1::2] = below[0], above[0]
        right_positive[0::2], right_positive[1::2] = above[0], below[0]
        wrong_negative[0::2], wrong_negative[1::2] = above[1], below[1]
        right_negative[0::2], right_negative[1::2] = below[1], above[1]
        return wrong_positive, right_positive, wrong_negative, right_negative

    def _sorted_categories(self, sums: np.ndarray) -> np.ndarray:
        """``sums`` with each categorical feature's bins in the order of their share of positive weight
        (without weight first; ties in bin order), kept in :attr:`_bin_order` for the round's stump."""
        bins = self._category_bins
        positive, total = sums[bins, 0], sums[bins].sum(axis=1)
        share = np.divide(positive, total, out=np.full(bins.size, -1.0), where=total > 0)
        order = self._bin_order.copy()
        order[bins] = bins[np.lexsort((bins, share, self._feature_of_bin[bins]))]
        self._bin_order = order
        return sums[order]

    def _above(self, split: int) -> tuple[int, np.ndarray | None]:
        """A split's feature, and for a categorical one its bins (within the feature) above the split in the
        round's order: the stump's set."""
        feature = int(self._feature_of_bin[split])
        if feature not in self._categories:
            return feature, None
        start = int(self._offsets[feature])
        return feature, np.sort(self._bin_order[split + 1:int(self._offsets[feature + 1])]) - start

    def output_task(self, candidate: int) -> tuple:
        """``(function, arguments)`` whose ``function(coded, *arguments)`` gives the candidate's outputs on a
        partition's codes (:func:`~bob_boost.weak_trainers.partitioned.stump_outputs`, or
        :func:`~bob_boost.weak_trainers.stump.set_outputs` for a categorical feature's set)."""
        split = int(self._splits[candidate // 2])
        feature, above = self._above(split)
        polarity = 1.0 if candidate % 2 == 0 else -1.0
        if above is None:
            return stump_outputs, (feature, split - int(self._offsets[feature]) + 1, polarity)
        return set_outputs, (feature, above, polarity)

    def stump(self, candidate: int) -> StumpMachine:
        """The :class:`StumpMachine` of candidate ``candidate`` (a set of categories on a categorical feature)."""
        split = int(self._splits[candidate // 2])
        polarity = 1.0 if candidate % 2 == 0 else -1.0
        feature, above = self._above(split)
        if above is None:
            return StumpMachine(float(self._thresholds[split]), polarity, feature)
        return StumpMachine(0.0, polarity, feature, categories=self._categories[feature][above])
