"""Tests of bob_boost.io.tables (data files in, predictions out) and of evaluation.confusion_matrix / accuracy."""
import gzip
import logging

import h5py
import numpy as np
import pytest

from bob_boost import evaluation
from bob_boost.exceptions import BobBoostError, DataFormatError
from bob_boost.io import _delimited
from bob_boost.io.tables import read_cost_matrix, read_table, write_predictions


def test_data_format_error_is_a_library_value_error():
    assert issubclass(DataFormatError, BobBoostError) and issubclass(DataFormatError, ValueError)


def test_missing_file(tmp_path):
    with pytest.raises(DataFormatError, match=r"missing\.csv: no such file$"):
        read_table(tmp_path / "missing.csv")
    with pytest.raises(DataFormatError, match=r"costs\.csv: no such cost-matrix file$"):
        read_cost_matrix(tmp_path / "costs.csv")


def test_ragged_row(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("f0,f1,target\n1,2,yes\n3,no\n")
    with pytest.raises(DataFormatError, match=r"ragged\.csv: row 3 has 2 columns, the first row has 3$"):
        read_table(path)


def test_cell_that_is_not_a_number(tmp_path):
    path = tmp_path / "text.csv"
    path.write_text("f0,f1,target\n1,2,yes\n3,abc,no\n")
    with pytest.raises(DataFormatError, match=r"text\.csv: column 'f1', data row 2: 'abc' is not a number$"):
        read_table(path)
    headless = tmp_path / "headless.csv"
    headless.write_text("1,2,1\n3,x4,0\n5,6,1\n")
    with pytest.raises(DataFormatError, match=r"column 1, data row 2: 'x4' is not a number$"):
        read_table(headless)


def test_unknown_suffix(tmp_path):
    path = tmp_path / "data.xyz"
    path.write_text("1,2,3\n")
    with pytest.raises(DataFormatError, match=r"data\.xyz: unknown data format '\.xyz'; use \.csv"):
        read_table(path)
    with pytest.raises(DataFormatError, match=r"out\.xyz: unknown output format '\.xyz'"):
        write_predictions(tmp_path / "out.xyz", np.array([1]), np.ones((1, 1)), ["score"])


def test_gzip_csv_round_trip_with_write_predictions(tmp_path):
    rng = np.random.default_rng(3)
    labels = np.where(rng.uniform(size=25) > 0.5, "yes", "no")
    scores = rng.normal(size=(25, 2)) * 10.0 ** rng.integers(-3, 4, (25, 2))
    path = tmp_path / "predictions.csv.gz"
    write_predictions(path, labels, scores, ["score_no", "score_yes"])
    with gzip.open(path, "rt") as handle:
        assert handle.readline() == "label,score_no,score_yes\n"
    table = read_table(path, target="label")
    np.testing.assert_array_equal(table.labels, labels)
    assert table.features.dtype == np.float64
    np.testing.assert_array_equal(table.features, scores)  # repr() of a float reads back exactly
    assert table.feature_names == ["score_no", "score_yes"]


def test_whole_numbers_read_as_integers_and_labels_as_numbers(tmp_path):
    path = tmp_path / "d.tsv"
    path.write_text("a\tb\ttarget\n1\t2\t-1\n3\t4\t1\n")
    table = read_table(path)
    assert table.features.dtype == np.int64 and table.features.tolist() == [[1, 2], [3, 4]]
    assert table.labels.tolist() == [-1, 1] and table.feature_names == ["a", "b"]


def test_cost_matrix_files(tmp_path):
    spaces = tmp_path / "costs.txt"
    spaces.write_text("0 1\n2 0\n")
    np.testing.assert_array_equal(read_cost_matrix(spaces), [[0.0, 1.0], [2.0, 0.0]])
    diagonal = tmp_path / "diagonal.csv"
    diagonal.write_text("1,1\n1,0\n")
    with pytest.raises(DataFormatError, match=r"diagonal\.csv: cost matrix: .*diagonal must be zero"):
        read_cost_matrix(diagonal)


# Tables on which pandas' reader and numpy's could disagree: each must read the same (or fail with the same
# message) whichever of them parses it.
TRICKY_TABLES = {
    "plain": "1,2,0\n3,4,1\n5,6,0\n",
    "floats": "0.1,0.30000000000000004,1\n1e-300,-2.5E+10,0\n",
    "header": "a,b,target\n1,2,0\n3,4,1\n",
    "true/false column": "1,True,0\n2,False,1\n",
    "true/false labels": "1,2,True\n3,4,False\n",
    "spaces": "1, 2,0\n 3 ,4,1\n",
    "quoted": '"1","2","0"\n"3","4","1"\n',
    "trailing comma": "1,2,\n3,4,\n",
    "short row": "1,2,3\n4,5\n",
    "long row": "1,2\n3,4,5\n",
    "nan": "1,nan,0\n2,3,1\n",
    "inf": "1,inf,0\n2,3,1\n",
    "underscore": "1_000,2,0\n3,4,1\n",
    "blank lines": "1,2,0\n\n3,4,1\n   \n",
    "only commas": "1,2,0\n,,\n3,4,1\n",
    "crlf": "1,2,0\r\n3,4,1\r\n",
    "big integers": "12345678901234567890,1,0\n9007199254740993,2,1\n",
    "plus and dots": "+1,.5,0\n5.,1e3,1\n",
    "text labels": "1,2,yes\n3,4,no\n",
    "NA cell": "NA,1,0\n2,3,1\n",
}


def _outcome(path):
    """What read_table makes of ``path`` with and without a target column: the table's contents or the error."""
    outcomes = []
    for with_target in (True, False):
        try:
            table = read_table(path, with_target=with_target)
        except DataFormatError as error:
            outcomes.append(str(error))
            continue
        labels = None if table.labels is None else (table.labels.tolist(), table.labels.dtype.kind)
        outcomes.append(repr((table.features.tolist(), table.features.dtype.str, labels, table.feature_names)))
    return outcomes


@pytest.mark.parametrize("name", sorted(TRICKY_TABLES))
def test_pandas_and_numpy_read_tables_the_same(tmp_path, monkeypatch, caplog, name):
    pytest.importorskip("pandas")
    path = tmp_path / "table.csv"
    path.write_bytes(TRICKY_TABLES[name].encode())
    monkeypatch.setattr(_delimited, "PANDAS_MIN_CHARS", 0)
    with caplog.at_level(logging.DEBUG, logger="bob_boost.io"):
        with_pandas = _outcome(path)
    if name in ("plain", "floats", "header"):
        assert "with pandas" in caplog.text  # the comparison is not vacuous
    monkeypatch.setattr(_delimited, "PANDAS_MIN_CHARS", float("inf"))
    assert _outcome(path) == with_pandas


# -- evaluation.confusion_matrix and evaluation.accuracy -------------------------------------------------------
def test_confusion_matrix_counts_by_hand():
    truth = [0, 0, 1, 2, 2, 2]
    predicted = [0, 1, 1, 2, 0, 2]
    confusion = evaluation.confusion_matrix(truth, predicted, 3)
    assert confusion.dtype == np.int64
    assert confusion.tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 2]]
    # a class that never occurs still has its row and column
    assert evaluation.confusion_matrix(truth, predicted, 4).tolist() == [[1, 1, 0, 0], [0, 1, 0, 0],
                                                                        [1, 0, 2, 0], [0, 0, 0, 0]]
    # whole floats are class indices too
    assert evaluation.confusion_matrix(np.array([1.0, 0.0]), [1, 1], 2).tolist() == [[0, 1], [0, 1]]


