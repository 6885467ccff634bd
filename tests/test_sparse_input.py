"""scipy sparse (CSR, CSC) features: binned, trained and scored without a dense copy of the whole matrix, into
the model of the dense matrix bit for bit, through the trainer, the machine and the estimators."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from bob_boost import (Boosting, ExponentialLoss, LogitLoss, LUTTrainer, QuantileLoss, Sampling, SoftmaxLoss,
                       SquaredLoss, StumpTrainer,
                       TreeTrainer)
from bob_boost import sparse as sparse_rows
from bob_boost.binning import BinnedFeatures
from bob_boost.engine.edges import SAMPLE_SIZE, sample_rows
from bob_boost.sparse import as_sparse_rows

FORMATS = [sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array]


def _sparse_data(n=3000, d=12, density=0.1, seed=0, kind="float"):
    rng = np.random.default_rng(seed)
    x = np.zeros((n, d))
    mask = rng.random((n, d)) < density
    if kind == "int":
        x[mask] = rng.integers(-3, 40, mask.sum())
        return x.astype(np.int64)
    x[mask] = rng.normal(size=mask.sum()) if kind == "float" else rng.choice([-1.5, 0.0, 2.0, 3.25], mask.sum())
    return x


@pytest.fixture
def small_blocks(monkeypatch):
    """Row blocks of a few rows, so that every path stitches many blocks together."""
    monkeypatch.setattr(sparse_rows, "BLOCK_ENTRIES", 64)


def _same_bins(a: BinnedFeatures, b: BinnedFeatures) -> None:
    np.testing.assert_array_equal(a.coded.whole_codes(), b.coded.whole_codes())
    for name in ("mode_bins", "row_starts", "rows", "listed_codes", "counts"):
        np.testing.assert_array_equal(getattr(a.coded, name), getattr(b.coded, name))
    np.testing.assert_array_equal(a.offsets, b.offsets)
    assert a.lossy == b.lossy and a.missing == b.missing
    if a.split_thresholds is not None:
        np.testing.assert_array_equal(a.split_thresholds, b.split_thresholds)


@pytest.mark.parametrize("kind, max_bins", [("float", 256), ("float", 16), ("few", 256), ("int", 256), ("int", 8)])
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_bins_of_a_sparse_matrix_are_those_of_its_dense_form(kind, max_bins, fmt, small_blocks):
    x = _sparse_data(kind=kind)
    x[:, 3] = 0.0  # a column without a stored value
    x[::7, 4] = 1.0  # and one where zero is not the most frequent value
    dense = BinnedFeatures.from_values(x, max_bins=max_bins, n_threads=2)
    _same_bins(BinnedFeatures.from_values(as_sparse_rows(fmt(x)), max_bins=max_bins, n_threads=2), dense)


def test_sampled_thresholds_are_rechecked_on_every_row_as_for_dense_features():
    """Past the sampled rows a column may hold a value the sample never saw: both forms re-bin it the same."""
    n = SAMPLE_SIZE + 10_000
    rows = sample_rows(n)
    outside = np.setdiff1d(np.arange(n), rows)
    x = np.zeros((n, 3))
    x[rows[::50], 0] = 2.0
    x[rows[::70], 1] = -1.0
    x[outside[:5], 0] = 7.5  # only where the sample does not look
    x[rows[::3], 2] = np.random.default_rng(1).normal(size=rows[::3].size)
    dense = BinnedFeatures.from_values(x, max_bins=256, n_threads=2)
    assert 7.5 > dense.split_thresholds[dense.offsets[0]:dense.offsets[1] - 1].max() > 2.0  # re-binned
    _same_bins(BinnedFeatures.from_values(as_sparse_rows(sp.csc_matrix(x)), max_bins=256, n_threads=2), dense)
    x[outside[5:9], 1] = np.nan  # and with missing values, which take no part in the test
    dense = BinnedFeatures.from_values(x, max_bins=256, n_threads=2, missing=True)
    _same_bins(BinnedFeatures.from_values(as_sparse_rows(sp.csr_matrix(x), allow_nan=True), max_bins=256,
                                          n_threads=2, missing=True), dense)


def test_missing_values_stored_in_a_sparse_matrix_get_the_missing_bin(small_blocks):
    x = _sparse_data()
    x[np.random.default_rng(2).random(x.shape) < 0.02] = np.nan
    for max_bins in (256, 8):
        dense = BinnedFeatures.from_values(x, max_bins=max_bins, n_threads=2, missing=True)
        _same_bins(BinnedFeatures.from_values(as_sparse_rows(sp.csr_matrix(x), allow_nan=True), max_bins=max_bins,
                                              n_threads=2, missing=True), dense)
    codes = np.abs(_sparse_data(kind="int")) % 5
    lut = np.where(np.random.default_rng(3).random(codes.shape) < 0.03, np.nan, codes.astype(float))
    for values, missing in ((codes, False), (lut, True)):
        dense = BinnedFeatures.from_integers(values, 5, 2, missing=missing)
        sparse = BinnedFeatures.from_integers(as_sparse_rows(sp.csc_matrix(values), allow_nan=missing), 5, 2,
                                              missing=missing)
        np.testing.assert_array_equal(sparse.coded.whole_codes(), dense.coded.whole_codes())


def _training_cases():
    rng = np.random.default_rng(4)
    x = _sparse_data(n=2500, d=20, seed=5)
    y = np.where(x[:, 0] + x[:, 1] - x[:, 2] + 0.3 * rng.normal(size=x.shape[0]) > 0, 1.0, -1.0)
    codes = (np.abs(x) * 3).astype(np.int64) % 5
    real = x[:, 0] * 2 + x[:, 5] + rng.normal(size=x.shape[0])
    classes = np.eye(3)[(real > 0.5).astype(int) + (real > -0.5)]
    half = _sparse_data(n=2500, d=8, density=0.45, seed=7)  # listed rows: 45% of every feature's
    half_y = np.where(half[:, 0] - half[:, 1] + 0.3 * rng.normal(size=half.shape[0]) > 0, 1.0, -1.0)
    return [
        ("stumps", lambda n: Boosting(StumpTrainer(max_bins=64, n_threads=n), ExponentialLoss()), x, y),
        ("leafwise trees", lambda n: Boosting(TreeTrainer(max_leaves=15, n_threads=n), LogitLoss(),
                                              learning_rate=0.1), x, y),
        ("levelwise trees", lambda n: Boosting(TreeTrainer(max_depth=3, growth="levelwise", n_threads=n),
                                               SquaredLoss(), learning_rate=0.1), x, real),
        ("categorical trees", lambda n: Boosting(TreeTrainer(max_leaves=7, categorical_features=[1], n_threads=n),
                                                 LogitLoss(), learning_rate=0.1), codes, y),
        ("look-up tables", lambda n: Boosting(LUTTrainer(5, 1, n_threads=n), ExponentialLoss()), codes, y),
        ("quantile trees", lambda n: Boosting(TreeTrainer(max_leaves=7, n_threads=n), QuantileLoss(0.3),
                                              learning_rate=0.1), x, real),
        # one tree per class, grown in batches whose roots share a pass; rows and columns sampled each round
        ("sampled softmax trees", lambda n: Boosting(
            TreeTrainer(max_leaves=7, n_threads=n), SoftmaxLoss(), learning_rate=0.1,
            sampling=Sampling(subsample=0.7, colsample_bytree=0.6, colsample_bynode=0.8, random_state=3)),
         x, classes),
        ("quantised softmax trees", lambda n: Boosting(TreeTrainer(max_leaves=7, quantized_gradients=8, n_threads=n),
                                                       SoftmaxLoss(), learning_rate=0.1), x, classes),
        # nodes of a few rows split features of many listed rows: each row looked up
        ("deep trees of small leaves", lambda n: Boosting(
            TreeTrainer(max_depth=9, max_leaves=None, growth="levelwise", min_samples_leaf=2, n_threads=n),
            LogitLoss(), learning_rate=0.1), half, half_y),
    ]


#: The cases of the suite's quick run; the others take 2.5 to 4 s each and are long tests.
_QUICK_CASES = ("stumps", "deep trees of small leaves")


@pytest.mark.parametrize("case", [pytest.param(index, id=case[0], marks=() if case[0] in _QUICK_CASES else
                                               pytest.mark.long)
                                  for index, case in enumerate(_training_cases())])
def test_training_on_sparse_rows_gives_the_dense_model_bit_for_bit(case, small_blocks):
    name, make, features, targets = _training_cases()[case]
    dense = make(2).train(features, targets, 12)
    for fmt, threads in ((sp.csr_matrix, 1), (sp.csc_array, 2)):
        matrix = fmt(features)
        before = matrix.copy()
        machine = make(threads).train(matrix, targets, 12)
        assert machine.weak_machines == dense.weak_machines, name
        np.testing.assert_array_equal(machine.weights, dense.weights)
        np.testing.assert_array_equal(machine.decision_scores(matrix), dense.decision_scores(features))
        for staged, expected in zip(machine.staged_decision_scores(matrix), dense.staged_decision_scores(features)):
            np.testing.assert_array_equal(staged, expected)
        assert (matrix != before).nnz == 0 and type(matrix) is type(before)


def test_a_continued_run_and_shapley_values_read_sparse_rows_as_dense_ones(small_blocks):
    _, make, x, y = _training_cases()[1]
    matrix = sp.csr_matrix(x)
    dense = make(2).train(x, y, 6)
    make(2).train(x, y, 4, boosted_machine=dense)
    machine = make(2).train(matrix, y, 6)
    make(2).train(matrix, y, 4, boosted_machine=machine)
    np.testing.assert_array_equal(machine.weights, dense.weights)
    np.testing.assert_array_equal(machine.shap_values(matrix[:50]), dense.shap_values(x[:50]))
    np.testing.assert_array_equal(machine.shap_values(matrix[:20], background=matrix[100:130]),
                                  dense.shap_values(x[:20], background=x[100:130]))


def test_a_non_canonical_matrix_is_summed_as_scipy_sums_it_and_left_as_it_was():
    data = np.array([1.0, 2.5, -1.0, 4.0, -4.0])  # duplicates, one pair summing to an explicit zero
    indices, indptr = np.array([1, 1, 0, 2, 2]), np.array([0, 2, 3, 5])
    matrix = sp.csr_matrix((data, indices, indptr), shape=(3, 3))
    assert not matrix.has_canonical_format
    canonical = as_sparse_rows(matrix)
    assert canonical is not matrix and canonical.has_canonical_format
    np.testing.assert_array_equal(canonical.toarray(), [[0.0, 3.5, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(matrix.data, data)
    np.testing.assert_array_equal(matrix.indices, indices)


def test_sparse_input_gets_clear_errors():
    from bob_boost import BAdaCostTrainer
    from bob_boost.exceptions import InvalidTypeError
    x = _sparse_data(n=200, d=5)
    y = np.where(x[:, 0] > 0, 1.0, -1.0)
    nan = x.copy()
    nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="features: a sparse matrix with NaN stored explicitly"):
        Boosting(StumpTrainer(), ExponentialLoss()).train(sp.csr_matrix(nan), y, 2)
    infinite = x.copy()
    infinite[0, 0] = np.inf
    with pytest.raises(ValueError, match="features: contains infinite values"):
        Boosting(StumpTrainer(missing="bin"), ExponentialLoss()).train(sp.csr_matrix(infinite), y, 2)
    with pytest.raises(InvalidTypeError, match="features: a scipy sparse matrix is read by the generic trainer"):
        BAdaCostTrainer(np.ones((2, 2)) - np.eye(2)).train(sp.csr_matrix(x), (y > 0).astype(int), 2)
    with pytest.raises(ValueError, match="max_bins: a sparse matrix is binned into at most 65536 bins"):
        Boosting(StumpTrainer(max_bins=None), ExponentialLoss()).train(
            sp.csr_matrix(np.arange(1.0, 70_001.0)[:, np.newaxis]), np.resize([1.0, -1.0], 70_000), 1)
    with pytest.raises(TypeError, match="features: expected a numeric sparse matrix"):
        as_sparse_rows(sp.csr_matrix(np.ones((2, 2), dtype=complex)))
    machine = Boosting(StumpTrainer(), ExponentialLoss()).train(x, y, 3)
    with pytest.raises(ValueError, match="trained on 5 features, got 4"):
        machine.decision_scores(sp.csr_matrix(x[:, :4]))


sklearn = pytest.importorskip("sklearn", reason="the estimators and the LibSVM reader need scikit-learn")


@pytest.mark.long
def test_the_estimators_fit_and_predict_sparse_x_as_dense_x(monkeypatch):
    """Every default, early stopping on a held-out share included (more than 10,000 rows), and eval sets."""
    from bob_boost.sklearn import BoostingClassifier, BoostingRegressor
    monkeypatch.setattr(sparse_rows, "BLOCK_ENTRIES", 1 << 13)  # blocks of 546 rows
    rng = np.random.default_rng(6)
    x = _sparse_data(n=10_500, d=15, density=0.15, seed=7)
    labels = np.where(x[:, 0] + x[:, 1] + 0.3 * rng.normal(size=x.shape[0]) > 0, "yes", "no")
    real = x[:, 2] * 3 + rng.normal(size=x.shape[0])
    for estimator, y, formats in ((BoostingClassifier(), labels, (sp.csr_array, sp.csc_matrix, sp.coo_matrix)),
                                  (BoostingClassifier(weak_learner="tree"), labels, (sp.csc_array,)),
                                  (BoostingRegressor(weak_learner="tree", loss="absolute_error"), real,
                                   (sp.csr_matrix,))):
        dense = sklearn.base.clone(estimator).fit(x, y)
        assert dense.validation_score_.size == dense.n_iter_ + 1  # rows were held out: early stopping ran
        for fmt in formats:
            model = sklearn.base.clone(estimator).fit(fmt(x), y)
            assert model.n_iter_ == dense.n_iter_
            np.testing.assert_array_equal(model.validation_score_, dense.validation_score_)
            np.testing.assert_array_equal(model.predict(fmt(x[:500])), dense.predict(x[:500]))
    model = BoostingClassifier(n_estimators=20, early_stopping=True).fit(
        sp.csr_matrix(x[:8000]), labels[:8000], eval_set=[(sp.csr_matrix(x[8000:]), labels[8000:])])
    dense = BoostingClassifier(n_estimators=20, early_stopping=True).fit(x[:8000], labels[:8000],
                                                                          eval_set=[(x[8000:], labels[8000:])])
    np.testing.assert_array_equal(model.evals_result_["validation_0"],
                                  dense.evals_result_["validation_0"])
    np.testing.assert_array_equal(model.predict_proba(sp.csc_array(x)), dense.predict_proba(x))
    codes = np.abs(x * 3).astype(np.int64) % 4
    lut = BoostingClassifier(weak_learner="lut", maximum_feature_value=4, n_estimators=10)
    np.testing.assert_array_equal(sklearn.base.clone(lut).fit(sp.csr_matrix(codes), labels).predict(codes),
                                  sklearn.base.clone(lut).fit(codes, labels).predict(codes))


def test_estimators_of_dense_trainers_refuse_sparse_x_naming_it():
    from bob_boost.sklearn import AdaBoostDBClassifier, BAdaCostClassifier
    x = sp.csr_matrix(_sparse_data(n=200, d=4))
    y = np.arange(200) % 2
    for estimator in (AdaBoostDBClassifier(n_estimators=2), BAdaCostClassifier(n_estimators=2)):
        with pytest.raises(TypeError, match="[Ss]parse"):
            estimator.fit(x, y)
        assert not estimator.__sklearn_tags__().input_tags.sparse


def test_the_command_line_trains_and_predicts_libsvm_files_as_their_dense_tables(tmp_path, capsys):
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file

    from bob_boost import BoostedMachine
    from bob_boost.cli import main
    rng = np.random.default_rng(8)
    x = _sparse_data(n=600, d=25, density=0.1, seed=9)
    y = (x @ rng.standard_normal(25) > 0).astype(int)
    dump_svmlight_file(sp.csr_matrix(x), y, str(tmp_path / "train.svm"), zero_based=False)
    x = load_svmlight_file(str(tmp_path / "train.svm"))[0].toarray()  # its values as written (16 digits)
    np.savetxt(tmp_path / "train.csv", np.column_stack([x, y]), delimiter=",", fmt="%.17g")
    for data in ("train.svm", "train.csv"):
        assert main(["train", str(tmp_path / data), "-o", str(tmp_path / f"{data}.hdf5"), "-w", "tree", "-r", "8",
                     "-q"]) == 0
        assert main(["predict", str(tmp_path / f"{data}.hdf5"), str(tmp_path / "train.svm"), "-o",
                     str(tmp_path / f"{data}.out.csv"), "-q"]) == 0
    sparse, dense = (BoostedMachine.load(tmp_path / f"{data}.hdf5") for data in ("train.svm", "train.csv"))
    assert sparse.weak_machines == dense.weak_machines
    np.testing.assert_array_equal(sparse.weights, dense.weights)
    assert (tmp_path / "train.svm.out.csv").read_text() == (tmp_path / "train.csv.out.csv").read_text()
    dump_svmlight_file(sp.csr_matrix(x), y, str(tmp_path / "zero.svm"), zero_based=True)
    np.savetxt(tmp_path / "costs.csv", [[0, 1], [1, 0]], delimiter=",")
    for arguments, message in (([str(tmp_path / "zero.svm")], "the indices are one-based"),
                               ([str(tmp_path / "train.svm"), "--trainer", "badacost", "--cost-matrix",
                                 str(tmp_path / "costs.csv")], "sparse rows (a LibSVM file) train --trainer boosting")):
        assert main(["train", *arguments, "-o", str(tmp_path / "bad.hdf5"), "-q"]) != 0
        assert message in capsys.readouterr().err


@pytest.mark.long
def test_the_codes_of_a_sparse_matrix_take_memory_for_its_non_zeros():
    """Features mostly zero keep their listed rows and codes only: binning and training stay far below the
    one byte per entry that (#features x #samples) codes would take."""
    import tracemalloc

    n, d, nnz = 200_000, 2_000, 200_000
    rng = np.random.default_rng(0)
    x = sp.csr_matrix((rng.standard_normal(nnz), (rng.integers(0, n, nnz), rng.integers(0, d, nnz))), shape=(n, d))
    y = np.where(x @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n) > 0, 1.0, -1.0)
    trees = Boosting(TreeTrainer(max_leaves=4, n_threads=2), LogitLoss(), learning_rate=0.1)
    trees.train(x[:5000], y[:5000], 1)  # the kernels loaded (or compiled) before memory is traced
    tracemalloc.start()
    try:
        binned = BinnedFeatures.from_values(x, max_bins=256, n_threads=2)
        binning_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        machine = trees.train(x, y, 2)
        training_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    coded = binned.coded
    assert coded.codes.shape == (0, n) and not coded.whole
    assert coded.rows.size == coded.listed_codes.size <= nnz
    # per non-zero: a CSC copy (value, row) and its code, the listed row and code; per feature: bin counts
    assert binning_peak < 48 * nnz + 16 * d * coded.number_of_bins
    # the leaves' histograms (and a lone tree's parts of them) and the per-row gradients and scores, against
    # n * d bytes for (#features x #samples) codes
    assert training_peak < n * d / 3
    assert len(machine.weak_machines) == 2


def test_sparse_rows_get_the_checks_of_dense_rows_before_they_are_scored():
    """Scoring reads a sparse matrix's columns directly: its values are checked first, as dense rows are (a
    look-up table indexed by 1e6 would read outside its table)."""
    rng = np.random.default_rng(6)
    x = np.where(rng.random((400, 6)) < 0.3, rng.integers(1, 5, (400, 6)), 0).astype(float)
    y = np.where(x[:, 0] + x[:, 1] > 3, 1.0, -1.0)
    machine = Boosting(LUTTrainer(5, 1), ExponentialLoss()).train(sp.csr_matrix(x), y, 4)
    read = int(machine.feature_indices()[0])
    for value in (2.5, 7.0, 1e6):
        bad = x[:3].copy()
        bad[0, read] = value
        for rows in (bad, sp.csr_matrix(bad)):
            with pytest.raises(ValueError, match="features: LUT feature"):
                machine.decision_scores(rows)
    with pytest.raises(ValueError, match="features: the machine was trained on 6 features, got 5"):
        machine.decision_scores(sp.csr_matrix(x[:, :5]))
