"""RUSBoost: SAMME whose weak learner sees, every round, a random under-sample of the majority classes.

Seiffert, Khoshgoftaar, Van Hulse and Napolitano ("RUSBoost: a hybrid approach to alleviating class
imbalance", IEEE Transactions on Systems, Man and Cybernetics A 40, 2010) under-sample the majority class
before each round's weak learner, which is fitted to the kept rows with their current weights, and boost
with AdaBoost.M2. This is the variant imbalanced-learn's ``RUSBoostClassifier`` implements: the boosting is
SAMME (:class:`~bob_boost.trainers.badacost.SAMMETrainer`), its step and weight update on every row, and the
under-sample (:class:`~bob_boost.Sampling` ``method="undersample"``) cuts every class to the smallest class's
count divided by ``ratio`` (imbalanced-learn's ``sampling_strategy``: the minority's count over every other
class's after sampling; 1, balanced classes, is its ``"auto"``), drawn anew every round, uniformly within each
class, whatever the sample weights. The draws are a hash of ``random_state``, the round and the row, so the
same seed gives the same model for any thread count.
"""
from __future__ import annotations

import numbers

from .._validation import check_scalar
from ..boosting.sampling import Sampling
from ..weak_trainers.multiclass import CostSensitiveTreeTrainer
from .badacost import SAMMETrainer

__all__ = ["RUSBoostTrainer"]


class RUSBoostTrainer(SAMMETrainer):
    """RUSBoost (see the module's description).

    Parameters
    ----------
    weak_learner : object, optional
        A multi-class weak trainer; default stumps, ``CostSensitiveTreeTrainer(max_depth=1)`` (imbalanced-learn's
        default is a depth-1 tree).
    number_of_rounds, shrinkage, number_of_classes
        As for :class:`~bob_boost.trainers.badacost.SAMMETrainer`.
    ratio : float
        In (0, 1]: after sampling, the smallest class's count over every other class's (1: balanced).
    random_state : int
        The seed of the under-samples (a non-negative int).
    """

    def __init__(self, weak_learner=None, number_of_rounds: int = 100, shrinkage: float = 1.0, ratio: float = 1.0,
                 random_state: int = 0, number_of_classes: int | None = None) -> None:
        ratio = float(check_scalar(ratio, "ratio", numbers.Real, min_val=0.0, max_val=1.0,
                                   include_boundaries="right"))
        super().__init__(CostSensitiveTreeTrainer(max_depth=1) if weak_learner is None else weak_learner,
                         number_of_rounds, shrinkage, number_of_classes=number_of_classes,
                         sampling=Sampling(subsample=ratio, method="undersample", random_state=random_state))

    @property
    def ratio(self) -> float:
        """The smallest class's count over every other class's after sampling."""
        return self.sampling.subsample
