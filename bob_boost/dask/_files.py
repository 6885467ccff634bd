"""Data files read lazily by the Dask workers, in row chunks, as :func:`bob_boost.io.tables.read_table` reads
them eagerly.

The readers follow the table reader's own rules (its dataset names, ``group``, ``target``, the header test,
integer features: :func:`~bob_boost.io.tables.has_header`, :func:`~bob_boost.io.tables.has_target`,
:func:`~bob_boost.io.tables.column_index`), so a file means the same read either way:

- HDF5 and NPY: one task per row block opens the file, reads its rows and closes it, so that workers in other
  processes read their own rows; the caller's process reads only shapes and dtypes.
- CSV/TSV/TXT (optionally .gz): :func:`dask.dataframe.read_csv` (the ``dask[dataframe]`` extra). One pass on
  the cluster finds the block lengths, whether every feature is whole and the distinct labels; a gzip file is
  one block.
- Parquet and Arrow IPC (Feather): one task per row block reads the Parquet row groups that hold its rows, or
  its slice of the memory-mapped Arrow file, through pyarrow (the ``arrow`` extra); category and text
  columns are coded by their sorted distinct values (one pass on the cluster), as the in-memory reader codes
  them, or by a model's categories.

Every problem with a file is a :class:`~bob_boost.exceptions.DataFormatError` naming it: at once for what the
header and shapes show, else (NaN, say) from the task that reads the rows, on the current Dask client.
"""
from __future__ import annotations

import functools
import gzip
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validation import check_positive_int
from ..exceptions import DataFormatError, InvalidValueError
from ..io import _delimited
from ..io import arrow_files, frames, row_files
from ..io.tables import (ARROW_SUFFIXES, HDF5_SUFFIXES, TABLE_SUFFIXES, column_index, format_suffix, has_header,
                         has_target)
from . import _dask
# Dask itself comes through _dask, the one module that imports it (and names the extra when it is missing)
from ._dask import da, dask

logger = logging.getLogger(__name__)

#: Features per chunk when ``chunk_rows`` is not given (bytes): small enough for several chunks per worker,
#: large enough that each round's per-chunk tasks stay few.
CHUNK_BYTES = 64 << 20

#: Lines of a text table read by the caller to find its header, delimiter and line length.
PEEK_LINES = 100


@dataclass
class LazyTable:
    """Features and (optional) labels of a data file as Dask arrays with the same known row chunks.

    Attributes
    ----------
    features : dask.array.Array
        (#samples, #features), the columns in one chunk; int64 for whole numbers in a text table, as in
        memory, and the stored dtype of HDF5 and NPY (booleans as int64).
    labels : dask.array.Array or None
        (#samples,) labels (numbers, or text as an object array); None when the file has none or they
        were not asked for.
    feature_names : list of str or None
        Column names from a header line.
    classes : numpy.ndarray or None
        The distinct labels, when the reader found them already (CSV).
    categories : dict or None
        A Parquet or Arrow file's category and text columns (feature position to its sorted categories), whose
        codes the features hold, as :func:`bob_boost.io.tables.read_table` codes them.
    """

    features: da.Array
    labels: da.Array | None
    feature_names: list[str] | None = None
    classes: np.ndarray | None = None
    categories: dict[int, list] | None = None

    def distinct_labels(self) -> np.ndarray:
        """The sorted distinct labels (computed on the cluster unless known), typed as the in-memory reader
        types them (text as a fixed-width str array)."""
        if self.labels is None:
            raise InvalidValueError("labels: the table has none (read without labels)")
        classes = self.classes if self.classes is not None else _dask.distinct_labels(self.labels)
        if classes.dtype == object:
            return np.asarray([str(c) for c in classes.tolist()], dtype=str)
        return classes


