"""Data frames of pandas, polars and pyarrow as the front doors read them: which columns hold categories or
text, their categories, and those columns as codes.

A column's categories are its dtype's (pandas ``category``, polars ``Enum``),
else its sorted distinct values; its codes are each value's position among
given categories, NaN for a missing value and ``len(categories)`` for a value
not among them (a code no tree split has seen). polars and Arrow columns are
read through ``pyarrow.compute``, not through pandas, and a frame with coded
columns is of its own type, the other columns shared with the original,
which is never modified.
"""
from __future__ import annotations

import sys

import numpy as np

from ..exceptions import InvalidValueError


def frame_kind(X) -> str | None:
    """``"pandas"``, ``"polars"`` or ``"arrow"`` for a data frame of that library, else None."""
    module = type(X).__module__
    if module.startswith("pandas") and hasattr(X, "dtypes") and hasattr(X, "columns"):
        return "pandas"
    if module.startswith("polars") and hasattr(X, "schema") and hasattr(X, "with_columns"):
        return "polars"
    if module.startswith("pyarrow") and hasattr(X, "schema") and hasattr(X, "set_column"):
        return "arrow"
    return None


def column_names(X, kind: str) -> list:
    """The column names of a frame of ``kind`` (:func:`frame_kind`)."""
    return list(X.columns) if kind in ("pandas", "polars") else list(X.column_names)


def column_kind(X, kind: str, j: int) -> str:
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


def column_categories(X, kind: str, j: int) -> list:
    """The categories of column ``j`` of a frame of ``kind``: its dtype's (pandas ``category``, polars
    ``Enum``), else its sorted distinct values.

    Raises
    ------
    ValueError
        For values that do not sort (numbers mixed with text).
    """
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


def column_codes(X, kind: str, j: int, categories: list) -> np.ndarray:
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


def with_columns(X, kind: str, columns: dict[int, np.ndarray]):
    """``X`` of its own type with ``columns`` (position to values) replaced, the others shared."""
    names = column_names(X, kind)
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
