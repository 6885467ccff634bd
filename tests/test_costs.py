"""Cost matrices and margin vectors of bob_boost.costs."""
import numpy as np
import pytest

from bob_boost.costs import (check_class_labels, check_cost_matrix, face_detection_cost_matrix,
                             imbalance_cost_matrix_from_confusion,
                             imbalance_cost_matrix, margin_cost_matrix, margin_vectors,
                             multiview_car_cost_matrix, samme_cost_matrix, zero_one_cost_matrix)
from bob_boost.machine import cost_star


def test_check_cost_matrix_returns_a_float_copy():
    given = np.array([[0, 2, 1], [1, 0, 3], [0, 0, 0]])
    checked = check_cost_matrix(given)
    assert checked.dtype == np.float64
    checked[0, 1] = 7
    assert given[0, 1] == 2


@pytest.mark.parametrize("matrix, error, message", [
    (np.zeros((2, 3)), ValueError, "square"),
    (np.zeros((1, 1)), ValueError, "at least 2"),
    (np.zeros(4), ValueError, "square"),
    ([[0, np.nan], [1, 0]], ValueError, "NaN"),
    ([[0, np.inf], [1, 0]], ValueError, "infinite"),
    ([[0, -1], [1, 0]], ValueError, "non-negative"),
    ([[1, 1], [1, 0]], ValueError, "diagonal"),
    ([["a", "b"], ["c", "d"]], TypeError, "numeric"),
    (np.array([[0, 1j], [1, 0]]), TypeError, "real"),
])
def test_check_cost_matrix_rejects_bad_matrices(matrix, error, message):
    with pytest.raises(error, match=f"my_costs.*{message}"):
        check_cost_matrix(matrix, name="my_costs")


def test_margin_vectors_give_the_two_margin_values_of_samme():
    for k in (2, 3, 5):
        vectors = margin_vectors(k)
        np.testing.assert_allclose(vectors.sum(axis=1), 0, atol=1e-15)
        products = vectors @ vectors.T
        # y_l . y_k = K/(K-1) if l == k else -K/(K-1)^2
        expected = np.full((k, k), -k / (k - 1) ** 2)
        np.fill_diagonal(expected, k / (k - 1))
        np.testing.assert_allclose(products, expected, rtol=1e-12)
    with pytest.raises(ValueError, match="number_of_classes"):
        margin_vectors(1)


def test_margin_cost_matrix_is_the_cost_sensitive_margin_of_every_decision():
    costs = np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 0.5], [1.0, 3.0, 0.0]])
    star = cost_star(costs)
    np.testing.assert_allclose(star.sum(axis=1), 0, atol=1e-15)
    assert star[0, 0] == -5.0 and star[1, 2] == 0.5
    c2 = margin_cost_matrix(costs)
    # C2[l, k] = C*[l, :] . y_k  (paper eq. 19)
    for label in range(3):
        for k in range(3):
            y_k = np.full(3, -0.5)
            y_k[k] = 1.0
            assert c2[label, k] == pytest.approx(star[label] @ y_k, rel=1e-12)
    np.testing.assert_allclose(c2, 1.5 * star)


def test_samme_matrix_gives_samme_exponents():
    k = 4
    c2 = margin_cost_matrix(samme_cost_matrix(k))
    # -1/(K-1) for a correct decision, 1/(K-1)^2 for an error (paper appendix B)
    np.testing.assert_allclose(np.diag(c2), -1 / 3)
    np.testing.assert_allclose(c2[~np.eye(k, dtype=bool)], 1 / 9)
    np.testing.assert_array_equal(zero_one_cost_matrix(3, 2.0), [[0, 2, 2], [2, 0, 2], [2, 2, 0]])
    with pytest.raises(ValueError, match="scale"):
        zero_one_cost_matrix(3, 0.0)


