"""AdaMEC, calibrated or not: AdaBoost with the minimum-expected-cost decision (Nikolaou et al. 2016)."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.optimize
from scipy.special import expit, logit

from .._validation import check_choice, check_positive_int, check_scalar
from ..exceptions import InvalidValueError
from ..machine import BoostedMachine
from ..recipes import make_recipe
from ._classifier import _TwoClassClassifier
from ._compat import IsotonicRegression
from ._holdout import held_out_counts, held_out_mask

__all__ = ["AdaMECClassifier"]

#: The calibrations of :class:`AdaMECClassifier` (None: the exponential loss's own link, uncalibrated).
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


class AdaMECClassifier(_TwoClassClassifier):
    """AdaBoost (decision stumps, the exponential loss) that decides by minimum expected cost, with calibrated
    probabilities: calibrated AdaMEC (Nikolaou, Edakunni, Kull, Flach and Brown, "Cost-sensitive boosting
    algorithms: do we really need them?", Machine Learning 2016), whose finding is that it matches or beats
    the cost-sensitive variants of AdaBoost.

    ``fit`` holds out ``calibration_fraction`` of the samples (stratified, seeded by ``random_state``), trains
    ordinary AdaBoost on the rest, and fits the probability of ``classes_[1]`` as a function of the score on
    the held-out samples: Platt's sigmoid (``"platt"``, the paper's) or an isotonic regression
    (``"isotonic"``). A sample is predicted ``classes_[1]`` when that probability exceeds
    ``cost_negative / (cost_positive + cost_negative)``, the threshold of least expected cost for
    calibrated probabilities. With ``calibration=None`` (uncalibrated AdaMEC) every sample trains and the
    probability is the exponential loss's ``sigmoid(2 F)`` (Friedman, Hastie and Tibshirani 2000), which
    makes the rule ``F > (1/2) ln(cost_negative / cost_positive)`` (Ting's minimum-expected-cost rule).

    The decision threshold is folded into the machine's baseline, so the machine's own sign (and its files,
    ONNX export and ``bob-boost predict``) is the estimator's decision; changing the costs needs a new fit.

    Parameters
    ----------
    cost_positive : float
        ``C_FN`` > 0: the cost of predicting ``classes_[0]`` for a ``classes_[1]`` sample.
    cost_negative : float
        ``C_FP`` > 0: the cost of predicting ``classes_[1]`` for a ``classes_[0]`` sample.
    n_estimators : int
        AdaBoost's number of stumps.
    calibration : {"platt", "isotonic", None}
        How the probabilities are calibrated on the held-out samples (None: not at all).
    calibration_fraction : float
        In (0, 1): the share of every class's samples held out to calibrate (the paper's is 0.5).
    max_bins, n_threads, missing
        The stumps' bins per feature, threads and missing values, as in
        :class:`~bob_boost.sklearn.BoostingClassifier`.
    random_state : int or None
        Seed of the held-out samples (None: 0).
    importance_type : {"loss", "split", "weight", "gain", "cover"}
        What :attr:`feature_importances_` measures, as in :class:`~bob_boost.sklearn.BoostingClassifier`.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The two class labels; ``classes_[1]`` is the positive class.
    machine_ : bob_boost.BoostedMachine
        AdaBoost's machine, its baseline minus the decision threshold on its score.
    threshold_ : float
        The score threshold (the machine's baseline is its negative).
    calibration_ : dict
        The calibration's parameters (Platt's ``a`` and ``b``, or the isotonic regression's points).
    n_features_in_, feature_names_in_, n_iter_, train_score_, feature_importances_
        As in :class:`~bob_boost.sklearn.AdaBoostDBClassifier`.
    """

    # AdaMEC trains AdaBoost whole: no early stopping, no warm start (the shared fitting reads these)
    early_stopping, warm_start, validation_fraction, n_iter_no_change, tol, scoring = False, False, 0.1, 10, 0.0, "loss"

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0, n_estimators: int = 100,
                 calibration: str | None = "platt", calibration_fraction: float = 0.5, max_bins: int | None = 256,
                 n_threads: int | None = None, missing: str | None = None, random_state: int | None = None,
                 importance_type: str = "loss") -> None:
        self.cost_positive = cost_positive
        self.cost_negative = cost_negative
        self.n_estimators = n_estimators
        self.calibration = calibration
        self.calibration_fraction = calibration_fraction
        self.max_bins = max_bins
        self.n_threads = n_threads
        self.missing = missing
        self.random_state = random_state
        self.importance_type = importance_type

    def fit(self, X, y, sample_weight=None) -> "AdaMECClassifier":
        """Train AdaBoost on ``X`` (#samples, #features) and two-class labels ``y``, and calibrate it.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) labels of exactly two classes.
        sample_weight : array_like, optional
            Non-negative sample weights (of the loss, and of the calibration fit).

        Returns
        -------
        AdaMECClassifier
            ``self``.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        costs = [float(check_scalar(value, name, numbers.Real, min_val=0, include_boundaries="neither"))
                 for value, name in ((self.cost_positive, "cost_positive"), (self.cost_negative, "cost_negative"))]
        method = self.calibration if self.calibration is None else \
            check_choice(self.calibration, "calibration", CALIBRATIONS[:2])
        if method is not None:
            check_scalar(self.calibration_fraction, "calibration_fraction", numbers.Real, min_val=0, max_val=1,
                         include_boundaries="neither")
        if self.random_state is not None and (isinstance(self.random_state, bool)
                                              or not isinstance(self.random_state, numbers.Integral)):
            raise InvalidValueError(f"random_state: expected None or an int, got {self.random_state!r}")
        recipe = make_recipe("boosting", number_of_classes=2, loss="exponential", weak_learner="stump",
                             max_bins=self.max_bins, n_threads=self.n_threads, missing=self.missing)
        data = self._fit_data()
        X, y = data.validated(self, X, y, reset=True)
        X, encoded, y, weights, index = self._encoded_two_class_rows(data, X, y, sample_weight, "AdaMECClassifier")
        targets = self._encoding.targets("signed", encoded)
        held = np.zeros(encoded.size, dtype=bool)
        if method is not None:
            try:
                counts = held_out_counts(np.bincount(encoded, minlength=2), float(self.calibration_fraction),
                                         self.classes_.tolist())
            except InvalidValueError as error:
                raise InvalidValueError(str(error).replace("validation_fraction", "calibration_fraction")) from None
            rows = np.arange(encoded.size) if index is None else index
            held = held_out_mask(rows, encoded, counts, 0 if self.random_state is None else int(self.random_state))
        fit = ~held
        machine = self._boost(data, recipe, X[fit], targets[fit], None if weights is None else weights[fit],
                              y[fit], rounds, groups=encoded[fit])
        threshold = costs[1] / (costs[0] + costs[1])
        if method is None:
            self.calibration_ = {"method": None}
            shift = 0.5 * np.log(costs[1] / costs[0])
        else:
            scores = machine.decision_scores(X[held])[:, 0]
            self.calibration_, shift = _calibrated(method, scores, encoded[held] == 1,
                                                   None if weights is None else weights[held], threshold,
                                                   float(np.abs(machine.weights).sum()))
        if self.calibration_.get("a", 0.0) < 0:  # a probability falling with the score: the machine turned round
            machine = _turned(machine)
            self.calibration_["turned"] = True
        machine.baseline = -shift if not self.calibration_.get("turned") else shift
        self.threshold_ = float(shift)
        self.machine_ = machine
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def _classifier_metadata(self) -> dict[str, Any]:
        metadata = super()._classifier_metadata()
        metadata["calibration"] = {**self.calibration_, "threshold": self.threshold_}
        return metadata

    def _restore(self, machine: BoostedMachine, metadata: dict[str, Any]) -> None:
        super()._restore(machine, metadata)
        calibration = dict(metadata["calibration"])
        self.threshold_ = float(calibration.pop("threshold"))
        self.calibration_ = calibration

    def _probability_of_positive(self, scores: np.ndarray) -> np.ndarray:
        """``P(classes_[1])`` of machine scores (the baseline, minus the threshold, included)."""
        raw = scores + self.threshold_
        method = self.calibration_["method"]
        if method is None:
            return expit(2.0 * raw)
        if method == "platt":
            turned = -1.0 if self.calibration_.get("turned") else 1.0
            return expit(self.calibration_["a"] * (turned * scores + self.threshold_) + self.calibration_["b"])
        return np.interp(raw, self.calibration_["x"], self.calibration_["y"])

    def _proba_from_scores(self, scores: np.ndarray) -> np.ndarray:
        positive = self._probability_of_positive(scores[:, 0])
        return np.column_stack([1.0 - positive, positive])

    def _probability_link(self) -> tuple:
        """``sigmoid(c F' + d)`` of the machine's score ``F'`` (see :meth:`_BoostedClassifier._probability_link`):
        Platt's, or the exponential loss's; an isotonic calibration has no such form."""
        method = self.calibration_["method"]
        if method == "isotonic":
            raise InvalidValueError("calibration: an isotonic calibration has no ONNX form; export a model fitted "
                                    "with calibration='platt' or None")
        slope, offset = (2.0, 0.0) if method is None else (self.calibration_["a"], self.calibration_["b"])
        turned = -1.0 if self.calibration_.get("turned") else 1.0
        return ("sigmoid", turned * slope, 1, slope * self.threshold_ + offset)



def _turned(machine: BoostedMachine) -> BoostedMachine:
    """``machine`` with every weight negated (its scores' sign turned round)."""
    turned = BoostedMachine(number_of_outputs=1, number_of_features=machine.number_of_features,
                            metadata=dict(machine.metadata), decision_rule=machine.decision_rule)
    for weak, weight in zip(machine.weak_machines, machine.weights):
        turned.add_weak_machine(weak, -weight)
    return turned


def _calibrated(method: str, scores: np.ndarray, positive: np.ndarray, weights: np.ndarray | None,
                threshold: float, bound: float) -> tuple[dict[str, Any], float]:
    """The calibration of ``scores`` (the held-out samples', ``positive`` their class) and the score above which
    its probability exceeds ``threshold``; ``bound`` bounds every score's magnitude (the weights' sum)."""
    if method == "platt":
        a, b = platt(scores, positive, weights)
        if a == 0:  # one probability for every score: every sample goes to one class
            return {"method": "platt", "a": a, "b": b}, (-1.0 if expit(b) > threshold else 1.0) * (bound + 1.0)
        return {"method": "platt", "a": a, "b": b}, (float(logit(threshold)) - b) / a
    fitted = IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0).fit(scores, positive.astype(float),
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
