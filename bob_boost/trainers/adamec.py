"""AdaMEC, calibrated or not: AdaBoost that decides by minimum expected cost.

Nikolaou, Edakunni, Kull, Flach and Brown ("Cost-sensitive boosting algorithms: do we really need them?",
Machine Learning 104, 2016) train ordinary AdaBoost and move only its decision: a row is predicted positive
when its probability ``p`` of the positive class exceeds ``C_N / (C_P + C_N)`` (``C_P`` the cost of a false
negative, ``C_N`` of a false positive), which minimises the expected cost ``C_P p`` against ``C_N (1 - p)``.

- Calibrated AdaMEC holds out a share of each class's rows, trains AdaBoost on the rest and fits ``p`` as a
  function of the score ``F`` on the held-out rows: Platt's sigmoid ``p = sigmoid(a F + b)`` (the paper's), or
  an isotonic regression. Their finding is that this matches or beats the cost-sensitive variants of AdaBoost.
- Uncalibrated AdaMEC trains on every row and takes the exponential loss's own link ``p = sigmoid(2 F)``
  (Friedman, Hastie and Tibshirani 2000), so the rule is ``F > (1/2) ln(C_N / C_P)`` (Ting's minimum expected
  cost vote).

The score threshold is folded into the machine's baseline, so the machine's sign (its files, ONNX export and
``bob-boost predict``) is the cost-minimising decision; the calibration is kept in the machine's metadata
(``"calibration"``), from which :func:`probability_of_positive` computes ``p``.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.optimize
from scipy.special import expit, logit

from .._optional import optional_import
from .._validation import as_feature_matrix, as_score_matrix, check_choice, check_scalar
from ..callbacks import RoundCallback
from ..exceptions import InvalidValueError
from ..holdout import held_out_counts, held_out_mask
from ..losses.double_base import check_cost
from ..losses.exponential import ExponentialLoss
from ..machine import BoostedMachine
from ..weak_trainers.stump import StumpTrainer
from .boosting import Boosting

__all__ = ["CALIBRATIONS", "AdaMECTrainer", "platt", "probability_of_positive"]

#: The calibrations of AdaMEC (None: the exponential loss's own link, uncalibrated).
CALIBRATIONS = ("platt", "isotonic", None)


def platt(scores: np.ndarray, positive: np.ndarray, weights: np.ndarray | None) -> tuple[float, float]:
    """Platt's ``(a, b)`` of ``P(positive | F) = sigmoid(a F + b)``: the (weighted) logistic fit of the scores
    to Platt's targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)`` (his remedy for overfitting)."""
    weights = np.ones(scores.size) if weights is None else weights
    n_positive, n_negative = weights[positive].sum(), weights[~positive].sum()
    targets = np.where(positive, (n_positive + 1.0) / (n_positive + 2.0), 1.0 / (n_negative + 2.0))

    def objective(parameters: np.ndarray) -> tuple[float, np.ndarray]:
        z = parameters[0] * scores + parameters[1]
        # -[t log sigmoid(z) + (1 - t) log(1 - sigmoid(z))] = logaddexp(0, z) - t z, stably
        loss = np.sum(weights * (np.logaddexp(0.0, z) - targets * z))
        residual = weights * (expit(z) - targets)
        return loss, np.array([np.sum(residual * scores), np.sum(residual)])

    prior = (n_negative + 1.0) / (n_positive + 1.0)
    start = np.array([0.0, np.log(1.0 / prior)])
    result = scipy.optimize.minimize(objective, start, jac=True, method="BFGS", options={"gtol": 1e-10})
    return float(result.x[0]), float(result.x[1])


def probability_of_positive(calibration: dict[str, Any], scores: np.ndarray) -> np.ndarray:
    """``P(positive)`` of an AdaMEC machine's scores (its baseline, minus the threshold, included), from its
    metadata's ``calibration`` (:meth:`AdaMECTrainer.calibrate`)."""
    threshold = calibration["threshold"]
    method = calibration["method"]
    if method is None:
        return expit(2.0 * (scores + threshold))
    if method == "platt":
        turned = -1.0 if calibration.get("turned") else 1.0
        return expit(calibration["a"] * (turned * scores + threshold) + calibration["b"])
    return np.interp(scores + threshold, calibration["x"], calibration["y"])


