"""Weak trainers for multi-class (cost-sensitive) boosting.

Every trainer here fits a classifier ``G`` that minimises the weighted
cost ``sum_n w_n * L[l_n, G(x_n)]`` for a (K, K) non-negative *loss matrix*
``L``: BAdaCost passes ``L = exp(C2)`` with ``C2 = K/(K-1) C*``, AdaBoost.M1
the 0|1 matrix. The interface is

* ``prepare(features)`` -- code the features once per boosting run;
* ``train(prepared, labels, weights, loss_matrix, feature_subset=None)`` --
  return a :class:`~bob_boost.weak.multiclass.MultiClassWeakMachine`
  (validating its arguments);
* ``propose(prepared, state)`` -- the same for the training loop, which
  passes trusted inputs (:mod:`bob_boost.boosting.protocol`).

Trees are grown by :class:`~bob_boost.weak_trainers.tree_growing.TreeGrower`.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from .._validation import as_feature_matrix, check_positive_int, check_scalar
from ..boosting.protocol import Proposal, RoundState
from ..costs import check_class_labels
from ..exceptions import InvalidTypeError, InvalidValueError
from ..weak.lut import check_discrete
from ..weak.multiclass import MultiClassLUTMachine, MultiClassStumpMachine, MultiClassTreeMachine
from ..engine.categorical import category_ranks
from ..engine.threads import check_threads
from ..binning import QUANTIZATION_BINS, BinnedFeatures, check_histogram_size, check_missing  # noqa: F401  (old import path)
from .tree_categories import CategoryTable, check_categorical_features, feature_categories
from .tree_growing import TIE_TOLERANCE, TreeGrower, cheapest  # noqa: F401  (TIE_TOLERANCE: old import path)

#: Old names of the one binned representation, which the multi-class trainers' coded features are.
_OLD_NAMES = ("SplitFeatures", "DiscreteFeatures")


def __getattr__(name: str):
    if name in _OLD_NAMES:
        warnings.warn(f"{name} is bob_boost.binning.BinnedFeatures; use that name", DeprecationWarning,
                      stacklevel=2)
        return BinnedFeatures
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_training_inputs(number_of_samples: int, labels, weights, loss_matrix) -> tuple[np.ndarray, ...]:
    """Validate the per-round inputs of a multi-class weak trainer.

    Returns
    -------
    tuple
        ``(labels, weights, loss_matrix)`` as int64 (#samples,), float64
        (#samples,) and float64 (K, K) arrays.
    """
    matrix = np.asarray(loss_matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
        raise InvalidValueError(f"loss_matrix: expected a square (K, K) matrix with K >= 2, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise InvalidValueError("loss_matrix: entries must be finite and non-negative")
    classes = check_class_labels(labels, matrix.shape[0])
    if classes.size != number_of_samples:
        raise InvalidValueError(f"labels: has {classes.size} samples but features have {number_of_samples}")
    sample_weights = np.asarray(weights, dtype=np.float64)
    if sample_weights.shape != (number_of_samples,):
        raise InvalidValueError(f"weights: expected shape ({number_of_samples},), got {sample_weights.shape}")
    if not np.all(np.isfinite(sample_weights)) or np.any(sample_weights < 0) or not sample_weights.any():
        raise InvalidValueError("weights: must be finite, non-negative and not all zero")
    return classes, sample_weights, matrix


def check_feature_subset(feature_subset, number_of_features: int) -> np.ndarray:
    """Return the sorted unique feature columns of ``feature_subset`` (all columns for None)."""
    if feature_subset is None:
        return np.arange(number_of_features)
    subset = np.atleast_1d(np.asarray(feature_subset))
    if subset.ndim != 1 or subset.size == 0 or not np.issubdtype(subset.dtype, np.integer):
        raise InvalidValueError(f"feature_subset: expected a non-empty 1-D integer array, got {subset.dtype} "
                                f"of shape {subset.shape}")
    if subset.min() < 0 or subset.max() >= number_of_features:
        raise InvalidValueError(f"feature_subset: columns must be in 0 .. {number_of_features - 1}")
    return np.unique(subset).astype(np.int64)


class CostSensitiveTreeTrainer:
    """Grow a cost-sensitive multi-class decision tree of depth ``max_depth``.

    Splits maximise a cost-weighted Gini criterion: a sample of class ``j``
    with weight ``w`` counts as ``w * r_j``, where
    ``r_j = sum_k (L[j, k] - L[j, j])`` is the row sum of the loss matrix
    relative to its diagonal (for BAdaCost ``L = exp(C2)``, so these are the
    row sums of ``exp(C2(j,k)) - exp(C2(j,j))``); classes whose errors are
    expensive thus weigh more. A split of a node into ``A`` and ``B`` scores
    ``sum_j p_A(j)^2 / P_A + sum_j p_B(j)^2 / P_B`` (``p`` the cost-weighted
    class sums, ``P`` their total), which is the node's total minus the
    children's Gini impurities; the best split per node is taken if it
    improves on the unsplit node. Every node is labelled
    ``argmin_k sum_{n in node} w_n L[l_n, k]`` (lowest class on ties), the
    class that minimises the round's weighted cost.

    Parameters
    ----------
    max_depth : int
        Maximum depth (>= 1).
    quantized : bool
        Search splits on 256-bin quantised features (fast, see
        :meth:`BinnedFeatures.quantize`) or between every two consecutive
        distinct values (exact). Thresholds are stored in raw units and
        placed half-way between the two nearest occupied bins either way.
    n_threads : int or None
        Threads for coding and for the histograms of quantised features (None:
        every core; read when training starts). The tree does not depend on it.
    missing : {None, "bin"}
        None: NaN in the features is rejected. ``"bin"``: NaN is a missing
        value with a bin of its own in every feature (quantised features then
        get at most 255 value bins, see :meth:`BinnedFeatures.quantize`), and
        every split learns where NaN goes: a node with NaN samples scores each
        threshold with them on the left and on the right and keeps the better
        (left on a tie); a node without sends NaN to the child with more
        training samples (left on a tie). The directions are saved with the
        tree (:attr:`~bob_boost.weak.multiclass.MultiClassTreeMachine.missing_left`).
        A split always lies between two occupied value bins, so a feature that
        is NaN for every sample of a node never splits it.
    min_weight_fraction_leaf : float
        In [0, 0.5]: a split is made only if each child holds at least this
        share of the round's total sample weight (scikit-learn's trees' option
        of that name); 0 (the default) allows any split that leaves samples on
        both sides.
    categorical_features : sequence of int, boolean mask or None
        Features whose values are categories (integers in ``[0, 2**31)``, NaN missing with
        ``missing="bin"``), at most 256 of them per feature, the missing values' bin counting as one. A
        split of such a feature sends a set of its categories left and every other value right, a category
        unseen in training too; a node's NaN samples count as one more category. With at most 10 categories
        in a node every partition of them is scored, with more the prefixes of the categories ordered by
        their share of each class (exact for two classes; see :mod:`bob_boost.engine.gini_categories`).
    """

    #: The trainer reads per-row losses (``state.row_losses``: example-dependent costs) when a round has them.
    accepts_row_losses = True

    def __init__(self, max_depth: int = 2, quantized: bool = True, n_threads: int | None = None,
                 missing: str | None = None, min_weight_fraction_leaf: float = 0.0,
                 categorical_features=None) -> None:
        self.max_depth = check_positive_int(max_depth, "max_depth")
        self.categorical_features = check_categorical_features(categorical_features)
        self.min_weight_fraction_leaf = check_leaf_fraction(min_weight_fraction_leaf)
        if not isinstance(quantized, (bool, np.bool_)):
            raise InvalidTypeError(f"quantized: expected a bool, got {type(quantized).__name__}")
        self.quantized = bool(quantized)
        check_threads(n_threads)
        self.n_threads = n_threads
        self.missing = check_missing(missing)

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN in the features is a missing value (``missing="bin"``) rather than an error."""
        return check_missing(self.missing) is not None

    def prepare(self, features) -> BinnedFeatures:
        """Validate and code ``features`` once, for repeated :meth:`train` calls."""
        if isinstance(features, BinnedFeatures):
            if features.raw is None:
                raise InvalidValueError("features: binned for a stump or LUT trainer, not for trees")
            indices = check_categorical_features(self.categorical_features, features.number_of_features)
            if set(features.categories) != set(() if indices is None else indices.tolist()):
                raise InvalidValueError("features: binned with other categorical features than the trainer's "
                                        "categorical_features (use CostSensitiveTreeTrainer.prepare)")
            if features.quantized != self.quantized:
                raise InvalidValueError(f"features: coded with quantized={features.quantized}, the trainer "
                                        f"uses quantized={self.quantized}")
            if features.missing != self.accepts_missing:
                raise InvalidValueError(f"features: coded with missing={'bin' if features.missing else None!r}, "
                                        f"the trainer has missing={self.missing!r}")
            return features
        missing = self.accepts_missing
        array = as_feature_matrix(features, allow_nan=missing)
        indices = check_categorical_features(self.categorical_features, array.shape[1])
        categories = feature_categories(array, indices, QUANTIZATION_BINS if self.quantized else None, missing)
        if self.quantized:
            # a categorical feature is coded by its categories' ranks: a bin each, whatever their values
            binned = BinnedFeatures.quantize(category_ranks(array, categories), check_threads(self.n_threads),
                                             missing=missing)
            binned.raw = array
        else:
            binned = BinnedFeatures.distinct(array, missing=missing)
        binned.categories = categories
        binned.category_table = CategoryTable(categories, array.shape[1])
        return binned

    def train(self, features, labels, weights, loss_matrix, feature_subset=None) -> MultiClassTreeMachine:
        """Fit a tree to weighted labelled data.

        Parameters
        ----------
        features : array_like or BinnedFeatures
            (#samples, #features) matrix, or the result of :meth:`prepare`.
        labels : array_like of int
            (#samples,) classes in ``0 .. K-1``.
        weights : array_like
            (#samples,) non-negative sample weights.
        loss_matrix : array_like
            (K, K) non-negative ``L[j, k]``: cost per unit weight of predicting
            ``k`` for a class-``j`` sample.
        feature_subset : array_like of int, optional
            Columns the splits may use (all when None).

        Returns
        -------
        MultiClassTreeMachine
        """
        data = self.prepare(features)
        classes, sample_weights, matrix = check_training_inputs(data.number_of_samples, labels, weights,
                                                                loss_matrix)
        subset = check_feature_subset(feature_subset, data.number_of_features)
        return TreeGrower(data, classes, sample_weights, matrix, subset,
                          self.min_weight_fraction_leaf).grow(self.max_depth)

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal:
        """The tree for the round's labels, weights, loss matrix (or per-row losses) and feature subset (trusted
        inputs)."""
        subset = _all_columns(prepared, state.feature_subset)
        return Proposal(TreeGrower(prepared, state.labels, state.sample_weights, state.loss_matrix,
                                    subset, self.min_weight_fraction_leaf, state.row_losses).grow(self.max_depth))

    def __repr__(self) -> str:
        missing = "" if self.missing is None else f", missing={self.missing!r}"
        leaf = "" if not self.min_weight_fraction_leaf else \
            f", min_weight_fraction_leaf={self.min_weight_fraction_leaf!r}"
        categorical = "" if self.categorical_features is None else \
            f", categorical_features={self.categorical_features.tolist()!r}"
        return (f"CostSensitiveTreeTrainer(max_depth={self.max_depth}, quantized={self.quantized}{missing}{leaf}"
                f"{categorical})")


class MultiClassStumpTrainer:
    """Fit a :class:`~bob_boost.weak.multiclass.MultiClassStumpMachine`: the depth-1 cost-sensitive tree.

    Parameters
    ----------
    quantized : bool
        As for :class:`CostSensitiveTreeTrainer`.
    missing : {None, "bin"}
        As for :class:`CostSensitiveTreeTrainer`; the stump keeps the split's NaN side as
        ``missing_above``.
    min_weight_fraction_leaf : float
        As for :class:`CostSensitiveTreeTrainer`: the least share of the round's weight on each side.
    """

    def __init__(self, quantized: bool = True, missing: str | None = None,
                 min_weight_fraction_leaf: float = 0.0) -> None:
        self._tree_trainer = CostSensitiveTreeTrainer(1, quantized, missing=missing,
                                                      min_weight_fraction_leaf=min_weight_fraction_leaf)

    @property
    def min_weight_fraction_leaf(self) -> float:
        """The least share of the round's weight each side of the stump holds."""
        return self._tree_trainer.min_weight_fraction_leaf

    @property
    def quantized(self) -> bool:
        """Whether splits are searched on quantised features."""
        return self._tree_trainer.quantized

    @property
    def missing(self) -> str | None:
        """``"bin"`` when NaN is a missing value with its own bin, else None."""
        return self._tree_trainer.missing

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN in the features is a missing value (``missing="bin"``) rather than an error."""
        return self._tree_trainer.accepts_missing

    def prepare(self, features) -> BinnedFeatures:
        """Validate and code ``features`` once (see :meth:`CostSensitiveTreeTrainer.prepare`)."""
        return self._tree_trainer.prepare(features)

    def train(self, features, labels, weights, loss_matrix, feature_subset=None) -> MultiClassStumpMachine:
        """Fit the best stump; arguments as for :meth:`CostSensitiveTreeTrainer.train`.

        When no split improves on a single leaf, the stump predicts the
        leaf's class on both sides of a threshold at 0 on the first allowed
        feature.
        """
        data = self.prepare(features)
        classes, sample_weights, matrix = check_training_inputs(data.number_of_samples, labels, weights,
                                                                loss_matrix)
        subset = check_feature_subset(feature_subset, data.number_of_features)
        return self._fit(data, classes, sample_weights, matrix, subset)

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal:
        """The stump for the round's labels, weights, loss matrix and feature subset (trusted inputs)."""
        subset = _all_columns(prepared, state.feature_subset)
        return Proposal(self._fit(prepared, state.labels, state.sample_weights, state.loss_matrix, subset))

    def _fit(self, data: BinnedFeatures, classes: np.ndarray, weights: np.ndarray, matrix: np.ndarray,
             subset: np.ndarray) -> MultiClassStumpMachine:
        tree = TreeGrower(data, classes, weights, matrix, subset, self.min_weight_fraction_leaf).grow(1)
        if tree.depth == 0:
            return MultiClassStumpMachine(0.0, int(subset[0]), [tree.labels[0]] * 2, tree.number_of_classes,
                                          False if data.missing else None)
        missing_above = None if tree.missing_left is None else not bool(tree.missing_left[0])
        return MultiClassStumpMachine(float(tree.thresholds[0]), int(tree.features[0]),
                                      [tree.labels[tree.left_children[0]], tree.labels[tree.right_children[0]]],
                                      tree.number_of_classes, missing_above)

    def __repr__(self) -> str:
        leaf = "" if not self.min_weight_fraction_leaf else \
            f", min_weight_fraction_leaf={self.min_weight_fraction_leaf!r}"
        return f"MultiClassStumpTrainer(quantized={self.quantized}, missing={self.missing!r}{leaf})"


class MultiClassLUTTrainer:
    """Fit a :class:`~bob_boost.weak.multiclass.MultiClassLUTMachine`: one class per feature value.

    For every feature and value the per-class weighted histogram gives the
    cost of predicting each class there; each value gets its cheapest class
    and the feature with the lowest total cost is selected, which is the
    exact minimiser of the weighted cost over all LUTs. Values no training
    sample takes get the class that is cheapest over the whole data.

    Parameters
    ----------
    maximum_feature_value : int
        Number of LUT entries; features must be integers in ``[0, maximum_feature_value)``.
    """

    def __init__(self, maximum_feature_value: int) -> None:
        self.maximum_feature_value = check_positive_int(maximum_feature_value, "maximum_feature_value", 2)

    def prepare(self, features) -> BinnedFeatures:
        """Validate ``features`` once, for repeated :meth:`train` calls."""
        if isinstance(features, BinnedFeatures):
            if features.number_of_values != self.maximum_feature_value:
                raise InvalidValueError(f"features: prepared for {features.number_of_values} values, the trainer "
                                        f"uses {self.maximum_feature_value}")
            return features
        array = as_feature_matrix(features)
        check_histogram_size(array.shape[1], self.maximum_feature_value, 1)
        check_discrete(array, self.maximum_feature_value)
        return BinnedFeatures.from_integers(array, self.maximum_feature_value)

    def train(self, features, labels, weights, loss_matrix, feature_subset=None) -> MultiClassLUTMachine:
        """Fit the best LUT; arguments as for :meth:`CostSensitiveTreeTrainer.train`."""
        data = self.prepare(features)
        classes, sample_weights, matrix = check_training_inputs(data.values.shape[0], labels, weights, loss_matrix)
        subset = check_feature_subset(feature_subset, data.values.shape[1])
        return self._fit(data, classes, sample_weights, matrix, subset)

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal:
        """The LUT for the round's labels, weights, loss matrix and feature subset (trusted inputs)."""
        subset = np.arange(prepared.values.shape[1]) if state.feature_subset is None else state.feature_subset
        return Proposal(self._fit(prepared, state.labels, state.sample_weights, state.loss_matrix, subset))

    def _fit(self, data: BinnedFeatures, classes: np.ndarray, sample_weights: np.ndarray, matrix: np.ndarray,
             subset: np.ndarray) -> MultiClassLUTMachine:
        values = data.values
        k, v = matrix.shape[0], self.maximum_feature_value
        slots = np.arange(subset.size) * v + values[:, subset]  # (#samples, #subset)
        counts = np.bincount(slots.ravel(), minlength=subset.size * v).reshape(subset.size, v)
        histograms = np.bincount((slots * k + classes[:, np.newaxis]).ravel(),
                                 weights=np.repeat(sample_weights, subset.size),
                                 minlength=subset.size * v * k).reshape(subset.size, v, k)
        costs = histograms @ matrix  # (#subset, #values, K): cost of predicting each class
        best = int(cheapest(costs.min(axis=2).sum(axis=1)))
        totals = np.bincount(classes, weights=sample_weights, minlength=k)
        table = np.where(counts[best] > 0, cheapest(costs[best]), cheapest(totals @ matrix))
        return MultiClassLUTMachine(table, int(subset[best]), k)

    def __repr__(self) -> str:
        return f"MultiClassLUTTrainer(maximum_feature_value={self.maximum_feature_value})"


def check_leaf_fraction(value) -> float:
    """``min_weight_fraction_leaf`` as a float, raising unless it is a number in [0, 0.5] (a larger share
    leaves no split with two such children)."""
    return float(check_scalar(value, "min_weight_fraction_leaf", numbers.Real, min_val=0.0, max_val=0.5))


def _all_columns(data: BinnedFeatures, feature_subset: np.ndarray | None) -> np.ndarray:
    """The loop's feature subset (sorted, unique), or every column when it draws none."""
    return np.arange(data.number_of_features) if feature_subset is None else feature_subset
