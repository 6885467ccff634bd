"""Stage learners: the boosting algorithm that grows one cascade stage.

A stage learner takes the training windows' quantised feature pool
(:class:`~bob_boost.vision.pool.QuantizedPool`: ``pool.codes`` is the uint8 matrix, one column per feature),
their labels in {-1, +1} and a callback, and boosts stumps on the codes until the callback stops it; the
cascade trainer's callback stops as soon as the stage reaches its targets on held-out windows. Any
bob_boost trainer whose ``train`` takes ``callback=`` fits (give it ``pool.codes``); these three cover
the papers:

- :class:`AdaBoostStage`: discrete AdaBoost (Viola and Jones' stage learner): the exponential loss on
  +-1 stumps with each stump's weight at the loss's exact minimum along it, ``1/2 log((1 - e) / e)``,
  with the two classes weighing 1/2 each at the start, as Viola and Jones initialise.
- :class:`AdaBoostDBStage` and :class:`CostSensitiveAdaBoostStage`: the asymmetric algorithms of the
  AdaBoostDB paper, with a false negative costing ``cost_positive`` and a false positive ``cost_negative``
  (a stage must keep almost every face). Their stump pool sums every bin exactly, which needs about
  12 bytes per window and feature: use them with a reduced feature pool.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from .._validation import check_positive_int
from ..binning import BinnedFeatures
from ..boosting.protocol import Proposal, RoundState
from ..losses import ExponentialLoss
from ..machine import BoostedMachine
from ..trainers import Boosting, StumpTrainer
from ..trainers.cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from .pool import QuantizedPool

#: ``callback(round, machine, scores) -> bool``: True stops the stage.
StageCallback = Callable[[int, BoostedMachine, np.ndarray], bool]


@runtime_checkable
class StageLearner(Protocol):
    """Grows one stage: ``fit(pool, labels, max_rounds, callback) -> BoostedMachine`` of stumps over ``pool.codes``."""

    def fit(self, pool: QuantizedPool, labels: np.ndarray, max_rounds: int,
            callback: StageCallback) -> BoostedMachine:  # pragma: no cover - protocol
        """Boost at most ``max_rounds`` stumps on ``pool.codes`` (labels -1 / +1), calling ``callback`` each round."""


def _balanced(labels: np.ndarray) -> np.ndarray:
    """Sample weights giving each class half the total."""
    positive = labels > 0
    weights = np.empty(labels.size)
    weights[positive] = 0.5 / positive.sum()
    weights[~positive] = 0.5 / (~positive).sum()
    return weights


class AdaBoostStage:
    """Discrete AdaBoost with decision stumps over the feature codes.

    Parameters
    ----------
    n_threads : int or None
        Threads of the stump search (None: every core); the stage does not depend on it.
    """

    def __init__(self, n_threads: int | None = None) -> None:
        self.n_threads = n_threads

    def fit(self, pool: QuantizedPool, labels: np.ndarray, max_rounds: int,
            callback: StageCallback) -> BoostedMachine:
        """Boost at most ``max_rounds`` stumps (see :class:`StageLearner`)."""
        trainer = Boosting(_Prebinned(StumpTrainer(n_threads=self.n_threads), pool.binned()), ExponentialLoss(),
                           step_rule="newton")
        return trainer.train(pool.codes, labels, check_positive_int(max_rounds, "max_rounds"), callback=callback,
                             sample_weight=_balanced(labels))


class _Prebinned:
    """A stump trainer handed the pool's own bins: every code its own bin, so the search is exact and the
    codes are not binned a second time."""

    def __init__(self, trainer: StumpTrainer, binned: BinnedFeatures) -> None:
        self.trainer, self.binned = trainer, binned

    def prepare(self, features) -> BinnedFeatures:
        """The pool's bins (``features`` are their codes)."""
        return self.binned

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal | None:
        """The stump trainer's proposal."""
        return self.trainer.propose(prepared, state)

    def check_outputs(self, number_of_outputs: int) -> None:
        """As the stump trainer's."""
        self.trainer.check_outputs(number_of_outputs)


class AdaBoostDBStage:
    """AdaBoostDB (Conditional Search by default) with costs of a false negative and a false positive.

    Parameters
    ----------
    cost_positive, cost_negative : float
        Costs ``C_P`` (a missed face) and ``C_N`` (a false detection), > 0.
    **options
        Passed to :class:`~bob_boost.trainers.cost_sensitive.AdaBoostDBTrainer` (``selection``, ``search``).
    """

    def __init__(self, cost_positive: float = 2.0, cost_negative: float = 1.0, **options) -> None:
        self.trainer = AdaBoostDBTrainer(cost_positive, cost_negative, **options)

    def fit(self, pool: QuantizedPool, labels: np.ndarray, max_rounds: int,
            callback: StageCallback) -> BoostedMachine:
        """Boost at most ``max_rounds`` stumps (see :class:`StageLearner`)."""
        return self.trainer.train(pool.codes, labels, check_positive_int(max_rounds, "max_rounds"), callback=callback)


class CostSensitiveAdaBoostStage(AdaBoostDBStage):
    """Cost-Sensitive AdaBoost (Masnadi-Shirazi and Vasconcelos) with the costs of :class:`AdaBoostDBStage`."""

    def __init__(self, cost_positive: float = 2.0, cost_negative: float = 1.0, **options) -> None:
        self.trainer = CostSensitiveAdaBoostTrainer(cost_positive, cost_negative, **options)
