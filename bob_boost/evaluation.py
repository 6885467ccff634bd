"""Error rates, confusion matrices and cost-space evaluation of classifiers.

The binary rates take labels -1 / +1 with +1 the positive class. A false
negative is a positive predicted -1, a false positive a negative predicted
+1. :func:`confusion_matrix` takes class indices ``0 .. K-1`` of any number
of classes, and :func:`accuracy` labels of any kind.

Cost space (Drummond & Holte): with misclassification costs ``C_P`` (of a
false negative) and ``C_N`` (of a false positive) and prior ``p(+)``, the
Probability Cost Function is

    PCF = p(+) C_P / (p(+) C_P + p(-) C_N)

and a classifier with rates FN and FP has the Normalized Expected Cost

    NEC = FN * PCF + FP * (1 - PCF),

a straight line from ``(0, FP)`` to ``(1, FN)`` as PCF runs over [0, 1]. The
AdaBoostDB paper prints this as ``FN * PCF + FP`` (its eq. 37), but its
tables follow the line above: e.g. at costs (1, 1) every NEC it reports is
the mean of FN and FP. Its tables also use ``p(+) = 1/2``, the class balance
that both its algorithms start from, which is the default here.
"""
from __future__ import annotations

import numpy as np

from ._validation import check_integer_vector, check_positive_int
from .exceptions import InvalidTypeError, InvalidValueError

__all__ = ["false_negative_rate", "false_positive_rate", "classification_error", "probability_cost_function",
           "normalized_expected_cost", "cost_lines", "lower_envelope", "confusion_matrix", "accuracy"]


def _labels(targets, predictions) -> tuple[np.ndarray, np.ndarray]:
    """Validate two equally long label vectors in {-1, +1}."""
    arrays = []
    for value, name in ((targets, "targets"), (predictions, "predictions")):
        array = np.asarray(value)
        if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
            raise InvalidTypeError(f"{name}: expected a numeric array, got dtype {array.dtype}")
        if array.ndim == 2 and array.shape[1] == 1:
            array = array[:, 0]
        if array.ndim != 1 or array.size == 0:
            raise InvalidValueError(f"{name}: expected a non-empty 1-D array of labels, got shape {array.shape}")
        if not np.all((array == 1) | (array == -1)):
            bad = np.unique(array[(array != 1) & (array != -1)])[:5]
            raise InvalidValueError(f"{name}: labels must be -1 or +1, found {bad.tolist()}")
        arrays.append(array)
    if arrays[0].size != arrays[1].size:
        raise InvalidValueError(f"predictions: has {arrays[1].size} labels but targets has {arrays[0].size}")
    return arrays[0], arrays[1]


def false_negative_rate(targets, predictions) -> float:
    """Fraction of the positive samples predicted negative.

    Parameters
    ----------
    targets, predictions : array_like
        (#samples,) labels in {-1, +1}; ``targets`` must hold a positive.
    """
    targets, predictions = _labels(targets, predictions)
    positive = targets > 0
    if not positive.any():
        raise InvalidValueError("targets: no positive sample, so the false-negative rate is undefined")
    return float(np.mean(predictions[positive] < 0))


def false_positive_rate(targets, predictions) -> float:
    """Fraction of the negative samples predicted positive.

    Parameters
    ----------
    targets, predictions : array_like
        (#samples,) labels in {-1, +1}; ``targets`` must hold a negative.
    """
    targets, predictions = _labels(targets, predictions)
    negative = targets < 0
    if not negative.any():
        raise InvalidValueError("targets: no negative sample, so the false-positive rate is undefined")
    return float(np.mean(predictions[negative] > 0))


def classification_error(targets, predictions) -> float:
    """Fraction of all samples whose prediction differs from the target."""
    targets, predictions = _labels(targets, predictions)
    return float(np.mean(targets != predictions))