def test_imbalance_cost_matrix_is_the_row_normalised_confusion_without_diagonal():
    labels = [0, 0, 0, 0, 1, 1, 2, 2]
    predictions = [0, 0, 0, 1, 1, 0, 2, 2]
    costs = imbalance_cost_matrix(labels, predictions, scale=0.5)
    np.testing.assert_allclose(costs, 0.5 * np.array([[0, 1 / 4, 0], [1 / 2, 0, 0], [0, 0, 0]]))
    smoothed = imbalance_cost_matrix(labels, predictions, scale=1.0, smoothing=1.0)
    # class 0: counts [3, 1+1, 0+1] over 4 + 2 samples
    np.testing.assert_allclose(smoothed[0], [0, 2 / 6, 1 / 6])
    np.testing.assert_allclose(smoothed[2], [1 / 4, 1 / 4, 0])
    assert np.all(smoothed[~np.eye(3, dtype=bool)] > 0)
    check_cost_matrix(smoothed)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(labels=[0, 1], predictions=[0, 1, 1]), ValueError, "predictions"),
    (dict(labels=[0, 2], predictions=[0, 2]), ValueError, "class 1 has no sample"),
    (dict(labels=[0, 1], predictions=[0, 1], scale=-1.0), ValueError, "scale"),
    (dict(labels=[0, 1], predictions=[0, 1], smoothing=np.nan), ValueError, "smoothing"),
    (dict(labels=[0, 1.5], predictions=[0, 1]), ValueError, "labels.*integers"),
    (dict(labels=[0, -1], predictions=[0, 1]), ValueError, "labels.*>= 0"),
    (dict(labels=[0, 1], predictions=[0, 3], number_of_classes=3), ValueError, "predictions"),
    (dict(labels=[[0, 1]], predictions=[[0, 1]]), ValueError, "labels.*1-D"),
])
def test_imbalance_cost_matrix_rejects_bad_input(kwargs, error, message):
    with pytest.raises(error, match=message):
        imbalance_cost_matrix(**kwargs)


def test_imbalance_costs_from_a_confusion_matrix_equal_those_from_labels():
    labels = [0, 0, 0, 0, 1, 1, 2, 2]
    predictions = [0, 0, 0, 1, 1, 0, 2, 2]
    confusion = [[3, 1, 0], [1, 1, 0], [0, 0, 2]]
    np.testing.assert_array_equal(imbalance_cost_matrix_from_confusion(confusion, 0.5, 1.0),
                                  imbalance_cost_matrix(labels, predictions, scale=0.5, smoothing=1.0))
    for bad in ([[1, 2]], [[1, -1], [0, 1]], [[1]], [[1, np.nan], [0, 1]]):
        with pytest.raises(ValueError, match="confusion: expected a"):
            imbalance_cost_matrix_from_confusion(bad)
    with pytest.raises(ValueError, match="class 1 has no sample"):
        imbalance_cost_matrix_from_confusion([[2, 0], [0, 0]])


def test_face_detection_matrix():
    np.testing.assert_array_equal(face_detection_cost_matrix(2, 1.5), [[0, 1, 1], [1.5, 0, 1], [1.5, 1, 0]])
    matrix = face_detection_cost_matrix(5)
    assert matrix.shape == (6, 6)
    check_cost_matrix(matrix)
    with pytest.raises(ValueError, match="false_negative_cost"):
        face_detection_cost_matrix(5, -1.0)
    with pytest.raises(ValueError, match="number_of_views"):
        face_detection_cost_matrix(0)


def test_multiview_car_matrix_uses_the_circular_view_distance():
    matrix = multiview_car_cost_matrix(4, false_positive_cost=1.0, false_negative_cost=3.0, view_cost=2.0)
    # P(i, j) = 1 - |(2|i-j| - 4) / 4|: 0.5 for neighbours (also 1 <-> 4), 1 for opposite views
    expected = np.array([[0, 1, 1, 1, 1],
                         [3, 0, 1, 2, 1],
                         [3, 1, 0, 1, 2],
                         [3, 2, 1, 0, 1],
                         [3, 1, 2, 1, 0]], dtype=float)
    np.testing.assert_allclose(matrix, expected)
    twenty = multiview_car_cost_matrix(20)
    check_cost_matrix(twenty)
    assert twenty[1, 2] == pytest.approx(2 / 20) and twenty[1, 11] == pytest.approx(1.0)
    with pytest.raises(TypeError, match="view_cost"):
        multiview_car_cost_matrix(4, view_cost="3")


def test_check_class_labels():
    np.testing.assert_array_equal(check_class_labels(np.array([0.0, 2.0]), 3), [0, 2])
    with pytest.raises(ValueError, match="targets: label 3 is out of range"):
        check_class_labels([0, 3], 3, "targets")
    with pytest.raises(TypeError, match="labels"):
        check_class_labels(["a"], 3)
