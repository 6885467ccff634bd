"""The binary cost-reweighting algorithms (AdaC1-3, AdaCost, CSB0-2, AsymBoost) as one scikit-learn classifier."""
from __future__ import annotations

import numpy as np

from .._validation import check_choice, check_positive_int
from ..family_recipes import REWEIGHTING_TRAINERS
from ..recipes import make_recipe
from ._classifier import _refuse_constant, _TwoClassClassifier

__all__ = ["CostReweightingClassifier"]


class CostReweightingClassifier(_TwoClassClassifier):
    """Cost-sensitive binary boosting of decision stumps by one of the algorithms that reweight AdaBoost's rows by
    their costs.

    ``algorithm`` names the rule (:mod:`bob_boost.trainers.cost_reweighting` gives each one's step, update and
    paper): ``"adac1"``, ``"adac2"``, ``"adac3"`` (Sun et al. 2007), ``"adacost"`` (Fan et al. 1999),
    ``"csb0"``, ``"csb1"``, ``"csb2"`` (Ting 2000) or ``"asymboost"`` (Viola and Jones 2001). Targets are
    ``+1`` for ``classes_[1]`` (the positive class) and ``-1`` for ``classes_[0]``; the prediction is the sign
    of ``F = sum_t alpha_t h_t``.

    Parameters
    ----------
    algorithm : str
        The rule, one of the names above.
    cost_positive : float or None
        ``C_P`` > 0: the cost of a false negative (a ``classes_[1]`` sample predicted as ``classes_[0]``); in
        (0, 1] for AdaC1, AdaC3 and AdaCost. None: 1 (AdaCost needs both costs given).
    cost_negative : float or None
        ``C_N`` > 0: the cost of a false positive; in (0, 1] for AdaC1, AdaC3 and AdaCost. None: 1 (as
        ``cost_positive``).
    n_estimators : int
        Maximum number of stumps (AsymBoost spreads its asymmetry over them); training stops earlier at a
        step that is not positive or after a stump without weighted training error.
    max_bins : int or None
        The stumps' candidate bins per feature (:class:`~bob_boost.StumpTrainer`); None: every threshold.
    missing : {None, "bin"}
        ``"bin"``: NaN in ``X`` is a missing value whose side every stump learns; None rejects NaN.
    categorical_features : "from_dtype", array_like of int, str or bool, or None
        The features that are categories (stumps then split sets of categories), as
        :class:`~bob_boost.sklearn.BoostingClassifier` takes them.
    class_weight : dict, "balanced" or None
        Factors of each class's initial weights ``D_1``.
    early_stopping : bool or "auto"
        Off by default: these algorithms minimise no loss, so ``scoring="loss"`` (minus the mean exponential
        loss, which their rounds may raise) would stop them after a round or two; with early stopping give a
        scorer for ``scoring`` (e.g. one of the misclassification cost). ``"auto"``, as the other estimators':
        on above 10,000 samples.
    validation_fraction, n_iter_no_change, tol, scoring, warm_start, random_state, importance_type
        As in :class:`~bob_boost.sklearn.AdaBoostDBClassifier` (``"loss"`` scores minus the mean exponential
        loss). A warm start of AsymBoost keeps the asymmetry's spread over the first fit's ``n_estimators``
        (its ``T``), so it equals one fit of the larger number with ``T`` that first number.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The two class labels; ``classes_[1]`` is the positive class.
    machine_ : bob_boost.BoostedMachine
        The weighted stumps; its scores are :meth:`decision_function`'s.
    n_features_in_, feature_names_in_, n_iter_, train_score_, validation_score_, feature_importances_
        As in :class:`~bob_boost.sklearn.AdaBoostDBClassifier`.

    Notes
    -----
    :meth:`predict_proba` is ``sigmoid(2 F)``, the probability the exponential loss's minimiser implies. These
    algorithms do not minimise that loss, so it is not calibrated: for cost-sensitive decisions from
    probabilities, :class:`~bob_boost.sklearn.AdaMECClassifier` calibrates AdaBoost on held-out rows.
    """

    def __init__(self, algorithm: str = "adac2", cost_positive: float | None = None, cost_negative: float | None = None,
                 n_estimators: int = 100, max_bins: int | None = 256, missing: str | None = None,
                 categorical_features="from_dtype", class_weight=None, early_stopping=False,
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7, scoring="loss",
                 warm_start: bool = False, random_state=None, importance_type: str = "loss") -> None:
        self.algorithm = algorithm
        self.cost_positive = cost_positive
        self.cost_negative = cost_negative
        self.n_estimators = n_estimators
        self.max_bins = max_bins
        self.missing = missing
        self.categorical_features = categorical_features
        self.class_weight = class_weight
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.random_state = random_state
        self.importance_type = importance_type

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "CostReweightingClassifier":
        """Train on ``X`` (#samples, #features) and two-class labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) labels of exactly two classes.
        sample_weight : array_like, optional
            Non-negative factors of the initial weights; zero-weight samples are ignored.
        eval_set : list of (X, y) or (X, y, sample_weight), optional
            Evaluation sets, as in :class:`~bob_boost.sklearn.AdaBoostDBClassifier`.

        Returns
        -------
        CostReweightingClassifier
            ``self``.
        """
        check_choice(self.algorithm, "algorithm", tuple(REWEIGHTING_TRAINERS))
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        data = self._fit_data()
        X, y = self._fit_features(data, X, y)
        X, encoded, y, weights, index = self._encoded_two_class_rows(
            data, X, y, sample_weight, self.algorithm, "use BAdaCostClassifier for costs between several classes.")
        if data.all_constant(X):
            _refuse_constant()
        recipe = make_recipe(self.algorithm, number_of_classes=2, cost_positive=self.cost_positive,
                             cost_negative=self.cost_negative, number_of_rounds=rounds, max_bins=self.max_bins,
                             missing=self.missing, categorical_features=self._categorical_features())
        encoding, kind = self._encoding, recipe.target_kind
        targets = data.rows(lambda indices: encoding.targets(kind, indices), encoded, np.float64)
        self.machine_ = self._boost(data, recipe, X, targets, weights, y, rounds, groups=encoded, index=index,
                                    eval_set=eval_set)
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def _probability_link(self) -> tuple:
        """``sigmoid(2 F)`` (see :meth:`_BoostedClassifier._probability_link`)."""
        return ("sigmoid", 2.0, 1)
