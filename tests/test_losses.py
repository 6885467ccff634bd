"""Losses: values, gradients against finite differences, stability and target checks."""
import warnings

import numpy as np
import pytest

from bob_boost.losses import (ExponentialLoss, JesorskyLoss, LogitLoss, SquaredLoss,
                              TangentialLoss)

rng = np.random.default_rng(42)
BINARY = [ExponentialLoss(), LogitLoss(), TangentialLoss()]


def finite_difference(loss, targets, scores, step=1e-6):
    """Central differences of the summed loss with respect to every score."""
    gradient = np.zeros_like(scores)
    for index in np.ndindex(scores.shape):
        up, down = scores.copy(), scores.copy()
        up[index] += step
        down[index] -= step
        gradient[index] = (loss.loss(targets, up).sum() - loss.loss(targets, down).sum()) / (2 * step)
    return gradient


@pytest.mark.parametrize("loss", BINARY, ids=lambda l: type(l).__name__)
def test_binary_gradients_match_finite_differences_for_both_target_signs(loss):
    targets = np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0], [-1.0, -1.0]] * 3)
    scores = rng.normal(scale=1.5, size=targets.shape)
    np.testing.assert_allclose(loss.loss_gradient(targets, scores),
                               finite_difference(loss, targets, scores), rtol=1e-5, atol=1e-7)


def test_regression_gradients_match_finite_differences():
    targets = rng.normal(size=(6, 6)) * 10
    scores = targets + rng.normal(size=targets.shape)
    for loss in (SquaredLoss(), JesorskyLoss()):
        np.testing.assert_allclose(loss.loss_gradient(targets, scores),
                                   finite_difference(loss, targets, scores), rtol=1e-5, atol=1e-7)


def test_loss_values_follow_their_definitions():
    t = np.array([[1.0], [-1.0]])
    s = np.array([[0.5], [0.5]])
    np.testing.assert_allclose(ExponentialLoss().loss(t, s), np.exp([[-0.5], [0.5]]))
    np.testing.assert_allclose(LogitLoss().loss(t, s), np.log1p(np.exp([[-0.5], [0.5]])))
    np.testing.assert_allclose(TangentialLoss().loss(t, s), (2 * np.arctan([[0.5], [-0.5]]) - 1) ** 2)
    np.testing.assert_allclose(SquaredLoss().loss(t, s), [[0.125], [1.125]])


def test_jesorsky_loss_is_scaled_sum_of_point_distances():
    # eyes 10 apart; second eye and a third point are off by (3, 4) -> distance 5 each
    targets = np.array([[0.0, 0.0, 0.0, 10.0, 5.0, 5.0]])
    scores = np.array([[0.0, 0.0, 3.0, 14.0, 8.0, 9.0]])
    np.testing.assert_allclose(JesorskyLoss().loss(targets, scores), [[0.5 / 10 * 10]])


