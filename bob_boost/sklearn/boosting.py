"""The generic boosting estimators: stumps, look-up tables or gradient trees on a classification loss here, on a
regression loss in :mod:`bob_boost.sklearn.regression` (whose regressor this module still exports)."""
from __future__ import annotations

import numpy as np

from .._validation import check_bool, check_choice, check_positive_int
from ..exceptions import InvalidValueError
from . import _fitting
from ..boosting.sampling import CLASS_METHODS
from ..recipes import SELECTION_STYLES, make_loss, make_recipe
from ..labels import ClassEncoding
from ..losses.logit import MultiLabelLogitLoss
from ._base import CLASSIFICATION_LOSSES, WEAK_LEARNERS, _check_lut_features
from ._classifier import _BoostedClassifier, _refuse_constant, check_indicator
from .regression import BoostingRegressor  # re-exported: its import path before it had a module of its own

__all__ = ["BoostingClassifier", "BoostingRegressor"]


class BoostingClassifier(_BoostedClassifier):
    """Gradient boosting of decision stumps or look-up tables with a classification loss.

    Two classes are learned as targets -1 (``classes_[0]``) / +1
    (``classes_[1]``) with one output. More classes need
    ``weak_learner='lut'``: a multi-variate LUT machine with one output per
    class is trained one-vs-rest (targets +1 for the class, -1 for the
    others) and predicts the class of the largest score. For multi-class
    stumps use :class:`sklearn.multiclass.OneVsRestClassifier` around this
    estimator.

    Parameters
    ----------
    loss : {"exponential", "logit", "tangential", "softmax", "focal"}
        The loss minimised (exponential: discrete AdaBoost; logit: logistic
        regression; tangential: TangentBoost, robust to label noise;
        softmax: the multinomial cross-entropy, one output per class, for
        gradient trees and LUTs; focal: :class:`~bob_boost.FocalLoss` with
        the paper's ``gamma=2``, for imbalanced classes, without class
        probabilities).
    weak_learner : {"stump", "lut", "tree"}
        Decision stumps on real features, look-up tables on integer
        features in ``[0, maximum_feature_value)``, or gradient trees.
    n_estimators : int
        Maximum number of boosting rounds; training stops earlier when a
        round's optimal weight is zero.
    maximum_feature_value : int
        Number of LUT entries (only for ``weak_learner='lut'``).
    selection_style : {"independent", "shared"}
        Multi-class LUTs only: one feature per class, or one feature shared
        by all classes each round.
    max_bins : int or None
        Stumps only: at most this many candidate bins per feature (2 ..
        65535); features with fewer distinct values keep one bin per value.
        None searches every threshold between distinct values (bob's exact
        search).
    n_threads : int or None
        Threads for binning and histograms (None: every core); the model does
        not depend on it.
    max_depth : int or None
        Depth of the gradient trees (``weak_learner='tree'``, :class:`~bob_boost.TreeTrainer`: Newton
        leaves from the loss's gradient and hessian); None (the default): no limit (``growth="leafwise"``
        with ``max_leaves``).
    max_leaves : int or None
        Gradient trees: at most this many leaves (>= 2); 31 by default, as LightGBM.
    growth : {"levelwise", "leafwise"}
        Gradient trees: level by level, or the leaf of largest gain first (the default, as LightGBM).
    multi_output : {"shared", "per_output"}
        Gradient trees of several outputs (the softmax loss): one tree with a value per class in
        each leaf, or one tree per class each round (the default, as LightGBM's multiclass).
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
    class_weight : dict, "balanced" or None
        Factors of the sample weights per class (``"balanced"``: inversely
        proportional to the class frequencies); the same as passing the
        matching ``sample_weight``.
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
    subsample : float
        Stochastic boosting: the share in (0, 1] of the training samples each
        round's weak machine is fitted to, drawn anew every
        ``subsample_freq`` rounds (Friedman's stochastic gradient boosting,
        LightGBM's ``bagging_fraction``); the round's weight is fitted on
        every sample. 1.0 (the default): every sample.
    subsample_freq : int
        Draw new samples every this many rounds (>= 1).
    sampling : {"uniform", "stratified", "goss", "undersample"}
        How the samples are drawn: independently (``"uniform"``), exactly
        ``subsample`` of each class (``"stratified"``, classifiers), by
        gradient-based one-side sampling (``"goss"``: the ``top_rate`` of
        largest gradients and ``other_rate`` of the others, re-weighted; it
        ignores ``subsample``), or by random under-sampling of every class to
        the smallest's count over ``subsample`` (``"undersample"``,
        classifiers; RUSBoost's draw, every round). See :class:`bob_boost.Sampling`.
    top_rate, other_rate : float
        GOSS's shares (each in (0, 1], their sum at most 1).
    colsample_bytree : float
        The share in (0, 1] of the features each round's stumps or trees may
        use (at least one), drawn every round.
    colsample_bynode : float
        Gradient trees: the share in (0, 1] of the round's features each
        node may split on (at least one), drawn every node (scikit-learn's
        ``max_features``, LightGBM's ``feature_fraction_bynode``).
    boost_from_average : bool
        Start from the weighted class prior: the machine's baseline (an
        intercept) is the constant score of least training loss (half the
        log-odds of ``classes_[1]`` for the exponential loss, the log-odds
        for the logit loss, the centred log prior for the softmax), as
        LightGBM's ``boost_from_average`` and scikit-learn's gradient
        boosting. False: no intercept, bob.learn.boosting's model (see
        Notes).
    monotonic_cst : array_like of int, dict or None
        Gradient trees of two classes: -1, 0 or +1 per feature, the score
        (the log-odds of ``classes_[1]``) must not increase, may do anything,
        or must not decrease along it (scikit-learn's name; see
        :class:`~bob_boost.TreeTrainer`); with named columns also a dict
        ``{name: direction}``, the others free. None: no constraint.
    interaction_cst : list of lists of int, "no_interactions" or None
        Gradient trees: groups of features that may interact, a branch
        splitting on the features of one group only (scikit-learn's name;
        see :class:`~bob_boost.TreeTrainer`). None: no constraint.
    categorical_features : "from_dtype", array_like of int, str or bool, or None
        The features that are categories: ``"from_dtype"`` (the default, as
        scikit-learn's HistGradientBoosting) a frame's category columns
        (pandas ``category``, polars ``Categorical``/``Enum``, Arrow
        dictionaries), or feature indices, column names or a boolean mask;
        None: none. Stumps and gradient trees split them by sets of
        categories (see :class:`~bob_boost.StumpTrainer` and
        :class:`~bob_boost.TreeTrainer`), look-up tables read them as
        entries. A category or text column reaches the model as its value's
        position among the categories seen by ``fit`` (kept in the model, so
        prediction maps new frames alike; an unseen category goes with the
        values outside every set); other categorical columns must hold
        non-negative integer codes.
    importance_type : {"loss", "split", "weight", "gain", "cover"}
        What :attr:`feature_importances_` measures: the training loss decrease (the default), or the
        machine's :meth:`~bob_boost.BoostedMachine.feature_importances` of that kind, normalised.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The class labels.
    machine_ : bob_boost.BoostedMachine
        The trained machine; its scores are :meth:`decision_function`'s.
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
    With ``boost_from_average=True`` (the default) class weights act as
    scikit-learn users expect: they move the intercept, so heavy weights on
    one class can make it the prediction everywhere, which a sum of +-1
    stumps alone cannot. The intercept is stored as the machine's baseline,
    which bob.learn.boosting does not read; ``boost_from_average=False``
    gives a model without one, which means the same to bob as to bob_boost.
    If every feature is constant over the training samples no stump can be
    trained, and :meth:`fit` raises a ValueError instead of returning a
    model that ignores the data.
    """

    def __init__(self, loss: str = "exponential", weak_learner: str = "stump", n_estimators: int = 100,
                 maximum_feature_value: int = 256, selection_style: str = "independent",
                 max_bins: int | None = 256, n_threads: int | None = None, max_depth: int | None = None,
                 learning_rate: float | None = None, class_weight=None, early_stopping="auto",
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7,
                 scoring="loss", warm_start: bool = False, random_state=None, missing: str | None = None,
                 max_leaves: int | None = 31, growth: str = "leafwise", multi_output: str = "per_output",
                 quantized_gradients: int | None = None,
                 subsample: float = 1.0, subsample_freq: int = 1, sampling: str = "uniform", top_rate: float = 0.2,
                 other_rate: float = 0.1, colsample_bytree: float = 1.0, colsample_bynode: float = 1.0,
                 boost_from_average: bool = True, monotonic_cst=None, interaction_cst=None,
                 categorical_features="from_dtype", importance_type: str = "loss") -> None:
        self.importance_type = importance_type
        self.loss = loss
        self.weak_learner = weak_learner
        self.n_estimators = n_estimators
        self.maximum_feature_value = maximum_feature_value
        self.selection_style = selection_style
        self.max_bins = max_bins
        self.n_threads = n_threads
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.class_weight = class_weight
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
        self.multi_output = multi_output
        self.quantized_gradients = quantized_gradients
        self.subsample = subsample
        self.subsample_freq = subsample_freq
        self.sampling = sampling
        self.top_rate = top_rate
        self.other_rate = other_rate
        self.colsample_bytree = colsample_bytree
        self.colsample_bynode = colsample_bynode
        self.boost_from_average = boost_from_average
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.categorical_features = categorical_features

    def _sparse_formats(self) -> tuple[str, ...]:
        """scipy sparse ``X`` (CSR or CSC; other formats converted to CSR) is binned and scored without a dense
        copy of the whole matrix (:mod:`bob_boost.sparse`); the model is that of the dense ``X``."""
        return ("csr", "csc")

    def fit(self, X, y, sample_weight=None, eval_set=None) -> "BoostingClassifier":
        """Train on ``X`` (#samples, #features) and labels ``y``.

        Parameters
        ----------
        X : array_like or scipy sparse matrix
            Training features; a sparse matrix (CSR or CSC; others become CSR) is trained on without a dense
            copy and gives the dense matrix's model (:mod:`bob_boost.sparse`).
        y : array_like
            (#samples,) class labels of any type.
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
        BoostingClassifier
            ``self``.
        """
        check_choice(self.loss, "loss", CLASSIFICATION_LOSSES)
        check_choice(self.weak_learner, "weak_learner", WEAK_LEARNERS)
        check_choice(self.selection_style, "selection_style", SELECTION_STYLES)
        check_bool(self.boost_from_average, "boost_from_average")
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        maximum = check_positive_int(self.maximum_feature_value, "maximum_feature_value", 2)
        data = self._fit_data()
        multilabel = data.is_multilabel(y)
        X, y = self._fit_features(data, X, y, multi_output=multilabel)
        if self.weak_learner == "lut":
            X = data.checked(X, lambda rows: _check_lut_features(rows, maximum))
        if multilabel:
            return self._fit_labels(data, X, y, sample_weight, eval_set, rounds, maximum)
        X, encoded, y, weights, index = self._encoded_rows(data, X, y, sample_weight)
        n_classes = self.classes_.size
        if n_classes > 2 and self.weak_learner == "stump":
            raise InvalidValueError(
                f"Only binary classification is supported with weak_learner='stump' (y has {n_classes} classes); "
                "use weak_learner='lut', BAdaCostClassifier, or sklearn.multiclass.OneVsRestClassifier.")
        if self.weak_learner == "stump" and data.all_constant(X):
            _refuse_constant()
        recipe = self._recipe(n_classes, self.loss, maximum)
        encoding, kind = self._encoding, recipe.target_kind
        targets = data.rows(lambda indices: encoding.targets(kind, indices), encoded, np.float64,
                            None if kind in ("signed", "indices") else n_classes)

        def prior(data, targets, weights, classes) -> np.ndarray:
            return recipe.prior_baseline(data.sums(classes, weights, n_classes))
        self.machine_ = self._boost(data, recipe, X, targets, weights, y, rounds, groups=encoded, index=index,
                                    eval_set=eval_set, baseline=prior if self.boost_from_average else None)
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def _recipe(self, outputs: int, loss, maximum: int, one_vs_rest: bool = False):
        """The generic trainer of the estimator's parameters for ``outputs`` classes (or labels)."""
        return make_recipe("boosting", number_of_classes=outputs, loss=loss, weak_learner=self.weak_learner,
                           lut_entries=maximum, selection_style=self.selection_style, max_bins=self.max_bins,
                           n_threads=self.n_threads, tree_depth=self.max_depth, shrinkage=self.learning_rate,
                           missing=self.missing, tree_leaves=self.max_leaves, tree_growth=self.growth,
                           tree_outputs=self.multi_output, tree_quantized_gradients=self.quantized_gradients,
                           one_vs_rest=one_vs_rest, tree_monotonic_cst=self._monotone_constraints(),
                           tree_interaction_cst=self.interaction_cst,
                           categorical_features=self._categorical_features(),
                           sampling=_fitting.estimator_sampling(self, self.warm_start and hasattr(self, "machine_")))

    def _fit_labels(self, data, X, Y, sample_weight, eval_set, rounds: int, maximum: int) -> "BoostingClassifier":
        """Multi-label ``fit``: ``Y`` a (#samples, #labels) 0 / 1 indicator, one logistic output per label."""
        labels = Y.shape[1]
        self._check_labels(labels)
        self._encoding = ClassEncoding(np.arange(labels))
        self.classes_ = np.arange(labels)
        recipe = self._recipe(labels, MultiLabelLogitLoss(), maximum, one_vs_rest=True)
        Y = data.rows(lambda rows: check_indicator(rows, labels), Y, np.int64, labels)
        weights, index, (X, Y) = data.positive(data.weights(sample_weight, Y), X, Y)
        targets = data.rows(lambda rows: 2.0 * rows - 1.0, Y, np.float64, labels)

        def prior(data, targets, weights, groups) -> np.ndarray:  # every label's weighted log-odds
            return recipe.loss.constants_of_shares(data.positive_shares(targets, weights))
        self.machine_ = self._boost(data, recipe, X, targets, weights, Y, rounds, index=index, eval_set=eval_set,
                                    baseline=prior if self.boost_from_average else None)
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def _check_labels(self, labels: int) -> None:
        """Refuse the parameters a multi-label ``y`` of ``labels`` labels cannot take."""
        if self.loss != "logit":
            raise InvalidValueError(f"loss: a multi-label y (an indicator matrix) is boosted with loss='logit', one "
                                    f"independent logistic output per label; got {self.loss!r}")
        if self.weak_learner == "stump":
            raise InvalidValueError("weak_learner: a stump has one output; a multi-label y needs 'tree' or 'lut'")
        if self.class_weight is not None:
            raise InvalidValueError("class_weight: a multi-label y has labels, not classes; weigh the samples "
                                    "with sample_weight")
        if self.sampling in CLASS_METHODS:
            raise InvalidValueError(f"sampling: {self.sampling!r} draws from every class; a multi-label y has none "
                                    f"(use 'uniform' or 'goss')")
        if self.warm_start and hasattr(self, "machine_") and self.classes_.size != labels:
            raise InvalidValueError(f"y: has {labels} labels but the fitted model, which warm_start continues, "
                                    f"has {self.classes_.size}")

    def _eval_targets(self, recipe):
        """An evaluation set's training targets (multi-label: +-1 per label)."""
        if recipe.loss.decision_rule(2) == "multilabel":
            return lambda y, name: 2.0 * check_indicator(y, self.classes_.size, name) - 1.0
        return super()._eval_targets(recipe)

    def _has_probabilities(self) -> bool:
        """Whether the loss defines class probabilities (see :meth:`predict_proba`)."""
        return self.loss in CLASSIFICATION_LOSSES and make_loss(self.loss).has_probabilities

    def _probability_link(self) -> tuple:
        """The loss's link (see :meth:`_BoostedClassifier._probability_link`)."""
        if self.machine_.decision_rule == "multilabel":
            return ("sigmoid_each", 1.0)
        loss = make_loss(self.loss)
        if getattr(loss, "probability_scale", None) is None:
            return ("softmax",)
        return ("sigmoid", loss.probability_scale, self.machine_.number_of_outputs or 1)

    def _proba_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """Class probabilities implied by the loss (the logit, exponential and softmax losses).

        The score minimising the expected loss is ``log(p / (1 - p)) / c``
        with ``p = P(classes_[1] | x)``: ``c = 1`` for the logit loss (the
        negative log-likelihood of a logistic model) and ``c = 2`` for the
        exponential loss (Friedman, Hastie & Tibshirani, 2000), so
        ``p = sigmoid(c * score)``. With more classes every output is such a
        one-vs-rest estimate, and the estimates are normalised to sum to 1.
        Boosted scores tend to be over-confident; calibrate them (e.g. with
        :class:`sklearn.calibration.CalibratedClassifierCV`) where calibrated
        probabilities matter.

        The softmax loss's scores are the logits of a multinomial model, and
        its probabilities their softmax. The tangential loss defines none,
        and its estimator has no ``predict_proba``.

        A multi-label model gives each label's own probability
        ``sigmoid(score)`` (#samples, #labels), as its outputs are
        independent logistic models; the rows need not sum to 1.
        """
        if self.machine_.decision_rule == "multilabel":
            return MultiLabelLogitLoss().inverse_link(scores)
        return make_loss(self.loss).inverse_link(scores)

    def __sklearn_tags__(self):
        """scikit-learn tags: multi-class only with LUTs."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self.weak_learner != "stump"
        tags.classifier_tags.multi_label = self.weak_learner != "stump" and self.loss == "logit"
        return tags
