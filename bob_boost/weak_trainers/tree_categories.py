"""Categorical features of gradient trees: their checks, their categories, and the sets of a grown tree.

The kernels split a categorical feature by a set of its bins
(:mod:`bob_boost.engine.categorical`); a feature has a bin per category, so
the machine's sets are the categories of those bins.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..engine.categorical import CATEGORY_WORDS, checked_categories
from ..exceptions import InvalidTypeError, InvalidValueError

def check_categorical_features(categorical_features, n_features: int | None = None,
                               name: str = "categorical_features") -> np.ndarray | None:
    """The sorted feature indices of ``categorical_features`` (indices, or a boolean mask of every feature),
    or None for none; indices are checked against ``n_features`` when it is known."""
    if categorical_features is None:
        return None
    array = np.asarray(categorical_features)
    if array.ndim != 1:
        raise InvalidValueError(f"{name}: expected a 1-D list of feature indices or a boolean mask, got shape "
                                f"{array.shape}")
    if array.dtype == bool:
        if n_features is not None and array.size != n_features:
            raise InvalidValueError(f"{name}: a boolean mask needs one entry per feature ({n_features}), got "
                                    f"{array.size}")
        indices = np.flatnonzero(array)
    elif array.size == 0 or np.issubdtype(array.dtype, np.integer):
        indices = array.astype(np.int64)
    else:
        raise InvalidTypeError(f"{name}: expected feature indices (integers) or a boolean mask, got {array.dtype}")
    if np.any(indices < 0) or (n_features is not None and np.any(indices >= n_features)):
        raise InvalidValueError(f"{name}: feature indices must be in [0, {n_features if n_features else 'n'}), got "
                                f"{indices.tolist()}")
    if np.unique(indices).size != indices.size:
        raise InvalidValueError(f"{name}: lists a feature twice: {indices.tolist()}")
    return np.sort(indices) if indices.size else None


def categorical_mask(indices: np.ndarray | None, n_features: int) -> np.ndarray:
    """The kernels' (#features,) bool categorical features, or an empty array without any."""
    if indices is None:
        return np.zeros(0, dtype=np.bool_)
    mask = np.zeros(n_features, dtype=np.bool_)
    mask[indices] = True
    return mask


def feature_categories(features: np.ndarray, indices: np.ndarray | None, max_bins: int | None,
                       missing: bool) -> dict[int, np.ndarray]:
    """Each categorical feature's sorted categories (its distinct values other than NaN).

    Raises
    ------
    ValueError
        For a value that is not a non-negative integer (NaN only with missing values), or a feature with more
        categories than :func:`category_limit`.
    """
    categories = {}
    for f in (() if indices is None else indices.tolist()):
        column = np.asarray(features[:, f], dtype=np.float64)
        categories[int(f)] = checked_categories(f, np.unique(column[~np.isnan(column)] if missing else column),
                                                max_bins, missing)
    return categories


def check_category_parameters(cat_smooth, cat_l2, max_cat_threshold, max_cat_to_onehot, min_data_per_group) -> None:
    """The categorical-split parameters' types and ranges (see :class:`~bob_boost.TreeTrainer`)."""
    for name, value, kind in (("cat_smooth", cat_smooth, numbers.Real), ("cat_l2", cat_l2, numbers.Real),
                              ("max_cat_threshold", max_cat_threshold, numbers.Integral),
                              ("max_cat_to_onehot", max_cat_to_onehot, numbers.Integral),
                              ("min_data_per_group", min_data_per_group, numbers.Integral)):
        if isinstance(value, bool) or not isinstance(value, kind):
            raise InvalidTypeError(f"{name}: expected a{'n integer' if kind is numbers.Integral else ' number'}, "
                                   f"got {type(value).__name__}")
        low = 1 if name == "max_cat_threshold" else 0
        if not value >= low or not np.isfinite(value):
            raise InvalidValueError(f"{name}: must be >= {low}, got {value!r}")


def node_category_sets(node_feature: np.ndarray, node_sets: np.ndarray, categories: dict[int, np.ndarray]
                       ) -> list[np.ndarray | None] | None:
    """A grown tree's per-node category values going left (None for other nodes), from its (#nodes,
    CATEGORY_WORDS) bin sets; None when no node splits a categorical feature."""
    if not categories or not any(int(f) in categories for f in node_feature[node_feature >= 0]):
        return None
    bit_positions = np.arange(64 * CATEGORY_WORDS)
    result: list[np.ndarray | None] = []
    for f, words in zip(node_feature.tolist(), node_sets):
        if f not in categories:
            result.append(None)
            continue
        bits = (words[bit_positions // 64] >> (bit_positions % 64).astype(np.uint64)) & np.uint64(1)
        values = categories[f]
        # the missing values' bin follows the categories' bins: its membership is missing_left
        chosen = np.flatnonzero(bits[:values.size])
        result.append(values[chosen] if chosen.size else None)
    return result
