"""Stochastic boosting: which rows and columns a round's weak machine is fitted to.

A :class:`Sampling` gives every round a factor per training row, which multiplies the row's sample weight for
the weak trainer only (its gradient and hessian), and, with ``colsample_bytree``, the feature columns its
gradient tree may split on:

- ``"uniform"``: row ``i`` is kept (factor 1) when its uniform number is below ``subsample``, else dropped
  (factor 0): Friedman's stochastic gradient boosting ("Stochastic gradient boosting", Computational
  Statistics & Data Analysis 38, 2002) with an independent draw per row, as XGBoost's ``subsample`` (so about,
  not exactly, that share of the rows; Friedman and LightGBM's bagging draw an exact count);
- ``"stratified"``: from every class (every distinct target row), exactly ``round(subsample * n_c)`` rows (at
  least one), those of smallest uniform numbers;
- ``"undersample"``: random under-sampling of every class to the smallest class's count divided by
  ``subsample`` (1: balanced classes; a class with fewer rows keeps them all), as imbalanced-learn's
  ``RandomUnderSampler`` draws for RUSBoost (Seiffert et al., "RUSBoost: a hybrid approach to alleviating class
  imbalance", IEEE Transactions on Systems, Man and Cybernetics A 40, 2010), those of smallest uniform numbers;
  every round draws anew (with ``subsample_freq`` 1);
- ``"goss"``: gradient-based one-side sampling (Ke et al., "LightGBM: a highly efficient gradient boosting
  decision tree", NeurIPS 2017, Algorithm 2): the ``top_rate`` share of rows of largest gradient magnitude
  (summed over the outputs, sample weights included) is kept, every other row with probability
  ``other_rate / (1 - top_rate)`` and then weighted ``(1 - top_rate) / other_rate``, so that the histogram sums
  are unbiased estimates of the full ones. Rows tied with the last of the top share are all kept.

A dropped row has factor 0: stumps and tables are chosen from the kept rows' gradient, and a gradient tree
grows on the kept rows alone (its ``min_samples_leaf`` counts them, as with LightGBM's bagging), the dropped
rows routed through it afterwards. A weight that a step rule fits is fitted on every row.

The uniform numbers are a counter-based hash of ``(random_state, draw, global row index)``, so a row's fate
depends neither on the thread count nor on how the rows are split into partitions (in memory or on a cluster);
a machine continued for more rounds draws as one longer run would. The exact selections (GOSS's top share, the
strata's counts) are order statistics: in memory ``numpy.partition`` finds them, on partitions
:func:`bob_boost.engine.hashing.kth_keys`, exactly the same.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from .._validation import check_choice, check_positive_int, check_scalar
from ..engine.hashing import GOLDEN, mix, mixed
from ..exceptions import InvalidTypeError, InvalidValueError

#: The row-sampling methods of :class:`Sampling`.
SAMPLING_METHODS = ("uniform", "stratified", "goss", "undersample")

#: The methods that draw from every class (stratum): their targets are classes.
CLASS_METHODS = ("stratified", "undersample")

#: The options of :class:`Sampling` as the estimators and the command line name them (``sampling``: its
#: ``method``), with their defaults, which sample nothing.
SAMPLING_OPTIONS = {"subsample": 1.0, "subsample_freq": 1, "sampling": "uniform", "top_rate": 0.2,
                    "other_rate": 0.1, "colsample_bytree": 1.0, "colsample_bynode": 1.0}

#: The most strata (distinct target rows) ``"stratified"`` sampling accepts.
MOST_STRATA = 256

def uniforms(seed: int, draw: int, first_row: int, count: int) -> np.ndarray:
    """(count,) numbers in [0, 1) of the rows ``first_row .. first_row + count - 1`` for ``draw``, a function of
    ``(seed, draw, row)`` alone."""
    with np.errstate(over="ignore"):
        key = mix(mix(np.uint64(seed % 2 ** 64) ^ (np.uint64(draw) * GOLDEN)) + GOLDEN)
        rows = np.arange(first_row, first_row + count, dtype=np.uint64)
        bits = mixed(key + rows * GOLDEN)
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def column_subset(seed: int, draw: int, features: int, fraction: float) -> np.ndarray | None:
    """The sorted ``max(1, round(fraction * features))`` columns of smallest numbers for ``draw`` (None: all)."""
    size = max(1, int(round(fraction * features)))
    if size >= features:
        return None
    # the columns' own stream: ``draw`` counted from the top of the 64-bit range
    keys = uniforms(seed, 2 ** 63 + draw, 0, features)
    return np.sort(np.argsort(keys, kind="stable")[:size])


def float_keys(values: np.ndarray) -> np.ndarray:
    """uint64 keys in the order of the non-negative float64 ``values`` (their bit patterns)."""
    return np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)


# The functions of a block of rows take the block's own arguments first (its first row's global index, its
# strata or gradient magnitudes), as the partitions' ``each`` passes them.

def uniform_factors(first_row: int, count: int, seed: int, draw: int, fraction: float) -> np.ndarray:
    """1.0 for the rows kept, 0.0 for the others (``"uniform"``)."""
    return (uniforms(seed, draw, first_row, count) < fraction).astype(np.float64)


def stratum_keys(first_row: int, count: int, seed: int, draw: int) -> np.ndarray:
    """The rows' uniform numbers as uint64 keys, for the strata's selection."""
    return float_keys(uniforms(seed, draw, first_row, count))


def stratified_factors(strata: np.ndarray, first_row: int, seed: int, draw: int, thresholds: np.ndarray) -> np.ndarray:
    """1.0 for the rows whose key is at most their stratum's threshold (``"stratified"``), else 0.0."""
    return (stratum_keys(first_row, strata.size, seed, draw) <= thresholds[strata]).astype(np.float64)


