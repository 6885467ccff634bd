"""AdaMEC, calibrated or not: AdaBoost with the minimum-expected-cost decision (Nikolaou et al. 2016)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_positive_int
from ..exceptions import InvalidValueError
from ..machine import BoostedMachine
from ..recipes import Recipe, make_recipe
from ..trainers.adamec import platt, probability_of_positive  # noqa: F401 (platt: its old import path)
from ._classifier import _TwoClassClassifier

__all__ = ["AdaMECClassifier"]


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
        recipe = make_recipe("adamec", number_of_classes=2, cost_positive=self.cost_positive,
                             cost_negative=self.cost_negative, calibration=self.calibration,
                             calibration_fraction=self.calibration_fraction,
                             random_state=0 if self.random_state is None else self.random_state,
                             max_bins=self.max_bins, n_threads=self.n_threads, missing=self.missing)
        adamec = recipe.trainer
        data = self._fit_data()
        X, y = data.validated(self, X, y, reset=True)
        X, encoded, y, weights, index = self._encoded_two_class_rows(data, X, y, sample_weight, "AdaMECClassifier")
        targets = self._encoding.targets("signed", encoded)
        held = adamec.held_out(encoded == 1, index, self.classes_.tolist())
        fit = ~held
        adaboost = Recipe("boosting", adamec.boosting, recipe.loss, "signed")
        machine = self._boost(data, adaboost, X[fit], targets[fit], None if weights is None else weights[fit],
                              y[fit], rounds, groups=encoded[fit])
        machine = adamec.calibrate(machine, X[held], targets[held], None if weights is None else weights[held])
        calibration = dict(machine.metadata["calibration"])
        self.threshold_ = float(calibration.pop("threshold"))
        self.calibration_ = calibration
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
        return probability_of_positive({**self.calibration_, "threshold": self.threshold_}, scores)

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


