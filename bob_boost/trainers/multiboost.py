"""MultiBoost (Wang, "Boosting the generalized margin in cost-sensitive multiclass classification", Journal of
Computational and Graphical Statistics 22, 2013), as the BAdaCost paper runs it (its equation (17), section 5.1).

The model is an additive margin-vector model ``f(x) = sum_t beta_t y_(G_t(x))`` (``y_j``: 1 at ``j``,
``-1/(K-1)`` elsewhere, so ``sum_k f_k = 0``) descending the cost-weighted exponential loss

    ``L = sum_n sum_k C(l_n, k) exp(f_k(x_n))``,

whose population minimiser has ``f_k`` largest where the expected cost of predicting ``k`` is least, so the
machine predicts ``argmax_k f_k(x)``. Each round, with ``R[n, k] = C(l_n, k) exp(f_k(x_n))``,
``A = sum_n R[n, G(x_n)]`` and ``B = sum_n sum_(k != G(x_n)) R[n, k]``, a weak classifier ``G`` with step
``beta`` leaves ``A e^beta + B e^(-beta/(K-1))``, least at ``beta = (K-1)/K ln(B / ((K-1) A))``; the best
``G`` is the one of least ``A``. MultiBoost takes ``G`` from a fixed pool, which the BAdaCost paper grows as
6,000 classification trees, 2,000 each from random 30%, 45% and 60% samples of the training data: the
defaults here (:func:`~bob_boost.weak_trainers.machine_pool.subsample_pool`). Training stops when the best
member's step is not positive (its cost-weighted error ``A / (A + B)`` is not below ``1/K``).

The step and the choice are derived here from the loss the BAdaCost paper states; Wang's text was not
available to check them against.
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from .._validation import as_feature_matrix, check_positive_int, check_scalar
from ..boosting import loop
from ..boosting.closed_form import MultiBoostBoosting
from ..callbacks import RoundCallback
from ..costs import check_class_rows, check_cost_matrix
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..weak_trainers.machine_pool import MachinePool, subsample_pool
from ..weak_trainers.multiclass import CostSensitiveTreeTrainer

__all__ = ["MultiBoostTrainer"]


class MultiBoostTrainer:
    """Train a cost-sensitive multi-class machine with MultiBoost (see the module's description).

    Parameters
    ----------
    cost_matrix : array_like
        (K, K) cost matrix: zero diagonal, non-negative, finite.
    weak_learner : object, optional
        The multi-class weak trainer the pool is grown with (``prepare`` and
        ``train(prepared, labels, weights, loss_matrix)``); default a depth-2
        :class:`~bob_boost.weak_trainers.multiclass.CostSensitiveTreeTrainer`.
    number_of_rounds : int
        Default maximum number of weak machines for :meth:`train`.
    pool_size : int
        Members of the pool.
    sample_fractions : sequence of float
        In (0, 1]: the shares of the training rows the members are grown on, an equal number for each.
    random_state : int or numpy.random.Generator, optional
        Seed of the members' samples; the same seed and data give the same pool and model.
    """

    def __init__(self, cost_matrix, weak_learner=None, number_of_rounds: int = 100, pool_size: int = 6000,
                 sample_fractions: Sequence[float] = (0.3, 0.45, 0.6), random_state=None) -> None:
        self.cost_matrix = check_cost_matrix(cost_matrix)
        if weak_learner is None:
            weak_learner = CostSensitiveTreeTrainer(max_depth=2)
        for method in ("prepare", "train"):
            if not callable(getattr(weak_learner, method, None)):
                raise InvalidTypeError(f"weak_learner: needs a {method}() method, got {type(weak_learner).__name__}")
        self.weak_learner = weak_learner
        self.number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        self.pool_size = check_positive_int(pool_size, "pool_size")
        fractions = tuple(sample_fractions) if isinstance(sample_fractions, Sequence) else None
        if not fractions:
            raise InvalidValueError(f"sample_fractions: must be a non-empty sequence of numbers in (0, 1], got "
                                    f"{sample_fractions!r}")
        self.sample_fractions = tuple(float(check_scalar(value, "sample_fractions", numbers.Real, min_val=0,
                                                         max_val=1, include_boundaries="right"))
                                      for value in fractions)
        if random_state is not None and not isinstance(random_state, (numbers.Integral, np.random.Generator)):
            raise InvalidTypeError(f"random_state: expected None, an int or a numpy Generator, "
                                   f"got {type(random_state).__name__}")
        self.random_state = random_state

    def pool(self, features, labels, sample_weight=None) -> MachinePool:
        """The pool of weak machines a run on ``features`` and ``labels`` chooses from (validated inputs)."""
        return MachinePool(subsample_pool(self.weak_learner, features, labels, self.cost_matrix.shape[0],
                                          self.pool_size, self.sample_fractions,
                                          np.random.default_rng(self.random_state), sample_weight))

    def train(self, features, labels, number_of_rounds: int | None = None,
              boosted_machine: BoostedMachine | None = None, callback: RoundCallback | None = None,
              sample_weight=None) -> BoostedMachine:
        """Grow the pool and boost up to ``number_of_rounds`` of its members.

        Parameters
        ----------
        features : array_like
            (#samples, #features) training features.
        labels : array_like of int
            (#samples,) classes in ``0 .. K-1``.
        number_of_rounds : int, optional
            Defaults to the constructor's value.
        boosted_machine : BoostedMachine, optional
            Continue this MultiBoost machine of the same costs (extended in place and returned); the pool
            is grown again from ``random_state``, so continuing on the same data with the same seed equals
            one longer run.
        callback : callable, optional
            ``callback(round, machine, scores)`` after each round; True stops training.
        sample_weight : array_like, optional
            (#samples,) non-negative factors of each sample's loss (rescaled to a mean of 1), which also
            weight the pool's members; uniform by default.

        Returns
        -------
        BoostedMachine
            K outputs, the weights the steps; ``predict`` gives ``argmax_k f_k(x)``.
        """
        array = as_feature_matrix(features, allow_nan=bool(getattr(self.weak_learner, "accepts_missing", False)))
        rounds = self.number_of_rounds if number_of_rounds is None else \
            check_positive_int(number_of_rounds, "number_of_rounds")
        classes, weights = check_class_rows(array, labels, self.cost_matrix.shape[0], sample_weight)
        pool = self.pool(array, classes, weights)
        algorithm = MultiBoostBoosting(pool, classes, self.cost_matrix, weights, metadata={
            "trainer": type(self).__name__, "weak_learner": repr(self.weak_learner),
            "multiboost_cost_matrix": self.cost_matrix.tolist()})
        return loop.run(algorithm, pool, array, rounds, boosted_machine, callback)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(K={self.cost_matrix.shape[0]}, weak_learner={self.weak_learner!r}, "
                f"number_of_rounds={self.number_of_rounds}, pool_size={self.pool_size}, "
                f"sample_fractions={self.sample_fractions})")