def goss_magnitudes(gradient: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """(#rows,) uint64 keys of every row's gradient magnitude, summed over the outputs, sample weight included."""
    magnitude = np.abs(gradient).sum(axis=1)
    if weights is not None:
        magnitude = magnitude * weights
    return float_keys(magnitude)


def goss_factors(magnitudes: np.ndarray, first_row: int, seed: int, draw: int, threshold: np.uint64,
                 top_rate: float, other_rate: float) -> np.ndarray:
    """GOSS's factors: 1 for the rows of magnitude at least ``threshold``, ``(1 - a) / b`` for the other rows
    drawn with probability ``b / (1 - a)``, 0 for the rest (``a``: ``top_rate``, ``b``: ``other_rate``)."""
    drawn = uniforms(seed, draw, first_row, magnitudes.size) < other_rate / (1.0 - top_rate)
    factors = np.where(drawn, (1.0 - top_rate) / other_rate, 0.0)
    factors[magnitudes >= threshold] = 1.0
    return factors


def strata_of(targets: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Each row's index in the sorted distinct target rows ``classes`` (rows of ``targets``, all among them)."""
    strata = np.zeros(targets.shape[0], dtype=np.int64)
    for k in range(1, classes.shape[0]):
        strata[np.all(targets == classes[k], axis=1)] = k
    return strata


def stratum_counts(strata: np.ndarray, classes: int) -> np.ndarray:
    """(classes,) rows per stratum."""
    return np.bincount(strata, minlength=classes)


def distinct_rows(targets: np.ndarray) -> np.ndarray:
    """The sorted distinct rows of ``targets``."""
    return np.unique(targets, axis=0)


def check_strata(classes: np.ndarray) -> np.ndarray:
    """``classes`` (distinct target rows), refused when too many to be classes."""
    if classes.shape[0] > MOST_STRATA:
        raise InvalidValueError(f"sampling: methods 'stratified' and 'undersample' need class targets; the targets "
                                f"have {classes.shape[0]} distinct values (at most {MOST_STRATA})")
    return classes


def _fraction(value, name: str) -> float:
    return float(check_scalar(value, name, numbers.Real, min_val=0.0, max_val=1.0, include_boundaries="right"))


class Sampling:
    """Row and column subsampling of every round (stochastic gradient boosting, GOSS), see the module.

    Parameters
    ----------
    subsample : float
        In (0, 1]: the share of rows each round's weak machine is fitted to (``"uniform"``, ``"stratified"``);
        ``"undersample"``: the smallest class's count over every other class's after sampling (1: balanced).
    subsample_freq : int
        Draw new rows every this many rounds (LightGBM's ``bagging_freq``); GOSS draws every round.
    method : {"uniform", "stratified", "goss", "undersample"}
        How rows are drawn (see the module).
    top_rate, other_rate : float
        GOSS: the share of rows of largest gradient kept, and the share drawn from the others; each in
        (0, 1], their sum at most 1.
    colsample_bytree : float
        In (0, 1]: the share of feature columns each round's stumps or gradient trees may split on (at least
        one), drawn per round.
    colsample_bynode : float
        In (0, 1]: the share of the round's columns each node of a gradient tree may split on (at least one),
        drawn per node (LightGBM's ``feature_fraction_bynode``, scikit-learn's ``max_features``).
    random_state : int
        The seed of every draw (a non-negative int).

    Raises
    ------
    ValueError
        For a fraction outside (0, 1], GOSS rates that sum above 1, an unknown method, or a negative seed.
    TypeError
        For a seed that is not an int.
    """

    def __init__(self, subsample: float = 1.0, subsample_freq: int = 1, method: str = "uniform",
                 top_rate: float = 0.2, other_rate: float = 0.1, colsample_bytree: float = 1.0,
                 random_state: int = 0, colsample_bynode: float = 1.0) -> None:
        self.subsample = _fraction(subsample, "subsample")
        self.subsample_freq = check_positive_int(subsample_freq, "subsample_freq")
        self.method = check_choice(method, "method", SAMPLING_METHODS)
        self.top_rate = _fraction(top_rate, "top_rate")
        self.other_rate = _fraction(other_rate, "other_rate")
        if self.method == "goss" and self.top_rate + self.other_rate > 1.0:
            raise InvalidValueError(f"top_rate, other_rate: must sum to at most 1 for GOSS, got "
                                    f"{self.top_rate} + {self.other_rate}")
        if self.method == "goss" and self.top_rate == 1.0:
            raise InvalidValueError("top_rate: must be below 1 for GOSS (1 keeps every row)")
        self.colsample_bytree = _fraction(colsample_bytree, "colsample_bytree")
        self.colsample_bynode = _fraction(colsample_bynode, "colsample_bynode")
        if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
            raise InvalidTypeError(f"random_state: expected an int, got {type(random_state).__name__}")
        if random_state < 0:
            raise InvalidValueError(f"random_state: expected a non-negative int, got {random_state}")
        self.random_state = int(random_state)

    @property
    def samples_rows(self) -> bool:
        """Whether rounds see a sample of the rows (else every row, factor 1)."""
        return self.method in ("goss", "undersample") or self.subsample < 1.0

    def draw(self, round_in_machine: int) -> int:
        """The draw of a round, by its place in the whole machine: a new one every ``subsample_freq`` rounds
        (every round for GOSS)."""
        return round_in_machine if self.method == "goss" else round_in_machine // self.subsample_freq

    def columns(self, round_in_machine: int, features: int) -> np.ndarray | None:
        """The round's columns (None: all)."""
        if self.colsample_bytree >= 1.0:
            return None
        return column_subset(self.random_state, round_in_machine, features, self.colsample_bytree)

    def node_columns(self, round_in_machine: int) -> tuple[int, float] | None:
        """The round's per-node column sampling ``(key, fraction)`` (None: none)."""
        if self.colsample_bynode >= 1.0:
            return None
        key = int(float_keys(uniforms(self.random_state, 2 ** 62 + round_in_machine, 0, 1))[0])
        return key, self.colsample_bynode

    def stratum_ranks(self, class_counts: np.ndarray) -> np.ndarray:
        """Rows kept per stratum: ``round(subsample * n_c)``, at least 1 of a stratum that has rows
        (``"undersample"``: ``min(n_c, round(n_min / subsample))`` of the smallest stratum's ``n_min``)."""
        if self.method == "undersample":
            smallest = int(class_counts[class_counts > 0].min())
            kept = np.minimum(class_counts, max(smallest, int(round(smallest / self.subsample))))
            return kept.astype(np.int64)
        return np.where(class_counts > 0, np.maximum(1, np.round(self.subsample * class_counts)), 0).astype(np.int64)

    def goss_rank(self, rows: int) -> int:
        """The rank, from the largest, of the last row of GOSS's top share (at least 1)."""
        return max(1, int(round(self.top_rate * rows)))

    def __repr__(self) -> str:
        return (f"Sampling(subsample={self.subsample}, subsample_freq={self.subsample_freq}, method={self.method!r}, "
                f"top_rate={self.top_rate}, other_rate={self.other_rate}, "
                f"colsample_bytree={self.colsample_bytree}, colsample_bynode={self.colsample_bynode}, "
                f"random_state={self.random_state})")


def in_memory_factors(sampling: Sampling, round_in_machine: int, rows: int, strata: np.ndarray | None,
                      gradient: np.ndarray | None, weights: np.ndarray | None) -> np.ndarray:
    """The round's (#rows,) factors for rows held in one array (``strata``: each row's stratum, for
    ``"stratified"``; ``gradient``: the unweighted gradient, for GOSS).

    The order statistics come from ``numpy.partition``: exact, so the same as the partitions'
    (:func:`bob_boost.engine.hashing.kth_keys`).
    """
    seed, draw = sampling.random_state, sampling.draw(round_in_machine)
    if sampling.method == "uniform":
        return uniform_factors(0, rows, seed, draw, sampling.subsample)
    if sampling.method in CLASS_METHODS:
        keys = stratum_keys(0, rows, seed, draw)
        ranks = sampling.stratum_ranks(np.bincount(strata))
        thresholds = np.array([np.partition(keys[strata == c], r - 1)[r - 1] if r else 0 for c, r in enumerate(ranks)],
                              dtype=np.uint64)
        return stratified_factors(strata, 0, seed, draw, thresholds)
    magnitudes = goss_magnitudes(gradient, weights)
    rank = sampling.goss_rank(rows)
    threshold = np.partition(magnitudes, rows - rank)[rows - rank]
    return goss_factors(magnitudes, 0, seed, draw, threshold, sampling.top_rate, sampling.other_rate)


def check_sampling(sampling, weak_trainer) -> Sampling | None:
    """``sampling`` (None or a :class:`Sampling`) for ``weak_trainer`` (an object, or the name of a partitioned
    trainer's weak learner): a column sample needs a weak trainer that reads it (``samples_columns``).

    Raises
    ------
    TypeError
        For another type.
    ValueError
        For ``colsample_bytree < 1`` with a weak trainer that cannot sample columns.
    """
    if sampling is None:
        return None
    if not isinstance(sampling, Sampling):
        raise InvalidTypeError(f"sampling: expected None or a Sampling, got {type(sampling).__name__}")
    reads_columns = (weak_trainer in ("stump", "tree") if isinstance(weak_trainer, str)
                     else bool(getattr(weak_trainer, "samples_columns", False)))
    name = weak_trainer if isinstance(weak_trainer, str) else type(weak_trainer).__name__
    if sampling.colsample_bytree < 1.0 and not reads_columns:
        raise InvalidValueError(f"colsample_bytree: below 1 needs stumps or gradient trees, which sample "
                                f"columns; {name} does not")
    reads_nodes = (weak_trainer == "tree" if isinstance(weak_trainer, str)
                   else bool(getattr(weak_trainer, "samples_node_columns", False)))
    if sampling.colsample_bynode < 1.0 and not reads_nodes:
        raise InvalidValueError(f"colsample_bynode: below 1 needs gradient trees, whose nodes sample columns; "
                                f"{name} does not")
    return sampling


def check_class_sampling(sampling) -> Sampling | None:
    """``sampling`` for the multi-class algorithms, which sample columns by their own ``feature_fraction``.

    Raises
    ------
    TypeError
        For another type than None or :class:`Sampling`.
    ValueError
        For ``colsample_bytree < 1``.
    """
    if sampling is None:
        return None
    if not isinstance(sampling, Sampling):
        raise InvalidTypeError(f"sampling: expected None or a Sampling, got {type(sampling).__name__}")
    if sampling.colsample_bytree < 1.0 or sampling.colsample_bynode < 1.0:
        raise InvalidValueError("colsample_bytree, colsample_bynode: the multi-class trainers sample columns by "
                                "feature_fraction; leave them at 1")
    return sampling


def sampling_from(options, seed: Callable[[], int]) -> Sampling | None:
    """The :class:`Sampling` of ``options``' attributes named as :data:`SAMPLING_OPTIONS` (an estimator's
    parameters, the command line's arguments; a missing one at its default), seeded by ``seed()``; None, without
    calling ``seed``, when they sample nothing.

    Raises
    ------
    ValueError, TypeError
        Naming the option out of range.
    """
    values = {name: getattr(options, name, default) for name, default in SAMPLING_OPTIONS.items()}
    values["method"] = check_choice(values.pop("sampling"), "sampling", SAMPLING_METHODS)
    checked = Sampling(**values)
    if not checked.samples_rows and checked.colsample_bytree >= 1.0 and checked.colsample_bynode >= 1.0:
        return None
    return Sampling(**values, random_state=seed())
