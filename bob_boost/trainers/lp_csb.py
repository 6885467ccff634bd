"""Lp-CSB (Lozano and Abe, "Multi-class cost-sensitive boosting with p-norm loss functions", KDD 2008), as the
BAdaCost paper states it (its equations (15) and (16)).

Lp-CSB minimises the p-norm convexification of the expected cost of a stochastic hypothesis
``H(k | x)`` (``sum_k H(k | x) = 1``),

    ``L_p(H) = (1/N) sum_n sum_k H(k | x_n)^p C(l_n, k)``,

by gradient boosting over relational hypotheses: a binary learner of the pairs ``(x_n, k)`` (K times the
rows, as AdaBoost.MH's) says which labels are good for a sample, and its normalised answer
``h_t(k | x) = f_t(x, k) / sum_j f_t(x, j)`` (:class:`~bob_boost.weak.relational.RelationalTreeMachine`) joins
the ensemble ``H_T = (1/T) sum_t h_t``, a stochastic hypothesis too. Every round's pairs follow the loss's
gradient at the ensemble so far (``H_0 = 1/K``), ``g[n, k] = (1/2) C(l_n, k) H(k | x_n)^(p-1)``, centred over
the labels: label ``k`` is good for sample ``n`` where ``g[n, k]`` is below the sample's mean, and the pair
weighs the distance. The machine predicts ``argmax_k H_T(k | x)``.

The original paper was not available here. The scheme follows the same authors' patent (US 8,275,721): its
claim 1's gradient weights, its claim 3's centring, the average of the hypotheses as its output. Mixing each
hypothesis in by a line search instead stalled after a few rounds on the digits data, every new tree a poor
descent direction; averaging keeps the weights moving. The pair learner is a tree over the features with a
vote per label in each leaf: a tree that splits on the label as a feature first cannot improve on equal
classes at the first round, where every sample's good and bad pairs weigh the same. With ``p = 1`` the
weights never change and every round fits the same hypothesis: ``p > 1`` is what makes the method boost.
"""
from __future__ import annotations

import numbers

from .._validation import as_feature_matrix, check_positive_int, check_scalar
from ..boosting import loop
from ..boosting.mixtures import LpCSBBoosting
from ..callbacks import RoundCallback
from ..costs import check_class_rows, check_cost_matrix
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..weak_trainers.relational import RelationalTreeTrainer

__all__ = ["LpCSBTrainer"]


class LpCSBTrainer:
    """Train a cost-sensitive multi-class machine with Lp-CSB (see the module's description).

    Parameters
    ----------
    cost_matrix : array_like
        (K, K) cost matrix: zero diagonal, non-negative, finite.
    p : float
        The norm of the loss, >= 1 (default 2).
    weak_learner : RelationalTreeTrainer, optional
        The relational weak trainer; default trees of depth 2.
    number_of_rounds : int
        Default maximum number of hypotheses for :meth:`train`.
    """

    def __init__(self, cost_matrix, p: float = 2.0, weak_learner: RelationalTreeTrainer | None = None,
                 number_of_rounds: int = 100) -> None:
        self.cost_matrix = check_cost_matrix(cost_matrix)
        self.p = float(check_scalar(p, "p", numbers.Real, min_val=1.0))
        k = self.cost_matrix.shape[0]
        if weak_learner is None:
            weak_learner = RelationalTreeTrainer(k)
        if not isinstance(weak_learner, RelationalTreeTrainer):
            raise InvalidTypeError(f"weak_learner: expected a RelationalTreeTrainer, got {type(weak_learner).__name__}")
        if weak_learner.number_of_classes != k:
            raise InvalidValueError(f"weak_learner: has {weak_learner.number_of_classes} classes but the cost matrix "
                                    f"{k}")
        self.weak_learner = weak_learner
        self.number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")

    def train(self, features, labels, number_of_rounds: int | None = None,
              boosted_machine: BoostedMachine | None = None, callback: RoundCallback | None = None,
              sample_weight=None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` relational hypotheses.

        Parameters
        ----------
        features : array_like
            (#samples, #features) training features.
        labels : array_like of int
            (#samples,) classes in ``0 .. K-1``.
        number_of_rounds : int, optional
            Defaults to the constructor's value.
        boosted_machine : BoostedMachine, optional
            Continue this Lp-CSB machine of the same costs and ``p`` (extended in place and returned).
        callback : callable, optional
            ``callback(round, machine, scores)`` after each round; True stops training.
        sample_weight : array_like, optional
            (#samples,) non-negative factors of each sample's loss terms (rescaled to a mean of 1).

        Returns
        -------
        BoostedMachine
            K outputs proportional to ``H(k | x)``; ``predict`` gives ``argmax_k H(k | x)``.
        """
        array = as_feature_matrix(features)
        rounds = self.number_of_rounds if number_of_rounds is None else \
            check_positive_int(number_of_rounds, "number_of_rounds")
        classes, weights = check_class_rows(array, labels, self.cost_matrix.shape[0], sample_weight)
        algorithm = LpCSBBoosting(self.weak_learner, classes, self.cost_matrix, self.p, weights, metadata={
            "trainer": type(self).__name__, "weak_learner": repr(self.weak_learner),
            "lp_csb_cost_matrix": self.cost_matrix.tolist(), "lp_csb_p": self.p})
        return loop.run(algorithm, self.weak_learner, array, rounds, boosted_machine, callback)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(K={self.cost_matrix.shape[0]}, p={self.p}, "
                f"weak_learner={self.weak_learner!r}, number_of_rounds={self.number_of_rounds})")
