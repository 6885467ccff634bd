"""The lazy data-file readers of :mod:`bob_boost.dask._files` on a local Dask cluster (two workers; two worker
processes where the test shows the workers read the file), against the in-memory
:func:`bob_boost.io.tables.read_table`: the same arrays, and the library's own errors."""
from __future__ import annotations

import csv
import gzip
import sys

import h5py
import numpy as np
import pytest

from bob_boost.exceptions import DataFormatError, InvalidValueError
from bob_boost.io.tables import read_table

da = pytest.importorskip("dask.array", reason="the lazy readers need the dask extra (pip install \"bob_boost[dask]\")")
distributed = pytest.importorskip("distributed", reason="the lazy readers need the dask extra "
                                                        "(pip install \"bob_boost[dask]\")")

from bob_boost.dask import _files  # noqa: E402
from bob_boost.dask._files import read_lazy_table  # noqa: E402


def _assert_reads_as_in_memory(lazy, table, labels=True):
    features = lazy.features.compute()
    assert features.dtype == table.features.dtype
    np.testing.assert_array_equal(features, table.features)
    assert lazy.feature_names == table.feature_names
    if not labels:
        assert lazy.labels is None
        return
    values = lazy.labels.compute()
    expected = table.labels
    np.testing.assert_array_equal(values.astype(str) if values.dtype == object else values, expected)
    classes = lazy.distinct_labels()
    assert classes.dtype == np.unique(expected).dtype  # text as the in-memory reader's fixed-width str
    np.testing.assert_array_equal(classes, np.unique(expected))


@pytest.mark.long
def test_hdf5_is_read_by_the_workers_as_in_memory(process_client, tmp_path, monkeypatch, read_on_workers_only):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 9, size=(53, 2, 3))  # one row of 6 features per image
    labels = np.array(["cat", "dog", "emu"])[rng.integers(0, 3, 53)]
    path = tmp_path / "d.hdf5"
    with h5py.File(path, "w") as handle:
        group = handle.create_group("train")
        group["data"] = images
        group.create_dataset("labels", data=labels.astype(object), dtype=h5py.string_dtype())
        handle["features"] = rng.normal(size=(53, 4))
        handle["y"] = rng.normal(size=(53, 1))  # a column: one label per sample
    read_on_workers_only("_dataset_rows")
    lazy = read_lazy_table(path, group="train", chunk_rows=7)
    assert lazy.features.chunks[0] == (7,) * 7 + (4,)
    assert lazy.labels.chunks == (lazy.features.chunks[0],)
    _assert_reads_as_in_memory(lazy, read_table(path, group="train"))
    _assert_reads_as_in_memory(read_lazy_table(path, chunk_rows=20), read_table(path))
    # no labels asked for: none read
    _assert_reads_as_in_memory(read_lazy_table(path, with_target=None, chunk_rows=20, want_labels=False),
                               read_table(path, with_target=False), labels=False)


def test_hdf5_chunks_default_to_a_multiple_of_the_stored_ones(client, tmp_path, monkeypatch):
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as handle:
        handle.create_dataset("x", data=np.arange(1000 * 6, dtype=np.float64).reshape(1000, 6), chunks=(64, 6))
        handle["targets"] = np.arange(1000) % 2
    monkeypatch.setattr(_files, "CHUNK_BYTES", 200 * 6 * 8)  # about 200 rows: 192, three of the file's chunks
    lazy = read_lazy_table(path)
    assert set(lazy.features.chunks[0][:-1]) == {192}
    _assert_reads_as_in_memory(lazy, read_table(path))


@pytest.mark.long
def test_npy_reads_as_in_memory_from_any_directory(process_client, tmp_path, monkeypatch,
                                                   read_on_workers_only):
    rng = np.random.default_rng(1)
    matrix = np.column_stack([rng.integers(0, 2, 40), rng.normal(size=(40, 3))])
    np.save(tmp_path / "d.npy", matrix)
    monkeypatch.chdir(tmp_path)  # a relative path: the workers, elsewhere, open the absolute one
    read_on_workers_only("_npy_rows")
    lazy = read_lazy_table("d.npy", target="0", chunk_rows=15)
    assert lazy.features.chunks[0] == (15, 15, 10)
    _assert_reads_as_in_memory(lazy, read_table("d.npy", target="0"))
    # prediction: the target column is there because the file is one column wider than the model
    _assert_reads_as_in_memory(read_lazy_table("d.npy", None, None, 3, chunk_rows=15, want_labels=False),
                               read_table("d.npy", None, None, 3), labels=False)
    _assert_reads_as_in_memory(read_lazy_table("d.npy", with_target=False, chunk_rows=15),
                               read_table("d.npy", with_target=False), labels=False)


def _write_table(path, rows, header=None, delimiter=","):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        if header:
            writer.writerow(header)
        writer.writerows(rows)


