"""Argument checks shared by the public entry points.

Every function returns a new (or read-only view of an) array and never
modifies what the caller passed in; errors name the offending argument.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .exceptions import InvalidTypeError, InvalidValueError
from .sparse import as_sparse_rows, is_sparse


def sum_is_finite(array: np.ndarray) -> bool:
    """Whether the float64 sum of ``array`` is finite: True proves every entry finite, at half the cost of
    the entry-wise test; False may also mean that finite values near the float limit overflowed it."""
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(np.sum(array, dtype=np.float64)))


def as_feature_matrix(features, name: str = "features", allow_1d: bool = False,
                      allow_nan: bool = False, accept_sparse: bool = False) -> np.ndarray:
    """Return ``features`` as a finite, non-empty, real 2-D array.

    Parameters
    ----------
    features : array_like
        The feature matrix, (#samples, #features).
    name : str
        The argument name used in error messages.
    allow_1d : bool
        Accept a single 1-D sample and return it as a (1, #features) matrix.
    allow_nan : bool
        Accept NaN (missing values); infinite values are rejected either way.
    accept_sparse : bool
        Accept a scipy sparse matrix, returned as canonical CSR (:func:`bob_boost.sparse.as_sparse_rows`);
        otherwise one is a TypeError saying where sparse input is read.

    Returns
    -------
    numpy.ndarray or scipy.sparse matrix
        The validated matrix; integer and float dtypes are kept as they are.
    """
    if is_sparse(features):
        if not accept_sparse:
            raise InvalidTypeError(f"{name}: a scipy sparse matrix is read by the generic trainer (Boosting) with "
                                   f"stumps, look-up tables or gradient trees, and by every machine's prediction; "
                                   f"not here: pass a dense array (.toarray())")
        return as_sparse_rows(features, name, allow_nan)
    array = np.asarray(features)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.integer)
                                     or np.issubdtype(array.dtype, np.floating)
                                     or array.dtype == bool):
        raise InvalidTypeError(f"{name}: expected a numeric array, got dtype {array.dtype}")
    if array.dtype == bool:
        array = array.astype(np.uint8)
    if allow_1d and array.ndim == 1:
        array = array[np.newaxis, :]
    if array.ndim != 2:
        raise InvalidValueError(f"{name}: expected a 2-D array (#samples, #features), got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise InvalidValueError(f"{name}: empty array of shape {array.shape}")
    # one sum is finite exactly when every entry is (NaN and inf propagate), unless finite values
    # overflow it: then the entry-wise test decides; the sum costs half the entry-wise test
    if (np.issubdtype(array.dtype, np.floating) and not sum_is_finite(array)
            and not np.all(np.isfinite(array))):
        if not allow_nan:
            raise InvalidValueError(f"{name}: contains NaN or infinite values (NaN is accepted as a missing "
                                    f"value only by a trainer with missing='bin')")
        if np.any(np.isinf(array)):
            raise InvalidValueError(f"{name}: contains infinite values")
    return array


def as_score_matrix(values, name: str, n_samples: int | None = None) -> np.ndarray:
    """Return ``values`` as a finite float64 (#samples, #outputs) array.

    A 1-D input is taken as one output per sample.
    """
    array = np.asarray(values)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise InvalidTypeError(f"{name}: expected a numeric array, got dtype {array.dtype}")
    array = np.asarray(array, dtype=np.float64)
    if array.ndim == 1:
        array = array[:, np.newaxis]
    if array.ndim != 2:
        raise InvalidValueError(f"{name}: expected a 1-D or 2-D array, got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise InvalidValueError(f"{name}: empty array of shape {array.shape}")
    if n_samples is not None and array.shape[0] != n_samples:
        raise InvalidValueError(f"{name}: has {array.shape[0]} samples, expected {n_samples}")
    if not np.all(np.isfinite(array)):
        raise InvalidValueError(f"{name}: contains NaN or infinite values")
    return array


def check_scalar(x, name: str, target_type: type | tuple[type, ...], *, min_val=None, max_val=None,
                 include_boundaries: str = "both", finite: bool = True):
    """Validate a scalar parameter's type and range (scikit-learn's ``check_scalar`` signature).

    Parameters
    ----------
    x : object
        The value to check.
    name : str
        The argument name used in error messages.
    target_type : type or tuple of types
        Accepted types, e.g. ``numbers.Integral`` or ``numbers.Real``. Booleans
        are never accepted as numbers.
    min_val, max_val : float, optional
        Bounds of the accepted range.
    include_boundaries : {"both", "left", "right", "neither"}
        Which bounds belong to the range.
    finite : bool
        Reject NaN and infinite values (numbers only).

    Returns
    -------
    object
        ``x`` itself.

    Raises
    ------
    TypeError
        If ``x`` is not of ``target_type`` (or is a bool).
    ValueError
        If ``x`` lies outside the range, or is not finite when ``finite``.
    """
    if include_boundaries not in ("both", "left", "right", "neither"):
        raise InvalidValueError(f"include_boundaries: must be 'both', 'left', 'right' or 'neither', "
                                f"got {include_boundaries!r}")
    types = target_type if isinstance(target_type, tuple) else (target_type,)
    if isinstance(x, bool) or not isinstance(x, types):
        wanted = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
        raise InvalidTypeError(f"{name}: expected {wanted}, got {type(x).__name__}")
    left_closed = include_boundaries in ("both", "left")
    right_closed = include_boundaries in ("both", "right")
    outside = ((min_val is not None and (x < min_val if left_closed else x <= min_val))
               or (max_val is not None and (x > max_val if right_closed else x >= max_val)))
    not_finite = finite and isinstance(x, numbers.Real) and not math.isfinite(x)
    if outside or not_finite:
        allowed = _range_text(types, min_val, max_val, left_closed, right_closed, finite)
        raise InvalidValueError(f"{name}: must be {allowed}, got {x!r}")
    return x


_TYPE_NAMES = {numbers.Integral: "an integer", numbers.Real: "a real number", int: "an integer",
               float: "a real number"}


def _range_text(types, min_val, max_val, left_closed: bool, right_closed: bool, finite: bool) -> str:
    if min_val is not None and max_val is not None:
        return f"in {'[' if left_closed else '('}{min_val}, {max_val}{']' if right_closed else ')'}"
    integral = all(issubclass(t, numbers.Integral) for t in types)
    prefix = "a finite number " if finite and not integral else ""
    if min_val is not None:
        return f"{prefix}{'>=' if left_closed else '>'} {min_val}"
    if max_val is not None:
        return f"{prefix}{'<=' if right_closed else '<'} {max_val}"
    return "a finite number"


def check_positive_int(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int, raising if it is not an integer >= ``minimum``."""
    return int(check_scalar(value, name, numbers.Integral, min_val=minimum))


def check_same_samples(features: np.ndarray, targets: np.ndarray,
                       features_name: str = "features", targets_name: str = "targets") -> None:
    """Raise if the two arrays do not have the same number of rows."""
    if features.shape[0] != targets.shape[0]:
        raise InvalidValueError(
            f"{targets_name}: has {targets.shape[0]} samples but {features_name} has {features.shape[0]}")


def check_bool(value, name: str) -> bool:
    """Return ``value`` as a bool, raising unless it is True or False (a numpy bool included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidValueError(f"{name}: must be True or False, got {value!r}")
    return bool(value)


def check_choice(value, name: str, choices) -> str:
    """Return ``value`` if it is one of the strings ``choices``.

    Raises
    ------
    InvalidValueError
        Otherwise, listing the choices.
    """
    if not isinstance(value, str) or value not in choices:
        raise InvalidValueError(f"{name}: must be one of {tuple(choices)}, got {value!r}")
    return value


def check_sample_weight(sample_weight, n_samples: int, name: str = "sample_weight") -> np.ndarray:
    """Return per-sample weights as a new float64 (#samples,) array.

    Parameters
    ----------
    sample_weight : array_like or float or None
        One weight per sample, or a scalar for all of them; None means ones.
    n_samples : int
        The number of samples.
    name : str
        The argument name used in error messages.

    Raises
    ------
    InvalidTypeError
        For non-numeric weights.
    InvalidValueError
        For the wrong length, negative or non-finite weights, or all zeros.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    weights = np.asarray(sample_weight)
    if weights.dtype == object or not (np.issubdtype(weights.dtype, np.number) or weights.dtype == bool):
        raise InvalidTypeError(f"{name}: expected numbers, got dtype {weights.dtype}")
    weights = weights.astype(np.float64)
    if weights.ndim == 0:
        weights = np.full(n_samples, float(weights))
    if weights.shape != (n_samples,):
        raise InvalidValueError(f"{name}: expected shape ({n_samples},), got {weights.shape}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise InvalidValueError(f"{name}: must be finite and non-negative")
    if not np.any(weights > 0):
        raise InvalidValueError(f"{name}: every weight is zero")
    return weights


def check_integer_vector(values, name: str, noun: str = "labels") -> np.ndarray:
    """Return a non-empty 1-D vector of whole numbers (floats holding integers accepted) as int64.

    Parameters
    ----------
    values : array_like
        The vector.
    name : str
        The argument name used in error messages.
    noun : str
        What the values are, for the messages ("labels", "class indices").

    Raises
    ------
    InvalidTypeError
        For non-numeric (or complex) values.
    InvalidValueError
        For another shape, an empty vector, or values that are not whole numbers.
    """
    array = np.asarray(values)
    if (array.dtype == object or np.issubdtype(array.dtype, np.complexfloating)
            or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool)):
        raise InvalidTypeError(f"{name}: expected integer {noun}, got dtype {array.dtype}")
    if array.ndim != 1 or array.size == 0:
        raise InvalidValueError(f"{name}: expected a non-empty 1-D array of {noun}, got shape {array.shape}")
    if np.issubdtype(array.dtype, np.floating) and not np.all(np.isfinite(array) & (array == np.round(array))):
        raise InvalidValueError(f"{name}: {noun} must be integers")
    return array.astype(np.int64)


def mean_one(sample_weight: np.ndarray) -> np.ndarray:
    """``sample_weight`` rescaled to a mean of 1.

    Trainers work with these: integer weights then weigh as repeated samples do, and multiplying every
    weight by a positive constant leaves the model unchanged (bit for bit for powers of two, to rounding
    otherwise).
    """
    return sample_weight * (sample_weight.size / sample_weight.sum())
