"""Decision rules: how a strong machine's scores become predictions.

A :class:`~bob_boost.BoostedMachine` names its rule, and its loss supplies
it at training time (:meth:`bob_boost.losses.base.LossFunction.decision_rule`):

``"sign"``
    One output; +1 where the score is positive, -1 elsewhere (bob's rule).
``"argmax"``
    One output per class; the index of the largest score (lowest on ties).
``"cost_sensitive"``
    One output per class and a (K, K) cost matrix ``C``; the class of least
    expected cost ``argmin_k (C* f(x))_k`` (BAdaCost), lowest index on ties.
``"multilabel"``
    One output per label (multi-label classification); each label's own
    sign: +1 where its score is positive, -1 elsewhere.
``"identity"``
    Regression; the prediction is the score itself.
``"exp"``
    Regression with a log link (Poisson, Gamma, Tweedie losses); the prediction is ``exp(score)``, a
    positive mean.

Class indices (:func:`class_indices_from_scores`) number the classes
``0 .. K-1`` for every classification rule: a ``"sign"`` machine's -1 / +1
become 0 / 1, which is how :class:`~bob_boost.labels.ClassEncoding` orders a
binary problem's classes. A ``"multilabel"`` machine gives a (#samples, K)
indicator instead: 1 where the label is on.
"""
from __future__ import annotations

import numpy as np

from .costs import cost_star
from .exceptions import InvalidValueError

#: The rules a machine may name, in the order the docs list them.
RULES = ("sign", "argmax", "cost_sensitive", "multilabel", "identity", "exp")

#: Rules whose predictions are classes (one per sample, or a set of labels for ``"multilabel"``).
CLASSIFICATION_RULES = ("sign", "argmax", "cost_sensitive", "multilabel")


def default_rule(number_of_outputs: int | None, has_cost_matrix: bool) -> str:
    """The rule of a machine that names none (every file bob.learn.boosting wrote).

    Parameters
    ----------
    number_of_outputs : int or None
        The machine's number of outputs (None for an empty machine of unknown width).
    has_cost_matrix : bool
        Whether the machine holds a cost matrix.
    """
    if has_cost_matrix:
        return "cost_sensitive"
    return "sign" if number_of_outputs in (None, 1) else "argmax"


def check_rule(rule, number_of_outputs: int | None, has_cost_matrix: bool, name: str = "decision_rule") -> str:
    """Validate that ``rule`` is a known rule that fits the machine's outputs and cost matrix.

    Raises
    ------
    ValueError
        For an unknown rule, ``"sign"`` on several outputs, ``"cost_sensitive"``
        without a cost matrix, or another rule with one.
    """
    if not isinstance(rule, str) or rule not in RULES:
        raise InvalidValueError(f"{name}: must be one of {RULES}, got {rule!r}")
    if rule == "sign" and number_of_outputs not in (None, 1):
        raise InvalidValueError(f"{name}: 'sign' needs one output, the machine has {number_of_outputs}")
    if (rule == "cost_sensitive") != has_cost_matrix:
        raise InvalidValueError(f"{name}: 'cost_sensitive' goes with a cost matrix and only with one (rule {rule!r}, "
                                f"cost matrix {'given' if has_cost_matrix else 'missing'})")
    return rule


def labels_from_scores(rule: str, scores: np.ndarray, cost_matrix: np.ndarray | None = None) -> np.ndarray:
    """Predictions of (#samples, #outputs) ``scores`` under ``rule``.

    Returns
    -------
    numpy.ndarray
        -1 / +1 (``"sign"``; (#samples, #outputs) for ``"multilabel"``), class indices (``"argmax"``,
        ``"cost_sensitive"``), or the scores, (#samples,) for one output (``"identity"``; their exponential
        for ``"exp"``).
    """
    if rule in ("identity", "exp"):
        values = np.exp(scores) if rule == "exp" else scores
        return values[:, 0] if values.shape[1] == 1 else values
    if rule == "sign":
        return np.where(scores[:, 0] > 0, 1, -1)
    if rule == "multilabel":
        return np.where(scores > 0, 1, -1)
    if rule == "cost_sensitive":
        return np.argmin(scores @ cost_star(cost_matrix).T, axis=1)
    return np.argmax(scores, axis=1)


def class_indices_from_scores(rule: str, scores: np.ndarray, cost_matrix: np.ndarray | None = None) -> np.ndarray:
    """Class index ``0 .. K-1`` per sample (a ``"sign"`` machine's -1 / +1 become 0 / 1), or for
    ``"multilabel"`` the (#samples, K) 0 / 1 indicator of the labels that are on.

    Raises
    ------
    ValueError
        For the ``"identity"`` rule of regression machines, which have no classes.
    """
    if rule not in CLASSIFICATION_RULES:
        raise InvalidValueError(f"a machine with decision rule {rule!r} predicts values, not classes")
    labels = labels_from_scores(rule, scores, cost_matrix)
    return (labels > 0).astype(np.int64) if rule in ("sign", "multilabel") else labels.astype(np.int64)
