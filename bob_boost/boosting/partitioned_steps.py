"""The weight of a round's weak machine on row partitions: the in-memory step rules on sums over the partitions.

- the exponential loss with +-1 targets and one output: the closed form ``1/2 log(right / wrong)`` from two
  sums per partition (one pass);
- other losses with a second derivative: Newton's method (:func:`bob_boost.engine.newton.newton_solve_status`) on
  the summed first and second derivatives, one pass over the partitions per iteration;
- losses without one, or coupling their outputs: the in-memory L-BFGS search
  (:func:`bob_boost.boosting.steps.minimise_line_step`) on the summed loss and gradient.

Every sum is added in partition order (:func:`bob_boost.boosting.partitions.in_order`), whatever the scheduling.
"""
from __future__ import annotations

import numpy as np

from ..engine.newton import newton_solve_status
from ..losses import ExponentialLoss, LossFunction
from ..losses.exponential import EXPONENT_LIMIT
from . import partition_tasks as tasks
from .partitions import Partitions, in_order
from .steps import LineStep, minimise_line_step


def newton_step(partitions: Partitions, weak_outputs: list, outputs: int, loss: LossFunction,
                passes: list[int]) -> LineStep:
    """Each output's step minimising the summed loss along the weak outputs, by the in-memory Newton rule, and
    whether it converged (the closed form always does).

    Parameters
    ----------
    partitions : Partitions
        The partitions' targets, scores and weights.
    weak_outputs : list
        Handles of every partition's (#rows, #outputs) weak outputs.
    outputs : int
        Number of outputs.
    loss : LossFunction
        A loss with ``loss_hessian`` that treats its outputs separately.
    passes : list of int
        The passes over the partitions this step takes are appended to it (the trainer's ``weight_passes``).
    """
    each = (partitions.targets, partitions.scores, weak_outputs, partitions.weights)
    if type(loss) is ExponentialLoss and outputs == 1:
        parts = partitions.each(tasks.exponential_sums, *each)
        right, wrong, largest, plus_minus_one = _exponential_totals(*partitions.gather(parts))
        passes.append(1)
        # the closed form is the minimum unless an exponent reaches the loss's cap
        if plus_minus_one and right > 0 and wrong > 0:
            alpha = 0.5 * float(np.log(right / wrong))
            if largest + abs(alpha) < EXPONENT_LIMIT:
                return LineStep(np.array([alpha]), None, None, True)
    else:
        passes.append(0)

    def derivatives(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        passes[-1] += 1
        first, second = partitions.summed(tasks.newton_derivatives, *each, loss, alpha, pure=False)
        return first, second
    weights, converged = newton_solve_status(derivatives, outputs)
    return LineStep(weights, None, None, converged)


def lbfgs_step(partitions: Partitions, weak_outputs: list, outputs: int, samples: int, loss: LossFunction,
               passes: list[int]) -> LineStep:
    """The in-memory L-BFGS weight search on the loss and its gradient summed over the partitions (for losses
    without a second derivative or coupling outputs); ``samples`` scales its tolerance as in memory, and
    each evaluation (one pass over the partitions) is counted in ``passes``, as :func:`newton_step` does."""
    each = (partitions.targets, partitions.scores, weak_outputs, partitions.weights)
    passes.append(0)

    def objective(alpha: np.ndarray) -> tuple[float, np.ndarray]:
        passes[-1] += 1
        summed = partitions.summed(tasks.loss_and_gradient, *each, loss, alpha, pure=False)
        return float(summed[0]), summed[1:]
    return minimise_line_step(objective, outputs, samples)


def _exponential_totals(*parts: np.ndarray) -> list[float]:
    """The partitions' right and wrong weights summed in order, the largest exponent, and whether all are +-1."""
    return [in_order(*[p[0] for p in parts]), in_order(*[p[1] for p in parts]),
            max(p[2] for p in parts), min(p[3] for p in parts)]
