"""Detection with cost-sensitive multi-class boosted machines (class 0 = background).

For a machine holding a cost matrix ``C`` and scores ``f(x)``, the
predicted costs of the K decisions are ``c = C* f(x)``; the positive-class
score is ``s(x) = c_0 - min(c_1, ..., c_{K-1})``, positive when some object
class is cheaper than the background. Because ``f`` is a sum over weak
learners, ``s`` can be followed round by round (:func:`score_traces`), a
single rejection threshold can be calibrated on training positives
(:func:`calibrate_cascade`), and evaluation can stop as soon as a sample's
running score falls below it (:func:`early_exit_evaluate`).
"""
from __future__ import annotations

import numbers

import numpy as np

from ._validation import as_feature_matrix, as_score_matrix, check_scalar
from .costs import check_class_labels, check_cost_matrix, cost_star
from .exceptions import InvalidTypeError, InvalidValueError
from .machine import BoostedMachine


def positive_scores(scores, cost_matrix) -> np.ndarray:
    """Positive-class scores ``c_0 - min(c_1..c_{K-1})`` with ``c = C* f`` from raw scores.

    Parameters
    ----------
    scores : array_like
        (#samples, K) strong scores ``f(x)`` (e.g. ``machine.decision_scores(x)``).
    cost_matrix : array_like
        (K, K) cost matrix, background first, as
        :func:`bob_boost.costs.check_cost_matrix` accepts it.

    Returns
    -------
    numpy.ndarray
        (#samples,) scores.

    Raises
    ------
    ValueError
        For an invalid cost matrix or scores with other than K columns.
    """
    star = cost_star(check_cost_matrix(cost_matrix))
    values = as_score_matrix(scores, "scores")
    if values.shape[1] != star.shape[0]:
        raise InvalidValueError(f"scores: has {values.shape[1]} columns but the cost matrix is "
                                f"{star.shape[0]}x{star.shape[0]}")
    return _positive(values @ star.T)


def _positive(costs: np.ndarray) -> np.ndarray:
    """Background cost minus the cheapest object cost, per row of (#samples, K) predicted costs."""
    return costs[:, 0] - costs[:, 1:].min(axis=1)


def detection_scores(machine: BoostedMachine, features) -> np.ndarray:
    """Positive-class score of every row of ``features`` under the full machine."""
    _check_machine(machine)
    return positive_scores(machine.decision_scores(features), machine.cost_matrix)


def score_traces(machine: BoostedMachine, features) -> np.ndarray:
    """Positive-class score after each round.

    Returns
    -------
    numpy.ndarray
        (#samples, #weak machines): column ``t`` is the score of the machine
        made of the first ``t + 1`` weak machines.
    """
    array = _check_features(machine, features)
    star_t = cost_star(machine.cost_matrix).T
    traces = np.empty((array.shape[0], len(machine)))
    for t, scores in enumerate(machine.staged_decision_scores(array)):
        traces[:, t] = _positive(scores @ star_t)
    return traces


def calibrate_cascade(machine: BoostedMachine, features, labels) -> float:
    """Rejection threshold that keeps every positive training sample.

    At every round the lowest trace value among the positive samples
    (labels > 0) is taken, and the threshold is the minimum of these over
    all rounds. With it, :func:`early_exit_evaluate` never rejects one of
    these samples early.

    Parameters
    ----------
    features : array_like
        (#samples, #features) training features.
    labels : array_like of int
        (#samples,) classes; 0 is the background, every other class positive.
    """
    _check_machine(machine)
    array = _check_features(machine, features)
    classes = check_class_labels(labels, machine.number_of_outputs)
    if classes.size != array.shape[0]:
        raise InvalidValueError(f"labels: has {classes.size} samples but features have {array.shape[0]}")
    positive = classes > 0
    if not positive.any():
        raise InvalidValueError("labels: no positive sample (label > 0) to calibrate on")
    return float(score_traces(machine, array[positive]).min())


def early_exit_evaluate(machine: BoostedMachine, features,
                        threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Evaluate with early rejection of samples whose running score drops below ``threshold``.

    After every weak machine the running positive-class score of each
    sample still in play is compared with ``threshold``; samples below it
    are rejected as background and no further weak machine is evaluated on
    them.

    Returns
    -------
    scores : numpy.ndarray
        (#samples,) the running score when rejected, the full score otherwise.
    labels : numpy.ndarray
        (#samples,) 0 for rejected samples, the machine's cost-sensitive
        prediction ``argmin_k (C* f(x))_k`` for the others.
    evaluated : numpy.ndarray
        (#samples,) number of weak machines evaluated on each sample.

    Raises
    ------
    TypeError
        If ``threshold`` is not a real number.
    ValueError
        If ``threshold`` is NaN, or for invalid features.
    """
    array = _check_features(machine, features)
    check_scalar(threshold, "threshold", numbers.Real, finite=False)
    if np.isnan(threshold):
        raise InvalidValueError("threshold: must be a number or +-inf, got NaN")
    star_t = cost_star(machine.cost_matrix).T
    n = array.shape[0]
    scores = np.zeros(n)
    labels = np.zeros(n, dtype=np.int64)
    evaluated = np.full(n, len(machine), dtype=np.int64)
    active = np.arange(n)
    sums = np.zeros((n, machine.number_of_outputs))
    for t, (weak, weight) in enumerate(zip(machine.weak_machines, machine.weights)):
        sums += weight * weak.forward(array[active])
        running = _positive(sums @ star_t)
        rejected = running < threshold
        scores[active[rejected]] = running[rejected]
        evaluated[active[rejected]] = t + 1
        keep = ~rejected
        active, sums, running = active[keep], sums[keep], running[keep]
        if active.size == 0:
            break
    if active.size:
        scores[active] = running
        labels[active] = machine.labels_from_scores(sums)
    return scores, labels, evaluated


def _check_machine(machine) -> None:
    if not isinstance(machine, BoostedMachine):
        raise InvalidTypeError(f"machine: expected a BoostedMachine, got {type(machine).__name__}")
    if machine.cost_matrix is None:
        raise InvalidValueError("machine: has no cost matrix; detection scores need one (class 0 = background)")


def _check_features(machine: BoostedMachine, features) -> np.ndarray:
    """Validate ``features`` for every weak machine of ``machine``."""
    _check_machine(machine)
    if len(machine) == 0:
        raise InvalidValueError("machine: has no weak machine")
    array = as_feature_matrix(features)
    if machine.number_of_features is not None and array.shape[1] != machine.number_of_features:
        raise InvalidValueError(f"features: the machine was trained on {machine.number_of_features} features, "
                                f"got {array.shape[1]}")
    for weak in machine.weak_machines:
        weak.check_features(array)
    return array
