"""arc-gv (Breiman, "Prediction games and arcing algorithms", Neural Computation 1999): AdaBoost whose weight
of round ``t`` is ``(1/2) ln((1 + g_t) / (1 - g_t)) - (1/2) ln((1 + r_t) / (1 - r_t))`` for the weak
machine's edge ``g_t`` and the ensemble's normalised minimum margin ``r_t`` before it (0 at the first round,
and while it is negative), to raise the minimum margin (see :mod:`bob_boost.boosting.arcing`). Zhou's
AdaBoost chapter tells how arc-gv's larger minimum margins came with larger test errors, and how Reyzin and
Schapire found, with stumps, AdaBoost's margin distribution better than arc-gv's.
"""
from __future__ import annotations

from ..boosting.arcing import ArcGVBoosting
from ..losses.exponential import ExponentialLoss
from ..weak_trainers.stump import StumpTrainer
from .boosting import Boosting

__all__ = ["ArcGVTrainer"]


class ArcGVTrainer(Boosting):
    """arc-gv with +-1 weak machines (decision stumps by default).

    Parameters
    ----------
    weak_trainer : object, optional
        A trainer of +-1 weak machines following the exponential loss's gradient (the machine of largest edge):
        :class:`~bob_boost.StumpTrainer` (the default, ``StumpTrainer()``) or a look-up-table trainer of one
        output.
    learning_rate : float
        In (0, 1]; every weight is multiplied by it (1 in the paper).

    Notes
    -----
    ``train`` takes targets in {-1, +1}; training stops at a weight that is not positive (the minimum margin
    reached the weak machine's edge).
    """

    algorithm = ArcGVBoosting

    def __init__(self, weak_trainer=None, learning_rate: float = 1.0) -> None:
        super().__init__(StumpTrainer() if weak_trainer is None else weak_trainer, ExponentialLoss(),
                         learning_rate=learning_rate)