class AdaMECTrainer:
    """AdaMEC (see the module's description): AdaBoost of +-1 weak machines on the exponential loss, then the
    decision of least expected cost.

    Parameters
    ----------
    cost_positive, cost_negative : float
        ``C_P`` > 0, the cost of a false negative, and ``C_N`` > 0, of a false positive.
    calibration : {"platt", "isotonic", None}
        How ``P(positive | F)`` is fitted on the held-out rows (None: not at all, every row trains).
    calibration_fraction : float
        In (0, 1): the share of each class's rows held out to calibrate (the paper's is 0.5), chosen by a hash
        of each row's position and ``random_state`` (:mod:`bob_boost.holdout`).
    random_state : int
        The seed of the held-out rows.
    weak_trainer : object, optional
        A trainer of +-1 weak machines following the exponential loss's gradient: default ``StumpTrainer()``.
    """

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0, calibration: str | None = "platt",
                 calibration_fraction: float = 0.5, random_state: int = 0, weak_trainer=None) -> None:
        self.cost_positive = check_cost(cost_positive, "cost_positive")
        self.cost_negative = check_cost(cost_negative, "cost_negative")
        self.calibration = None if calibration is None else check_choice(calibration, "calibration",
                                                                         CALIBRATIONS[:2])
        self.calibration_fraction = float(check_scalar(calibration_fraction, "calibration_fraction", numbers.Real,
                                                       min_val=0, max_val=1, include_boundaries="neither"))
        if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
            raise InvalidValueError(f"random_state: expected an int, got {random_state!r}")
        self.random_state = int(random_state)
        #: AdaBoost: the exponential loss's boosting of the weak machines.
        self.boosting = Boosting(StumpTrainer() if weak_trainer is None else weak_trainer, ExponentialLoss())
        #: The loss AdaBoost minimises (reported and scored by the front doors).
        self.loss_function = self.boosting.loss_function

    @property
    def threshold(self) -> float:
        """``C_N / (C_P + C_N)``: a row is positive when its probability of the positive class exceeds this."""
        return self.cost_negative / (self.cost_positive + self.cost_negative)

    def held_out(self, positive: np.ndarray, rows: np.ndarray | None = None, class_names=None) -> np.ndarray:
        """(n,) bool: the rows held out to calibrate, ``calibration_fraction`` of each class (none when
        uncalibrated).

        Parameters
        ----------
        positive : numpy.ndarray
            (n,) bool, whether each row is of the positive class.
        rows : numpy.ndarray, optional
            (n,) each row's position in the data the caller was given (default ``0 .. n-1``): the hash that
            chooses the rows reads it, so dropping rows elsewhere does not move the choice.
        class_names : list, optional
            The negative and the positive class's names, for messages.

        Raises
        ------
        ValueError
            When a class would keep no training row (naming ``calibration_fraction``).
        """
        held = np.zeros(positive.size, dtype=bool)
        if self.calibration is None:
            return held
        classes = positive.astype(np.int64)
        names = class_names or ["negative", "positive"]
        counts = held_out_counts(np.bincount(classes, minlength=2), self.calibration_fraction, names,
                                 "calibration_fraction")
        return held_out_mask(np.arange(positive.size) if rows is None else rows, classes, counts, self.random_state)

    def calibrate(self, machine: BoostedMachine, features, targets, sample_weight=None) -> BoostedMachine:
        """Fit the calibration on held-out rows and fold the cost threshold into ``machine``'s baseline.

        Parameters
        ----------
        machine : BoostedMachine
            AdaBoost's univariate machine (its baseline is replaced).
        features : numpy.ndarray
            (#held out, #features) the held-out rows (unused when uncalibrated).
        targets : numpy.ndarray
            Their targets in {-1, +1}.
        sample_weight : numpy.ndarray, optional
            Their weights in the calibration fit.

        Returns
        -------
        BoostedMachine
            ``machine``, or (Platt's slope negative: the probability falls with the score) a machine with every
            weight negated; its metadata's ``"calibration"`` holds the method, its parameters and the threshold.
        """
        if self.calibration is None:
            calibration: dict[str, Any] = {"method": None}
            shift = 0.5 * np.log(self.cost_negative / self.cost_positive)
        else:
            scores = machine.decision_scores(features)[:, 0]
            weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            calibration, shift = _calibrated(self.calibration, scores, np.asarray(targets).reshape(-1) > 0, weights,
                                             self.threshold, float(np.abs(machine.weights).sum()))
        if calibration.get("a", 0.0) < 0:  # a probability falling with the score: the machine turned round
            machine = _turned(machine)
            calibration["turned"] = True
        machine.baseline = shift if calibration.get("turned") else -shift
        machine.metadata.update(self.model_metadata())
        machine.metadata["calibration"] = {**calibration, "threshold": float(shift)}
        return machine

    def model_metadata(self) -> dict[str, Any]:
        """The metadata a trained machine holds (besides its calibration)."""
        return {"loss": ExponentialLoss.name, "trainer": "adamec", "cost_positive": self.cost_positive,
                "cost_negative": self.cost_negative}

    def train(self, features, targets, number_of_rounds: int = 100, sample_weight=None,
              callback: RoundCallback | None = None, boosted_machine: BoostedMachine | None = None,
              rows: np.ndarray | None = None) -> BoostedMachine:
        """Hold out the calibration rows, boost ``number_of_rounds`` weak machines on the others, calibrate.

        Parameters
        ----------
        features : array_like
            (#samples, #features) training features.
        targets : array_like
            (#samples,) or (#samples, 1) targets in {-1, +1}; both classes must occur.
        number_of_rounds : int
            AdaBoost's number of rounds.
        sample_weight : array_like, optional
            (#samples,) non-negative weights, of the loss and of the calibration fit.
        callback : callable, optional
            The round callback of AdaBoost's run (:mod:`bob_boost.callbacks`).
        boosted_machine : None
            AdaMEC calibrates one whole run: continuing a machine is refused.
        rows : numpy.ndarray, optional
            As :meth:`held_out`'s.

        Returns
        -------
        BoostedMachine
            AdaBoost's machine whose sign is the decision of least expected cost (:meth:`calibrate`).

        Raises
        ------
        ValueError
            For a machine to continue, targets that are not one column of -1 and +1 of both classes, weights of
            the wrong length or negative, and a class left without training rows.
        """
        if boosted_machine is not None:
            raise InvalidValueError("boosted_machine: AdaMEC calibrates one whole run of AdaBoost; train a new "
                                    "machine with the total number of rounds")
        features = as_feature_matrix(features, allow_nan=bool(getattr(self.boosting.weak_trainer, "accepts_missing",
                                                                      False)))
        targets = self.loss_function.check_targets(targets)
        if targets.shape[1] != 1:
            raise InvalidValueError(f"targets: AdaMEC is binary, it needs one column, got {targets.shape[1]}")
        positive = targets[:, 0] > 0
        if positive.all() or not positive.any():
            raise InvalidValueError("targets: both classes (-1 and +1) must occur")
        weights = None if sample_weight is None else as_score_matrix(sample_weight, "sample_weight",
                                                                     targets.shape[0])[:, 0]
        held = self.held_out(positive, rows)
        fit = ~held
        machine = self.boosting.train(features[fit], targets[fit], number_of_rounds, callback=callback,
                                      sample_weight=None if weights is None else weights[fit])
        return self.calibrate(machine, features[held], targets[held], None if weights is None else weights[held])

    def __repr__(self) -> str:
        return (f"AdaMECTrainer(cost_positive={self.cost_positive!r}, cost_negative={self.cost_negative!r}, "
                f"calibration={self.calibration!r}, calibration_fraction={self.calibration_fraction!r})")


