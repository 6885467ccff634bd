"""Multi-class boosting with multi-class weak learners: BAdaCost, SAMME, AdaBoost.M1 and AdaC2.M1.

BAdaCost (Fernández-Baldera, Buenaposada & Baumela, Pattern Recognition
2018) minimises the Cost-sensitive Multi-class Exponential Loss
``sum_n exp(C*[l_n, :] @ f(x_n))`` with the additive model
``f(x) = sum_m beta_m y_G_m(x)`` of weak classifiers ``G_m`` and margin
vectors ``y``. With ``C2 = K/(K-1) C*`` each round

1. trains a weak learner minimising ``sum_n w_n exp(C2[l_n, G(x_n)])``
   (the round's loss matrix is ``exp(C2)``, i.e. beta fixed at 1);
2. takes the step ``beta`` minimising the convex
   ``sum_ij S[i, j] exp(beta C2[i, j])``, ``S[i, j]`` the weight of
   class-``i`` samples predicted ``j``; training stops when ``beta <= 0``;
3. updates ``w_n <- w_n exp(beta C2[l_n, G(x_n)])`` and renormalises.

The result is a :class:`~bob_boost.BoostedMachine` that holds ``C``, so its
``predict`` returns ``argmin_k (C* f(x))_k``.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .._validation import as_feature_matrix, check_positive_int, check_scalar
from ..boosting import loop
from ..boosting.closed_form import MulticlassCostBoosting, loss_shift
from ..boosting.sampling import Sampling, check_class_sampling
from ..boosting.steps import adac2_m1_step, adaboost_m1_step, optimal_step
from ..callbacks import RoundCallback
from ..costs import (check_class_labels, check_class_rows, check_cost_matrix, margin_cost_matrix, sample_cost_exponents,
                     samme_cost_matrix, zero_one_cost_matrix)
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..weak_trainers.multiclass import CostSensitiveTreeTrainer

__all__ = ["AdaBoostM1Trainer", "AdaC2M1Trainer", "BAdaCostTrainer", "SAMMETrainer", "optimal_step"]


class BAdaCostTrainer:
    """Train a cost-sensitive multi-class boosted machine with BAdaCost.

    Parameters
    ----------
    cost_matrix : array_like
        (K, K) cost matrix: zero diagonal, non-negative, finite;
        ``C[i, j]`` is the cost of predicting ``j`` for class ``i``.
    weak_learner : object, optional
        A multi-class weak trainer with ``prepare(features)`` and
        ``train(prepared, labels, weights, loss_matrix, feature_subset)``
        (see :mod:`bob_boost.weak_trainers.multiclass`); default a depth-2
        :class:`~bob_boost.weak_trainers.multiclass.CostSensitiveTreeTrainer`.
    number_of_rounds : int
        Default maximum number of weak learners for :meth:`train`.
    shrinkage : float
        Learning rate in (0, 1]; every step is multiplied by it, in the
        model and in the weight update.
    feature_fraction : float
        Fraction in (0, 1] of the feature columns a round's weak learner may
        use, drawn afresh each round (at least one column).
    random_state : int or numpy.random.Generator, optional
        Seed of the feature sampling; the same seed and data give the same
        model.
    sampling : Sampling, optional
        Stochastic boosting: each round's weak learner sees a sample of the
        rows (:class:`~bob_boost.Sampling`: uniform, stratified by class, or
        GOSS on the sample weights, which are the exponential loss's gradient
        magnitudes); the step is found on every row. Columns are sampled by
        ``feature_fraction``, so ``colsample_bytree`` must stay 1.
    """

    def __init__(self, cost_matrix, weak_learner=None, number_of_rounds: int = 100, shrinkage: float = 1.0,
                 feature_fraction: float = 1.0, random_state=None, sampling: Sampling | None = None) -> None:
        self.cost_matrix = check_cost_matrix(cost_matrix)
        self._init_common(weak_learner, number_of_rounds, shrinkage, feature_fraction, random_state, sampling)

    def _init_common(self, weak_learner, number_of_rounds, shrinkage, feature_fraction, random_state,
                     sampling) -> None:
        if weak_learner is None:
            weak_learner = CostSensitiveTreeTrainer(max_depth=2)
        for method in ("prepare", "train"):
            if not callable(getattr(weak_learner, method, None)):
                raise InvalidTypeError(f"weak_learner: needs a {method}() method, got {type(weak_learner).__name__}")
        self.weak_learner = weak_learner
        self.number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        self.shrinkage = _check_fraction(shrinkage, "shrinkage")
        self.feature_fraction = _check_fraction(feature_fraction, "feature_fraction")
        if random_state is not None and not isinstance(random_state, (numbers.Integral, np.random.Generator)):
            raise InvalidTypeError(f"random_state: expected None, an int or a numpy Generator, "
                                   f"got {type(random_state).__name__}")
        self.random_state = random_state
        self.sampling = check_class_sampling(sampling)

    # -- the algorithm's configuration of the loop (SAMME and AdaBoost.M1 change it) ------------------
    # In-memory and distributed training (:class:`bob_boost.dask.DaskMultiClassBoosting`) both read it.
    def cost_matrix_for(self, labels: np.ndarray, boosted_machine: BoostedMachine | None) -> np.ndarray:
        """The (K, K) cost matrix of a run on class labels ``labels`` (continuing ``boosted_machine``).

        BAdaCost's is the trainer's own; SAMME and AdaBoost.M1 make theirs for the number of classes
        (given, the continued machine's, or the largest label's + 1).
        """
        return self.cost_matrix

    def round_matrices(self, cost_matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(loss matrix of the weak learner, exponents of the weight update) for ``cost_matrix``.

        The weak learner's choices (argmins of weighted costs, the Gini ratios) do not change when its
        loss matrix is scaled, so exponents too large for ``exp`` (costs of about 1e3 and more) are
        shifted down by their maximum first; smaller ones are left as they are, bit for bit.
        """
        exponents = margin_cost_matrix(cost_matrix)
        return np.exp(exponents - loss_shift(float(exponents.max()))), exponents

    def weak_step(self, confusion: np.ndarray, exponents: np.ndarray) -> float:
        """The unshrunk step of a weak learner with weighted confusion matrix ``confusion`` (BAdaCost's
        root of the paper's step equation; AdaBoost.M1's ``log((1 - E) / E)``)."""
        return optimal_step(confusion, exponents)

    def class_log_factors(self) -> np.ndarray | None:
        """Logarithms of the per-class factors of every weight update beside the step's (AdaC2.M1's costs);
        BAdaCost has none."""
        return None

    # -- training ------------------------------------------------------------
    def train(self, features, labels, number_of_rounds: int | None = None,
              boosted_machine: BoostedMachine | None = None,
              callback: RoundCallback | None = None, sample_weight=None, sample_costs=None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` weak learners.

        Parameters
        ----------
        features : array_like
            (#samples, #features) training features.
        labels : array_like of int
            (#samples,) classes in ``0 .. K-1``.
        number_of_rounds : int, optional
            Defaults to the constructor's value.
        boosted_machine : BoostedMachine, optional
            Continue training this machine (extended in place and returned);
            it must hold the same cost matrix.
        callback : callable, optional
            ``callback(round, machine, scores)`` after each round that adds a
            weak learner, with the (#samples, K) training scores of
            ``machine``; e.g. a :class:`bob_boost.progress.Progress`.
            Returning True stops training (see :mod:`bob_boost.callbacks`).
        sample_weight : array_like, optional
            (#samples,) non-negative initial weights, not all zero (rescaled to
            a mean of 1); uniform by default.
        sample_costs : array_like, optional
            BAdaCost only: example-dependent costs, (#samples, K) rows ``c_n[k]`` (the cost of predicting
            ``k`` for sample ``n``, zero at its class) or (#samples, K, K) matrices of which the sample's
            class row counts (:func:`~bob_boost.costs.check_sample_costs`). Training then minimises
            ``sum_n exp(c*_n @ f(x_n))``, ``c*_n`` the row with minus its sum at the sample's class: the
            weak learner's loss, the step and the weight update take each sample's row instead of its
            class's. The machine still predicts with the trainer's ``cost_matrix`` (e.g. the class means of
            these rows, :func:`~bob_boost.costs.class_mean_costs`); with every row its class's row of that
            matrix, training is the same as without. The weak learner must read per-row losses
            (:class:`~bob_boost.weak_trainers.multiclass.CostSensitiveTreeTrainer`), and continuing a
            machine needs the same costs again.

        Returns
        -------
        BoostedMachine
            Weights are the steps ``beta_m``; ``predict`` gives class indices.
            Training stops early, with a log message, when a step is not
            positive (or for AdaBoost.M1 when the weighted error reaches 1/2).
        """
        array = as_feature_matrix(features, allow_nan=bool(getattr(self.weak_learner, "accepts_missing", False)))
        rounds = self.number_of_rounds if number_of_rounds is None else \
            check_positive_int(number_of_rounds, "number_of_rounds")
        cost_matrix = self.cost_matrix_for(np.asarray(labels), boosted_machine)
        classes, weights = check_class_rows(array, labels, cost_matrix.shape[0], sample_weight)
        self._check_continued(boosted_machine)
        loss_matrix, exponents = self.round_matrices(cost_matrix)
        row_exponents = None
        if sample_costs is not None:
            self.check_sample_costs_allowed()
            row_exponents = sample_cost_exponents(sample_costs, classes, cost_matrix.shape[0])
        algorithm = MulticlassCostBoosting(
            self.weak_learner, classes, cost_matrix, loss_matrix, exponents, self.weak_step,
            self.shrinkage, self.feature_fraction, self.random_state, name=type(self).__name__,
            metadata={"trainer": type(self).__name__, "weak_learner": repr(self.weak_learner), **self._metadata()},
            sample_weight=weights, sampling=self.sampling, class_log_factors=self.class_log_factors(),
            row_exponents=row_exponents)
        return loop.run(algorithm, self.weak_learner, array, rounds, boosted_machine, callback)

    def check_sample_costs_allowed(self) -> None:
        """Refuse example-dependent costs where this configuration cannot train on them.

        Raises
        ------
        ValueError
            Naming ``sample_costs``, for SAMME, AdaBoost.M1 and AdaC2.M1 (their costs are their own) and for a
            weak learner that reads a class loss matrix only.
        """
        if isinstance(self, (SAMMETrainer, AdaC2M1Trainer)):
            raise InvalidValueError(f"sample_costs: {type(self).__name__} has costs of its own; example-dependent "
                                    f"costs are BAdaCost's (BAdaCostTrainer)")
        if not getattr(self.weak_learner, "accepts_row_losses", False):
            raise InvalidValueError(f"sample_costs: the weak learner {type(self.weak_learner).__name__} reads a "
                                    f"class loss matrix only; use CostSensitiveTreeTrainer")

    def _metadata(self) -> dict:
        """What a new machine's metadata records of the trainer beyond its name."""
        return {}

    def _check_continued(self, boosted_machine: BoostedMachine | None) -> None:
        """Refuse to continue a machine this configuration did not train (the loop checks the cost matrix)."""

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(K={self.cost_matrix.shape[0]}, weak_learner={self.weak_learner!r}, "
                f"number_of_rounds={self.number_of_rounds}, shrinkage={self.shrinkage}, "
                f"feature_fraction={self.feature_fraction})")


class SAMMETrainer(BAdaCostTrainer):
    """SAMME (Zhu, Zou, Rosset & Hastie): BAdaCost with ``C[i, j] = 1/(K(K-1))`` off the diagonal.

    Each step then equals ``(K-1)^2/K (log((1-E)/E) + log(K-1))`` for the
    weighted error ``E``, i.e. SAMME's weight times ``(K-1)^2/K``, which
    does not change the predictions.

    Parameters
    ----------
    number_of_classes : int, optional
        K; by default ``max(labels) + 1`` of the training labels (or the
        size of a machine being continued).
    weak_learner, number_of_rounds, shrinkage, feature_fraction, random_state, sampling
        As for :class:`BAdaCostTrainer`.
    """

    def __init__(self, weak_learner=None, number_of_rounds: int = 100, shrinkage: float = 1.0,
                 feature_fraction: float = 1.0, random_state=None, number_of_classes: int | None = None,
                 sampling: Sampling | None = None) -> None:
        self.number_of_classes = None if number_of_classes is None else \
            check_positive_int(number_of_classes, "number_of_classes", 2)
        self.cost_matrix = None if number_of_classes is None else self._matrix(self.number_of_classes)
        self._init_common(weak_learner, number_of_rounds, shrinkage, feature_fraction, random_state, sampling)

    def _matrix(self, number_of_classes: int) -> np.ndarray:
        return samme_cost_matrix(number_of_classes)

    def cost_matrix_for(self, labels: np.ndarray, boosted_machine: BoostedMachine | None) -> np.ndarray:
        if self.cost_matrix is not None:
            return self.cost_matrix
        if boosted_machine is not None and boosted_machine.number_of_outputs is not None:
            return self._matrix(boosted_machine.number_of_outputs)
        # any non-negative integers are valid here; the class count follows from the largest
        classes = check_class_labels(labels, np.iinfo(np.int64).max)
        return self._matrix(max(int(classes.max()) + 1, 2))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(number_of_classes={self.number_of_classes}, "
                f"weak_learner={self.weak_learner!r}, number_of_rounds={self.number_of_rounds}, "
                f"shrinkage={self.shrinkage}, feature_fraction={self.feature_fraction})")


class AdaBoostM1Trainer(SAMMETrainer):
    """AdaBoost.M1 (Freund & Schapire) with multi-class weak learners.

    The weak learner minimises the weighted error ``E``; its weight is
    ``log((1-E)/E)`` and misclassified samples are multiplied by
    ``(1-E)/E``. Training stops when ``E`` reaches 1/2. The machine holds the
    0|1 cost matrix, so it predicts the class with the largest weighted vote.

    Parameters
    ----------
    As for :class:`SAMMETrainer`.
    """

    def _matrix(self, number_of_classes: int) -> np.ndarray:
        return zero_one_cost_matrix(number_of_classes)

    def round_matrices(self, cost_matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return cost_matrix, cost_matrix

    def weak_step(self, confusion: np.ndarray, exponents: np.ndarray) -> float:
        return adaboost_m1_step(confusion, exponents)


class AdaC2M1Trainer(BAdaCostTrainer):
    """AdaC2.M1 (Sun, Kamel & Wang, ICDM 2006): AdaC2's cost reweighting on AdaBoost.M1's multi-class rounds.

    Each class ``l`` has one cost, the sum of its row of the cost matrix, ``C_l = sum_j C(l, j)`` (as the
    BAdaCost paper states it; the matrix's structure is lost). With ``D_t`` the round's distribution
    (uniform, or ``sample_weight``, at the start) each round

    1. trains the weak learner ``h_t`` on ``D_t`` (its weighted 0|1 error);
    2. takes the step ``alpha_t = (1/2) ln(sum_(h_t(x_i) = l_i) C_(l_i) D_t(i) /
       sum_(h_t(x_i) != l_i) C_(l_i) D_t(i))`` and stops when it is not positive;
    3. updates ``D_(t+1)(i) = C_(l_i) D_t(i) exp(-alpha_t I_i) / Z_t``, ``I_i = +1`` where ``h_t`` is right
       and ``-1`` where it is wrong: every round multiplies a sample's weight by its class cost again.

    The machine predicts ``argmax_k sum_t alpha_t [h_t(x) = k]``: it holds the 0|1 cost matrix, as
    AdaBoost.M1's does, and records the class costs in its metadata. With equal class costs every step is
    half of AdaBoost.M1's and the weak learners and predictions are AdaBoost.M1's.

    Parameters
    ----------
    cost_matrix : array_like
        (K, K) cost matrix: zero diagonal, non-negative, finite, every row with a positive cost.
    weak_learner : object, optional
        As for :class:`BAdaCostTrainer`; default a
        :class:`~bob_boost.weak_trainers.multiclass.CostSensitiveTreeTrainer` of :meth:`default_depth`: with
        fewer leaves than classes the first tree's weighted error is above 1/2 and the machine stays empty.
    number_of_rounds, shrinkage, feature_fraction, random_state, sampling
        As for :class:`BAdaCostTrainer`.
    """

    def __init__(self, cost_matrix, weak_learner=None, number_of_rounds: int = 100, shrinkage: float = 1.0,
                 feature_fraction: float = 1.0, random_state=None, sampling: Sampling | None = None) -> None:
        matrix = check_cost_matrix(cost_matrix)
        if weak_learner is None:
            weak_learner = CostSensitiveTreeTrainer(max_depth=self.default_depth(matrix.shape[0]))
        super().__init__(matrix, weak_learner, number_of_rounds, shrinkage, feature_fraction, random_state,
                         sampling)
        self.class_costs = self.cost_matrix.sum(axis=1)
        if np.any(self.class_costs <= 0):
            rows = np.flatnonzero(self.class_costs <= 0).tolist()
            raise InvalidValueError(f"cost_matrix: rows {rows} have no positive cost; AdaC2.M1 weights each class "
                                    f"by its row's sum, so every class needs a cost")

    @staticmethod
    def default_depth(number_of_classes: int) -> int:
        """``max(2, ceil(log2 K))``: the shallowest trees with a leaf for every class."""
        return max(2, math.ceil(math.log2(number_of_classes)))

    def cost_matrix_for(self, labels: np.ndarray, boosted_machine: BoostedMachine | None) -> np.ndarray:
        """The 0|1 matrix of the weighted vote the machine predicts by."""
        return zero_one_cost_matrix(self.cost_matrix.shape[0])

    def round_matrices(self, cost_matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The weak learner's 0|1 loss; the update's exponents -1 where right and +1 where wrong."""
        return cost_matrix, 2.0 * cost_matrix - 1.0

    def weak_step(self, confusion: np.ndarray, exponents: np.ndarray) -> float:
        return adac2_m1_step(confusion, self.class_costs)

    def class_log_factors(self) -> np.ndarray:
        return np.log(self.class_costs)

    def _metadata(self) -> dict:
        return {"class_costs": self.class_costs.tolist()}

    def _check_continued(self, boosted_machine: BoostedMachine | None) -> None:
        if boosted_machine is not None and len(boosted_machine) and \
                boosted_machine.metadata.get("class_costs") != self.class_costs.tolist():
            raise InvalidValueError("boosted_machine: was not trained by AdaC2.M1 with these class costs "
                                    "(its metadata 'class_costs' differ)")


def _check_fraction(value, name: str) -> float:
    """Return ``value`` as a float in (0, 1]."""
    return float(check_scalar(value, name, numbers.Real, min_val=0, max_val=1, include_boundaries="right"))
