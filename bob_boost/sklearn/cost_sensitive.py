"""Cost-sensitive estimators: AdaBoostDB (binary) here, and BAdaCost (multi-class, :mod:`.badacost`)."""
from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..recipes import make_recipe
from ._classifier import _refuse_constant, _TwoClassClassifier
from .badacost import COST_PRESETS, BAdaCostClassifier  # noqa: F401  (this module's old names)

__all__ = ["AdaBoostDBClassifier", "BAdaCostClassifier"]


class AdaBoostDBClassifier(_TwoClassClassifier):
    """Cost-sensitive binary boosting of decision stumps with AdaBoostDB.

    AdaBoostDB (Landesa-Vazquez & Alba-Castro, "Double-Base Asymmetric
    AdaBoost") minimises the class-dependent exponential bound
    ``sum_n D(n) exp(-C_t t_n F(x_n))`` over the pool of all stumps, with
    targets ``t = +1`` for ``classes_[1]`` (the positive class) and ``-1``
    for ``classes_[0]``. See
    :class:`bob_boost.trainers.cost_sensitive.AdaBoostDBTrainer`.

    Parameters
    ----------
    cost_positive : float
        ``C_P`` > 0: the cost of a false negative (a ``classes_[1]`` sample
        predicted as ``classes_[0]``).
    cost_negative : float
        ``C_N`` > 0: the cost of a false positive.
    n_estimators : int
        Maximum number of stumps; training stops earlier when no stump
        lowers the bound or after a stump without training error.
    selection : {"alpha", "loss"}
        ``"alpha"``: the stump with the largest step (the paper's rule);
        ``"loss"``: the stump that lowers the bound most.
    early_stopping : {"auto", True, False}
        Hold out ``validation_fraction`` of the samples (stratified) and stop
        when the validation score has not improved by more than ``tol`` for
        ``n_iter_no_change`` rounds; the machine is trimmed to its best
        round. ``"auto"``: only above 10,000 samples.
    validation_fraction : float
        Share in (0, 1) of the samples held out for early stopping.
    n_iter_no_change : int
        Rounds without improvement before early stopping (>= 1).
    tol : float
        The smallest improvement (>= 0) that counts.
    scoring : str, callable or "loss"
        ``"loss"`` (minus the mean double-base bound) or a scikit-learn scorer.
    warm_start : bool
        Refitting with a larger ``n_estimators`` adds rounds to the fitted
        machine (equal, bit for bit, to one fit of the larger number); a
        smaller one is an error.
    random_state : None, int or numpy.random.RandomState
        Seed of the validation split (None: seed 0, the same held-out samples
        in every fit of the same data).
    importance_type : {"loss", "split", "weight", "gain", "cover"}
        What :attr:`feature_importances_` measures: the training loss decrease (the default), or the
        machine's :meth:`~bob_boost.BoostedMachine.feature_importances` of that kind, normalised.
    categorical_features : "from_dtype", array_like of int, str or bool, or None
        The features that are categories, as :class:`~bob_boost.sklearn.BoostingClassifier` takes them
        (``"from_dtype"``, the default: a frame's category columns). Their stumps output one sign on a set
        of categories, the best of all sets each round (see
        :class:`~bob_boost.trainers.cost_sensitive.AdaBoostDBTrainer`); a category never seen by ``fit``
        gets the sign outside the set.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The two class labels; ``classes_[1]`` is the positive class.
    machine_ : bob_boost.BoostedMachine
        The trained stumps; its scores are :meth:`decision_function`'s.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : numpy.ndarray
        Feature names, when ``X`` had string column names.
    n_iter_ : int
        Rounds of the fitted machine (``len(machine_)``).
    train_score_, validation_score_ : numpy.ndarray
        ``n_iter_ + 1`` scores (higher is better), the first before any
        round; the validation scores only with early stopping.
    feature_importances_ : numpy.ndarray
        Each feature's share of the training loss decrease, or of the ``importance_type``.

    Notes
    -----
    As in the paper, each class starts with half of the total weight
    whatever the class sizes; ``sample_weight`` distributes that half among
    the samples of the class. Asymmetry between the classes is the job of
    the costs, so the estimator takes no ``class_weight``: a machine of
    stumps without intercept cannot let a heavy class win everywhere, and
    within a class the weights are ``sample_weight``'s. Passing
    ``class_weight`` is a TypeError that says so.

    :meth:`predict_proba` gives ``q = sigmoid((C_P + C_N) F(x))`` for
    ``classes_[1]``. The score minimising the bound's expected value is
    ``F = log(C_P p / (C_N (1 - p))) / (C_P + C_N)`` for the class-balanced
    posterior ``p``, so ``q = C_P p / (C_P p + C_N (1 - p))``: the positive
    class's share of the expected cost, not ``p`` itself. ``q > 1/2`` exactly
    where :meth:`predict` says ``classes_[1]``; with equal costs of 1 it is
    the exponential loss's ``sigmoid(2 F)``.
    """

    removed_parameters = {"class_weight": "each class starts with half of the total weight (the paper's "
                                          "initialisation), so class weights only reweighted samples within a "
                                          "class: give those factors as sample_weight, and the asymmetry between "
                                          "the classes as cost_positive and cost_negative"}

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0, n_estimators: int = 100,
                 selection: str = "alpha", early_stopping="auto",
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7, scoring="loss",
                 warm_start: bool = False, random_state=None, importance_type: str = "loss",
                 categorical_features="from_dtype") -> None:
        self.importance_type = importance_type
        self.categorical_features = categorical_features
        self.cost_positive = cost_positive
        self.cost_negative = cost_negative
        self.n_estimators = n_estimators
        self.selection = selection
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "AdaBoostDBClassifier":
        """Train on ``X`` (#samples, #features) and two-class labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) labels of exactly two classes.
        sample_weight : array_like, optional
            Non-negative initial weights within each class; zero-weight
            samples are ignored.
        eval_set : list of (X, y) or (X, y, sample_weight), optional
            Evaluation sets, each scored after every round (by ``scoring``)
            into ``evals_result_["validation_<i>"]``; with early stopping the
            first is the validation data, and no samples of ``X`` are held
            out (as LightGBM's and XGBoost's ``eval_set``).

        Returns
        -------
        AdaBoostDBClassifier
            ``self``.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        data = self._fit_data()
        X, y = self._fit_features(data, X, y)
        recipe = make_recipe("adaboostdb", number_of_classes=2, cost_positive=self.cost_positive,
                             cost_negative=self.cost_negative, selection=self.selection,
                             categorical_features=self._categorical_features())
        X, encoded, y, weights, index = self._encoded_two_class_rows(
            data, X, y, sample_weight, "AdaBoostDB", "use BAdaCostClassifier for costs between several classes.")
        if data.all_constant(X):
            _refuse_constant()

        def halves(data, weights, classes):
            # each class gets half of the total again on the samples the trainer sees
            return data.class_halves(weights, data.rows(lambda indices: indices == 1, classes, bool))
        encoding, kind = self._encoding, recipe.target_kind
        targets = data.rows(lambda indices: encoding.targets(kind, indices), encoded, np.float64)
        self.machine_ = self._boost(data, recipe, X, targets, weights, y, rounds, groups=encoded, index=index,
                                    split_weights=halves, eval_set=eval_set)
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def _probability_link(self) -> tuple:
        """``sigmoid((C_P + C_N) F)`` (see :meth:`_BoostedClassifier._probability_link`)."""
        return ("sigmoid", float(self.cost_positive) + float(self.cost_negative), 1)
