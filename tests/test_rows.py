"""The round's per-sample arithmetic on row blocks in threads gives the whole matrix's bits."""
import numpy as np
import pytest

import bob_boost
from bob_boost.boosting import rows
from bob_boost.engine.threads import MIN_PARALLEL_WORK

SAMPLES = MIN_PARALLEL_WORK // 4 + 123  # several blocks and a ragged last one, at 4 outputs


def _targets(loss, rng, outputs):
    if isinstance(loss, bob_boost.SoftmaxLoss):
        return np.eye(outputs)[rng.integers(0, outputs, SAMPLES)]
    if isinstance(loss, bob_boost.SquaredLoss):
        return rng.normal(size=(SAMPLES, outputs))
    return rng.choice([-1.0, 1.0], size=(SAMPLES, outputs))


@pytest.mark.parametrize("loss", [bob_boost.SoftmaxLoss(), bob_boost.ExponentialLoss(), bob_boost.LogitLoss(),
                                  bob_boost.SquaredLoss()], ids=repr)
@pytest.mark.parametrize("with_hessian", [True, False])
def test_blocked_derivatives_equal_the_whole_matrix(loss, with_hessian):
    rng = np.random.default_rng(3)
    scores = rng.normal(scale=3.0, size=(SAMPLES, 4))
    targets = _targets(loss, rng, 4)
    assert loss.row_separable
    assert len(rows._blocks(SAMPLES)) > 2
    gradient, hessian = rows.loss_derivatives(loss, targets, scores, with_hessian, 2)
    if with_hessian:
        whole_gradient, whole_hessian = loss.gradient_and_hessian(targets, scores)
        np.testing.assert_array_equal(hessian, whole_hessian)
    else:
        whole_gradient, _ = loss.loss_gradient(targets, scores), None
        assert hessian is None
    np.testing.assert_array_equal(gradient, whole_gradient)


def test_other_losses_are_evaluated_whole():
    class Halved(bob_boost.SquaredLoss):
        row_separable = False

        def loss_gradient(self, targets, scores, sample_weight=None):
            # not row-separable: a row's value depends on the whole matrix
            return (scores - targets) / len(scores)

    rng = np.random.default_rng(4)
    scores = rng.normal(size=(SAMPLES, 4))
    targets = rng.normal(size=(SAMPLES, 4))
    gradient, _ = rows.loss_derivatives(Halved(), targets, scores, False, 2)
    np.testing.assert_array_equal(gradient, (scores - targets) / SAMPLES)
    assert not bob_boost.JesorskyLoss().row_separable


@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_updated_scores_are_a_new_array_with_the_same_bits(n_threads):
    rng = np.random.default_rng(5)
    scores = rng.normal(size=(SAMPLES, 4))
    weak = rng.normal(size=(SAMPLES, 4))
    weight = rng.normal(size=4)
    kept = scores.copy()
    updated = rows.updated_scores(scores, weight, weak, n_threads)
    np.testing.assert_array_equal(updated, weight * weak + scores)
    np.testing.assert_array_equal(scores, kept)
    assert updated is not scores
    # a broadcast update (one weak output for several scores) still adds up
    np.testing.assert_array_equal(rows.updated_scores(scores, weight, weak[:, :1], n_threads),
                                  scores + weight * weak[:, :1])
