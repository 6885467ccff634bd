"""Error rates, PCF / NEC and Drummond-Holte cost curves."""
import numpy as np
import pytest

from bob_boost.evaluation import (classification_error, cost_lines, false_negative_rate, false_positive_rate,
                                  lower_envelope, normalized_expected_cost, probability_cost_function)

TARGETS = np.array([1, 1, 1, 1, -1, -1, -1, -1, -1])
PREDICTIONS = np.array([1, -1, 1, -1, -1, 1, -1, -1, -1])


def test_error_rates_count_the_right_samples():
    assert false_negative_rate(TARGETS, PREDICTIONS) == 2 / 4
    assert false_positive_rate(TARGETS, PREDICTIONS) == 1 / 5
    assert classification_error(TARGETS, PREDICTIONS) == 3 / 9
    # column vectors and floats are accepted as labels
    assert false_negative_rate(TARGETS[:, None].astype(float), PREDICTIONS.astype(float)) == 0.5
    assert classification_error(TARGETS, TARGETS) == 0.0


def test_probability_cost_function_and_normalized_expected_cost():
    assert probability_cost_function(1, 1) == 0.5
    assert probability_cost_function(3, 1) == 0.75
    assert probability_cost_function(1, 1, prior_positive=0.3) == pytest.approx(0.3)
    assert probability_cost_function(2, 1, prior_positive=0.25) == pytest.approx(0.5 / (0.5 + 0.75))
    np.testing.assert_allclose(probability_cost_function([1, 1, 100], [100, 1, 1]), [1 / 101, 0.5, 100 / 101])
    assert normalized_expected_cost(0.2, 0.4, 0.5) == pytest.approx(0.3)
    assert normalized_expected_cost(0.2, 0.4, 0.0) == 0.4
    assert normalized_expected_cost(0.2, 0.4, 1.0) == 0.2
    # rows of the AdaBoostDB paper's Table 1 (credit set), which use p(+) = 1/2
    for costs, fn, fp, nec in [((1, 100), 9.97e-1, 1.43e-3, 1.13e-2), ((1, 1), 2.60e-1, 2.90e-1, 2.75e-1),
                               ((100, 1), 0.0, 9.87e-1, 9.77e-3)]:
        assert normalized_expected_cost(fn, fp, probability_cost_function(*costs)) == pytest.approx(nec, rel=5e-3)


def test_cost_lines_and_their_lower_envelope():
    fn = np.array([0.1, 0.5, 0.3])
    fp = np.array([0.6, 0.05, 0.2])
    pcf = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    lines = cost_lines(fn, fp, pcf)
    assert lines.shape == (3, 5)
    np.testing.assert_allclose(lines[:, 0], fp)
    np.testing.assert_allclose(lines[:, -1], fn)
    np.testing.assert_allclose(lines[1], [0.05, 0.1625, 0.275, 0.3875, 0.5])
    envelope, best = lower_envelope(fn, fp, pcf)
    # by hand: classifier 1 wins at the left end, 2 in the middle, 0 at the right end
    np.testing.assert_array_equal(best, [1, 1, 2, 0, 0])
    np.testing.assert_allclose(envelope, [0.05, 0.1625, 0.25, 0.225, 0.1])
    envelope, best = lower_envelope(fn, fp, pcf, include_trivial=True)
    np.testing.assert_array_equal(best, [-1, 1, 2, 0, -2])
    np.testing.assert_allclose(envelope, [0.0, 0.1625, 0.25, 0.225, 0.0])


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="predictions"):
        false_negative_rate(TARGETS, PREDICTIONS[:-1])
    with pytest.raises(ValueError, match="targets"):
        classification_error(np.where(TARGETS > 0, 1, 0), PREDICTIONS)
    with pytest.raises(ValueError, match="no positive"):
        false_negative_rate(-np.ones(3), -np.ones(3))
    with pytest.raises(ValueError, match="no negative"):
        false_positive_rate(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="targets"):
        classification_error(np.array(["a", "b"]), np.ones(2))
    with pytest.raises(ValueError, match="predictions"):
        classification_error(TARGETS, np.array([]))
    with pytest.raises(ValueError, match="cost_positive"):
        probability_cost_function(0, 1)
    with pytest.raises(ValueError, match="cost_negative"):
        probability_cost_function(1, np.inf)
    with pytest.raises(ValueError, match="prior_positive"):
        probability_cost_function(1, 1, prior_positive=1.0)
    with pytest.raises(ValueError, match="fp_rate"):
        normalized_expected_cost(0.1, 1.5, 0.5)
    with pytest.raises(ValueError, match="pcf"):
        cost_lines([0.1], [0.2], [np.nan])
    with pytest.raises(ValueError, match=r"fn_rate, fp_rate, pcf: shapes \(2,\), \(3,\), \(\) do not broadcast"):
        normalized_expected_cost([0.1, 0.2], [0.1, 0.2, 0.3], 0.5)
    with pytest.raises(ValueError, match=r"cost_positive, cost_negative, prior_positive: shapes \(2,\), \(3,\)"):
        probability_cost_function([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="fp_rates"):
        lower_envelope([0.1, 0.2], [0.2], [0.5])


def test_inputs_are_not_modified():
    fn = np.array([0.1, 0.5])
    fp = np.array([0.6, 0.05])
    pcf = np.linspace(0, 1, 5)
    copies = fn.copy(), fp.copy(), pcf.copy()
    lower_envelope(fn, fp, pcf, include_trivial=True)
    for array, copy in zip((fn, fp, pcf), copies):
        np.testing.assert_array_equal(array, copy)
