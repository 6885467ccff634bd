"""Cost matrices and margin vectors for multi-class (cost-sensitive) boosting.

Conventions (BAdaCost, Fernández-Baldera et al. 2018): classes are numbered
``0 .. K-1``; ``C[i, j]`` is the cost of predicting class ``j`` for a sample
of class ``i``, with a zero diagonal and non-negative entries. Derived
matrices:

* ``C*`` (:func:`cost_star`): ``C`` with its diagonal
  replaced by minus the row sums, so that every row sums to zero;
* the margin vector of class ``k``: 1 at ``k`` and ``-1/(K-1)`` elsewhere
  (:func:`margin_vectors`);
* ``C2 = K/(K-1) C*`` (:func:`margin_cost_matrix`): ``C2[l, k]`` is the
  cost-sensitive margin ``C*[l, :] @ y_k`` of predicting ``k`` for a class
  ``l`` sample, the exponent of the sample weight update.

Example-dependent costs (:func:`check_sample_costs`) give every sample its own row ``c_n[k]``, the cost of
predicting ``k`` for it; with every sample's row its class's row of ``C`` they are the class matrix.

In detection matrices class 0 is the background.
"""
from __future__ import annotations

import numbers

import numpy as np

from ._validation import check_integer_vector, check_positive_int, check_sample_weight, check_scalar, mean_one
from .evaluation import confusion_matrix
from .exceptions import InvalidTypeError, InvalidValueError