def test_confusion_matrix_with_sample_weights():
    confusion = evaluation.confusion_matrix([0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 0, 2], 3,
                                            sample_weight=[1, 2, 3, 4, 5, 6])
    assert confusion.dtype == np.float64
    assert confusion.tolist() == [[1.0, 2.0, 0.0], [0.0, 3.0, 0.0], [5.0, 0.0, 10.0]]


def test_accuracy_by_hand():
    assert evaluation.accuracy([0, 1, 2, 2], [0, 2, 2, 2]) == 0.75
    assert evaluation.accuracy(np.array(["a", "b"]), np.array(["a", "a"])) == 0.5
    assert evaluation.accuracy([-1, 1, 1], [-1, 1, 1]) == 1.0


@pytest.mark.parametrize("arguments, error, message", [
    (([0, 3], [0, 1], 2), ValueError, r"truth: class indices must lie in 0\.\.1 \(number_of_classes=2\), found \[3\]"),
    (([0, 1], [0, -1], 2), ValueError, r"predicted: class indices must lie in 0\.\.1"),
    (([0, 1], [0], 2), ValueError, r"predicted: has 1 entries but truth has 2"),
    (([0.5], [0], 2), ValueError, r"truth: class indices must be integers"),
    (([np.nan], [0], 2), ValueError, r"truth: class indices must be integers"),
    ((["a"], [0], 2), TypeError, r"truth: expected integer class indices"),
    (([[0]], [[0]], 1), ValueError, r"truth: expected a non-empty 1-D array"),
    (([], [], 1), ValueError, r"truth: expected a non-empty 1-D array"),
    (([0], [0], 0), ValueError, r"number_of_classes: must be >= 1"),
    (([0], [0], 2.0), TypeError, r"number_of_classes: expected an integer"),
    (([0], [0], True), TypeError, r"number_of_classes: expected an integer"),
])
def test_confusion_matrix_rejects_bad_input(arguments, error, message):
    with pytest.raises(error, match=message):
        evaluation.confusion_matrix(*arguments)


