"""Argument checks shared by the public entry points.

Every function returns a new (or read-only view of an) array and never
modifies what the caller passed in; errors name the offending argument.
"""
from __future__ import annotations

import numbers

import numpy as np


def as_feature_matrix(features, name: str = "features", allow_1d: bool = False) -> np.ndarray:
    """Return ``features`` as a finite, non-empty, real 2-D array.

    Parameters
    ----------
    features : array_like
        The feature matrix, (#samples, #features).
    name : str
        The argument name used in error messages.
    allow_1d : bool
        Accept a single 1-D sample and return it as a (1, #features) matrix.

    Returns
    -------
    numpy.ndarray
        The validated matrix; integer and float dtypes are kept as they are.
    """
    array = np.asarray(features)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.integer)
                                     or np.issubdtype(array.dtype, np.floating)
                                     or array.dtype == bool):
        raise TypeError(f"{name}: expected a numeric array, got dtype {array.dtype}")
    if array.dtype == bool:
        array = array.astype(np.uint8)
    if allow_1d and array.ndim == 1:
        array = array[np.newaxis, :]
    if array.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (#samples, #features), got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name}: empty array of shape {array.shape}")
    if np.issubdtype(array.dtype, np.floating) and not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return array


def as_score_matrix(values, name: str, n_samples: int | None = None) -> np.ndarray:
    """Return ``values`` as a finite float64 (#samples, #outputs) array.

    A 1-D input is taken as one output per sample.
    """
    array = np.asarray(values)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise TypeError(f"{name}: expected a numeric array, got dtype {array.dtype}")
    array = np.asarray(array, dtype=np.float64)
    if array.ndim == 1:
        array = array[:, np.newaxis]
    if array.ndim != 2:
        raise ValueError(f"{name}: expected a 1-D or 2-D array, got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name}: empty array of shape {array.shape}")
    if n_samples is not None and array.shape[0] != n_samples:
        raise ValueError(f"{name}: has {array.shape[0]} samples, expected {n_samples}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return array


def check_positive_int(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int, raising if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {value}")
    return int(value)


def check_same_samples(features: np.ndarray, targets: np.ndarray,
                       features_name: str = "features", targets_name: str = "targets") -> None:
    """Raise if the two arrays do not have the same number of rows."""
    if features.shape[0] != targets.shape[0]:
        raise ValueError(
            f"{targets_name}: has {targets.shape[0]} samples but {features_name} has {features.shape[0]}")