def _array(value, name: str, low: float = -np.inf, high: float = np.inf, open_low: bool = False) -> np.ndarray:
    """A finite float array with values in ``[low, high]`` (``(low, high]`` if ``open_low``)."""
    array = np.asarray(value)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise InvalidTypeError(f"{name}: expected numbers, got dtype {array.dtype}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise InvalidValueError(f"{name}: contains NaN or infinite values")
    below = array <= low if open_low else array < low
    if np.any(below) or np.any(array > high):
        interval = f"{'(' if open_low else '['}{low:g}, {high:g}]"
        raise InvalidValueError(f"{name}: values must lie in {interval}")
    return array


def _check_broadcast(**arrays: np.ndarray) -> None:
    """Raise a ValueError naming the arguments if their shapes cannot be broadcast together."""
    try:
        np.broadcast_shapes(*(array.shape for array in arrays.values()))
    except ValueError:
        shapes = ", ".join(str(array.shape) for array in arrays.values())
        raise InvalidValueError(f"{', '.join(arrays)}: shapes {shapes} do not broadcast together") from None


def _result(array: np.ndarray) -> np.ndarray | float:
    return float(array) if array.ndim == 0 else array


def probability_cost_function(cost_positive, cost_negative, prior_positive=0.5) -> np.ndarray | float:
    """``PCF = p(+) C_P / (p(+) C_P + p(-) C_N)``, broadcast over array arguments.

    Parameters
    ----------
    cost_positive, cost_negative : float or array_like
        Costs > 0 of a false negative and of a false positive.
    prior_positive : float or array_like
        Prior probability ``p(+)`` of the positive class, in (0, 1).
    """
    cost_positive = _array(cost_positive, "cost_positive", 0.0, open_low=True)
    cost_negative = _array(cost_negative, "cost_negative", 0.0, open_low=True)
    prior = _array(prior_positive, "prior_positive", 0.0, 1.0, open_low=True)
    if np.any(prior == 1.0):
        raise InvalidValueError("prior_positive: values must lie in (0, 1)")
    _check_broadcast(cost_positive=cost_positive, cost_negative=cost_negative, prior_positive=prior)
    weighted_positive = prior * cost_positive
    return _result(weighted_positive / (weighted_positive + (1.0 - prior) * cost_negative))


def normalized_expected_cost(fn_rate, fp_rate, pcf) -> np.ndarray | float:
    """``NEC = FN * PCF + FP * (1 - PCF)``, broadcast over array arguments.

    Parameters
    ----------
    fn_rate, fp_rate : float or array_like
        False-negative and false-positive rates, in [0, 1].
    pcf : float or array_like
        Probability Cost Function values, in [0, 1].
    """
    fn_rate = _array(fn_rate, "fn_rate", 0.0, 1.0)
    fp_rate = _array(fp_rate, "fp_rate", 0.0, 1.0)
    pcf = _array(pcf, "pcf", 0.0, 1.0)
    _check_broadcast(fn_rate=fn_rate, fp_rate=fp_rate, pcf=pcf)
    return _result(fn_rate * pcf + fp_rate * (1.0 - pcf))


def cost_lines(fn_rates, fp_rates, pcf) -> np.ndarray:
    """Drummond-Holte cost lines of several classifiers.

    Parameters
    ----------
    fn_rates, fp_rates : array_like
        (#classifiers,) rates in [0, 1].
    pcf : array_like
        (#points,) PCF values in [0, 1] where the lines are evaluated.

    Returns
    -------
    numpy.ndarray
        (#classifiers, #points) NEC of each classifier: the line from ``(0, FP)`` to ``(1, FN)``.
    """
    fn_rates = _array(fn_rates, "fn_rates", 0.0, 1.0)
    fp_rates = _array(fp_rates, "fp_rates", 0.0, 1.0)
    pcf = _array(pcf, "pcf", 0.0, 1.0)
    if fn_rates.ndim != 1 or fn_rates.size == 0 or fn_rates.shape != fp_rates.shape:
        raise InvalidValueError(f"fp_rates: expected two non-empty 1-D arrays of the same length, got shapes "
                                f"{fn_rates.shape} and {fp_rates.shape}")
    if pcf.ndim != 1 or pcf.size == 0:
        raise InvalidValueError(f"pcf: expected a non-empty 1-D array, got shape {pcf.shape}")
    return fn_rates[:, np.newaxis] * pcf + fp_rates[:, np.newaxis] * (1.0 - pcf)


def lower_envelope(fn_rates, fp_rates, pcf, include_trivial: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Lower envelope of a family of classifiers' cost lines.

    At every PCF value the envelope is the smallest NEC that one of the
    classifiers reaches: the cost of choosing the best classifier of the
    family for that operating point.

    Parameters
    ----------
    fn_rates, fp_rates : array_like
        (#classifiers,) rates in [0, 1].
    pcf : array_like
        (#points,) PCF values in [0, 1].
    include_trivial : bool
        Also consider the trivial classifiers "always negative" (FN = 1,
        FP = 0) and "always positive" (FN = 0, FP = 1), which bound every
        useful envelope by ``min(PCF, 1 - PCF)``.

    Returns
    -------
    envelope : numpy.ndarray
        (#points,) smallest NEC at each PCF value.
    best : numpy.ndarray
        (#points,) index of a classifier reaching it (lowest index on ties);
        -1 / -2 for the trivial always-negative / always-positive classifiers.
    """
    lines = cost_lines(fn_rates, fp_rates, pcf)
    best = np.argmin(lines, axis=0)
    envelope = lines[best, np.arange(lines.shape[1])]
    if include_trivial:
        pcf = np.asarray(pcf, dtype=np.float64)
        for cost, code in ((pcf, -1), (1.0 - pcf, -2)):
            better = cost < envelope
            envelope = np.where(better, cost, envelope)
            best = np.where(better, code, best)
    return envelope, best


def confusion_matrix(truth, predicted, number_of_classes: int, sample_weight=None) -> np.ndarray:
    """How often (or with how much weight) each class is predicted as each class.

    Parameters
    ----------
    truth, predicted : array_like of int
        (#samples,) true and predicted class indices in ``0 .. number_of_classes - 1``.
    number_of_classes : int
        K >= 1, the size of the matrix.
    sample_weight : array_like, optional
        (#samples,) finite weights >= 0; each sample counts with its weight instead of 1.

    Returns
    -------
    numpy.ndarray
        (K, K) matrix whose entry ``[i, j]`` counts the samples of class ``i`` predicted as class ``j``:
        int64 counts, or float64 sums of ``sample_weight`` when it is given.

    Examples
    --------
    >>> confusion_matrix([0, 0, 1, 1, 1], [0, 1, 1, 1, 0], 2).tolist()
    [[1, 1], [1, 2]]
    """
    k = check_positive_int(number_of_classes, "number_of_classes")
    truth = check_integer_vector(truth, "truth", "class indices")
    predicted = check_integer_vector(predicted, "predicted", "class indices")
    if predicted.size != truth.size:
        raise InvalidValueError(f"predicted: has {predicted.size} entries but truth has {truth.size}")
    for values, name in ((truth, "truth"), (predicted, "predicted")):
        outside = (values < 0) | (values >= k)
        if np.any(outside):
            raise InvalidValueError(f"{name}: class indices must lie in 0..{k - 1} (number_of_classes={k}), found "
                                    f"{np.unique(values[outside])[:5].tolist()}")
    cells = truth * k + predicted
    if sample_weight is None:
        return np.bincount(cells, minlength=k * k).reshape(k, k)
    weights = _array(sample_weight, "sample_weight", 0.0)
    if weights.shape != truth.shape:
        raise InvalidValueError(f"sample_weight: expected shape {truth.shape} (one weight per sample), "
                                f"got {weights.shape}")
    return np.bincount(cells, weights=weights, minlength=k * k).reshape(k, k)


def accuracy(truth, predicted) -> float:
    """Fraction of the samples whose prediction equals the truth.

    Parameters
    ----------
    truth, predicted : array_like
        (#samples,) true and predicted labels of any one kind (class indices, -1/+1, text), same length.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> accuracy([0, 1, 2, 2], [0, 2, 2, 2])
    0.75
    """
    arrays = []
    for value, name in ((truth, "truth"), (predicted, "predicted")):
        array = np.asarray(value)
        if array.ndim != 1 or array.size == 0:
            raise InvalidValueError(f"{name}: expected a non-empty 1-D array of labels, got shape {array.shape}")
        arrays.append(array)
    if arrays[1].size != arrays[0].size:
        raise InvalidValueError(f"predicted: has {arrays[1].size} entries but truth has {arrays[0].size}")
    return float(np.mean(arrays[0] == arrays[1]))
