"""Weak machines: evaluation on whole matrices, feature indices and argument checks."""
import numpy as np
import pytest

import bob_boost
from bob_boost.weak import LUTMachine, StumpMachine


def test_stump_outputs_polarity_at_or_above_threshold():
    features = np.array([[0.0, 1.0], [0.0, 2.0], [0.0, 3.0]])
    machine = StumpMachine(2.0, -1, 1)
    np.testing.assert_array_equal(machine(features), [[1.0], [-1.0], [-1.0]])
    np.testing.assert_array_equal(machine.feature_indices(), [1])
    assert machine.number_of_outputs == 1


def test_lut_looks_up_each_output_in_its_own_column():
    table = np.array([[1.0, -1.0], [-1.0, 1.0], [0.5, 0.25]])
    machine = LUTMachine(table, [2, 0])
    features = np.array([[0, 9, 1], [2, 9, 2]])
    np.testing.assert_array_equal(machine(features), [[-1.0, -1.0], [0.5, 0.25]])
    np.testing.assert_array_equal(machine.feature_indices(), [0, 2])


def test_univariate_lut_accepts_a_1d_table():
    machine = LUTMachine([1.0, -1.0, 1.0], 0)
    np.testing.assert_array_equal(machine(np.array([[2], [1]])), [[1.0], [-1.0]])


def test_constructor_arguments_are_validated():
    with pytest.raises(ValueError, match="polarity"):
        StumpMachine(0.0, 0, 1)
    with pytest.raises(ValueError, match="index"):
        StumpMachine(0.0, 1, -1)
    with pytest.raises(TypeError, match="threshold"):
        StumpMachine("a", 1, 0)
    with pytest.raises(ValueError, match="indices"):
        LUTMachine(np.ones((4, 2)), [0])
    with pytest.raises(ValueError, match="look_up_tables.*NaN"):
        LUTMachine([1.0, np.nan], [0])


def test_evaluation_rejects_bad_features():
    stump = StumpMachine(0.5, 1, 3)
    with pytest.raises(ValueError, match="feature 3.*only 2 columns"):
        stump(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        stump(np.full((2, 4), np.nan))
    lut = LUTMachine(np.ones(4), [0])
    with pytest.raises(ValueError, match="LUT entries"):
        lut(np.array([[4]]))
    with pytest.raises(ValueError, match="non-negative"):
        lut(np.array([[-1]]))
    with pytest.raises(ValueError, match="integers"):
        lut(np.array([[1.5]]))


def test_lut_table_passed_in_is_not_shared_or_modified():
    table = np.array([1.0, -1.0])
    machine = LUTMachine(table, [0])
    table[0] = 7.0
    np.testing.assert_array_equal(machine(np.array([[0]])), [[1.0]])


@pytest.mark.parametrize("categorical", [False, True])
def test_a_trainers_trusted_trees_are_the_checked_constructors(categorical):
    rng = np.random.default_rng(3)
    features = rng.normal(size=(800, 3))
    features[:, 2] = rng.integers(0, 5, 800)
    features[rng.random(800) < 0.1, 0] = np.nan
    targets = np.where(np.nan_to_num(features[:, 0]) + (features[:, 2] == 3) > 0, 1.0, -1.0)
    trainer = bob_boost.TreeTrainer(max_leaves=6, missing="bin", categorical_features=[2] if categorical else None,
                                    min_data_per_group=5)
    for weak in bob_boost.Boosting(trainer, bob_boost.LogitLoss(), learning_rate=0.3).train(
            features, targets, 3).weak_machines:
        checked = bob_boost.TreeMachine(weak.features, weak.thresholds, weak.left_children, weak.right_children,
                                        weak.values, weak.roots, weak.missing_left, weak.categories, weak.cover,
                                        weak.gains)
        assert checked == weak and checked.depth == weak.depth
        assert (weak.category_layout is not None) == categorical
        for name in ("features", "thresholds", "values", "cover", "gains", "missing_left"):
            assert getattr(weak, name).dtype == getattr(checked, name).dtype
            assert not getattr(weak, name).flags.writeable


def test_a_boosted_machine_checks_each_look_up_table_s_values_by_its_own_size():
    """The values read are checked once for the ensemble (tables of one size together), by each table's rule."""
    small = LUTMachine(np.array([[1.0], [-1.0], [0.5]]), np.array([0]))  # 3 entries, feature 0
    large = LUTMachine(np.array([[1.0], [-1.0], [0.5], [2.0], [-2.0]]), np.array([1]))  # 5 entries, feature 1
    missing = LUTMachine(np.array([[1.0], [-1.0], [3.0]]), np.array([2]), missing_entry=True)  # 2 values, NaN
    machine = bob_boost.BoostedMachine()
    for weak, weight in ((small, 0.5), (large, 1.0), (small, 0.25), (missing, 1.0)):
        machine.add_weak_machine(weak, weight)
    features = np.array([[2.0, 4.0, 1.0], [0.0, 3.0, np.nan]])
    expected = 0.5 * small.forward(features) + large.forward(features) + 0.25 * small.forward(features) \
        + missing.forward(features)
    np.testing.assert_allclose(machine.decision_scores(features), expected)
    for bad, message in (([3.0, 4.0, 0.0], "LUT feature value 3.0 is >= the number of LUT entries \\(3\\)"),
                         ([0.0, 5.0, 0.0], "LUT feature value 5.0 is >= the number of LUT entries \\(5\\)"),
                         ([0.0, 1.5, 0.0], "LUT features must be integers"),
                         ([0.0, 1.0, 2.0], "LUT feature value 2.0 is >= the number of LUT entries \\(2\\)"),
                         ([-1.0, 1.0, 0.0], "LUT features must be non-negative")):
        with pytest.raises(ValueError, match=message):
            machine.decision_scores(np.array([bad]))
