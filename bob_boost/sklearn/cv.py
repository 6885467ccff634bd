"""Cross-validation of an estimator round by round, as LightGBM's ``lgb.cv`` and XGBoost's ``xgb.cv`` report it."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._validation import check_positive_int
from ..exceptions import InvalidTypeError, InvalidValueError
from ._compat import (KFold, StratifiedKFold, accuracy_score, check_random_state, clone, is_classifier, log_loss,
                      mean_absolute_error, mean_gamma_deviance, mean_poisson_deviance, mean_squared_error, r2_score,
                      roc_auc_score)


def _rmse(truth, predicted, sample_weight=None):
    return float(np.sqrt(mean_squared_error(truth, predicted, sample_weight=sample_weight)))


def _auc(truth, probabilities, sample_weight=None):
    if probabilities.shape[1] == 2:
        return roc_auc_score(truth, probabilities[:, 1], sample_weight=sample_weight)
    return roc_auc_score(truth, probabilities, multi_class="ovr", sample_weight=sample_weight)


#: Metrics by name: (function of the truth and an estimator's staged output, which staged output).
METRICS: dict[str, tuple[Callable, str]] = {
    "accuracy": (accuracy_score, "predict"),
    "log_loss": (log_loss, "predict_proba"),
    "auc": (_auc, "predict_proba"),
    "rmse": (_rmse, "predict"),
    "mae": (mean_absolute_error, "predict"),
    "r2": (r2_score, "predict"),
    "poisson_deviance": (mean_poisson_deviance, "predict"),
    "gamma_deviance": (mean_gamma_deviance, "predict"),
}

_STAGED = {"predict": "staged_predict", "predict_proba": "staged_predict_proba"}


def cv(estimator, X, y, *, n_folds: int = 5, metrics=None, sample_weight=None, stratified: bool | None = None,
       shuffle: bool = True, random_state=0) -> dict:
    """Fit a clone of ``estimator`` on each of ``n_folds`` folds and score its held-out fold after every round.

    Parameters
    ----------
    estimator : bob_boost.sklearn estimator
        Unfitted; each fold fits a clone (with its early stopping, if set: the folds then stop at
        different rounds, and the results keep the rounds every fold reached).
    X, y : array_like
        The data, split into folds.
    n_folds : int
        Folds (>= 2).
    metrics : str, callable or list of them, optional
        Names of :data:`METRICS` (``"accuracy"``, ``"log_loss"``, ``"auc"``, ``"rmse"``, ``"mae"``, ``"r2"``,
        ``"poisson_deviance"``, ``"gamma_deviance"``) or callables ``metric(y_true, y_pred)`` of the staged
        predictions. Default: ``"accuracy"`` and, with probabilities, ``"log_loss"`` for classifiers;
        ``"rmse"`` for regressors.
    sample_weight : array_like, optional
        Weights of the fits and of the held-out scores.
    stratified : bool, optional
        Folds with the classes' proportions (default: for classifiers of one label per sample).
    shuffle : bool
        Shuffle the rows before they are split (seeded by ``random_state``).
    random_state : int, numpy.random.RandomState or None
        Seed of the shuffle.

    Returns
    -------
    dict
        ``"<metric>-mean"`` and ``"<metric>-std"``: arrays over the rounds (entry ``i`` after round ``i + 1``,
        as ``lgb.cv`` reports them) of the metric's mean and standard deviation over the folds; ``"models"``:
        the fitted fold estimators; ``"folds"``: each fold's (training rows, held-out rows).

    Raises
    ------
    ValueError
        For ``n_folds`` below 2 or above the rows (or, stratified, a class's rows), an unknown metric, or a
        probability metric of an estimator without ``predict_proba``.
    TypeError
        For an estimator without staged predictions.
    """
    n_folds = check_positive_int(n_folds, "n_folds", 2)
    if not hasattr(estimator, "staged_predict"):
        raise InvalidTypeError(f"estimator: expected a bob_boost.sklearn estimator (with staged_predict), got "
                               f"{type(estimator).__name__}")
    X, y = np.asarray(X), np.asarray(y)
    weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    classifier = is_classifier(estimator)
    multilabel = y.ndim == 2  # a label indicator matrix: no classes to stratify by
    stratified = classifier and not multilabel if stratified is None else bool(stratified)
    if stratified and multilabel:
        raise InvalidValueError("stratified: a multi-label y (an indicator matrix) has no classes to stratify by")
    chosen = _metrics(metrics, estimator, classifier and not multilabel)
    if n_folds > y.shape[0]:
        raise InvalidValueError(f"n_folds: {n_folds} folds of {y.shape[0]} samples")
    if stratified:
        labels, counts = np.unique(y, return_counts=True)
        if counts.min() < n_folds:
            raise InvalidValueError(f"n_folds: {n_folds} stratified folds, but class {labels[counts.argmin()]!r} has "
                                    f"{counts.min()} samples")
    seed = check_random_state(random_state) if shuffle else None
    maker = (StratifiedKFold if stratified else KFold)(n_splits=n_folds, shuffle=shuffle, random_state=seed)
    folds = list(maker.split(X, y))
    histories: dict[str, list[np.ndarray]] = {name: [] for name in chosen}
    models = []
    for train, test in folds:
        model = clone(estimator)
        model.fit(X[train], y[train], **({} if weights is None else {"sample_weight": weights[train]}))
        models.append(model)
        for name, (metric, output) in chosen.items():
            held_out = {} if weights is None else {"sample_weight": weights[test]}
            staged = getattr(model, _STAGED[output])(X[test])
            histories[name].append(np.array([metric(y[test], values, **held_out) for values in staged]))
    rounds = min(len(history) for values in histories.values() for history in values)  # every fold reached
    result: dict = {}
    for name, values in histories.items():
        table = np.stack([history[:rounds] for history in values])
        result[f"{name}-mean"], result[f"{name}-std"] = table.mean(axis=0), table.std(axis=0)
    result["models"], result["folds"] = models, folds
    return result


def _metrics(metrics, estimator, classifier: bool) -> dict[str, tuple[Callable, str]]:
    """The metrics asked for, by name, with the staged output each reads."""
    probabilities = hasattr(estimator, "predict_proba")
    if metrics is None:  # a multi-label classifier comes as classifier=False: the share of samples all right
        metrics = (["accuracy", "log_loss"] if probabilities else ["accuracy"]) if classifier else \
            (["accuracy"] if is_classifier(estimator) else ["rmse"])
    elif isinstance(metrics, str) or callable(metrics):
        metrics = [metrics]
    chosen = {}
    for metric in metrics:
        if callable(metric):
            chosen[getattr(metric, "__name__", repr(metric))] = (metric, "predict")
            continue
        if metric not in METRICS:
            raise InvalidValueError(f"metrics: unknown metric {metric!r}; known: {', '.join(METRICS)} or a callable")
        if METRICS[metric][1] == "predict_proba" and not probabilities:
            raise InvalidValueError(f"metrics: {metric!r} needs predict_proba, which {type(estimator).__name__} with "
                                    f"these parameters does not offer")
        chosen[metric] = METRICS[metric]
    return chosen
