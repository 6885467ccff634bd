"""Where a ``fit``'s rows are: the few operations the estimators' ``fit`` does on its data, so that each ``fit``
is written once for data in memory and data on a cluster.

Every estimator's ``fit`` validates its rows, encodes the labels, weighs the samples, drops the rows without
positive weight, holds out the early-stopping rows and trains; it does each through a :class:`FitData`, whose
row arrays (one entry or one row per sample) are NumPy arrays for :class:`MemoryData` and Dask arrays for the
Dask estimators' data (:mod:`bob_boost.dask._fit_data`), whose chunks stay on the workers. Everything else
(parameters, label encoding, class weights, the held-out rows, histories, metadata) is the estimator's own
code, the same for both.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .. import holdout as _holdout
from .._validation import check_sample_weight, mean_one
from ..costs import check_sample_costs, class_mean_costs
from ..exceptions import InvalidValueError
from ..machine import BoostedMachine
from ..recipes import Recipe
from ..sparse import column_extremes, is_sparse
from . import _categories
from ._compat import is_multilabel, validate_data


class FitData(Protocol):
    """The row operations of a ``fit`` (each a function of whole row arrays of one kind)."""

    #: Whether every round's training loss is recorded (``train_score_`` and ``feature_importances_``).
    records_training: bool

    def is_multilabel(self, y) -> bool:
        """Whether ``y`` is a label indicator matrix."""

    def validated(self, estimator, X, y, reset: bool, **options) -> tuple[Any, Any]:
        """``X`` and ``y`` as row arrays, checked (``options``: scikit-learn's ``validate_data``'s)."""

    def checked(self, X, check: Callable[[np.ndarray], None]):
        """``X``, with ``check`` of its rows (raising for bad values) done now or where they are read."""

    def all_constant(self, X) -> bool:
        """Whether no feature of ``X`` varies (False on a cluster, which does not pass over its rows for it: its
        stumps then stop before the first round)."""

    def weights(self, sample_weight, rows) -> Any:
        """``sample_weight`` checked as a row vector of the rows of ``rows``; None: no weights."""

    def rows(self, function: Callable, array, dtype, columns: int | None = None):
        """``function`` of ``array``'s rows, one entry (or ``columns`` entries) per row."""

    def distinct(self, values) -> np.ndarray:
        """The sorted distinct values."""

    def sums(self, indices, weights, number: int) -> np.ndarray:
        """(number,) float64: the weights (None: ones) of each index ``0 .. number - 1``."""

    def positive_shares(self, targets, weights) -> np.ndarray:
        """(#columns,) each column's share of the weight on rows with a positive target."""

    def class_halves(self, weights, positive):
        """``weights`` (None: ones) rescaled so that the rows where ``positive`` holds and the others weigh the
        same (AdaBoostDB's start)."""

    def aligned(self, values, rows, name: str):
        """``values`` (array_like, or this data's kind of array) as a row array of this data beside ``rows``: one
        row per row of ``rows``, any further axes kept; an error naming ``name`` otherwise."""

    def cost_rows(self, sample_costs, indices, number: int):
        """Example-dependent costs of the classes ``indices`` (rows or matrices, :func:`~bob_boost.costs.
        check_sample_costs`) as their checked (#rows, K) cost rows."""

    def class_means(self, indices, cost_rows, number: int) -> np.ndarray:
        """The (K, K) class means of ``cost_rows`` (:func:`~bob_boost.costs.class_mean_costs`)."""

    def positive(self, weights, *arrays) -> tuple:
        """``(weights, index, arrays)`` of the rows with positive weight: their weights, their positions in
        the data (None: every row is kept) and every array's rows.

        Rows of zero weight are dropped because they must not influence the model, not even through the
        thresholds they would add between distinct feature values; the trainers rescale the other weights to
        a mean of 1, so that integer weights give the objective of repeated samples."""

    def held_out(self, index, groups, counts: np.ndarray, seed: int, rows):
        """The boolean row vector of the rows held out (:func:`bob_boost.holdout.held_out_mask`);
        ``groups`` None: every row (those of the row array ``rows``) in group 0."""

    def kept(self, mask, *arrays) -> list:
        """Every array's rows where ``mask`` holds (None stays None), as row arrays of this data."""

    def gathered(self, mask, *arrays) -> list:
        """Every array's rows where ``mask`` holds (None stays None), as NumPy arrays."""

    def holds_out(self, estimator, X, stopping: bool) -> bool:
        """Whether early stopping holds out rows of ``X`` (``stopping``: it is on for this many rows)."""

    def regression_baseline(self, loss, targets, weights) -> np.ndarray | None:
        """A regressor's intercept (None: the recipe's, from its training rows)."""

    def train(self, recipe: Recipe, X, targets, rounds: int, **options) -> BoostedMachine:
        """Run ``recipe``'s trainer (``options``: :meth:`~bob_boost.recipes.Recipe.train`'s)."""


