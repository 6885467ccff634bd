"""Parquet and Arrow IPC (Feather) files through pyarrow (the ``arrow`` extra): whole, or rows at a time.

The eager table reader (:func:`bob_boost.io.tables.read_table`) reads a file whole; a row source (the Dask
lazy reader) reads its layout once and then any block of rows, from the Parquet row groups that hold them
or a slice of the memory-mapped Arrow file.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .._optional import optional_import
from ..exceptions import DataFormatError
from . import frames


def _pyarrow(suffix: str):
    return optional_import("pyarrow", f"reading {suffix} files")


@contextmanager
def _reading(path, suffix: str):
    """pyarrow, whose failures to read ``path`` become a :class:`~bob_boost.DataFormatError` naming it."""
    pa = _pyarrow(suffix)
    try:
        yield pa
    except (pa.ArrowException, OSError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DataFormatError(f"{path}: not a readable {suffix[1:]} file ({reason})") from None


def read(path: Path, suffix: str):
    """The whole file as a ``pyarrow.Table``.

    Raises
    ------
    DataFormatError
        When pyarrow cannot read it, naming the file.
    """
    with _reading(path, suffix):
        if suffix == ".parquet":
            return optional_import("pyarrow.parquet", f"reading {suffix} files").read_table(path)
        return optional_import("pyarrow.feather", f"reading {suffix} files").read_table(path)


def read_table(path: Path, suffix: str, target: str | None, with_target: bool | None,
               number_of_features: int | None, categories: dict[int, list] | None):
    """A Parquet or Arrow IPC file through pyarrow: numeric columns as they are (null as NaN), category and text
    columns as codes of ``categories`` (default their own; see :mod:`bob_boost.io.frames`): the
    :class:`~bob_boost.io.tables.Table` that :func:`bob_boost.io.tables.read_table` returns for it."""
    from .tables import Table, column_index, has_target  # the table reader imports this module
    table = read(path, suffix)
    names = [str(name) for name in table.column_names]
    labels = None
    if has_target(with_target, target, names, len(names), number_of_features):
        index = column_index(target, names, len(names), path)
        labels = table.column(index).to_numpy(zero_copy_only=False)
        table, names = table.remove_column(index), names[:index] + names[index + 1:]
    kept, columns = {}, []
    for j in range(len(names)):
        if frames.column_kind(table, "arrow", j) == "number":
            columns.append(table.column(j).to_numpy(zero_copy_only=False).astype(np.float64))
            continue
        own = categories is None or j not in categories
        kept[j] = frames.column_categories(table, "arrow", j) if own else list(categories[j])
        columns.append(frames.column_codes(table, "arrow", j, kept[j]))
    features = np.column_stack(columns) if columns else np.empty((table.num_rows, 0))
    if features.size and np.all(np.isfinite(features)) and np.all(features == np.round(features)):
        features = features.astype(np.int64)  # whole numbers, as the text tables read them
    return Table(features, labels, names, kept or None)


def layout(path: Path, suffix: str) -> tuple:
    """``(schema, row_groups)``: the file's Arrow schema and the first row of each Parquet row group or Arrow
    record batch, then the number of rows.

    Raises
    ------
    DataFormatError
        When pyarrow cannot read it, naming the file.
    """
    with _reading(path, suffix) as pa:
        if suffix == ".parquet":
            metadata = optional_import("pyarrow.parquet", "reading .parquet files").ParquetFile(path).metadata
            schema = metadata.schema.to_arrow_schema()
            sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
        else:
            with pa.memory_map(str(path)) as source:
                reader = pa.ipc.open_file(source)
                schema = reader.schema
                sizes = [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)]
    return schema, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def rows(path: str, suffix: str, columns: list[str], row_groups: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of ``columns``: a vector for one column, else a float64 matrix (null as NaN)."""
    table = _slice(path, suffix, columns, row_groups, start, stop)
    if len(columns) == 1:
        return table.column(0).to_numpy(zero_copy_only=False)
    return np.column_stack([table.column(j).to_numpy(zero_copy_only=False).astype(np.float64)
                            for j in range(table.num_columns)])


def _slice(path: str, suffix: str, columns: list[str], row_groups: np.ndarray, start: int, stop: int):
    """Rows ``start:stop`` of ``columns`` as a ``pyarrow.Table`` (the Parquet row groups that hold them only)."""
    pa = _pyarrow(suffix)
    if suffix == ".parquet":
        first = int(np.searchsorted(row_groups, start, side="right")) - 1
        last = int(np.searchsorted(row_groups, stop, side="left"))
        return optional_import("pyarrow.parquet", "reading .parquet files").ParquetFile(path).read_row_groups(
            list(range(first, last)), columns=columns).slice(start - int(row_groups[first]), stop - start)
    with pa.memory_map(path) as source:
        return pa.ipc.open_file(source).read_all().select(columns).slice(start, stop - start)


def coded_rows(path: str, suffix: str, columns: list[str], row_groups: np.ndarray, categories: dict[int, list],
               start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of ``columns`` as a float64 matrix: numbers as they are (null as NaN), the columns of
    ``categories`` (position to categories) as their codes (:func:`bob_boost.io.frames.column_codes`)."""
    table = _slice(path, suffix, columns, row_groups, start, stop)
    return np.column_stack([frames.column_codes(table, "arrow", j, categories[j]) if j in categories
                            else table.column(j).to_numpy(zero_copy_only=False).astype(np.float64)
                            for j in range(table.num_columns)])


def distinct_values(path: str, suffix: str, column: str, row_groups: np.ndarray, start: int, stop: int) -> list:
    """The distinct values (nulls left out) of ``column`` in rows ``start:stop``."""
    table = _slice(path, suffix, [column], row_groups, start, stop)
    return optional_import("pyarrow.compute", "reading Arrow files").unique(table.column(0).drop_null()).to_pylist()


def numpy_type(arrow_type) -> type | np.dtype:
    """The NumPy dtype a column of ``arrow_type`` reads as: its own for numbers, ``object`` for the rest."""
    pa = _pyarrow("Arrow")
    if pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) or pa.types.is_boolean(arrow_type):
        return np.dtype(arrow_type.to_pandas_dtype())
    return object