@pytest.mark.parametrize("weights, message", [
    ([1.0, -1.0], r"sample_weight: values must lie in \[0, inf\]"),
    ([1.0, np.nan], r"sample_weight: contains NaN"),
    ([1.0], r"sample_weight: expected shape \(2,\)"),
    (["a", "b"], r"sample_weight: expected numbers"),
])
def test_confusion_matrix_rejects_bad_sample_weights(weights, message):
    with pytest.raises((ValueError, TypeError), match=message):
        evaluation.confusion_matrix([0, 1], [0, 1], 2, sample_weight=weights)


@pytest.mark.parametrize("truth, predicted, message", [
    ([0, 1], [0], r"predicted: has 1 entries but truth has 2"),
    ([], [], r"truth: expected a non-empty 1-D array"),
    ([[0, 1]], [[0, 1]], r"truth: expected a non-empty 1-D array of labels, got shape \(1, 2\)"),
    ([0], 0, r"predicted: expected a non-empty 1-D array"),
])
def test_accuracy_rejects_bad_input(truth, predicted, message):
    with pytest.raises(ValueError, match=message):
        evaluation.accuracy(truth, predicted)


def test_hdf5_and_npy_files_are_refused_by_their_headers_as_the_lazy_reader_refuses_them(tmp_path):
    """read_table checks HDF5 and NPY files with the lazy reader's own rules (bob_boost.io.row_files): the same
    messages, naming the file and what is wrong."""
    (tmp_path / "text.h5").write_text("not HDF5")
    with h5py.File(tmp_path / "nofeatures.h5", "w") as handle:
        handle["labels"] = np.arange(4)  # labels alone are not a matrix of features
    with h5py.File(tmp_path / "flat.h5", "w") as handle:
        handle["features"] = np.arange(4)
    with h5py.File(tmp_path / "short.h5", "w") as handle:
        handle["features"] = np.ones((4, 2))
        handle["labels"] = np.arange(3)
    with h5py.File(tmp_path / "words.h5", "w") as handle:
        handle["features"] = np.array([["a", "b"]] * 4, dtype=h5py.string_dtype())
    np.save(tmp_path / "flat.npy", np.arange(4.0))
    np.save(tmp_path / "words.npy", np.array([["a", "b"]] * 4))
    cases = [("text.h5", {}, "text.h5: not a readable HDF5 file"),
             ("nofeatures.h5", {}, "nofeatures.h5:/: no features dataset (looked for features, data, x, X; found "
                                   "labels; choose a group with --group)"),
             ("short.h5", {"group": "test"}, "short.h5: no group 'test' (top level: features, labels)"),
             ("flat.h5", {}, "flat.h5: 'features' must be 2-D (#samples, #features), has shape (4,)"),
             ("short.h5", {}, "short.h5: 'labels' must hold one label per sample, has shape (3,) for 4 samples"),
             ("words.h5", {}, "words.h5: 'features' must be numeric"),
             ("flat.npy", {}, "flat.npy: expected a 2-D (#samples, #columns) array, got shape (4,)"),
             ("words.npy", {}, "words.npy: values must be numeric, got dtype <U1")]
    for name, options, message in cases:
        with pytest.raises(DataFormatError) as raised:
            read_table(tmp_path / name, **options)
        assert message in str(raised.value), (name, raised.value)


def test_hdf5_images_labels_in_a_column_and_text_labels_read_whole(tmp_path):
    with h5py.File(tmp_path / "images.h5", "w") as handle:
        group = handle.create_group("train")
        group["data"] = np.arange(5 * 2 * 3, dtype=np.uint8).reshape(5, 2, 3)
        group["labels"] = np.array([["a"], ["b"], ["a"], ["c"], ["b"]], dtype=h5py.string_dtype())
    table = read_table(tmp_path / "images.h5", group="train")
    assert table.features.dtype == np.uint8
    assert np.array_equal(table.features, np.arange(30).reshape(5, 6))
    assert table.labels.tolist() == ["a", "b", "a", "c", "b"] and table.labels.dtype.kind == "U"
    assert read_table(tmp_path / "images.h5", group="train", with_target=False).labels is None
    empty = tmp_path / "empty.npy"
    np.save(empty, np.ones((0, 3)))
    with pytest.raises(DataFormatError, match="empty.npy: no data"):
        read_table(empty)
