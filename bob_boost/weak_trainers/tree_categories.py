"""Categorical features of gradient trees: their checks, their categories, and the sets of a grown tree.

The kernels split a categorical feature by a set of its bins
(:mod:`bob_boost.engine.categorical`); a feature has a bin per category, so
the machine's sets are the categories of those bins.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..engine import grown_trees
from ..engine.categorical import CATEGORY_WORDS, checked_categories
from ..exceptions import InvalidTypeError, InvalidValueError
from ..sparse import is_sparse

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
        column = np.asarray(features[:, [f]].toarray()[:, 0] if is_sparse(features) else features[:, f],
                            dtype=np.float64)
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


class CategoryTable:
    """The categories of every categorical feature, laid out to turn a grown tree's bin sets into category values
    (made once per training run: every round's trees read it)."""

    def __init__(self, categories: dict[int, np.ndarray], n_features: int) -> None:
        self.categorical = np.zeros(n_features + 1, dtype=bool)  # the last entry: a leaf's feature -1
        self.slot = np.zeros(n_features + 1, dtype=np.int64)
        self.table = np.zeros((len(categories), 64 * CATEGORY_WORDS))
        self.sizes = np.zeros(len(categories), dtype=np.int64)
        for k, f in enumerate(sorted(categories)):
            self.categorical[f], self.slot[f], self.sizes[k] = True, k, categories[f].size
            self.table[k, :self.sizes[k]] = categories[f]

    def sets(self, node_feature: np.ndarray, node_sets: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """A grown tree's category values going left, as :class:`~bob_boost.weak.TreeMachine`'s ``(offsets,
        values)``, from its (#nodes, CATEGORY_WORDS) bin sets; None when no node splits a categorical feature."""
        offsets, values, splits = grown_trees.category_sets(
            np.ascontiguousarray(node_feature, dtype=np.int64), np.ascontiguousarray(node_sets, dtype=np.uint64),
            self.categorical, self.slot, self.sizes, self.table)
        return (offsets, values) if splits else None
