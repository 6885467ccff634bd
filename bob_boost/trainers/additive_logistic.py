"""Gentle AdaBoost and LogitBoost (two classes): Newton steps of the exponential and the logistic loss.

Friedman, Hastie and Tibshirani ("Additive logistic regression: a statistical view of boosting", Annals of
Statistics 2000) fit, every round, a regression tree by weighted least squares:

- Gentle AdaBoost (their Algorithm 4): the targets ``y`` in {-1, +1} with weights ``w = exp(-y F)``; the tree's
  leaves are the weighted means of ``y`` and ``F += f``.
- LogitBoost (their Algorithm 3): the working responses ``z = (y* - p) / (p (1 - p))`` with weights
  ``w = p (1 - p)``, for ``y*`` in {0, 1} and ``p = 1 / (1 + exp(-2 F))``; ``F += f / 2``.

A weighted least-squares tree is a Newton tree of the loss: its split maximises ``sum (sum w r)^2 / sum w``
over the children, which is the Newton gain ``G^2 / H``, and its leaf ``sum w r / sum w`` is the Newton step
``-G / H``. With the exponential loss ``exp(-y F)`` (``g = -y w``, ``h = w``) that is Gentle AdaBoost; with the
logistic loss ``log(1 + exp(-y S))`` of the score ``S = 2 F`` (``g = -(y* - p)``, ``h = p (1 - p)``) it is
LogitBoost, whose ``F`` is half the machine's score (the same sign). So each is :class:`~bob_boost.Boosting`
with a :class:`~bob_boost.TreeTrainer` grown as CART grows (level by level to ``max_depth``, any leaf size,
no regularisation) and weight 1. The paper's advice to cap LogitBoost's ``z`` at 2 to 4 for stability is
not part of its Algorithm 3, and is not applied.
"""
from __future__ import annotations

from ..losses.exponential import ExponentialLoss
from ..losses.logit import LogitLoss
from ..weak_trainers.tree import TreeTrainer
from .boosting import Boosting

__all__ = ["GentleAdaBoostTrainer", "LogitBoostTrainer"]


def _least_squares_trees(max_depth: int, max_bins: int | None, n_threads: int | None,
                         missing: str | None) -> TreeTrainer:
    """Regression trees as the paper grows them: every node to ``max_depth`` split by its best weighted
    least-squares split, leaves of any size, Newton (weighted-mean) leaves without regularisation."""
    return TreeTrainer(max_depth=max_depth, max_leaves=None, growth="levelwise", min_samples_leaf=1,
                       min_hessian_leaf=0.0, l2_regularization=0.0, max_bins=max_bins, n_threads=n_threads,
                       newton_leaves=True, missing=missing)


class GentleAdaBoostTrainer(Boosting):
    """Gentle AdaBoost (see the module's description): regression trees on the exponential loss, weight 1.

    Parameters
    ----------
    max_depth : int
        Depth of the trees (1: regression stumps, the paper's).
    max_bins : int or None
        Bins per feature of the split search (None: every distinct value, the exact least-squares search).
    n_threads : int or None
        Threads of the trees' kernels (None: every core); the model does not depend on it.
    missing : {None, "bin"}
        As :class:`~bob_boost.TreeTrainer`'s.

    Notes
    -----
    ``train`` takes targets in {-1, +1}, as :class:`~bob_boost.Boosting` with the exponential loss does.
    """

    def __init__(self, max_depth: int = 1, max_bins: int | None = 256, n_threads: int | None = None,
                 missing: str | None = None) -> None:
        super().__init__(_least_squares_trees(max_depth, max_bins, n_threads, missing), ExponentialLoss(),
                         learning_rate=1.0)


class LogitBoostTrainer(Boosting):
    """Two-class LogitBoost (see the module's description): regression trees on the logistic loss, weight 1.

    The machine's score is ``2 F`` of the paper's ``F`` (the log-odds), so that its probability is the
    logistic loss's ``sigmoid(score)``.

    Parameters
    ----------
    max_depth, max_bins, n_threads, missing
        As :class:`GentleAdaBoostTrainer`'s.
    """

    def __init__(self, max_depth: int = 1, max_bins: int | None = 256, n_threads: int | None = None,
                 missing: str | None = None) -> None:
        super().__init__(_least_squares_trees(max_depth, max_bins, n_threads, missing), LogitLoss(),
                         learning_rate=1.0)
