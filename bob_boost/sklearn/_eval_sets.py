"""Evaluation sets of ``fit(X, y, eval_set=[(X_val, y_val), ...])``, as LightGBM's and XGBoost's estimators take
them: every set is scored after every round, and the first is the early-stopping set when early stopping is on.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._validation import check_sample_weight
from ..exceptions import InvalidTypeError, InvalidValueError
from ._compat import validate_data


@dataclass(frozen=True)
class EvalSet:
    """One validated evaluation set.

    Attributes
    ----------
    name : str
        ``"validation_<i>"``, its key in ``evals_result_``.
    features : numpy.ndarray
        (#samples, #features) validated features.
    targets : numpy.ndarray
        What the trainer's loss reads (the training targets' encoding).
    weights : numpy.ndarray
        (#samples,) sample weights (ones when the set has none).
    y : numpy.ndarray
        The labels or values a scorer compares predictions with.
    """

    name: str
    features: np.ndarray
    targets: np.ndarray
    weights: np.ndarray
    y: np.ndarray


def check_eval_sets(estimator, eval_set, targets_of: Callable[[np.ndarray, str], np.ndarray],
                    multilabel: bool = False) -> list[EvalSet]:
    """The evaluation sets ``eval_set`` (None, or a list of ``(X, y)`` or ``(X, y, sample_weight)``) of a fitted
    ``estimator``'s data, their targets from ``targets_of(y, name)`` (which raises, naming ``name``, for labels
    the training data did not have). ``multilabel``: each ``y`` is a (#rows, #labels) indicator matrix (whose
    width ``targets_of`` checks), else a vector.

    Raises
    ------
    TypeError
        When ``eval_set`` is not a list or tuple of such tuples.
    ValueError
        Naming the set (``eval_set[i]``) whose features have another width (or other names) than the training
        data's, whose ``y`` or weights have another length, or whose labels are unknown.
    """
    if eval_set is None:
        return []
    if not isinstance(eval_set, (list, tuple)):
        raise InvalidTypeError(f"eval_set: expected a list of (X, y) pairs, got {type(eval_set).__name__}")
    sets = []
    for i, pair in enumerate(eval_set):
        name = f"eval_set[{i}]"
        if not isinstance(pair, (list, tuple)) or len(pair) not in (2, 3):
            raise InvalidTypeError(f"{name}: expected (X, y) or (X, y, sample_weight), got {type(pair).__name__}")
        try:
            features = validate_data(estimator, pair[0], reset=False, ensure_all_finite=estimator._finite_rule(),
                                     accept_sparse=estimator._sparse_formats())
        except ValueError as error:
            raise InvalidValueError(f"{name}: {error}") from None
        y = np.asarray(pair[1])
        if multilabel:
            if y.ndim != 2 or y.shape[0] != features.shape[0]:
                raise InvalidValueError(f"{name}: y must be a label indicator matrix of {features.shape[0]} rows "
                                        f"(one per row of its X), got shape {y.shape}")
        elif y.ndim != 1 or y.shape[0] != features.shape[0]:
            raise InvalidValueError(f"{name}: y must be a vector of {features.shape[0]} entries (one per row of its "
                                    f"X), got shape {y.shape}")
        weights = (np.ones(y.shape[0]) if len(pair) == 2 or pair[2] is None
                   else check_sample_weight(pair[2], y.shape[0], f"{name}: sample_weight"))
        sets.append(EvalSet(f"validation_{i}", features, targets_of(y, name), weights, y))
    return sets