def read_lazy_table(path: str | Path, target: str | None = None, with_target: bool | None = True,
                    number_of_features: int | None = None, group: str | None = None,
                    chunk_rows: int | None = None, want_labels: bool = True,
                    categories: dict[int, list] | None = None) -> LazyTable:
    """Read a data file lazily, as :func:`bob_boost.io.tables.read_table` reads it eagerly.

    Parameters
    ----------
    path : path
        HDF5, NPY, CSV/TSV/TXT (optionally .gz), Parquet or Arrow IPC (Feather) file.
    target, with_target, number_of_features, group
        As :func:`~bob_boost.io.tables.read_table`.
    chunk_rows : int, optional
        Rows per chunk; default about :data:`CHUNK_BYTES` of features (a multiple of an HDF5 dataset's
        own row chunks). Text tables: about this many rows per block of the text.
    want_labels : bool
        False leaves the labels out (prediction): a target column is still split off, but never read.
    categories : dict, optional
        Parquet and Arrow files: the categories of their category and text columns (feature position to
        categories, a model's), coded with them; by default their own, found on the cluster.

    Returns
    -------
    LazyTable
        The lazy features and labels; nothing but shapes, dtypes and (text tables) one pass of summaries
        has been computed.

    Raises
    ------
    DataFormatError
        For every problem with the file, naming it, and for a format that cannot be read in row chunks
        (NPZ: an archive compressed as a whole).
    InvalidValueError
        For a ``chunk_rows`` that is not a positive integer.
    ImportError
        For a text table without ``dask.dataframe``, naming the extra that installs it.
    """
    path = Path(path)  # as the caller wrote it, for messages; the tasks open row_files.located(path)
    if chunk_rows is not None:
        chunk_rows = check_positive_int(chunk_rows, "chunk_rows")
    if not path.is_file():
        raise DataFormatError(f"{path}: no such file")
    suffix = format_suffix(path)
    if suffix in HDF5_SUFFIXES:
        table = _hdf5_table(path, group, with_target, chunk_rows, want_labels)
    elif suffix == ".npy":
        table = _npy_table(path, target, with_target, number_of_features, chunk_rows, want_labels)
    elif suffix in TABLE_SUFFIXES:
        table = _delimited_table(path, target, with_target, number_of_features, chunk_rows, want_labels)
    elif suffix in ARROW_SUFFIXES:
        table = _arrow_table(path, suffix, target, with_target, number_of_features, chunk_rows, want_labels,
                             categories)
    else:
        raise DataFormatError(f"{path}: only HDF5, NPY, CSV/TSV/TXT, Parquet and Arrow files are read lazily, not "
                              f"{suffix or '(no suffix)'!r} (an NPZ archive is compressed as a whole: convert it "
                              f"to HDF5 or NPY)")
    if with_target and want_labels and table.labels is None:
        raise DataFormatError(f"{path}: no labels found")
    width = table.features.shape[1]
    if number_of_features is not None and width != number_of_features:
        raise DataFormatError(f"{path}: has {width} feature columns but the model expects {number_of_features}")
    if table.features.shape[0] == 0 or width == 0:
        raise DataFormatError(f"{path}: no data (features of shape {table.features.shape})")
    logger.debug("%s: %d samples, %d features in %d chunks", path, *table.features.shape,
                 len(table.features.chunks[0]))
    return table


# -- tasks run on the workers ----------------------------------------------------------------------

def _finite(block: np.ndarray, source: str, what: str) -> np.ndarray:
    """``block``, checked where it is read (no pass of its own over the file)."""
    if not np.all(np.isfinite(block)):
        raise DataFormatError(f"{source}: {what} contain NaN or infinite values")
    return block


def _clean_labels(values: np.ndarray, numeric: bool) -> np.ndarray:
    """Text cells stripped as the in-memory reader strips them; numbers as float64."""
    text = np.char.strip(np.asarray(values, dtype=str))
    return text.astype(np.float64) if numeric else text.astype(object)


def _partition_summary(frame, feature_columns: list[str], label_column: str | None):
    """Rows, whether every feature is finite and whole, and the distinct labels of one text block."""
    values = frame[feature_columns].to_numpy(dtype=np.float64)
    finite = bool(np.isfinite(values).all())
    whole = finite and bool(np.all(values == np.round(values)) and np.all(np.abs(values) < 2 ** 53))
    labels = None
    if label_column is not None:
        labels = np.unique(np.char.strip(np.asarray(frame[label_column].to_numpy(), dtype=str)))
    return len(frame), finite, whole, labels


# -- HDF5 and NPY ----------------------------------------------------------------------------------

def _row_blocks(rows: int, chunk_rows: int) -> list[tuple[int, int]]:
    return [(start, min(start + chunk_rows, rows)) for start in range(0, rows, chunk_rows)]