def test_text_tables_read_as_in_memory(client, tmp_path):
    pytest.importorskip("dask.dataframe", reason="text tables need dask.dataframe (pip install \"dask[dataframe]\")")
    rng = np.random.default_rng(2)
    integers = rng.integers(-5, 20, size=(600, 3))
    floats = np.round(rng.normal(size=(600, 2)), 3)
    words = np.array(["no", "yes"])[rng.integers(0, 2, 600)]
    cases = [
        # a header, integer features, text labels (the column named 'target', not the last one)
        ("d.csv", [[*r, f" {w}", f] for r, w, f in zip(integers.tolist(), words, floats[:, 0])],
         ["a", "b", "c", "target", "d"], ","),
        # no header, float features, numeric labels in the last column; tabs
        ("d.tsv", [[*r, int(w == "yes")] for r, w in zip(floats.tolist(), words)], None, "\t"),
        ("d.csv.gz", [[*r, w] for r, w in zip(integers.tolist(), words)], ["a", "b", "c", "label"], ","),
        ("d.txt", [[*r, w] for r, w in zip(floats.tolist(), words)], None, "\t"),
    ]
    for name, rows, header, delimiter in cases:
        path = tmp_path / name
        _write_table(path, rows, header, delimiter)
        lazy = read_lazy_table(path, chunk_rows=40)
        # blocks of at least 4 KiB of text, but a gzip stream cannot be split
        assert (len(lazy.features.chunks[0]) == 1) == name.endswith(".gz")
        _assert_reads_as_in_memory(lazy, read_table(path))
        assert lazy.classes is not None  # found by the reader's own pass


def _bad_files(tmp_path):
    """(path, read_lazy_table's keywords, what to compute, the error's type, its message), a file per problem."""
    (tmp_path / "text.h5").write_text("not HDF5")
    with h5py.File(tmp_path / "nofeatures.h5", "w") as handle:
        handle["labels"] = np.arange(4)
    with h5py.File(tmp_path / "flat.h5", "w") as handle:
        handle["features"] = np.arange(4)
    with h5py.File(tmp_path / "short.h5", "w") as handle:
        handle["features"] = np.ones((4, 2))
        handle["labels"] = np.arange(3)
    np.savez(tmp_path / "d.npz", features=np.ones((4, 2)), labels=np.arange(4))
    np.save(tmp_path / "flat.npy", np.arange(4.0))
    np.save(tmp_path / "d.npy", np.ones((6, 4)))
    with_nan = np.ones((6, 4))
    with_nan[4, 1] = np.nan
    np.save(tmp_path / "nan.npy", with_nan)
    np.save(tmp_path / "nan_labels.npy", np.column_stack([np.ones((6, 2)), [1, 0, np.nan, 1, 0, 1]]))
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "d.csv").write_text("a,b,target\n1,2,yes\n3,4,no\n")
    return [
        ("missing.npy", {}, None, DataFormatError, "missing.npy: no such file"),
        ("d.npz", {}, None, DataFormatError, "d.npz: only HDF5, NPY, CSV/TSV/TXT, Parquet and Arrow files are read "
                                             "lazily, not '.npz'"),
        ("text.h5", {}, None, DataFormatError, "text.h5: not a readable HDF5 file"),
        ("nofeatures.h5", {}, None, DataFormatError, "nofeatures.h5:/: no features dataset"),
        ("short.h5", {"group": "test"}, None, DataFormatError, "short.h5: no group 'test'"),
        ("flat.h5", {}, None, DataFormatError, "flat.h5: 'features' must be 2-D"),
        ("short.h5", {}, None, DataFormatError, "short.h5: 'labels' must hold one label per sample"),
        ("flat.npy", {}, None, DataFormatError, "flat.npy: expected a 2-D (#samples, #columns) array"),
        ("d.npy", {"target": "9"}, None, DataFormatError, "d.npy: target column 9 is out of range for 4 columns"),
        ("d.npy", {"number_of_features": 5}, None, DataFormatError, "d.npy: has 3 feature columns but the model "
                                                                    "expects 5"),
        ("d.npy", {"chunk_rows": 0}, None, InvalidValueError, "chunk_rows"),
        ("nan.npy", {"with_target": False, "chunk_rows": 2}, "features", DataFormatError,
         "nan.npy: features contain NaN or infinite values"),
        ("nan_labels.npy", {"chunk_rows": 2}, "labels", DataFormatError,
         "nan_labels.npy: labels contain NaN or infinite values"),
        ("empty.csv", {}, None, DataFormatError, "empty.csv: empty file"),
        ("d.csv", {"target": "label"}, None, DataFormatError, "d.csv: no column named 'label' (columns: a, b, "
                                                              "target)"),
    ]


def test_bad_files_are_the_library_errors_naming_the_file(client, tmp_path):
    for name, options, computed, error, message in _bad_files(tmp_path):
        with pytest.raises(error) as raised:  # found at once, or by the task reading the bad rows
            table = read_lazy_table(tmp_path / name, **options)
            getattr(table, computed).compute()
        assert isinstance(raised.value, ValueError) and message in str(raised.value), (name, raised.value)


def test_a_cell_that_is_not_a_number_is_a_data_format_error(client, tmp_path):
    pytest.importorskip("dask.dataframe", reason="text tables need dask.dataframe (pip install \"dask[dataframe]\")")
    path = tmp_path / "d.csv"
    path.write_text("a,b,target\n1,2,yes\n3,abc,no\n")
    with pytest.raises(DataFormatError, match=r"d\.csv: "):
        read_lazy_table(path)


def test_text_tables_without_dask_dataframe_name_the_extra(tmp_path, monkeypatch):
    path = tmp_path / "d.csv"
    path.write_text("a,b,target\n1,2,yes\n3,4,no\n")
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)  # as on a machine without the extra
    with pytest.raises(ImportError, match=r'd\.csv: reading CSV/TSV/TXT lazily needs dask\.dataframe .*'
                                          r'pip install "dask\[dataframe\]"'):
        read_lazy_table(path)