def check_cost_matrix(cost_matrix, name: str = "cost_matrix") -> np.ndarray:
    """Validate a cost matrix and return it as a new float64 array.

    Parameters
    ----------
    cost_matrix : array_like
        (K, K) matrix, K >= 2, finite, non-negative, with a zero diagonal.
    name : str
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray
        A float64 copy (the caller's array is never modified).

    Raises
    ------
    TypeError
        If the matrix is not numeric.
    ValueError
        If it is not square, smaller than 2 x 2, not finite, has a negative
        entry or a non-zero diagonal entry.
    """
    array = np.asarray(cost_matrix)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise InvalidTypeError(f"{name}: expected a numeric matrix, got dtype {array.dtype}")
    if np.iscomplexobj(array):
        raise InvalidTypeError(f"{name}: expected a real matrix, got dtype {array.dtype}")
    matrix = np.array(array, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise InvalidValueError(f"{name}: expected a square (K, K) matrix, got shape {matrix.shape}")
    if matrix.shape[0] < 2:
        raise InvalidValueError(f"{name}: needs at least 2 classes, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise InvalidValueError(f"{name}: contains NaN or infinite values")
    if np.any(matrix < 0):
        row, column = np.argwhere(matrix < 0)[0]
        raise InvalidValueError(f"{name}: costs must be non-negative, entry ({row}, {column}) is {matrix[row, column]}")
    diagonal = np.diag(matrix)
    if np.any(diagonal != 0):
        index = int(np.flatnonzero(diagonal)[0])
        raise InvalidValueError(f"{name}: the diagonal must be zero, entry ({index}, {index}) is {diagonal[index]}")
    if not np.any(matrix):
        raise InvalidValueError(f"{name}: every cost is zero, so no prediction is better than another")
    return matrix


def cost_star(cost_matrix) -> np.ndarray:
    """Return C*: the cost matrix with its diagonal replaced by minus its row sums.

    Every row of C* sums to zero; ``argmin_k (C* f)_k`` is the cost-sensitive
    decision for a margin vector ``f``.
    """
    star = np.array(cost_matrix, dtype=np.float64)
    np.fill_diagonal(star, 0.0)
    np.fill_diagonal(star, -star.sum(axis=1))
    return star


def margin_vectors(number_of_classes: int) -> np.ndarray:
    """Return the (K, K) matrix whose row ``k`` is the margin vector of class ``k``.

    Row ``k`` holds 1 at position ``k`` and ``-1/(K-1)`` elsewhere; every row
    sums to zero.
    """
    k = check_positive_int(number_of_classes, "number_of_classes", 2)
    vectors = np.full((k, k), -1.0 / (k - 1))
    np.fill_diagonal(vectors, 1.0)
    return vectors


def margin_cost_matrix(cost_matrix) -> np.ndarray:
    """Return ``C2 = K/(K-1) C*``.

    ``C2[l, k] = C*[l, :] @ y_k`` is the cost-sensitive margin of predicting
    ``k`` for a sample of class ``l``: negative on the diagonal (a reward),
    non-negative elsewhere. BAdaCost multiplies a sample's weight by
    ``exp(beta * C2[l, k])``.
    """
    matrix = check_cost_matrix(cost_matrix)
    k = matrix.shape[0]
    return k / (k - 1) * cost_star(matrix)


def zero_one_cost_matrix(number_of_classes: int, scale: float = 1.0) -> np.ndarray:
    """Return ``scale`` times the 0|1 matrix (zero diagonal, ``scale`` elsewhere)."""
    k = check_positive_int(number_of_classes, "number_of_classes", 2)
    value = _check_cost(scale, "scale", positive=True)
    matrix = np.full((k, k), value)
    np.fill_diagonal(matrix, 0.0)
    return matrix


def samme_cost_matrix(number_of_classes: int) -> np.ndarray:
    """The 0|1 matrix scaled by ``1/(K(K-1))``, with which BAdaCost is SAMME."""
    k = check_positive_int(number_of_classes, "number_of_classes", 2)
    return zero_one_cost_matrix(k, 1.0 / (k * (k - 1)))


def imbalance_cost_matrix(labels, predictions, number_of_classes: int | None = None,
                          scale: float = 0.1, smoothing: float = 0.0) -> np.ndarray:
    """Cost matrix for imbalanced problems from the confusions of a 0|1 model.

    The confusion matrix ``F[i, j]`` (#samples of class ``i`` predicted as
    ``j``) of a cost-insensitive model is divided row by row by the class
    sizes, its diagonal is set to zero, and the result is multiplied by
    ``scale`` (BAdaCost paper, appendix F). Classes the model confuses often
    thus get expensive errors.

    Parameters
    ----------
    labels, predictions : array_like of int
        True and predicted labels in ``0 .. K-1``, same length.
    number_of_classes : int, optional
        K; defaults to ``max(labels, predictions) + 1``.
    scale : float
        The factor lambda (> 0); small values keep the costs well conditioned.
    smoothing : float
        Pseudo-count (>= 0) added to every off-diagonal cell of ``F`` before
        normalising; the appendix rule is ``smoothing=0``. A positive value
        keeps every error cost positive when the 0|1 model makes no error on
        some class (common when it is evaluated on its own training data),
        which would otherwise make that class's errors free.

    Returns
    -------
    numpy.ndarray
        (K, K) cost matrix.

    Raises
    ------
    ValueError
        If a class has no sample (its row cannot be normalised) or an
        argument is invalid.
    """
    truth = _check_label_vector(labels, "labels")
    predicted = _check_label_vector(predictions, "predictions")
    if truth.shape != predicted.shape:
        raise InvalidValueError(f"predictions: has {predicted.size} entries but labels has {truth.size}")
    if number_of_classes is None:
        k = int(max(truth.max(), predicted.max())) + 1
    else:
        k = check_positive_int(number_of_classes, "number_of_classes", 2)
        for values, name in ((truth, "labels"), (predicted, "predictions")):
            if values.max() >= k:
                raise InvalidValueError(f"{name}: value {values.max()} is >= number_of_classes ({k})")
    if k < 2:
        raise InvalidValueError("labels: need at least 2 classes")
    return imbalance_cost_matrix_from_confusion(confusion_matrix(truth, predicted, k), scale, smoothing)


def imbalance_cost_matrix_from_confusion(confusion, scale: float = 0.1, smoothing: float = 0.0) -> np.ndarray:
    """:func:`imbalance_cost_matrix` from the (K, K) confusion counts ``F[i, j]`` themselves.

    For confusions counted elsewhere (on a cluster, say): the same costs as from the labels and predictions.

    Raises
    ------
    ValueError
        If ``confusion`` is not a square matrix of non-negative counts of at least 2 classes, a class has no
        sample, or ``scale``/``smoothing`` is invalid.
    """
    confusion = np.asarray(confusion, dtype=np.float64)
    if confusion.ndim != 2 or confusion.shape[0] != confusion.shape[1] or confusion.shape[0] < 2 or not (
            np.all(np.isfinite(confusion)) and np.all(confusion >= 0)):
        raise InvalidValueError(f"confusion: expected a (K, K) matrix of non-negative counts, K >= 2, got shape "
                                f"{confusion.shape}")
    k = confusion.shape[0]
    factor = _check_cost(scale, "scale", positive=True)
    pseudo_count = _check_cost(smoothing, "smoothing")
    confusion = confusion.copy()
    sizes = confusion.sum(axis=1)
    if np.any(sizes == 0):
        raise InvalidValueError(f"labels: class {int(np.flatnonzero(sizes == 0)[0])} has no sample")
    off_diagonal = ~np.eye(k, dtype=bool)
    confusion[off_diagonal] += pseudo_count
    normalised = confusion / (sizes + pseudo_count * (k - 1))[:, np.newaxis]
    np.fill_diagonal(normalised, 0.0)
    return factor * normalised


def face_detection_cost_matrix(number_of_views: int, false_negative_cost: float = 1.5) -> np.ndarray:
    """Cost matrix for multi-view detection with interchangeable views.

    Class 0 is the background and classes ``1 .. number_of_views`` are the
    views. A false positive (background predicted as any view) costs 1, a
    false negative (a view predicted as background) ``false_negative_cost``,
    and confusing two views costs 1 (the 0|1 matrix among views).
    """
    views = check_positive_int(number_of_views, "number_of_views")
    beta = _check_cost(false_negative_cost, "false_negative_cost")
    matrix = np.ones((views + 1, views + 1))
    matrix[1:, 0] = beta
    np.fill_diagonal(matrix, 0.0)
    return matrix


def multiview_car_cost_matrix(number_of_views: int, false_positive_cost: float = 1.0,
                              false_negative_cost: float = 1.0, view_cost: float = 1.0) -> np.ndarray:
    """Cost matrix for detecting an object seen from views arranged on a circle.

    Class 0 is the background and classes ``1 .. Kp`` the ``Kp`` views in
    circular order. False positives cost ``false_positive_cost`` (alpha),
    false negatives ``false_negative_cost`` (beta), and predicting view ``j``
    for view ``i`` costs ``view_cost * P(i, j)`` (gamma) with
    ``P(i, j) = 1 - |(2|i - j| - Kp) / Kp|``: ``2/Kp`` for neighbouring views,
    1 for opposite ones.
    """
    views = check_positive_int(number_of_views, "number_of_views")
    alpha = _check_cost(false_positive_cost, "false_positive_cost")
    beta = _check_cost(false_negative_cost, "false_negative_cost")
    gamma = _check_cost(view_cost, "view_cost")
    index = np.arange(views)
    distance = np.abs(index[:, np.newaxis] - index[np.newaxis, :])
    matrix = np.empty((views + 1, views + 1))
    matrix[0, 0] = 0.0
    matrix[0, 1:] = alpha
    matrix[1:, 0] = beta
    matrix[1:, 1:] = gamma * (1.0 - np.abs((2.0 * distance - views) / views))
    return matrix


def check_sample_costs(sample_costs, labels: np.ndarray, number_of_classes: int,
                       name: str = "sample_costs", first: int = 0) -> np.ndarray:
    """Validate example-dependent costs and return them as new (#samples, K) float64 rows.

    Parameters
    ----------
    sample_costs : array_like
        (#samples, K) rows ``c_n[k]``, the cost of predicting class ``k`` for sample ``n``, or (#samples, K, K)
        cost matrices, one per sample, of which the sample's class's row counts. Finite and non-negative, zero
        at the sample's own class (for matrices: a zero diagonal).
    labels : numpy.ndarray
        (#samples,) validated class indices.
    number_of_classes : int
        K.
    name : str
        Argument name used in error messages.
    first : int
        The index of the first sample in the messages (a block of rows names its samples as the whole array does).

    Raises
    ------
    ValueError
        For the wrong shape, negative or non-finite costs, or a non-zero cost at a sample's own class.
    TypeError
        For non-numeric costs.
    """
    array = np.asarray(sample_costs)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise InvalidTypeError(f"{name}: expected numbers, got dtype {array.dtype}")
    n, k = labels.size, number_of_classes
    if array.shape not in ((n, k), (n, k, k)):
        raise InvalidValueError(f"{name}: expected shape ({n}, {k}) (a row per sample) or ({n}, {k}, {k}) (a "
                                f"matrix per sample), got {array.shape}")
    costs = np.array(array, dtype=np.float64)
    if not np.all(np.isfinite(costs)) or np.any(costs < 0):
        raise InvalidValueError(f"{name}: costs must be finite and non-negative")
    if costs.ndim == 3:
        diagonals = costs[:, np.arange(k), np.arange(k)]
        if np.any(diagonals != 0):
            bad = first + int(np.flatnonzero(diagonals.any(axis=1))[0])
            raise InvalidValueError(f"{name}: sample {bad}'s matrix has a non-zero diagonal")
        costs = costs[np.arange(n), labels]
    own = costs[np.arange(n), labels]
    if np.any(own != 0):
        bad = int(np.flatnonzero(own)[0])
        raise InvalidValueError(f"{name}: sample {first + bad} has a non-zero cost for its own class "
                                f"{int(labels[bad])}")
    return costs


def sample_cost_exponents(sample_costs, labels: np.ndarray, number_of_classes: int, first: int = 0) -> np.ndarray:
    """BAdaCost's (#samples, K) per-sample exponents ``K/(K-1) c*_n`` of example-dependent costs: each sample's
    validated row (:func:`check_sample_costs`, whose ``first`` names the samples in messages) with minus its sum
    at the sample's class, as :func:`margin_cost_matrix` makes ``C2`` of a class matrix.

    Raises
    ------
    ValueError
        As :func:`check_sample_costs`, and for costs whose exponents overflow.
    """
    k = number_of_classes
    rows = check_sample_costs(sample_costs, labels, k, first=first)
    with np.errstate(over="ignore"):  # an overflow is the error below
        rows[np.arange(labels.size), labels] = -rows.sum(axis=1)
        exponents = k / (k - 1) * rows
    if not np.all(np.isfinite(exponents)):
        bad = int(np.flatnonzero(~np.isfinite(exponents).all(axis=1))[0])
        raise InvalidValueError(f"sample_costs: sample {first + bad}'s costs are too large: their sum overflows")
    return exponents


def predicted_exponents(labels: np.ndarray, predicted: np.ndarray, exponents: np.ndarray,
                        row_exponents: np.ndarray | None = None) -> np.ndarray:
    """Every sample's weight-update exponent for its predicted class: ``exponents[label, predicted]`` of a (K, K)
    class matrix (``C2``), or with example-dependent costs the sample's own ``row_exponents[n, predicted]``."""
    if row_exponents is None:
        return exponents[labels, predicted]
    return row_exponents[np.arange(predicted.size), predicted]


def class_mean_costs(labels: np.ndarray, sample_costs: np.ndarray, number_of_classes: int) -> np.ndarray:
    """The (K, K) matrix whose row ``l`` is the mean cost row of the samples of class ``l`` (0 for a class without
    samples): the class matrix that example-dependent costs reduce to, and the one a machine trained on them
    predicts with."""
    return class_means_of(*class_cost_sums(labels, sample_costs, number_of_classes))


def class_cost_sums(labels: np.ndarray, sample_costs: np.ndarray, number_of_classes: int) -> tuple:
    """``(sums, counts)``: the (K, K) sums of the cost rows of each class and the (K,) class counts, which
    :func:`class_means_of` divides (summed block by block where the rows are in blocks)."""
    sums = np.zeros((number_of_classes, number_of_classes))
    np.add.at(sums, labels, sample_costs)
    return sums, np.bincount(labels, minlength=number_of_classes)


def class_means_of(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each class's mean cost row from :func:`class_cost_sums` (0 for a class without samples)."""
    counts = counts[:, np.newaxis]
    return np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)


def check_class_rows(array: np.ndarray, labels, number_of_classes: int,
                     sample_weight=None) -> tuple[np.ndarray, np.ndarray | None]:
    """A multi-class trainer's labels and weights for the validated feature matrix ``array``: int64 classes
    (:func:`check_class_labels`), one per row, and the ``sample_weight`` rescaled to a mean of 1 (None stays
    None).

    Raises
    ------
    ValueError
        For labels outside ``0 .. K-1`` or of another length than the rows, and invalid weights.
    """
    classes = check_class_labels(labels, number_of_classes)
    if classes.size != array.shape[0]:
        raise InvalidValueError(f"labels: has {classes.size} samples but features have {array.shape[0]}")
    return classes, None if sample_weight is None else mean_one(check_sample_weight(sample_weight, array.shape[0]))


def check_class_labels(labels, number_of_classes: int, name: str = "labels") -> np.ndarray:
    """Validate class labels and return them as a new int64 array.

    Parameters
    ----------
    labels : array_like
        Non-empty 1-D array of integers (integer dtype, or floats holding
        whole numbers) in ``0 .. number_of_classes-1``.
    number_of_classes : int
        K.
    name : str
        Argument name used in error messages.
    """
    array = _check_label_vector(labels, name)
    if array.max() >= number_of_classes:
        raise InvalidValueError(f"{name}: label {array.max()} is out of range for {number_of_classes} classes "
                                f"(labels must be 0 .. {number_of_classes - 1})")
    return array


def _check_cost(value, name: str, positive: bool = False) -> float:
    """Return ``value`` as a finite float >= 0 (> 0 when ``positive``)."""
    return float(check_scalar(value, name, numbers.Real, min_val=0, include_boundaries="right" if positive else "both"))


def _check_label_vector(values, name: str) -> np.ndarray:
    """Return non-empty 1-D non-negative integer labels as int64."""
    array = check_integer_vector(values, name, "labels")
    if np.any(array < 0):
        raise InvalidValueError(f"{name}: labels must be >= 0, found {array.min()}")
    return array
