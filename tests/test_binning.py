"""The one binned representation every weak trainer works on."""
import numpy as np
import pytest

from bob_boost import CostSensitiveTreeTrainer, LUTTrainer, MultiClassLUTTrainer, StumpTrainer
from bob_boost.binning import BinnedFeatures


@pytest.fixture
def features():
    rng = np.random.default_rng(0)
    return np.column_stack([rng.integers(0, 5, 200), rng.normal(size=200), np.zeros(200)])


def _brute_force(codes, offsets, values):
    sums = np.zeros((int(offsets[-1]), values.shape[1]))
    for n in range(codes.shape[0]):
        for f in range(codes.shape[1]):
            sums[codes[n, f]] += values[n]
    return sums


@pytest.mark.parametrize("exact", [False, True])
def test_histograms_are_the_per_bin_sums(features, exact):
    binned = BinnedFeatures.from_values(features, exact=exact)
    values = np.random.default_rng(1).normal(size=(200, 2))
    np.testing.assert_allclose(binned.histograms(values), _brute_force(binned.codes, binned.offsets, values),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.diff(binned.offsets), [5, np.unique(features[:, 1]).size, 1])


def test_integer_coding_keeps_the_values(features):
    integers = features[:, :1].astype(np.int64)
    binned = BinnedFeatures.from_integers(integers, 5)
    np.testing.assert_array_equal(binned.values, integers)
    assert binned.number_of_values == 5 and binned.bin_values is None and binned.raw is None


def test_tree_codings_keep_the_raw_features(features):
    for binned, quantized in ((BinnedFeatures.quantize(features), True), (BinnedFeatures.distinct(features), False)):
        assert binned.raw is not None and binned.quantized is quantized
        np.testing.assert_array_equal(binned.raw, features)
        # every code lies in its feature's bins, and the bins' values are increasing
        assert np.all((binned.codes >= binned.offsets[:-1]) & (binned.codes < binned.offsets[1:]))
        for f in range(3):
            assert np.all(np.diff(binned.bin_values[binned.offsets[f]:binned.offsets[f + 1]]) > 0)


def test_the_old_names_of_binned_features_warn_and_resolve():
    from bob_boost import trainers
    from bob_boost.weak_trainers import multiclass
    for module, name in ((multiclass, "SplitFeatures"), (multiclass, "DiscreteFeatures"), (trainers, "SplitFeatures")):
        with pytest.warns(DeprecationWarning, match=f"{name} is bob_boost.binning.BinnedFeatures") as caught:
            assert getattr(module, name) is BinnedFeatures
        assert caught[0].filename == __file__  # the warning points at the line that uses the old name
    with pytest.raises(AttributeError):
        multiclass.NoSuchName  # noqa: B018


def test_each_trainer_refuses_another_coding(features):
    integers = features[:, :1].astype(np.int64)
    with pytest.raises(ValueError, match="binned for a stump or LUT trainer, not for trees"):
        CostSensitiveTreeTrainer().prepare(StumpTrainer().prepare(features))
    with pytest.raises(ValueError, match="binned for another trainer"):
        LUTTrainer(5).prepare(CostSensitiveTreeTrainer().prepare(features))
    with pytest.raises(ValueError, match="prepared for 6 values, the trainer uses 5"):
        MultiClassLUTTrainer(5).prepare(BinnedFeatures.from_integers(integers, 6))
    shared = LUTTrainer(5).prepare(integers)
    assert MultiClassLUTTrainer(5).prepare(shared) is shared  # one coding serves both LUT trainers


def test_bins_cut_from_more_rows_than_the_sample_hold_at_least_min_bin_rows():
    """A mostly-zero feature whose sample shows few values is re-binned from every row: over more rows than the
    sample, its non-zeros share bins of at least MIN_BIN_ROWS rows (LightGBM's min_data_in_bin); over fewer,
    the same values keep a bin each where max_bins allows."""
    from bob_boost.engine.edges import MIN_BIN_ROWS, SAMPLE_SIZE

    for rows, smallest in ((2 * SAMPLE_SIZE, MIN_BIN_ROWS), (SAMPLE_SIZE // 2, 1)):
        rng = np.random.default_rng(0)
        column = np.zeros(rows)
        # 400 distinct non-zeros: about 200 in the sample of 100,000 rows, a bin each there
        column[rng.choice(rows, 400, replace=False)] = rng.standard_normal(400)
        binned = BinnedFeatures.from_values(column[:, np.newaxis], max_bins=256, n_threads=2)
        counts = binned.coded.counts[0, :binned.number_of_bins]
        zero_bin = int(np.argmax(counts))
        others = np.delete(counts, zero_bin)
        assert counts[zero_bin] == rows - 400 and others.sum() == 400
        assert others.min() == smallest
        assert (others.size <= 400 // MIN_BIN_ROWS) == (smallest > 1)


def test_bins_cut_from_more_rows_than_lightgbms_sample_hold_rows_in_proportion():
    """Above BIN_RATE_ROWS rows a re-binned feature's bins hold MIN_BIN_ROWS rows per BIN_RATE_ROWS (the
    resolution of LightGBM's bins from its 200,000-row sample): 600,000 rows, bins of at least 9."""
    from bob_boost.engine.edges import BIN_RATE_ROWS, MIN_BIN_ROWS, SAMPLE_SIZE, min_bin_rows

    assert [min_bin_rows(n) for n in (SAMPLE_SIZE, SAMPLE_SIZE + 1, BIN_RATE_ROWS, BIN_RATE_ROWS + 1,
                                      3 * BIN_RATE_ROWS, 5 * BIN_RATE_ROWS)] == [1, MIN_BIN_ROWS, MIN_BIN_ROWS,
                                                                             MIN_BIN_ROWS + 1, 9, 15]
    rows = 3 * BIN_RATE_ROWS
    rng = np.random.default_rng(1)
    column = np.zeros(rows)
    column[rng.choice(rows, 1800, replace=False)] = rng.standard_normal(1800)
    binned = BinnedFeatures.from_values(column[:, np.newaxis], max_bins=256, n_threads=2)
    counts = binned.coded.counts[0, :binned.number_of_bins]
    others = np.delete(counts, int(np.argmax(counts)))
    assert others.sum() == 1800 and others.min() >= 9 and 1800 // 18 <= others.size <= 1800 // 9


def test_codes_given_as_they_are_must_lie_within_their_features_bins():
    """``from_codes`` trusts the codes' order, not their range: a code past its feature's bins would be counted in
    the next feature's bins of every histogram, so it is an error naming the feature."""
    codes = np.array([[0, 1, 2], [0, 1, 1]], dtype=np.uint8)
    binned = BinnedFeatures.from_codes(codes, [np.array([0.5, 1.5]), np.array([0.5])])
    assert binned.offsets.tolist() == [0, 3, 5]
    with pytest.raises(ValueError, match="codes: feature 1 holds code 1 but its 0 thresholds give it 1 bins"):
        BinnedFeatures.from_codes(codes, [np.array([0.5, 1.5]), np.array([])])
