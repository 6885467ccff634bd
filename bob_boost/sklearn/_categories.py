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

Polars and Arrow tables are read through Arrow (``pyarrow.compute``), not
through pandas; the frame given to scikit-learn's validation is of the
caller's type with the coded columns replaced, the others shared, never
modified.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..exceptions import InvalidValueError
from ..weak_trainers.tree_categories import check_categorical_features

FROM_DTYPE = "from_dtype"


def _kind(X) -> str | None:
    """``"pandas"``, ``"polars"`` or ``"arrow"`` for a data frame of that library, else None."""
    module = type(X).__module__
    if module.startswith("pandas") and hasattr(X, "dtypes") and hasattr(X, "columns"):
        return "pandas"
    if module.startswith("polars") and hasattr(X, "schema") and hasattr(X, "with_columns"):
        return "polars"
    if module.startswith("pyarrow") and hasattr(X, "schema") and hasattr(X, "set_column"):
        return "arrow"
    return None


def _names(X, kind: str) -> list:
    return list(X.columns) if kind in ("pandas", "polars") else list(X.column_names)


def _column_kind(X, kind: str, j: int) -> str:
    """``"category"``, ``"text"`` or ``"number"``: what column ``j`` holds by its type."""
    if kind == "pandas":
        dtype = X.dtypes.iloc[j]
        if getattr(dtype, "name", None) == "category":
            return "category"
        arrow = getattr(dtype, "pyarrow_dtype", None)
        if arrow is not None:
            return _arrow_kind(arrow)
        return "text" if dtype.kind in "OSU" or getattr(dtype, "name", "") == "string" else "number"
    if kind == "polars":
        name = type(X.schema[X.columns[j]]).__name__
        return {"Categorical": "category", "Enum": "category", "String": "text"}.get(name, "number")
    return _arrow_kind(X.schema.types[j])


def _arrow_kind(arrow_type) -> str:
    import pyarrow as pa  # an Arrow type came in: pyarrow is there
    if pa.types.is_dictionary(arrow_type):
        return "category"
    return "text" if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) else "number"


def _arrow_column(X, kind: str, j: int):
    """Column ``j`` as a pyarrow array (dictionaries decoded), or None for a pandas column without Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if kind == "polars":
        column = X.to_series(j).to_arrow()
    elif kind == "arrow":
        column = X.column(j)
    elif getattr(X.dtypes.iloc[j], "pyarrow_dtype", None) is not None:
        column = pa.array(X.iloc[:, j].array)  # through __arrow_array__: no copy
    else:
        return None
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(column.type):
        column = pc.cast(column, column.type.value_type)
    return column


def _categories(X, kind: str, j: int) -> list:
    """The categories of column ``j``: its dtype's (pandas ``category``, polars ``Enum``), else its sorted
    distinct values."""
    if kind == "pandas" and getattr(X.dtypes.iloc[j], "name", None) == "category":
        return X.dtypes.iloc[j].categories.tolist()
    if kind == "polars" and type(X.schema[X.columns[j]]).__name__ == "Enum":
        return list(X.schema[X.columns[j]].categories.to_list())
    column = _arrow_column(X, kind, j)
    if column is None:
        values = X.iloc[:, j].dropna().unique().tolist()
    else:
        import pyarrow.compute as pc
        values = pc.unique(column.drop_null()).to_pylist()
    try:
        return sorted(values)
    except TypeError:
        raise InvalidValueError(f"categorical_features: column {j} mixes values that do not compare "
                                f"({sorted({type(v).__name__ for v in values})})") from None


def _codes(X, kind: str, j: int, categories: list) -> np.ndarray:
    """Column ``j``'s float codes: positions in ``categories``, NaN for a missing value, ``len(categories)`` for
    any other value."""
    column = _arrow_column(X, kind, j)
    if column is None:
        import pandas as pd  # a pandas frame came in
        values = X.iloc[:, j]
        codes = pd.Index(categories).get_indexer(values.astype(object)).astype(np.float64)
        missing = values.isna().to_numpy()
    else:
        import pyarrow as pa
        import pyarrow.compute as pc
        found = pc.index_in(column, value_set=pa.array(categories, type=column.type))
        codes = found.to_numpy(zero_copy_only=False).astype(np.float64)  # nulls become NaN
        missing = column.is_null().to_numpy(zero_copy_only=False)
    codes[np.isnan(codes) | (codes < 0)] = len(categories)  # unseen (and missing, set back below)
    codes[missing] = np.nan
    return codes


def _replaced(X, kind: str, columns: dict[int, np.ndarray]):
    """``X`` of its own type with ``columns`` (position to values) replaced, the others shared."""
    names = _names(X, kind)
    if kind == "pandas":
        coded = X.copy(deep=False)
        for j, values in columns.items():
            coded.isetitem(j, values)
        return coded
    if kind == "polars":
        polars = sys.modules["polars"]
        return X.with_columns([polars.Series(str(names[j]), values) for j, values in columns.items()])
    import pyarrow as pa
    for j, values in columns.items():
        X = X.set_column(j, names[j], pa.array(values))
    return X


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
    kind = _kind(X)
    if reset:
        check_option(option)
        kept: dict[int, list] = {}
        if kind is not None:
            names = _names(X, kind)
            for j, name in enumerate(names):
                column = _column_kind(X, kind, j)
                if column != "number" and _named(option, j, name, len(names), column):
                    kept[j] = _categories(X, kind, j)
                elif column == "text":
                    raise InvalidValueError(f"X: column {name!r} holds text; name it in categorical_features to "
                                            f"split it by its values as categories")
        estimator._category_values = kept
    kept = getattr(estimator, "_category_values", {})
    if not kept or kind is None or len(_names(X, kind)) <= max(kept):
        return X
    return _replaced(X, kind, {j: _codes(X, kind, j, categories) for j, categories in kept.items()})


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