@pytest.mark.parametrize("loss", BINARY, ids=lambda l: type(l).__name__)
def test_binary_losses_stay_finite_without_warnings_for_huge_scores(loss):
    targets = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    scores = np.array([[1e4], [1e4], [-1e4], [-1e4]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            values = loss.loss(targets, scores)
            gradients = loss.loss_gradient(targets, scores)
            total = loss.loss_sum(np.array([0.5]), targets, scores, scores)
    assert np.all(np.isfinite(values)) and np.all(np.isfinite(gradients)) and np.isfinite(total)


def test_loss_sum_and_its_gradient_agree_with_definitions():
    loss = LogitLoss()
    targets = np.sign(rng.normal(size=(20, 3)))
    previous = rng.normal(size=(20, 3))
    current = np.sign(rng.normal(size=(20, 3)))
    alpha = np.array([0.3, -0.2, 0.7])
    expected = loss.loss(targets, previous + alpha * current).sum()
    assert loss.loss_sum(alpha, targets, previous, current) == pytest.approx(expected)
    step = 1e-6
    numeric = [(loss.loss_sum(alpha + step * e, targets, previous, current)
                - loss.loss_sum(alpha - step * e, targets, previous, current)) / (2 * step) for e in np.eye(3)]
    np.testing.assert_allclose(loss.loss_gradient_sum(alpha, targets, previous, current), numeric, rtol=1e-6)


@pytest.mark.parametrize("loss", BINARY, ids=lambda l: type(l).__name__)
def test_classification_losses_reject_targets_outside_plus_minus_one(loss):
    with pytest.raises(ValueError, match="targets.*-1, \\+1"):
        loss.check_targets(np.array([1.0, 0.0, -1.0]))
    assert loss.check_targets(np.array([1, -1])).shape == (2, 1)


def test_target_checks_reject_nan_and_bad_shapes():
    with pytest.raises(ValueError, match="targets.*NaN"):
        SquaredLoss().check_targets(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="targets.*even"):
        JesorskyLoss().check_targets(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="eye positions"):
        JesorskyLoss().check_targets(np.zeros((3, 4)))
    with pytest.raises(TypeError, match="targets"):
        SquaredLoss().check_targets(np.array(["a", "b"]))


@pytest.mark.parametrize("loss", BINARY + [SquaredLoss()], ids=lambda l: type(l).__name__)
def test_combined_loss_and_gradient_equal_the_separate_ones(loss):
    targets = np.sign(rng.normal(size=(50, 2)))
    scores = rng.normal(scale=30, size=(50, 2))
    values, gradients = loss.loss_and_gradient(targets, scores)
    np.testing.assert_allclose(values, loss.loss(targets, scores), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(gradients, loss.loss_gradient(targets, scores), rtol=1e-13, atol=1e-300)
    current = np.sign(rng.normal(size=(50, 2)))
    total, derivative = loss.loss_and_gradient_sum(np.array([0.2, -0.1]), targets, scores, current)
    assert total == pytest.approx(loss.loss_sum(np.array([0.2, -0.1]), targets, scores, current), rel=1e-13)
    np.testing.assert_allclose(derivative, loss.loss_gradient_sum(np.array([0.2, -0.1]), targets, scores, current),
                               rtol=1e-12)


def test_losses_made_by_name_take_the_cost_options_their_constructor_names():
    from bob_boost.recipes import make_loss
    costs = np.array([[0.0, 2.0], [1.0, 0.0]])
    for _ in range(2):  # the second time from the constructor parameters read the first
        with pytest.raises(ValueError, match="loss: 'cmel' needs cost_matrix"):
            make_loss("cmel")
        assert np.array_equal(make_loss("cmel", cost_matrix=costs).cost_matrix, costs)
        assert type(make_loss("log", cost_matrix=costs)).__name__ == "LogitLoss"  # options it does not take: unused


def test_logit_derivatives_are_within_a_few_ulp_of_extended_precision_at_every_margin():
    # the sigmoids come from one exponential of -|margin|: no overflow to NaN, no cancellation on either side
    margins = np.array([0.0, 1e-300, 1e-8, 0.5, 1.0, 18.0, 36.0, 37.0, 200.0, 700.0, 709.0, 710.0, 745.0, 1000.0])
    margins = np.concatenate([margins, -margins, rng.normal(scale=30.0, size=4000)])
    targets = np.where(np.arange(margins.size) % 2 == 0, 1.0, -1.0)[:, np.newaxis]
    scores = margins[:, np.newaxis] * targets  # targets * scores is the margin, exactly
    gradient, hessian = LogitLoss().gradient_and_hessian(targets, scores)
    small = np.exp(-np.abs(margins).astype(np.longdouble))
    below = np.where(margins >= 0, small / (1 + small), 1 / (1 + small))  # sigmoid(-margin)
    expected_gradient = -targets[:, 0] * below
    expected_hessian = small / ((1 + small) * (1 + small))
    for got, expected in ((gradient[:, 0], expected_gradient), (hessian[:, 0], expected_hessian)):
        assert np.all(np.isfinite(got))
        representable = np.abs(expected) >= np.finfo(np.float64).tiny  # below that, subnormals (or 0) lose bits
        ulp = np.spacing(np.abs(expected[representable]).astype(np.float64))
        assert np.max(np.abs(got[representable] - expected[representable]) / ulp) <= 4.0
        assert np.all(np.abs(got[~representable] - expected[~representable]) <= np.finfo(np.float64).tiny)
