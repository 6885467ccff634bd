"""BAdaCost (multi-class, cost-sensitive) as a scikit-learn classifier, with example-dependent costs."""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_choice, check_positive_int
from ..costs import check_cost_matrix, imbalance_cost_matrix_from_confusion, samme_cost_matrix
from ..exceptions import InvalidValueError
from ..recipes import make_recipe
from ..weak_trainers.multiclass import CostSensitiveTreeTrainer
from ._classifier import _BoostedClassifier
from ._fitting import early_stopping_enabled, estimator_sampling, kept_seed

#: The named ``cost_matrix`` presets of :class:`BAdaCostClassifier`.
COST_PRESETS = ("balanced", "imbalance")

__all__ = ["BAdaCostClassifier"]


class BAdaCostClassifier(_BoostedClassifier):
    """Cost-sensitive multi-class boosting of decision trees with BAdaCost.

    BAdaCost (Fernandez-Baldera, Buenaposada & Baumela, 2018) boosts
    cost-sensitive multi-class trees on the Cost-sensitive Multi-class
    Exponential Loss and predicts the class of least expected cost,
    ``argmin_k (C* f(x))_k``. See
    :class:`bob_boost.trainers.badacost.BAdaCostTrainer`.

    Parameters
    ----------
    cost_matrix : array_like, "balanced", "imbalance" or None
        (K, K) costs in ``classes_`` order: ``cost_matrix[i, j]`` is the
        cost of predicting ``classes_[j]`` for a sample of ``classes_[i]``
        (zero diagonal, non-negative). Default: SAMME's matrix
        ``1/(K(K-1))`` off the diagonal, which makes BAdaCost SAMME.
        ``"balanced"``: SAMME's matrix with row ``i`` multiplied by
        ``n / (K n_i)`` (errors on rare classes cost more; SAMME's matrix for
        equal class sizes). ``"imbalance"``: the BAdaCost paper's appendix F
        matrix, ``0.1 F*`` from the row-normalised training confusions
        ``F*`` of a SAMME model with the same trees and rounds (one
        pseudo-count per off-diagonal cell, so that a class the SAMME model
        never gets wrong keeps error costs); this trains twice.
    max_depth : int
        Depth of the trees.
    n_estimators : int
        Maximum number of trees; training stops earlier when a step is not positive.
    shrinkage : float
        Learning rate in (0, 1].
    feature_fraction : float
        Fraction in (0, 1] of the features each tree may use, drawn every round.
    class_weight : dict, "balanced" or None
        Factors of the sample weights per class; the same as passing the
        matching ``sample_weight``. With ``cost_matrix`` they act
        on top of the costs.
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
        ``"loss"`` (minus the mean CMEL loss) or a scikit-learn scorer.
    warm_start : bool
        Refitting with a larger ``n_estimators`` adds rounds to the fitted
        machine (equal, bit for bit, to one fit of the larger number); a
        smaller one is an error.
    missing : {None, "bin"}
        ``"bin"``: NaN in ``X`` is a missing value with a bin of its own, and
        every tree split learns where it goes; None (the default)
        rejects NaN.
    random_state : None, int or numpy.random.RandomState
        Seed of the feature sampling (used only when ``feature_fraction < 1``)
        and of the validation split (None: a feature-sampling seed drawn
        once, and seed 0 for the validation split).
    subsample, subsample_freq, sampling, top_rate, other_rate
        Stochastic boosting of the trees' rows, as in
        :class:`~bob_boost.sklearn.BoostingClassifier` (GOSS's gradient
        magnitudes are the sample weights, the exponential loss's gradient;
        seeded as the validation split); the step is found on every sample.
        Columns are sampled by ``feature_fraction``.
    min_weight_fraction_leaf : float
        In [0, 0.5]: every leaf of a tree holds at least this share of the
        round's total sample weight (as scikit-learn's trees), so that
        heavily weighted classes reach every leaf; 0 (the default): any
        split with samples on both sides.
    importance_type : {"loss", "split", "weight", "gain", "cover"}
        What :attr:`feature_importances_` measures: the training loss decrease (the default), or the
        machine's :meth:`~bob_boost.BoostedMachine.feature_importances` of that kind, normalised.
    categorical_features : "from_dtype", array_like of int, str or bool, or None
        The features that are categories, as :class:`~bob_boost.sklearn.BoostingClassifier` takes them
        (``"from_dtype"``, the default: a frame's category columns). The trees split them by sets of
        categories (see
        :class:`~bob_boost.weak_trainers.multiclass.CostSensitiveTreeTrainer`); a category never seen by
        ``fit`` goes right.

    Attributes
    ----------
    classes_ : numpy.ndarray
        The class labels.
    machine_ : bob_boost.BoostedMachine
        The trained machine; it holds the cost matrix.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : numpy.ndarray
        Feature names, when ``X`` had string column names.
    cost_matrix_ : numpy.ndarray
        The (K, K) costs the machine holds.
    n_iter_ : int
        Rounds of the fitted machine (``len(machine_)``).
    train_score_, validation_score_ : numpy.ndarray
        ``n_iter_ + 1`` scores (higher is better), the first before any
        round; the validation scores only with early stopping.
    feature_importances_ : numpy.ndarray
        Each feature's share of the training loss decrease, or of the ``importance_type``.

    Notes
    -----
    The trees search their splits on features quantised to 256 levels per
    feature (thresholds are stored in raw units). :meth:`predict_proba` is
    the softmax of :meth:`decision_function`, minus the expected costs
    ``-(C* f(x))_k``: its largest entry is the class :meth:`predict` gives,
    but the values are a normalised cost ranking, not calibrated class
    probabilities.
    """

    def __init__(self, cost_matrix=None, max_depth: int = 2, n_estimators: int = 100, shrinkage: float = 1.0,
                 feature_fraction: float = 1.0, random_state=None, class_weight=None, early_stopping="auto",
                 validation_fraction: float = 0.1, n_iter_no_change: int = 10, tol: float = 1e-7, scoring="loss",
                 warm_start: bool = False, missing: str | None = None, subsample: float = 1.0,
                 subsample_freq: int = 1, sampling: str = "uniform", top_rate: float = 0.2,
                 other_rate: float = 0.1, min_weight_fraction_leaf: float = 0.0,
                 importance_type: str = "loss", categorical_features="from_dtype") -> None:
        self.importance_type = importance_type
        self.categorical_features = categorical_features
        self.cost_matrix = cost_matrix
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.shrinkage = shrinkage
        self.feature_fraction = feature_fraction
        self.random_state = random_state
        self.missing = missing
        self.class_weight = class_weight
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.scoring = scoring
        self.warm_start = warm_start
        self.subsample = subsample
        self.subsample_freq = subsample_freq
        self.sampling = sampling
        self.top_rate = top_rate
        self.other_rate = other_rate
        self.min_weight_fraction_leaf = min_weight_fraction_leaf

    def fit(self, X, y, sample_weight=None, eval_set=None, sample_costs=None) -> "BAdaCostClassifier":
        """Train on ``X`` (#samples, #features) and labels ``y``.

        Parameters
        ----------
        X : array_like
            Training features.
        y : array_like
            (#samples,) class labels of any type; with a ``cost_matrix``
            their number must match its size.
        sample_weight : array_like, optional
            Non-negative initial sample weights; zero-weight samples are ignored.
        eval_set : list of (X, y) or (X, y, sample_weight), optional
            Evaluation sets, each scored after every round (by ``scoring``)
            into ``evals_result_["validation_<i>"]``; with early stopping the
            first is the validation data, and no samples of ``X`` are held
            out (as LightGBM's and XGBoost's ``eval_set``).
        sample_costs : array_like, optional
            Example-dependent costs in ``classes_`` order: (#samples, K) rows, the cost of predicting each
            class for each sample (zero at its own class), or (#samples, K, K) matrices, one per sample (see
            :meth:`bob_boost.trainers.badacost.BAdaCostTrainer.train`). The trees, steps and weights then
            follow each sample's costs; the machine predicts with ``cost_matrix``, by default (None) the
            class means of these rows (:func:`~bob_boost.costs.class_mean_costs`). Training uses every
            sample: early stopping would hold some out, so it takes an ``eval_set`` instead. ``train_score_``
            and the ``"loss"`` importances measure the CMEL loss of the machine's class matrix. The Dask
            estimator takes them as a Dask array (or array_like) with the rows of ``X``.

        Returns
        -------
        BAdaCostClassifier
            ``self``.
        """
        rounds = check_positive_int(self.n_estimators, "n_estimators")
        tree = CostSensitiveTreeTrainer(max_depth=self.max_depth,
                                        min_weight_fraction_leaf=self.min_weight_fraction_leaf)
        data = self._fit_data()
        X, y = self._fit_features(data, X, y)
        costs = [] if sample_costs is None else [data.aligned(sample_costs, X, "sample_costs")]
        X, encoded, y, weights, index, *costs = self._encoded_rows(data, X, y, sample_weight, *costs)
        rows = None
        if costs:
            if early_stopping_enabled(self, encoded.shape[0]) and not eval_set:
                raise InvalidValueError("sample_costs: early stopping would hold out samples with their costs; give "
                                        "an eval_set, or early_stopping=False")
            rows = data.cost_rows(costs[0], encoded, self.classes_.size)
        continuing = self.warm_start and hasattr(self, "machine_")
        if isinstance(self.random_state, numbers.Integral):
            seed = int(self.random_state)
        else:  # the trainer takes an int seed: one drawn from random_state, kept (and saved) for warm starts
            seed = kept_seed(self, "_trainer_seed", continuing)
        options = dict(number_of_classes=self.classes_.size, weak_learner="tree", tree_depth=tree.max_depth,
                       number_of_rounds=rounds, shrinkage=self.shrinkage, feature_fraction=self.feature_fraction,
                       random_state=seed, missing=self.missing,
                       tree_min_weight_fraction_leaf=tree.min_weight_fraction_leaf,
                       sampling=estimator_sampling(self, continuing),
                       categorical_features=self._categorical_features())
        if continuing:
            matrix = self.machine_.cost_matrix
        elif rows is not None and self.cost_matrix is None:
            matrix = data.class_means(encoded, rows, self.classes_.size)
        else:
            matrix = self._cost_matrix(data, X, encoded, weights, options)
        recipe = make_recipe("badacost", cost_matrix=matrix, sample_costs=rows, **options)
        self.machine_ = self._boost(data, recipe, X, encoded, weights, y, rounds, groups=encoded, index=index,
                                    eval_set=eval_set)
        self.cost_matrix_ = self.machine_.cost_matrix
        self.machine_.metadata.update(self._classifier_metadata())
        return self

    def _cost_matrix(self, data, X, encoded, weights, options: dict) -> np.ndarray:
        """The (K, K) costs of ``cost_matrix``: given, SAMME's, or a preset from the training data."""
        n_classes = self.classes_.size
        if self.cost_matrix is None:
            return samme_cost_matrix(n_classes)
        if isinstance(self.cost_matrix, str):
            check_choice(self.cost_matrix, "cost_matrix", COST_PRESETS)
            if self.cost_matrix == "balanced":
                sizes = data.sums(encoded, weights, n_classes)
                return samme_cost_matrix(n_classes) * (sizes.sum() / (n_classes * sizes))[:, np.newaxis]
            samme = data.train(make_recipe("samme", **options), X, encoded, options["number_of_rounds"],
                               sample_weight=weights)
            predicted = data.rows(samme.predict, X, np.int64)
            pairs = encoded * n_classes + predicted
            confusion = data.sums(pairs, None, n_classes * n_classes).reshape(n_classes, n_classes)
            return imbalance_cost_matrix_from_confusion(confusion, scale=0.1, smoothing=1.0)
        matrix = check_cost_matrix(self.cost_matrix)
        if matrix.shape[0] != n_classes:
            raise InvalidValueError(f"cost_matrix: is {matrix.shape[0]}x{matrix.shape[0]} but y has {n_classes} "
                                    f"classes {self.classes_.tolist()}")
        return matrix
