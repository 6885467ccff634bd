"""The generic boosting regressor: stumps, look-up tables or gradient trees on a regression loss."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .._validation import check_choice, check_positive_int
from ..decision import labels_from_scores
from ..exceptions import InvalidValueError
from ..labels import REGRESSION_METADATA
from ..losses import LossFunction
from ..losses.squared import check_target_range
from ..machine import BoostedMachine
from . import _fitting
from ..boosting.sampling import CLASS_METHODS
from ..recipes import make_recipe, make_regression_loss
from ._base import WEAK_LEARNERS, _BoostedEstimator, _check_lut_features
from ._compat import RegressorMixin, check_is_fitted, r2_score

__all__ = ["BoostingRegressor"]


class BoostingRegressor(RegressorMixin, _BoostedEstimator):
    """Gradient boosting of decision stumps, look-up tables or gradient trees for real targets.

    The score is ``intercept_ + machine_(x)``: the intercept is the constant
    that minimises the loss (the weighted mean of the training targets for
    the squared loss, their weighted median for the absolute error, the log
    of their weighted mean for the log-link losses), and the rounds start
    from it. Weak machines output +-1, so without it a target far from zero
    would take many rounds just to reach its level. The prediction is the
    score, or ``exp(score)`` for the log-link losses (Poisson, Gamma,
    Tweedie), a positive mean.

    Parameters
    ----------
    weak_learner : {"stump", "lut", "tree"}
        Decision stumps on real features, look-up tables on integer
        features in ``[0, maximum_feature_value)``, or gradient trees.
    n_estimators : int
        Maximum number of boosting rounds.
    maximum_feature_value : int
        Number of LUT entries (only for ``weak_learner='lut'``).
    max_bins : int or None
        Stumps only: at most this many candidate bins per feature (2 ..
        65535); features with fewer distinct values keep one bin per value.
        None searches every threshold between distinct values (bob's exact
        search).
    n_threads : int or None
        Threads for binning and histograms (None: every core); the model does
        not depend on it.
    max_depth : int or None
        Depth of the gradient trees (``weak_learner='tree'``); None (the default): no limit
        (``growth="leafwise"`` with ``max_leaves``).
    max_leaves : int or None
        Gradient trees: at most this many leaves (>= 2); 31 by default, as LightGBM.
    growth : {"levelwise", "leafwise"}
        Gradient trees: level by level, or the leaf of largest gain first (the default, as LightGBM).
    quantized_gradients : int or None
        Gradient trees with one output a tree: histograms of gradients rounded to this many levels
        (``TreeTrainer(quantized_gradients=...)``, as LightGBM's ``use_quantized_grad``); None: float ones.
    learning_rate : float or None
        Shrinkage in (0, 1] of every weak machine's weight. None (the
        default): 0.1 for gradient trees, whose Newton leaves are full steps
        (every gradient-boosting library's default), and 1.0 for stumps and
        LUTs, whose weights L-BFGS fits (bob.learn.boosting's models).
    missing : {None, "bin"}
        ``"bin"``: NaN in ``X`` is a missing value with a bin of its own, and
        every split (or LUT entry) learns where it goes; None (the default)
        rejects NaN.
    early_stopping : {"auto", True, False}
        Hold out ``validation_fraction`` of the samples (stratified for
        classifiers) and stop when the validation score has not improved by
        more than ``tol`` for ``n_iter_no_change`` rounds; the machine is
        then trimmed to its best round. ``"auto"``: only above 10,000
        samples, as scikit-learn's ``HistGradientBoostingClassifier``.
    validation_fraction : float
        Share in (0, 1) of the samples held out for early stopping.
    n_iter_no_change : int
        Rounds without improvement before early stopping (>= 1).
    tol : float
        The smallest improvement (>= 0) of the validation score that counts.
    scoring : str, callable or "loss"
        The early-stopping score: ``"loss"`` (minus the mean training loss of
        the boosted loss) or a scikit-learn scorer (name or callable), which
        predicts the whole validation set every round.
    warm_start : bool
        Refitting with a larger ``n_estimators`` adds rounds to the fitted
        machine (on the same data: the result equals one fit of the larger
        number, bit for bit); a smaller one is an error.
    random_state : None, int or numpy.random.RandomState
        Seed of the validation split and of the subsampling (kept across
        warm starts; None: seed 0, the same held-out and sampled samples in
        every fit of the same data).
    subsample, subsample_freq, sampling, top_rate, other_rate, colsample_bytree, colsample_bynode
        Stochastic boosting, as in :class:`~bob_boost.sklearn.BoostingClassifier`
        (``sampling="stratified"`` is refused: a regressor has no classes).
    loss : {"squared_error", "absolute_error", "huber", "quantile", "poisson", "gamma", "tweedie"}
        The loss, by scikit-learn's names (:class:`~bob_boost.SquaredLoss`,
        :class:`~bob_boost.losses.AbsoluteErrorLoss`, ...). The Poisson loss
        needs non-negative ``y`` with a positive mean, Gamma positive ``y``.
    quantile : float, optional
        ``loss="quantile"``: the quantile to estimate, in (0, 1).
    huber_delta : float
        ``loss="huber"``: where the loss turns from quadratic to linear, in
        the targets' units.
    tweedie_power : float
        ``loss="tweedie"``: the variance power, in [1, 2].
    poisson_max_delta_step : float
        ``loss="poisson"``: the hessian the trees see is ``exp(poisson_max_delta_step)`` times the loss's,
        which shortens their Newton steps (:class:`~bob_boost.losses.PoissonLoss`'s ``max_delta_step``;
        LightGBM's ``poisson_max_delta_step``, whose default is 0.7). 0: the true hessian.
    monotonic_cst : array_like of int, dict or None
        Gradient trees: -1, 0 or +1 per feature, the prediction must not
        increase, may do anything, or must not decrease along it
        (scikit-learn's name; see :class:`~bob_boost.TreeTrainer`); with named
        columns also a dict ``{name: direction}``, the others free. Refused
        with the absolute-error and quantile losses, which renew leaves. None:
        no constraint.
    interaction_cst : list of lists of int, "no_interactions" or None
        Gradient trees: groups of features that may interact, a branch
        splitting on the features of one group only (scikit-learn's name;
        see :class:`~bob_boost.TreeTrainer`). None: no constraint.
    categorical_features : "from_dtype", array_like of int, str or bool, or None
        The features that are categories, split by category sets in
        gradient trees: ``"from_dtype"`` (the default) the pandas
        ``category`` columns, or feature indices, column names or a boolean
        mask; None: none (see :class:`BoostingClassifier`).
    importance_type : {"loss", "split", "weight", "gain", "cover"}
        What :attr:`feature_importances_` measures: the training loss decrease (the default), or the
        machine's :meth:`~bob_boost.BoostedMachine.feature_importances` of that kind, normalised.

    Attributes
    ----------
    intercept_ : float
        The loss's optimal constant score on the training targets (see above).
    machine_ : bob_boost.BoostedMachine
        The trained machine; its baseline is ``intercept_``.
    n_iter_ : int
        Rounds of the fitted machine (``len(machine_)``).
    train_score_ : numpy.ndarray
        ``n_iter_ + 1`` training scores (higher is better; for
        ``scoring="loss"`` minus the mean loss), the first before any round.
    validation_score_ : numpy.ndarray
        The same on the held-out samples; empty without early stopping.
    feature_importances_ : numpy.ndarray
        Each feature's share of the training loss decrease, or of the ``importance_type`` (see
        :attr:`~bob_boost.sklearn._base._BoostedEstimator.feature_importances_`).
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : numpy.ndarray
        Feature names, when ``X`` had string column names.

    Notes
    -----
    When every feature is constant over the training samples no stump can
    split them, and the model is the intercept alone (an empty machine).
    """

    def __init__(self, weak_learner: str = "stump", n_estimators: int = 100,
                 maximum_feature_value: int = 256, max_bins: int | None = 256,
                 n_threads: int | None = None, max_depth: int | None = None, learning_rate: float | None = None,
                 early_stopping="auto", validation_fraction: float = 0.1, n_iter_no_change: int = 10,
                 tol: float = 1e-7, scoring="loss", warm_start: bool = False, random_state=None,
                 missing: str | None = None, max_leaves: int | None = 31, growth: str = "leafwise",
                 quantized_gradients: int | None = None, loss: str = "squared_error", quantile: float | None = None,
                 huber_delta: float = 1.0, tweedie_power: float = 1.5, poisson_max_delta_step: float = 0.0,
                 subsample: float = 1.0, subsample_freq: int = 1, sampling: str = "uniform", top_rate: float = 0.2,
                 other_rate: float = 0.1, colsample_bytree: float = 1.0, colsample_bynode: float = 1.0,
                 monotonic_cst=None, interaction_cst=None, categorical_features="from_dtype",
                 importance_type: str = "loss") -> None:
        self.importance_type = importance_type
        self.weak_learner = weak_learner
        self.n_estimators = n_estimators
        self.maximum_feature_value = maximum_feature_value
        self.max_bins = max_bins
        self.n_threads = n_threads
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.random_state = random_state
        self.missing = missing
        self.max_leaves = max_leaves
        self.growth = growth
        self.quantized_gradients = quantized_gradients
        self.loss = loss
        self.quantile = quantile
        self.huber_delta = huber_delta
        self.tweedie_power = tweedie_power
        self.poisson_max_delta_step = poisson_max_delta_step
        self.subsample = subsample
        self.subsample_freq = subsample_freq
        self.sampling = sampling
        self.top_rate = top_rate
        self.other_rate = other_rate
        self.colsample_bytree = colsample_bytree
        self.colsample_bynode = colsample_bynode
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.categorical_features = categorical_features

    def _loss_function(self) -> LossFunction:
        """The loss of the parameters (checked)."""
        return make_regression_loss(self.loss, self.quantile, self.huber_delta, self.tweedie_power,
                                    self.poisson_max_delta_step)

    def _eval_targets(self, recipe):
        """An evaluation set's real targets, checked by the loss (an error names the set)."""
        loss = recipe.loss

        def targets_of(y, name: str):
            values = np.asarray(y, dtype=np.float64)
            check_target_range(values, name)
            try:
                loss.check_targets(values)
            except InvalidValueError as error:
                raise InvalidValueError(str(error).replace("targets:", f"{name}:", 1)) from None
            return values
        return targets_of

    def _sampling(self, continuing: bool):
        """The subsampling of the parameters (:func:`~bob_boost.sklearn._fitting.estimator_sampling`), which
        cannot draw by class: a regressor has no classes."""
        if self.sampling in CLASS_METHODS:
            raise InvalidValueError(f"sampling: {self.sampling!r} draws from every class; a regressor has none (use "
                                    f"'uniform' or 'goss')")
        return _fitting.estimator_sampling(self, continuing)

    def _sparse_formats(self) -> tuple[str, ...]:
        """scipy sparse ``X`` (CSR or CSC; other formats converted to CSR) is binned and scored without a dense
        copy of the whole matrix (:mod:`bob_boost.sparse`); the model is that of the dense ``X``."""
        return ("csr", "csc")

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "BoostingRegressor":
        """Train on ``X`` (#samples, #features) and real targets ``y`` (#samples,).

        Parameters
        ----------
        X : array_like or scipy sparse matrix
            Training features; a sparse matrix (CSR or CSC; others become CSR) is trained on without a dense
            copy and gives the dense matrix's model (:mod:`bob_boost.sparse`).
        y : array_like
            (#samples,) real targets.
        sample_weight : array_like, optional
            Non-negative per-sample weights of the loss; zero-weight samples
            are ignored.
        eval_set : list of (X, y) or (X, y, sample_weight), optional
            Evaluation sets, each scored after every round (by ``scoring``)
            into ``evals_result_["validation_<i>"]``; with early stopping the
            first is the validation data, and no samples of ``X`` are held
            out (as LightGBM's and XGBoost's ``eval_set``).

        Returns
        -------
        BoostingRegressor
            ``self``.
        """
        check_choice(self.weak_learner, "weak_learner", WEAK_LEARNERS)
        loss = self._loss_function()
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        maximum = check_positive_int(self.maximum_feature_value, "maximum_feature_value", 2)
        data = self._fit_data()
        X, y = self._fit_features(data, X, y, y_numeric=True)
        if self.weak_learner == "lut":
            X = data.checked(X, lambda rows: _check_lut_features(rows, maximum))
        weights, index, (X, y) = data.positive(data.weights(sample_weight, y), X, y)
        y = data.checked(data.rows(lambda values: values.astype(np.float64), y, np.float64),
                         lambda values: _check_regression_targets(loss, values))
        if self.weak_learner == "lut" or not data.all_constant(X):
            recipe = make_recipe("boosting", number_of_classes=None, loss=loss,
                                 weak_learner=self.weak_learner, lut_entries=maximum, max_bins=self.max_bins,
                                 n_threads=self.n_threads, tree_depth=self.max_depth,
                                 shrinkage=self.learning_rate, missing=self.missing, tree_leaves=self.max_leaves,
                                 tree_growth=self.growth, tree_quantized_gradients=self.quantized_gradients,
                                 tree_monotonic_cst=self._monotone_constraints(),
                                 tree_interaction_cst=self.interaction_cst,
                                 categorical_features=self._categorical_features(),
                                 sampling=self._sampling(self.warm_start and hasattr(self, "machine_")))

            def intercept(data, targets, weights, groups) -> np.ndarray | None:
                return data.regression_baseline(loss, targets, weights)
            self.machine_ = self._boost(data, recipe, X, y, weights, y, rounds, index=index, eval_set=eval_set,
                                        baseline=intercept)
        else:
            column = y[:, np.newaxis]
            baseline = loss.baseline(column, weights)
            self.machine_ = BoostedMachine(number_of_outputs=1, number_of_features=X.shape[1],
                                           decision_rule=loss.decision_rule(1), baseline=baseline)
            values = loss.loss(column, np.full_like(column, baseline[0]))
            self.n_iter_, self.validation_score_, self.evals_result_ = 0, np.zeros(0), {}
            self.train_score_ = np.array([-np.average(values[:, 0], weights=weights)])
        self.intercept_ = float(self.machine_.baseline[0])
        metadata = self._base_metadata()
        # the intercept also in the metadata, where bob_boost 0.1's load_estimator looks for it
        metadata.update(REGRESSION_METADATA, loss=loss.name, intercept=self.intercept_)
        self.machine_.metadata.update(metadata)
        return self

    def _restore(self, machine: BoostedMachine, metadata: dict[str, Any]) -> None:
        super()._restore(machine, metadata)
        if machine.is_classifier:
            raise InvalidValueError(f"the machine predicts classes (decision rule {machine.decision_rule!r})")
        self.intercept_ = float(machine.baseline[0])

    def predict(self, X) -> np.ndarray:
        """Predicted targets, (#samples,): the machine's scores, intercept included (their exponential for
        the log-link losses)."""
        check_is_fitted(self)
        scores = self.machine_.decision_scores(self._validate_features(X, reset=False))
        return labels_from_scores(self.machine_.decision_rule, scores[:, :1])

    def staged_predict(self, X) -> Iterator[np.ndarray]:
        """:meth:`predict` after each round: one (#samples,) array per weak machine of ``machine_``."""
        check_is_fitted(self)
        for scores in self.machine_.staged_decision_scores(self._validate_features(X, reset=False)):
            yield labels_from_scores(self.machine_.decision_rule, scores[:, :1])

    def staged_score(self, X, y, sample_weight=None) -> Iterator[float]:
        """The coefficient of determination R^2 on ``X``, ``y`` after each round."""
        for predicted in self.staged_predict(X):
            yield float(r2_score(y, predicted, sample_weight=sample_weight))


def _check_regression_targets(loss, y: np.ndarray) -> None:
    """Raise the ValueError, naming ``y``, of targets out of range or outside ``loss``'s domain."""
    check_target_range(y, "y")
    try:
        loss.check_targets(y)
    except InvalidValueError as error:  # the loss names its argument "targets": here it is y
        raise InvalidValueError(str(error).replace("targets:", "y:", 1)) from None
