"""Categorical features at the estimators' edge: which columns are categories, and category columns as codes.

``categorical_features`` takes feature indices, column names, a boolean mask,
None, or ``"from_dtype"`` (the default, as scikit-learn's
HistGradientBoosting): the category columns of a data frame, that is pandas
``category`` columns, pandas Arrow dictionary columns, polars ``Categorical``
and ``Enum`` columns, and dictionary columns of a ``pyarrow.Table``. A
categorical column of such a type, or of strings, reaches the trees as its
category's position in the categories ``fit`` saw (kept in the model): the
dtype's categories for pandas ``category`` and polars ``Enum``, the sorted
distinct values otherwise. Prediction on new frames maps the same strings or
numbers to the same codes; a value not among them gets a code of its own,
which no split has seen (it goes right), and a missing value stays NaN. Other
categorical columns are used as they are: non-negative integer codes.

The frames are read by :mod:`bob_boost.io.frames`, which the command line's
Arrow files share.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import InvalidValueError
from ..io.frames import column_categories, column_codes, column_kind, column_names, frame_kind, with_columns
from ..weak_trainers.tree_categories import check_categorical_features

FROM_DTYPE = "from_dtype"


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
    """``X`` with its categorical category and text columns as float codes (``X`` itself is untouched).

    At ``reset`` (a new fit) the categories of those columns are kept on the estimator
    (``_category_values``: column position to categories); later calls map with them.
    """
    option = getattr(estimator, "categorical_features", None)
    kind = frame_kind(X)
    if reset:
        check_option(option)
        estimator._category_values = {} if kind is None else {
            j: column_categories(X, kind, j) for j, _ in categorical_columns(option, X, kind)}
    return coded_columns(X, kind, getattr(estimator, "_category_values", {}))


def categorical_columns(option, X, kind: str) -> list[tuple[int, str]]:
    """The positions and kinds (``"category"`` or ``"text"``) of the columns of a frame of ``kind`` that
    ``option`` (``categorical_features``) makes categorical, whose categories are kept; only the frame's
    types are read.

    Raises
    ------
    ValueError
        For a text column that ``option`` does not name.
    """
    names = column_names(X, kind)
    found = []
    for j, name in enumerate(names):
        column = column_kind(X, kind, j)
        if column != "number" and _named(option, j, name, len(names), column):
            found.append((j, column))
        elif column == "text":
            raise InvalidValueError(f"X: column {name!r} holds text; name it in categorical_features to split it "
                                    f"by its values as categories")
    return found


def coded_columns(X, kind: str | None, kept: dict[int, list]):
    """``X`` (a frame of ``kind``) with the columns of ``kept`` (position to categories) as their float codes;
    ``X`` itself when there are none or it is not such a frame."""
    if not kept or kind is None or len(column_names(X, kind)) <= max(kept):
        return X
    return with_columns(X, kind, {j: column_codes(X, kind, j, categories) for j, categories in kept.items()})


def _named(option, j: int, name, n_features: int, column: str) -> bool:
    """Whether column ``j`` (called ``name``, holding a ``column`` kind) is categorical by ``option`` (before the
    indices are checked)."""
    if option is None:
        return False
    if isinstance(option, str):
        return column == "category"  # from_dtype: the category columns
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