def _turned(machine: BoostedMachine) -> BoostedMachine:
    """``machine`` with every weight negated (its scores' sign turned round)."""
    turned = BoostedMachine(number_of_outputs=1, number_of_features=machine.number_of_features,
                            metadata=dict(machine.metadata), decision_rule=machine.decision_rule)
    for weak, weight in zip(machine.weak_machines, machine.weights):
        turned.add_weak_machine(weak, -weight)
    return turned


def _calibrated(method: str, scores: np.ndarray, positive: np.ndarray, weights: np.ndarray | None,
                threshold: float, bound: float) -> tuple[dict[str, Any], float]:
    """The calibration of ``scores`` (the held-out rows', ``positive`` their class) and the score above which
    its probability exceeds ``threshold``; ``bound`` bounds every score's magnitude (the weights' sum)."""
    if method == "platt":
        a, b = platt(scores, positive, weights)
        if a == 0:  # one probability for every score: every row goes to one class
            return {"method": "platt", "a": a, "b": b}, (-1.0 if expit(b) > threshold else 1.0) * (bound + 1.0)
        return {"method": "platt", "a": a, "b": b}, (float(logit(threshold)) - b) / a
    isotonic = optional_import("sklearn.isotonic", "isotonic calibration").IsotonicRegression
    fitted = isotonic(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(scores, positive.astype(float),
                                                                     sample_weight=weights)
    x, values = np.asarray(fitted.X_thresholds_, dtype=float), np.asarray(fitted.y_thresholds_, dtype=float)
    above = np.flatnonzero(values > threshold)
    if above.size == 0:  # never above the threshold: no score is
        shift = bound + 1.0
    elif above[0] == 0:  # always above it
        shift = -(bound + 1.0)
    else:  # the linear interpolation crosses the threshold between x[j - 1] and x[j]
        j = above[0]
        shift = float(x[j - 1] + (threshold - values[j - 1]) * (x[j] - x[j - 1]) / (values[j] - values[j - 1]))
    return {"method": "isotonic", "x": x.tolist(), "y": values.tolist()}, shift