def _default_rows(row_bytes: int, stored_rows: int | None = None) -> int:
    """Rows of about :data:`CHUNK_BYTES`, a multiple of the file's own chunking (each is then read once)."""
    rows = max(1, CHUNK_BYTES // max(1, row_bytes))
    if stored_rows:
        rows = max(stored_rows, rows // stored_rows * stored_rows)
    return rows


def _lazy_rows(read, blocks: list[tuple[int, int]], tail: tuple[int, ...], dtype) -> da.Array:
    """The blocks ``read(start, stop)`` returns, stacked by rows (one task per block)."""
    parts = [da.from_delayed(dask.delayed(read, pure=True)(start, stop), shape=(stop - start, *tail), dtype=dtype)
             for start, stop in blocks]
    return da.concatenate(parts, axis=0) if len(parts) > 1 else parts[0]


def _hdf5_table(path: Path, group: str | None, with_target: bool | None, chunk_rows: int | None,
                want_labels: bool) -> LazyTable:
    source = row_files.hdf5_rows(path, group, with_target is not False and want_labels)
    width = int(np.prod(source.shape))  # images: one row per sample
    blocks = _row_blocks(source.rows, chunk_rows or _default_rows(width * source.dtype.itemsize, source.stored_rows))
    features = _lazy_rows(source.features, blocks, source.shape, source.dtype)
    table = LazyTable(_checked(features.reshape(source.rows, width) if features.ndim > 2 else features, path,
                               "features"), None)
    if source.labels is not None:
        table.labels = _checked(_lazy_rows(source.labels, blocks, (), source.label_dtype), path, "labels")
    return table


def _checked(values: da.Array, path: Path, what: str) -> da.Array:
    """Booleans as integers (the Dask trainers take numbers only); floats checked for NaN block by block."""
    if values.dtype == bool:
        return values.astype(np.int64)
    if np.issubdtype(values.dtype, np.floating):
        return values.map_blocks(_finite, str(path), what, dtype=values.dtype)
    return values


def _npy_table(path: Path, target: str | None, with_target: bool | None, number_of_features: int | None,
               chunk_rows: int | None, want_labels: bool) -> LazyTable:
    source = row_files.npy_rows(path)
    width = source.shape[0]
    blocks = _row_blocks(source.rows, chunk_rows or _default_rows(width * source.dtype.itemsize))
    lazy = _lazy_rows(source.features, blocks, source.shape, source.dtype)
    if not has_target(with_target, target, None, width, number_of_features):
        return LazyTable(_checked(lazy, path, "features"), None)
    index = column_index(target, None, width, path)
    features = lazy[:, [c for c in range(width) if c != index]]
    labels = _checked(lazy[:, index], path, "labels") if want_labels else None
    return LazyTable(_checked(features, path, "features"), labels)


# -- Parquet and Arrow ------------------------------------------------------------------------------

def _arrow_categories(path: Path, suffix: str, column: str, row_groups: np.ndarray, blocks: list) -> list:
    """The sorted distinct values of a category or text column, as the in-memory reader finds them: every
    block's on the cluster, merged here."""
    read = functools.partial(arrow_files.distinct_values, row_files.located(path), suffix, column, row_groups)
    found = set().union(*dask.compute(*[dask.delayed(read, pure=True)(a, b) for a, b in blocks]))
    try:
        return sorted(found)
    except TypeError:
        raise DataFormatError(f"{path}: column {column!r} mixes values that do not compare "
                              f"({sorted({type(v).__name__ for v in found})})") from None


def _arrow_table(path: Path, suffix: str, target: str | None, with_target: bool | None,
                 number_of_features: int | None, chunk_rows: int | None, want_labels: bool,
                 categories: dict[int, list] | None = None) -> LazyTable:
    schema, row_groups = arrow_files.layout(path, suffix)
    names = [str(name) for name in schema.names]
    label = None
    if has_target(with_target, target, names, len(names), number_of_features):
        label = names[column_index(target, names, len(names), path)]
    columns = [name for name in names if name != label]
    empty = schema.empty_table().select(columns)
    coded = [j for j in range(len(columns)) if frames.column_kind(empty, "arrow", j) != "number"]
    blocks = _row_blocks(int(row_groups[-1]), chunk_rows or _default_rows(8 * len(columns)))
    kept = {j: list(categories[j]) if categories and j in categories
            else _arrow_categories(path, suffix, columns[j], row_groups, blocks) for j in coded}
    read = functools.partial(arrow_files.coded_rows, row_files.located(path), suffix, columns, row_groups, kept)
    table = LazyTable(_checked(_lazy_rows(read, blocks, (len(columns),), np.float64), path, "features"), None,
                      columns, categories=kept or None)
    if label is not None and want_labels:
        dtype = arrow_files.numpy_type(schema.field(label).type)
        read = functools.partial(arrow_files.rows, row_files.located(path), suffix, [label], row_groups)
        table.labels = _checked(_lazy_rows(read, blocks, (), dtype), path, "labels")
    return table


# -- delimited text --------------------------------------------------------------------------------

def _peek(path: Path) -> tuple[list[str], bool]:
    """The first lines of a (possibly gzip-compressed) text table, and whether it is compressed."""
    with open(path, "rb") as handle:
        compressed = handle.read(2) == b"\x1f\x8b"
    lines = []
    try:
        with (gzip.open(path, "rt", newline="") if compressed else open(path, newline="")) as handle:
            for line in handle:
                lines.append(line)
                if len(lines) == PEEK_LINES:
                    break
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as error:
        raise DataFormatError(f"{path}: not a readable text table ({error})") from None
    return lines, compressed


def _read_csv(path: Path, **options):
    """:func:`dask.dataframe.read_csv` of ``path``; its absence is an ImportError naming the extra."""
    try:
        read_csv = _dask.dataframe_reader()
    except ImportError as error:
        raise ImportError(f"{path}: reading CSV/TSV/TXT lazily needs dask.dataframe ({_one_line(error)}): "
                          f"pip install \"dask[dataframe]\", or convert the file to HDF5") from None
    try:
        return read_csv(row_files.located(path), **options)
    except ValueError as error:
        raise DataFormatError(f"{path}: {_parser_message(error)}") from None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _parser_message(error: ValueError) -> str:
    """pandas' own message, without the sentence Dask wraps it in."""
    return _one_line(error).split("Original Message: ", 1)[-1]


def _delimited_table(path: Path, target: str | None, with_target: bool | None, number_of_features: int | None,
                     chunk_rows: int | None, want_labels: bool) -> LazyTable:
    lines, compressed = _peek(path)
    suffix = format_suffix(path)
    head = "".join(lines)
    delimiter = "\t" if suffix == ".tsv" or (suffix == ".txt" and "," not in head and "\t" in head) else ","
    first = _delimited.rows(head, delimiter, limit=2)
    if not first:
        raise DataFormatError(f"{path}: empty file")
    width = len(first[0])
    names = first[0] if has_header(first) else None
    index = (column_index(target, names, width, path)
             if has_target(with_target, target, names, width, number_of_features) else None)
    columns = [f"c{i}" for i in range(width)]  # our own names: a header's may repeat
    feature_columns = [c for i, c in enumerate(columns) if i != index]
    if not feature_columns:
        raise DataFormatError(f"{path}: no data (no feature columns besides the target)")
    label_column = None if index is None or not want_labels else columns[index]
    blocksize: int | str | None = "default"
    if compressed:
        blocksize = None
        logger.warning("%s: a gzip file is one chunk (it cannot be split); convert it to HDF5 for parallel "
                       "reading", path)
    elif chunk_rows is not None:
        line_bytes = max(1, len(head.encode()) // max(1, len(lines)))
        blocksize = max(4096, chunk_rows * line_bytes)
    dtypes = {c: np.float64 for c in feature_columns}
    if label_column is not None:
        dtypes[label_column] = str
    frame = _read_csv(path, sep=delimiter, header=0 if names else None, names=columns,
                      usecols=feature_columns + ([label_column] if label_column else []), dtype=dtypes,
                      blocksize=blocksize, compression="gzip" if compressed else None, skipinitialspace=True,
                      na_filter=False)
    parts = frame.to_delayed()
    try:
        summaries = dask.compute(*[dask.delayed(_partition_summary)(part, feature_columns, label_column)
                                   for part in parts])
    except ValueError as error:  # pandas' parser errors: a cell that is not a number, a ragged row
        raise DataFormatError(f"{path}: {_parser_message(error)}") from None
    lengths = tuple(int(s[0]) for s in summaries)
    if not sum(lengths):
        raise DataFormatError(f"{path}: no data rows")
    if not all(s[1] for s in summaries):
        raise DataFormatError(f"{path}: features contain NaN or infinite values")
    features = _known_rows(frame[feature_columns], lengths)
    if all(s[2] for s in summaries):  # integer features, as the in-memory reader gives them
        features = features.astype(np.int64)
    feature_names = [n for i, n in enumerate(names) if i != index] if names else None
    table = LazyTable(features, None, feature_names)
    if label_column is not None:
        distinct = np.unique(np.concatenate([s[3] for s in summaries]))
        numeric = distinct.size > 0 and all(_delimited.is_number(c) for c in distinct.tolist())
        table.classes = _delimited.numeric(distinct.astype(np.float64)) if numeric else distinct
        table.labels = _known_rows(frame[label_column], lengths).map_blocks(
            _clean_labels, numeric, dtype=np.float64 if numeric else object)
    return table


def _known_rows(frame, lengths: tuple[int, ...]) -> da.Array:
    """A dataframe's (or series') values as a Dask array chunked by its blocks' known lengths, empty ones dropped."""
    with warnings.catch_warnings():
        # a text column comes back as an object array, which is what the labels want
        warnings.filterwarnings("ignore", message=".*extension dtypes.*", category=UserWarning)
        array = frame.to_dask_array(lengths=list(lengths))
    if 0 in lengths:  # a block past the last line, or of blank lines only
        kept = tuple(n for n in lengths if n)
        array = array.rechunk((kept,) + tuple((s,) for s in array.shape[1:]))
    return array
