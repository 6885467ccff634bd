"""Real AdaBoost and SAMME.R: boosting class-probability estimates.

Real AdaBoost (Friedman, Hastie and Tibshirani, "Additive logistic regression: a statistical view of
boosting", Annals of Statistics 2000, Algorithm 2), for labels ``y`` in {-1, +1}:

1. start with weights ``w_i = 1/N``;
2. every round fit a classifier giving ``p(x) = P_w(y = 1 | x)``, add ``f(x) = (1/2) log(p(x) / (1 - p(x)))``
   to the score ``F`` and set ``w_i <- w_i exp(-y_i f(x_i))``, renormalised;
3. classify by ``sign F(x)``.

SAMME.R (Zhu, Zou, Rosset and Hastie, "Multi-class AdaBoost", Statistics and Its Interface 2009,
Algorithm 4), for K classes coded ``y_k = 1`` for the row's class and ``-1/(K-1)`` for the others: every round
fit a classifier giving the weighted class probabilities ``p_k(x)``, add
``h_k(x) = (K - 1) (log p_k(x) - (1/K) sum_j log p_j(x))`` to the scores and set
``w_i <- w_i exp(-((K - 1)/K) y_i^T log p(x_i))``; classify by ``argmax_k F_k(x)``. For two classes its
scores are ``(-F, F)`` of Real AdaBoost's ``F``, and its weights are Real AdaBoost's.

The classifiers are class-probability trees
(:class:`~bob_boost.weak_trainers.probability_trees.ProbabilityTreeTrainer`, stumps by default as
scikit-learn's SAMME.R), their probabilities clipped at the machine epsilon. Training stops after a tree
that classifies every weighted training row correctly (as scikit-learn does).
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import as_feature_matrix, check_positive_int, check_scalar
from ..boosting import loop
from ..boosting.real_boosting import ProbabilityBoosting
from ..callbacks import RoundCallback
from ..costs import check_class_labels, check_class_rows
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..weak_trainers.probability_trees import ProbabilityTreeTrainer

__all__ = ["RealAdaBoostTrainer", "SAMMERTrainer"]


class SAMMERTrainer:
    """Train a multi-class machine with SAMME.R (see the module's description).

    Parameters
    ----------
    weak_learner : ProbabilityTreeTrainer, optional
        Its trees (``leaves="samme.r"``); default stumps,
        ``ProbabilityTreeTrainer(max_depth=1, leaves="samme.r")``.
    number_of_rounds : int
        Default maximum number of weak machines for :meth:`train`.
    learning_rate : float
        In (0, 1]: every weak machine's weight, 1 in the papers.
    number_of_classes : int, optional
        K; by default ``max(labels) + 1`` (or a continued machine's outputs).
    """

    #: The leaves this algorithm's trees output.
    leaves = "samme.r"

    def __init__(self, weak_learner: ProbabilityTreeTrainer | None = None, number_of_rounds: int = 100,
                 learning_rate: float = 1.0, number_of_classes: int | None = None) -> None:
        if weak_learner is None:
            weak_learner = ProbabilityTreeTrainer(max_depth=1, leaves=self.leaves)
        if not isinstance(weak_learner, ProbabilityTreeTrainer):
            raise InvalidTypeError(f"weak_learner: expected a ProbabilityTreeTrainer, got "
                                   f"{type(weak_learner).__name__}")
        if weak_learner.leaves != self.leaves:
            raise InvalidValueError(f"weak_learner: {type(self).__name__} needs leaves={self.leaves!r}, got "
                                    f"{weak_learner.leaves!r}")
        self.weak_learner = weak_learner
        self.number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        self.learning_rate = float(check_scalar(learning_rate, "learning_rate", numbers.Real, min_val=0, max_val=1,
                                                include_boundaries="right"))
        self.number_of_classes = None if number_of_classes is None else \
            check_positive_int(number_of_classes, "number_of_classes", 2)

    def _classes(self, labels, boosted_machine: BoostedMachine | None) -> int:
        """K of a run on ``labels`` (continuing ``boosted_machine``)."""
        if self.number_of_classes is not None:
            return self.number_of_classes
        if boosted_machine is not None and boosted_machine.number_of_outputs is not None:
            return boosted_machine.number_of_outputs
        classes = check_class_labels(labels, np.iinfo(np.int64).max)
        return max(int(classes.max()) + 1, 2)

    def train(self, features, labels, number_of_rounds: int | None = None,
              boosted_machine: BoostedMachine | None = None, callback: RoundCallback | None = None,
              sample_weight=None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` trees.

        Parameters
        ----------
        features : array_like
            (#samples, #features) training features.
        labels : array_like of int
            (#samples,) classes ``0 .. K-1``.
        number_of_rounds : int, optional
            Defaults to the constructor's value.
        boosted_machine : BoostedMachine, optional
            Continue this machine (extended in place and returned).
        callback : callable, optional
            ``callback(round, machine, scores)`` after each round; True stops training.
        sample_weight : array_like, optional
            (#samples,) non-negative initial weights, not all zero (rescaled to a mean of 1).

        Returns
        -------
        BoostedMachine
            Weights ``learning_rate``; ``predict`` gives class indices (Real AdaBoost: the sign).
        """
        array = as_feature_matrix(features, allow_nan=self.weak_learner.accepts_missing)
        rounds = self.number_of_rounds if number_of_rounds is None else \
            check_positive_int(number_of_rounds, "number_of_rounds")
        k = self._classes(np.asarray(labels), boosted_machine)
        classes, weights = check_class_rows(array, labels, k, sample_weight)
        name = type(self).__name__
        algorithm = ProbabilityBoosting(self.weak_learner, classes, k, self.leaves == "real", self.learning_rate,
                                        name, {"trainer": name, "weak_learner": repr(self.weak_learner)}, weights)
        return loop.run(algorithm, self.weak_learner, array, rounds, boosted_machine, callback)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(weak_learner={self.weak_learner!r}, number_of_rounds={self.number_of_rounds}, "
                f"learning_rate={self.learning_rate})")


class RealAdaBoostTrainer(SAMMERTrainer):
    """Train a two-class machine with Real AdaBoost (see the module's description): one output ``F``, the
    class ``F > 0`` (label 1) or not (label 0).

    Parameters
    ----------
    weak_learner : ProbabilityTreeTrainer, optional
        Its trees (``leaves="real"``); default stumps.
    number_of_rounds, learning_rate
        As for :class:`SAMMERTrainer`.
    """

    leaves = "real"

    def __init__(self, weak_learner: ProbabilityTreeTrainer | None = None, number_of_rounds: int = 100,
                 learning_rate: float = 1.0) -> None:
        super().__init__(weak_learner, number_of_rounds, learning_rate, number_of_classes=2)

    def _classes(self, labels, boosted_machine: BoostedMachine | None) -> int:
        return 2

    def train(self, features, labels, number_of_rounds: int | None = None,
              boosted_machine: BoostedMachine | None = None, callback: RoundCallback | None = None,
              sample_weight=None) -> BoostedMachine:
        """As :meth:`SAMMERTrainer.train`, with labels 0 and 1 or -1 and +1 (the positive class 1, +1)."""
        array = np.asarray(labels)
        if array.ndim == 2 and array.shape[1:] == (1,):  # a column of signed targets
            array = array[:, 0]
        if array.size and np.all(np.isin(array, (-1, 1))) and np.any(array == -1):
            array = (array > 0).astype(np.int64)
        return super().train(features, array, number_of_rounds, boosted_machine, callback, sample_weight)