class MemoryData:
    """The rows of a ``fit`` as NumPy arrays: the in-memory estimators' data."""

    records_training = True

    @staticmethod
    def is_multilabel(y) -> bool:
        return bool(is_multilabel(y))

    @staticmethod
    def validated(estimator, X, y, reset: bool, **options) -> tuple[np.ndarray, np.ndarray]:
        return validate_data(estimator, _categories.coded_frame(estimator, X, reset), y, reset=reset,
                             ensure_all_finite=estimator._finite_rule(), accept_sparse=estimator._sparse_formats(),
                             **options)

    @staticmethod
    def checked(X: np.ndarray, check: Callable[[np.ndarray], None]) -> np.ndarray:
        check(X)
        return X

    @staticmethod
    def all_constant(X: np.ndarray) -> bool:
        if is_sparse(X):  # every column's least and largest value, its implicit zeros included, are equal
            low, high = column_extremes(X)
            return bool(np.all(low == high))
        return bool(np.all(X == X[0]))

    @staticmethod
    def weights(sample_weight, rows: np.ndarray) -> np.ndarray:
        return check_sample_weight(sample_weight, rows.shape[0])

    @staticmethod
    def rows(function: Callable, array: np.ndarray, dtype, columns: int | None = None) -> np.ndarray:
        return function(array)

    @staticmethod
    def distinct(values: np.ndarray) -> np.ndarray:
        return np.unique(values)

    @staticmethod
    def sums(indices: np.ndarray, weights: np.ndarray | None, number: int) -> np.ndarray:
        return np.bincount(indices, weights=weights, minlength=number).astype(np.float64)

    @staticmethod
    def positive_shares(targets: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return weights @ (targets > 0) / np.sum(weights)

    @staticmethod
    def class_halves(weights: np.ndarray, positive: np.ndarray) -> np.ndarray:
        weights = mean_one(weights)
        return weights / np.where(positive, weights[positive].sum(), weights[~positive].sum())

    @staticmethod
    def aligned(values, rows: np.ndarray, name: str) -> np.ndarray:
        array = np.asarray(values)
        if array.ndim == 0 or array.shape[0] != rows.shape[0]:
            raise InvalidValueError(f"{name}: expected {rows.shape[0]} rows (one per sample of X), got shape "
                                    f"{array.shape}")
        return array

    @staticmethod
    def cost_rows(sample_costs: np.ndarray, indices: np.ndarray, number: int) -> np.ndarray:
        return check_sample_costs(sample_costs, indices, number)

    @staticmethod
    def class_means(indices: np.ndarray, cost_rows: np.ndarray, number: int) -> np.ndarray:
        return class_mean_costs(indices, cost_rows, number)

    @staticmethod
    def positive(weights: np.ndarray, *arrays) -> tuple:
        kept = weights > 0
        if kept.all():  # every row: the arrays as they are (a copy of the features would double their memory)
            return weights, None, list(arrays)
        return weights[kept], np.flatnonzero(kept), [array[kept] for array in arrays]

    @staticmethod
    def held_out(index: np.ndarray, groups: np.ndarray | None, counts: np.ndarray, seed: int,
                 rows: np.ndarray) -> np.ndarray:
        if groups is None:
            groups = np.zeros(rows.shape[0], dtype=np.int64)
        return _holdout.held_out_mask(np.arange(rows.shape[0]) if index is None else index, groups, counts, seed)

    @staticmethod
    def kept(mask: np.ndarray, *arrays) -> list:
        return [None if array is None else array[mask] for array in arrays]

    gathered = kept

    @staticmethod
    def holds_out(estimator, X: np.ndarray, stopping: bool) -> bool:
        return stopping

    @staticmethod
    def regression_baseline(loss, targets: np.ndarray, weights: np.ndarray) -> None:
        return None

    @staticmethod
    def train(recipe: Recipe, X: np.ndarray, targets: np.ndarray, rounds: int, **options) -> BoostedMachine:
        return recipe.train(X, targets, rounds, **options)
