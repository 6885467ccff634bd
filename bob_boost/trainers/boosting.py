"""The generic gradient-boosting trainer of bob.learn.boosting."""
from __future__ import annotations

import logging
import numpy as np
import scipy.optimize
from threadpoolctl import threadpool_limits

from .._validation import as_feature_matrix, check_positive_int, check_same_samples
from ..callbacks import RoundCallback, check_callback, stop_requested
from ..exceptions import InvalidTypeError, InvalidValueError
from ..losses.base import LossFunction
from ..machine import BoostedMachine

logger = logging.getLogger(__name__)

#: L-BFGS stops when the per-sample mean of the loss derivative is below this.
GRADIENT_TOLERANCE = 1e-12


def fit_weights(loss_function: LossFunction, targets: np.ndarray, previous_scores: np.ndarray,
                current_scores: np.ndarray) -> np.ndarray:
    """Find the weight(s) of a new weak machine with L-BFGS, starting at zero.

    Minimises ``loss_function.loss_sum`` with its derivative
    ``loss_gradient_sum`` (both from one call of ``loss_and_gradient_sum``),
    one weight per output. The objective is divided by the number of samples so
    that one gradient tolerance fits data sets of any size.

    Returns
    -------
    numpy.ndarray
        (#outputs,) weights.
    """
    scale = 1.0 / targets.shape[0]

    def objective(alpha: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = loss_function.loss_and_gradient_sum(alpha, targets, previous_scores, current_scores)
        return value * scale, gradient * scale

    result = scipy.optimize.minimize(
        objective, np.zeros(targets.shape[1]), jac=True, method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": GRADIENT_TOLERANCE, "maxiter": 500})
    # At machine precision the line search can stop with an "abnormal" status
    # although the minimum is reached; only a large remaining gradient matters.
    if not result.success and np.max(np.abs(result.jac)) > 1e6 * GRADIENT_TOLERANCE:
        logger.warning("L-BFGS stopped before converging (%s); gradient %s", result.message, result.jac)
    return np.asarray(result.x, dtype=np.float64)


class Boosting:
    """Generic boosting: a loss function drives a weak trainer.

    Each round computes the loss gradient at the current training scores,
    asks the weak trainer for the weak machine that best follows it, and
    fits that machine's weight(s) with L-BFGS on the loss.

    Parameters
    ----------
    weak_trainer : object
        Has ``train(features, loss_gradient) -> WeakMachine``; if it also has
        ``prepare(features)``, that is called once per run and its result is
        passed to ``train`` instead of the raw features.
    loss_function : LossFunction
        The loss to minimise.
    """

    def __init__(self, weak_trainer, loss_function: LossFunction) -> None:
        if not callable(getattr(weak_trainer, "train", None)):
            raise InvalidTypeError(f"weak_trainer: needs a train(features, loss_gradient) method, "
                                   f"got {type(weak_trainer).__name__}")
        if not isinstance(loss_function, LossFunction):
            raise InvalidTypeError(f"loss_function: expected a LossFunction, got {type(loss_function).__name__}")
        self.weak_trainer = weak_trainer
        self.loss_function = loss_function

    def train(self, features, targets, number_of_rounds: int = 20,
              boosted_machine: BoostedMachine | None = None,
              callback: RoundCallback | None = None) -> BoostedMachine:
        """Boost ``number_of_rounds`` weak machines.

        Parameters
        ----------
        features : array_like
            (#samples, #features) training features.
        targets : array_like
            (#samples,) or (#samples, #outputs) targets.
        number_of_rounds : int
            Maximum number of weak machines to add.
        boosted_machine : BoostedMachine, optional
            Continue training this machine (it is extended in place and
            returned); a new machine is created otherwise.
        callback : callable, optional
            ``callback(round, machine, scores)`` after each round, e.g. for
            progress; returning True stops training (see :mod:`bob_boost.callbacks`).

        Returns
        -------
        BoostedMachine
            The trained machine. Training stops early, with a log message,
            when a round's optimal weight is zero. A new machine takes its
            decision rule from the loss (:meth:`LossFunction.decision_rule`).
        """
        features = as_feature_matrix(features)
        targets = self.loss_function.check_targets(targets)
        check_same_samples(features, targets)
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        check_callback(callback)
        n_outputs = targets.shape[1]

        if boosted_machine is None:
            boosted_machine = BoostedMachine(
                number_of_outputs=n_outputs, cost_matrix=self.loss_function.cost_matrix,
                number_of_features=features.shape[1],
                metadata={"loss": self.loss_function.name or type(self.loss_function).__name__},
                decision_rule=self.loss_function.decision_rule(n_outputs))
            scores = np.zeros(targets.shape)
        else:
            if not isinstance(boosted_machine, BoostedMachine):
                raise InvalidTypeError("boosted_machine: expected a BoostedMachine, got "
                                       f"{type(boosted_machine).__name__}")
            if boosted_machine.number_of_outputs not in (None, n_outputs):
                raise InvalidValueError(f"boosted_machine: has {boosted_machine.number_of_outputs} outputs but targets "
                                        f"have {n_outputs}")
            scores = boosted_machine.decision_scores(features)

        prepared = self.weak_trainer.prepare(features) if hasattr(self.weak_trainer, "prepare") else features
        # L-BFGS makes many tiny BLAS calls per round; a multi-threaded BLAS
        # spends more on waking its threads than on the work (3x slower on 2 cores)
        with threadpool_limits(limits=1, user_api="blas"):
            self._boost(features, prepared, targets, number_of_rounds, boosted_machine, scores, callback)
        return boosted_machine

    def _boost(self, features: np.ndarray, prepared, targets: np.ndarray, number_of_rounds: int,
               boosted_machine: BoostedMachine, scores: np.ndarray, callback: RoundCallback | None) -> None:
        logger.info("Starting %d rounds of boosting on %d samples x %d features",
                    number_of_rounds, features.shape[0], features.shape[1])
        for round_index in range(number_of_rounds):
            gradient = self.loss_function.loss_gradient(targets, scores)
            weak_machine = self.weak_trainer.train(prepared, gradient)
            weak_scores = weak_machine.forward(features)
            alpha = fit_weights(self.loss_function, targets, scores, weak_scores)
            if np.all(alpha == 0.0):
                logger.info("Round %d: the optimal weight is zero; stopping after %d weak machines",
                            round_index + 1, len(boosted_machine))
                break
            scores = scores + alpha * weak_scores
            boosted_machine.add_weak_machine(weak_machine, alpha)
            if logger.isEnabledFor(logging.INFO):
                logger.info("Round %d/%d: %r, weight %s, training loss %.6g", round_index + 1, number_of_rounds,
                            weak_machine, np.array2string(alpha, precision=4),
                            np.sum(self.loss_function.loss(targets, scores)))
            if stop_requested(callback, round_index, boosted_machine, scores):
                break
