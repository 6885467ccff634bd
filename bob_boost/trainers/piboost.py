"""PIBoost (Fernández-Baldera and Baumela, "Multi-class boosting with asymmetric binary weak-learners",
Pattern Recognition 2014), as the BAdaCost paper states it (its Corollary 3 and Appendix D).

For K classes, every subset ``S`` of ``s`` labels in a family (here every subset of at most
``subset_size`` labels, ``s <= K/2``, one of ``S`` and its complement) has its binary weak learner, which
separates ``S`` from the other labels. Its output is the margin vector ``+-y_S`` (``1/s`` for the labels of
``S``, ``-1/(K-s)`` for the others, the sign its vote) times its step ``beta``, and every update adds one:
``f_m(x) = f_(m-1)(x) + beta_m g_m(x)``, predicting ``argmax_k f_k(x)``. The loss is the multi-class exponential
``exp(-y^T f(x) / K)``, under which a row of class ``l`` in ``S`` has ``y_l^T g_S = +-K / (s (K-1))`` and one
outside ``S`` ``+-K / ((K-s)(K-1))``: the binary cost-sensitive problem of Cost-Sensitive AdaBoost with costs
``C_1 = 1 / (s (K-1))`` and ``C_2 = 1 / ((K-s)(K-1))`` (Corollary 3). So every subset's stump and step are
:class:`~bob_boost.CostSensitiveAdaBoostTrainer`'s choice from the pool of all stumps, on the round's
weights; the step is the positive root of the paper's polynomial
``E_1 (K-s) x^(2(K-s)) + E_2 s x^K - s (A_2 - E_2) x^(K-2s) - (K-s)(A_1 - E_1)``, ``beta = s (K-s)(K-1) log x``.
The updates take the subsets in turn, each on the weights the last one left (the BAdaCost paper states one
subset's update; adding every subset's optimal step on the same weights at once overshoots, and its loss
grew without bound on pendigits). Each update is a :class:`~bob_boost.TreeMachine` stump with vector leaves
``+-beta y_S``, of weight 1; the weights follow from the scores
(:class:`~bob_boost.boosting.real_boosting.ProbabilityBoosting`).
"""
from __future__ import annotations

import itertools

import numpy as np

from .._validation import as_feature_matrix, check_positive_int
from ..boosting import loop
from ..boosting.protocol import Proposal, RoundState
from ..boosting.real_boosting import ProbabilityBoosting
from ..boosting.roots import RootCounter
from ..callbacks import RoundCallback
from ..costs import check_class_labels, check_class_rows
from ..machine import BoostedMachine
from ..weak.tree import TreeMachine
from ..weak_trainers.stump_pool.pool import StumpPool
from .cost_sensitive import CostSensitiveAdaBoostTrainer

__all__ = ["PIBoostTrainer"]


