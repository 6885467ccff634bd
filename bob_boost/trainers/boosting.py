"""The generic gradient-boosting trainer of bob.learn.boosting."""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import (as_feature_matrix, check_choice, check_same_samples, check_sample_weight, check_scalar,
                           mean_one)
from ..boosting import loop
from ..boosting.algorithms import GradientBoosting
from ..boosting.sampling import Sampling, check_sampling
from ..boosting.steps import GRADIENT_TOLERANCE, compiled_loss, fit_weights  # noqa: F401  (old import path)
from ..callbacks import RoundCallback
from ..engine.threads import single_threaded_blas
from ..exceptions import InvalidTypeError, InvalidValueError
from ..losses.base import LossFunction
from ..machine import BoostedMachine

#: The generic trainer's step rules (see :class:`Boosting`).
STEP_RULES = ("auto", "lbfgs", "newton")

class Boosting:
    """Generic boosting: a loss function drives a weak trainer.

    Each round computes the loss gradient at the current training scores,
    asks the weak trainer for the weak machine that best follows it, and
    fits that machine's weight(s) with L-BFGS on the loss.

    Parameters
    ----------
    weak_trainer : object
        A weak trainer of the loop's protocol (:mod:`bob_boost.boosting.protocol`:
        ``prepare(features)`` once per run, ``propose(prepared, state)`` every
        round, reading ``state.gradient``), or one with
        ``train(features, loss_gradient) -> WeakMachine`` (and optionally
        ``prepare``), as in bob_boost 0.1.
    loss_function : LossFunction
        The loss to minimise.
    step_rule : {"auto", "lbfgs", "newton"}
        How each weak machine's weight is found. ``"lbfgs"``: L-BFGS on the
        loss (bob.learn.boosting's rule). ``"newton"``: a compiled Newton
        solve per output, for the built-in separable losses (exponential,
        logit, squared); the weights agree with L-BFGS's to about 1e-10
        relative, at a fraction of the cost on large data. ``"auto"`` (the
        default): Newton when the loss allows it and the weak trainer's
        binning is lossy (a feature cut at quantiles, see
        :class:`~bob_boost.StumpTrainer`'s ``max_bins``), L-BFGS otherwise,
        so exactly binned data gives bob's models.
    learning_rate : float or None
        Shrinkage in (0, 1]: every weak machine's weight (fitted, or the
        weight 1 a :class:`~bob_boost.TreeTrainer` proposes) is multiplied
        by it, as scikit-learn's ``learning_rate``. None (the default): the
        weak trainer's ``default_learning_rate``, 0.1 for gradient trees
        (their Newton leaves are full steps) and 1.0 for the others (bob's
        stumps and look-up tables, whose weights L-BFGS fits).
    sampling : Sampling, optional
        Stochastic boosting: each round's weak machine is fitted to a
        sample of the rows (uniform, stratified by class, or GOSS) and,
        for stumps and gradient trees, of the feature columns
        (:class:`~bob_boost.Sampling`); its weight is still fitted on every
        row. None (the default): every row and column.

    Notes
    -----
    **Descent guarantee.** No round raises the (weighted) training loss: a
    weight that the step rule has not proven to decrease it (a tree's
    Newton leaves, a shrunk step on a non-convex loss) is halved until the
    loss at the new scores is no higher than before; when 30 halvings do
    not get there, the round is rejected and training stops with a
    :class:`~bob_boost.exceptions.ConvergenceWarning` naming the loss and
    the round. L-BFGS steps are proven by the loss values the search
    computed, converged Newton steps by the loss's convexity, so the check
    costs nothing there; for trees it is one evaluation of the loss per
    round (see ``doc/guide.md``).
    """

    #: The loop configuration :meth:`train` runs (a subclass's algorithm changes only its step, say).
    algorithm: type[GradientBoosting] = GradientBoosting

    def __init__(self, weak_trainer, loss_function: LossFunction, step_rule: str = "auto",
                 learning_rate: float | None = None, sampling: Sampling | None = None) -> None:
        if not (callable(getattr(weak_trainer, "train", None)) or callable(getattr(weak_trainer, "propose", None))):
            raise InvalidTypeError(f"weak_trainer: needs a train(features, loss_gradient) method, "
                                   f"got {type(weak_trainer).__name__}")
        if not isinstance(loss_function, LossFunction):
            raise InvalidTypeError(f"loss_function: expected a LossFunction, got {type(loss_function).__name__}")
        self.weak_trainer = weak_trainer
        self.loss_function = loss_function
        self.step_rule = check_choice(step_rule, "step_rule", STEP_RULES)
        if learning_rate is None:
            learning_rate = getattr(weak_trainer, "default_learning_rate", 1.0)
        self.learning_rate = float(check_scalar(learning_rate, "learning_rate", numbers.Real, min_val=0, max_val=1,
                                                include_boundaries="right"))
        self.sampling = check_sampling(sampling, weak_trainer)
        if not loss_function.has_loss and not (getattr(weak_trainer, "uses_hessian", False)
                                                and getattr(weak_trainer, "newton_leaves", None) is not False):
            raise InvalidValueError(f"loss_function: {loss_function!r} knows its derivatives only; its weights "
                                    f"need gradient trees with Newton leaves (TreeTrainer), or a loss function")
        if step_rule == "newton" and compiled_loss(loss_function) is None:
            raise InvalidValueError(f"step_rule: 'newton' needs a built-in separable loss (exponential, logit, "
                                    f"squared), got {type(loss_function).__name__}")

    def train(self, features, targets, number_of_rounds: int = 20,
              boosted_machine: BoostedMachine | None = None,
              callback: RoundCallback | None = None, sample_weight=None, baseline=None) -> BoostedMachine:
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
        sample_weight : array_like, optional
            (#samples,) non-negative factors of every sample's loss, not all
            zero; rescaled to a mean of 1, so only their ratios matter.
            Zero-weight samples still add candidate thresholds.
        baseline : float, array_like or "auto", optional
            A new machine starts from this constant score (one value per
            output, or a scalar): it becomes the machine's baseline. For a
            loss of ``scores - targets`` (squared, Huber, absolute, quantile:
            ``shift_invariant``) the rounds boost ``targets - baseline`` from
            0; for the others they start from the scores ``baseline``.
            ``"auto"``: the loss's optimal constant
            (:meth:`LossFunction.baseline`, e.g. the weighted mean for the
            squared loss, the log of the mean for Poisson), as LightGBM's
            ``boost_from_average``.

        Returns
        -------
        BoostedMachine
            The trained machine. Training stops early, with a log message,
            when a round's optimal weight is zero. A new machine takes its
            decision rule from the loss (:meth:`LossFunction.decision_rule`).
        """
        features = as_feature_matrix(features, allow_nan=bool(getattr(self.weak_trainer, "accepts_missing", False)),
                                     accept_sparse=bool(getattr(self.weak_trainer, "accepts_sparse", False)))
        targets = self.loss_function.check_targets(targets)
        check_same_samples(features, targets)
        weights = None if sample_weight is None else mean_one(check_sample_weight(sample_weight, features.shape[0]))
        if baseline is not None:
            if boosted_machine is not None:
                raise InvalidValueError("baseline: a machine being continued keeps its own baseline")
            if isinstance(baseline, str):
                if baseline != "auto":
                    raise InvalidValueError(f"baseline: expected a number, numbers or 'auto', got {baseline!r}")
                baseline = self.loss_function.baseline(targets, weights)
            baseline = BoostedMachine(number_of_outputs=targets.shape[1], baseline=baseline).baseline  # validated
        elif isinstance(boosted_machine, BoostedMachine) and np.any(boosted_machine.baseline != 0):
            baseline = boosted_machine.baseline  # continue boosting the residuals the machine was trained on
            if baseline.shape != (targets.shape[1],):
                raise InvalidValueError(f"boosted_machine: has {baseline.size} outputs but targets have "
                                        f"{targets.shape[1]}")
        if baseline is not None and self.loss_function.shift_invariant:
            targets = targets - baseline
        algorithm = self.algorithm(self.loss_function, self.weak_trainer, targets, weights, baseline,
                                     self.step_rule, self.learning_rate, self.sampling)
        check_outputs = getattr(self.weak_trainer, "check_outputs", None)
        if check_outputs is not None:
            check_outputs(targets.shape[1])
        check_loss = getattr(self.weak_trainer, "check_loss", None)
        if check_loss is not None:
            check_loss(self.loss_function)
        with single_threaded_blas():
            return loop.run(algorithm, self.weak_trainer, features, number_of_rounds, boosted_machine, callback)
