"""Categorical features at the estimators' edge: which columns are categories, and pandas categories as codes.

``categorical_features`` takes feature indices, column names, a boolean mask,
None, or ``"from_dtype"`` (the default, as scikit-learn's
HistGradientBoosting): the columns of pandas ``category`` dtype. A categorical
column of ``category`` dtype reaches the trees as its category's position in
the categories ``fit`` saw (kept in the model), so prediction on new frames
maps the same strings or numbers to the same codes; a value not among them
gets a code of its own, which no split has seen (it goes right), and a
missing value stays NaN. Other categorical columns are used as they are:
non-negative integer codes.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import InvalidValueError
from ..weak_trainers.tree_categories import check_categorical_features

FROM_DTYPE = "from_dtype"


def _is_category(dtype) -> bool:
    return getattr(dtype, "name", None) == "category"


def _is_frame(X) -> bool:
    return type(X).__module__.startswith("pandas") and hasattr(X, "dtypes") and hasattr(X, "columns")


def check_option(option) -> None:
    """``categorical_features``' form (its indices and names are checked against ``X`` at ``fit``)."""
    if option is None or isinstance(option, str) and option == FROM_DTYPE:
        return
    if isinstance(option, str):
        raise InvalidValueError(f"categorical_features: must be {FROM_DTYPE!r}, None, feature indices, column "
                                f"names or a boolean mask, got {option!r}")
    values = list(option)
    if values and all(isinstance(v, str) for v in values):
        return
    check_categorical_features(values)


def coded_frame(estimator, X, reset: bool):
    """``X`` with its categorical ``category`` columns as float codes (a copy; ``X`` itself is untouched).

    At ``reset`` (a new fit) the categories of those columns are kept on the estimator
    (``_category_values``: column position to categories); later calls map with them.
    """
    option = getattr(estimator, "categorical_features", None)
    if reset:
        check_option(option)
        kept: dict[int, list] = {}
        if _is_frame(X):
            for j, (name, dtype) in enumerate(X.dtypes.items()):
                if _is_category(dtype) and _named(option, j, name, X.shape[1]):
                    kept[j] = dtype.categories.tolist()
        estimator._category_values = kept
    kept = getattr(estimator, "_category_values", {})
    if not kept or not _is_frame(X) or X.shape[1] <= max(kept):
        return X
    import pandas as pd  # a frame came in: pandas is there
    coded = X.copy()
    for j, categories in kept.items():
        column = X.iloc[:, j]
        codes = pd.Index(categories).get_indexer(column.astype(object)).astype(np.float64)
        codes[(codes < 0) & column.notna().to_numpy()] = len(categories)  # unseen: a code of its own
        codes[column.isna().to_numpy()] = np.nan
        coded.isetitem(j, codes)
    return coded


def _named(option, j: int, name, n_features: int) -> bool:
    """Whether column ``j`` (called ``name``) is categorical by ``option`` (before the indices are checked)."""
    if option is None:
        return False
    if isinstance(option, str):
        return True  # from_dtype: every category column
    values = list(option)
    if values and all(isinstance(v, str) for v in values):
        return name in values
    mask = np.asarray(values)
    if mask.dtype == bool:
        return mask.size == n_features and bool(mask[j])
    return j in set(int(v) for v in values)


def categorical_indices(estimator) -> np.ndarray | None:
    """The fitted estimator's categorical feature indices (None: none), checked against its features.

    Raises
    ------
    ValueError
        For names that are not columns of ``X``, or indices out of range.
    """
    option = getattr(estimator, "categorical_features", None)
    n_features = getattr(estimator, "n_features_in_", None)
    if option is None:
        return None
    if isinstance(option, str):
        kept = getattr(estimator, "_category_values", {})
        return np.array(sorted(kept), dtype=np.int64) if kept else None
    values = list(option)
    if values and all(isinstance(v, str) for v in values):
        names = getattr(estimator, "feature_names_in_", None)
        if names is None:
            raise InvalidValueError("categorical_features: names columns, but X has no column names; give feature "
                                    "indices instead")
        position = {name: j for j, name in enumerate(names.tolist())}
        unknown = [v for v in values if v not in position]
        if unknown:
            raise InvalidValueError(f"categorical_features: names {unknown[0]!r}, which is not a column of X")
        values = [position[v] for v in values]
    return check_categorical_features(values, n_features)


def metadata_of(estimator) -> dict[str, Any]:
    """The kept categories as the model's metadata (JSON: column position to its category list)."""
    kept = getattr(estimator, "_category_values", {})
    return {"categories": {str(j): list(values) for j, values in kept.items()}} if kept else {}


def restore(estimator, metadata: dict[str, Any]) -> None:
    """The kept categories of a loaded model."""
    estimator._category_values = {int(j): list(values) for j, values in metadata.get("categories", {}).items()}