def label_subsets(number_of_classes: int, subset_size: int) -> list[tuple[int, ...]]:
    """Every subset of at most ``subset_size`` of the ``K`` labels (``s <= K/2``), one of each subset and its
    complement (for ``s = K/2``, the one holding label 0)."""
    k = number_of_classes
    subsets = []
    for s in range(1, min(subset_size, k // 2) + 1):
        for subset in itertools.combinations(range(k), s):
            if 2 * s == k and 0 not in subset:
                continue
            subsets.append(subset)
    return subsets


def subset_vector(subset: tuple[int, ...], number_of_classes: int) -> np.ndarray:
    """``y_S``: ``1/s`` at the labels of ``S``, ``-1/(K-s)`` at the others."""
    s = len(subset)
    vector = np.full(number_of_classes, -1.0 / (number_of_classes - s))
    vector[list(subset)] = 1.0 / s
    return vector


class SubsetStumps:
    """PIBoost's weak trainer: every subset's stump and step (Cost-Sensitive AdaBoost's choice of Corollary 3)
    on the round's weights, summed into one :class:`~bob_boost.TreeMachine` of weight 1."""

    def __init__(self, number_of_classes: int, subset_size: int) -> None:
        self.k = number_of_classes
        self.subsets = label_subsets(number_of_classes, subset_size)
        self.counter = RootCounter()
        self._choosers = {s: CostSensitiveAdaBoostTrainer(1.0 / (s * (self.k - 1)), 1.0 / ((self.k - s) * (self.k - 1)))
                          for s in {len(subset) for subset in self.subsets}}

    def prepare(self, features: np.ndarray) -> StumpPool:
        """Every stump of ``features``."""
        return StumpPool(features)

    def propose(self, pool: StumpPool, state: RoundState) -> Proposal | None:
        """The stump of the round's subset (the subsets in turn, by the round's place in the machine); None when
        its stump does not contribute."""
        subset = self.subsets[(state.rounds_before + state.round_index) % len(self.subsets)]
        positive = np.isin(state.labels, subset)
        if positive.all() or not positive.any():  # a subset no row is in (or every row): nothing to learn
            return None
        with np.errstate(divide="ignore"):
            log_weights = np.log(state.sample_weights)
        choice = self._choosers[len(subset)].select(pool, positive, log_weights, self.counter)
        if choice is None:
            return None
        stump, beta = pool.stump(choice[0]), choice[1]
        vector = beta * subset_vector(subset, self.k)
        machine = TreeMachine([stump.index, -1, -1], [stump.threshold, 0.0, 0.0], [1, -1, -1], [2, -1, -1],
                              np.array([np.zeros(self.k), -stump.polarity * vector, stump.polarity * vector]))
        return Proposal(machine, 1.0)

    def __repr__(self) -> str:
        return f"SubsetStumps(number_of_classes={self.k}, subsets={len(self.subsets)})"


class PIBoostTrainer:
    """PIBoost (see the module's description) with decision stumps.

    Parameters
    ----------
    number_of_rounds : int
        Default maximum number of updates (each one subset's stump, the subsets in turn).
    subset_size : int
        The largest subsets separated (1: every label against the others, PIBoost(1); 2 adds every pair, ...).
    number_of_classes : int, optional
        K; by default ``max(labels) + 1`` (or a continued machine's outputs).
    """

    def __init__(self, number_of_rounds: int = 100, subset_size: int = 1, number_of_classes: int | None = None) -> None:
        self.number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        self.subset_size = check_positive_int(subset_size, "subset_size")
        self.number_of_classes = None if number_of_classes is None else \
            check_positive_int(number_of_classes, "number_of_classes", 2)

    def train(self, features, labels, number_of_rounds: int | None = None,
              boosted_machine: BoostedMachine | None = None, callback: RoundCallback | None = None,
              sample_weight=None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` rounds of subset stumps on class indices ``labels`` (``0 .. K-1``),
        as :meth:`~bob_boost.trainers.real_adaboost.SAMMERTrainer.train` takes them; ``predict`` gives the class
        indices of ``argmax_k f_k``."""
        array = as_feature_matrix(features)
        rounds = self.number_of_rounds if number_of_rounds is None else \
            check_positive_int(number_of_rounds, "number_of_rounds")
        k = self.number_of_classes
        if k is None:
            k = (boosted_machine.number_of_outputs if boosted_machine is not None and boosted_machine.number_of_outputs
                 else max(int(check_class_labels(labels, np.iinfo(np.int64).max).max()) + 1, 2))
        classes, weights = check_class_rows(array, labels, k, sample_weight)
        weak = SubsetStumps(k, self.subset_size)
        name = type(self).__name__
        algorithm = ProbabilityBoosting(weak, classes, k, False, 1.0, name,
                                        {"trainer": name, "subset_size": self.subset_size}, weights)
        return loop.run(algorithm, weak, array, rounds, boosted_machine, callback)

    def __repr__(self) -> str:
        return (f"PIBoostTrainer(number_of_rounds={self.number_of_rounds}, subset_size={self.subset_size}, "
                f"number_of_classes={self.number_of_classes})")
