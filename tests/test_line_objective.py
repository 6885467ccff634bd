"""The compiled L-BFGS objective: the generic path's bits in every layout, and the loop using it."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from bob_boost import Boosting, ExponentialLoss, LogitLoss, LUTTrainer, TangentialLoss
from bob_boost.boosting import steps
from bob_boost.engine import line_objective
from bob_boost.engine.line_objective import LineObjective


def _layout(a: np.ndarray, order: str) -> np.ndarray:
    out = np.asarray(a, order=order)
    assert out.flags.c_contiguous if order == "C" else out.flags.f_contiguous
    return out


def _problem(rng: np.random.Generator, n: int, outputs: int, scale: float):
    targets = np.where(rng.random((n, outputs)) < 0.3, 1.0, -1.0)
    previous = scale * rng.normal(size=(n, outputs))
    current = rng.choice([-1.0, 1.0, 0.5, -0.25], size=(n, outputs)) if scale > 1 else rng.normal(size=(n, outputs))
    return targets, previous, current


@pytest.mark.parametrize("loss", [ExponentialLoss(), LogitLoss()])
@pytest.mark.parametrize("orders", list(itertools.product("CF", repeat=3)))
@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_objective_has_the_generic_bits_in_every_layout(loss, orders, weighted):
    rng = np.random.default_rng(abs(hash((type(loss).__name__, orders, weighted))) % 2 ** 32)
    for n, outputs, scale in [(3001, 7, 0.3), (2000, 3, 40.0), (997, 1, 2.0)]:
        targets, previous, current = (_layout(a, o) for a, o in zip(_problem(rng, n, outputs, scale), orders))
        weights = rng.random(n) * 3 if weighted else None
        copies = [a.copy(order="K") for a in (targets, previous, current)]
        # scores far beyond the exponent cap and alpha = 0 included; 3 threads cut the rows unevenly
        alphas = [np.zeros(outputs), rng.normal(size=outputs), 900.0 * rng.normal(size=outputs)]
        for n_threads in (1, 3):
            objective = steps._line_objective(loss, targets, previous, current, weights, n_threads)
            assert isinstance(objective, LineObjective)
            for alpha in alphas:
                value, gradient = objective(alpha)
                expected_value, expected_gradient = loss.loss_and_gradient_sum(alpha, targets, previous, current,
                                                                               weights)
                assert value == expected_value
                assert gradient.tobytes() == np.asarray(expected_gradient).tobytes()
        assert all(np.array_equal(a, b) for a, b in zip(copies, (targets, previous, current)))


def test_other_losses_and_inputs_take_the_generic_path():
    rng = np.random.default_rng(3)
    targets, previous, current = _problem(rng, 50, 2, 0.5)
    assert not isinstance(steps._line_objective(TangentialLoss(), targets, previous, current, None), LineObjective)

    class Shifted(LogitLoss):  # a subclass may change the loss: it keeps its own path
        def loss(self, targets, scores, sample_weight=None):
            return super().loss(targets, scores + 1.0, sample_weight)
    assert not isinstance(steps._line_objective(Shifted(), targets, previous, current, None), LineObjective)
    strided = np.ones((50, 4))[:, ::2]
    assert not isinstance(steps._line_objective(LogitLoss(), targets, previous, strided, None), LineObjective)
    assert not isinstance(steps._line_objective(LogitLoss(), targets, previous, current.astype(np.float32), None),
                          LineObjective)


def test_lut_training_uses_the_compiled_objective_with_unchanged_weights(monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.integers(0, 16, size=(600, 8))
    labels = (x[:, 0] + x[:, 1] + rng.integers(0, 6, size=600)) % 4
    targets = np.where(labels[:, np.newaxis] == np.arange(4), 1.0, -1.0)
    calls = []
    compiled = steps._line_objective

    def spy(*args):
        objective = compiled(*args)
        calls.append(isinstance(objective, LineObjective))
        return objective

    def generic(loss_function, targets, previous, current, weights, n_threads=1):
        return lambda alpha: loss_function.loss_and_gradient_sum(alpha, targets, previous, current, weights)

    for style in ("independent", "shared"):
        monkeypatch.setattr(steps, "_line_objective", spy)
        fast = Boosting(LUTTrainer(16, 4, style), LogitLoss(), step_rule="lbfgs").train(x, targets, 6)
        monkeypatch.setattr(steps, "_line_objective", generic)
        slow = Boosting(LUTTrainer(16, 4, style), LogitLoss(), step_rule="lbfgs").train(x, targets, 6)
        assert np.array_equal(fast.weights, slow.weights)
    assert calls and all(calls)


@pytest.mark.parametrize("loss", [ExponentialLoss(), LogitLoss()])
def test_compiled_objective_on_concurrent_threads_has_the_generic_bits(loss):
    rng = np.random.default_rng(8)
    targets, previous, current = _problem(rng, 70000, 4, 0.5)  # above the size that wakes the worker threads
    weights = rng.random(70000)
    objective = steps._line_objective(loss, targets, previous, current, weights, 2)
    alpha = rng.normal(size=4)
    value, gradient = objective(alpha)
    expected_value, expected_gradient = loss.loss_and_gradient_sum(alpha, targets, previous, current, weights)
    assert value == expected_value and gradient.tobytes() == expected_gradient.tobytes()


@pytest.mark.parametrize("loss", [ExponentialLoss(), LogitLoss()])
@pytest.mark.parametrize("chunk_entries", [1, 7, 40])
def test_any_chunking_of_the_rows_has_the_generic_bits(loss, chunk_entries, monkeypatch):
    # chunks of 1, 2 and 13 rows of the 3 outputs: many chunks a thread, ragged last ones
    monkeypatch.setattr(line_objective, "CHUNK_ENTRIES", chunk_entries)
    rng = np.random.default_rng(chunk_entries)
    targets, previous, current = _problem(rng, 301, 3, 2.0)
    weights = rng.random(301)
    for n_threads in (1, 2, 3):
        objective = steps._line_objective(loss, targets, previous, np.asfortranarray(current), weights, n_threads)
        assert objective._chunk == max(1, chunk_entries // 3)
        for alpha in (np.zeros(3), rng.normal(size=3)):
            value, gradient = objective(alpha)
            expected_value, expected_gradient = loss.loss_and_gradient_sum(alpha, targets, previous, current,
                                                                           weights)
            assert value == expected_value and gradient.tobytes() == expected_gradient.tobytes()


@pytest.mark.parametrize("loss", [ExponentialLoss(), LogitLoss()])
@pytest.mark.parametrize("orders", list(itertools.product("CF", repeat=3)))
def test_layouts_either_side_of_numpys_temporary_elision_have_the_generic_bits(loss, orders):
    # numpy computes in place into temporaries of 256 KiB and more, which changes a result's memory order
    rng = np.random.default_rng(21)
    for rows in (3276, 3277):  # x 10 outputs x 8 bytes: just below and just above 256 KiB
        targets, previous, current = (_layout(a, o) for a, o in zip(_problem(rng, rows, 10, 2.0), orders))
        objective = steps._line_objective(loss, targets, previous, current, None, 1)
        alpha = rng.normal(size=10)
        value, gradient = objective(alpha)
        expected_value, expected_gradient = loss.loss_and_gradient_sum(alpha, targets, previous, current, None)
        assert value == expected_value
        assert gradient.tobytes() == np.asarray(expected_gradient).tobytes()


@pytest.mark.parametrize("loss", [ExponentialLoss(), LogitLoss()])
def test_a_gradient_column_of_negative_zeros_sums_to_positive_zero_as_numpys(loss):
    # a loss that underflows at a large weight leaves -0.0 gradient terms; numpy's sum starts from +0.0
    targets = np.array([[1.0, 1.0], [1.0, -1.0]])
    previous = np.zeros((2, 2))
    current = np.array([[1.0, 1.0], [1.0, 1.0]])
    alpha = np.array([1000.0, 0.5])
    value, gradient = steps._line_objective(loss, targets, previous, current, None, 1)(alpha)
    expected_value, expected_gradient = loss.loss_and_gradient_sum(alpha, targets, previous, current, None)
    assert gradient.tobytes() == np.asarray(expected_gradient).tobytes()


@pytest.mark.parametrize("loss", [ExponentialLoss(), LogitLoss()])
@pytest.mark.parametrize("orders", list(itertools.product("CF", repeat=3)))
def test_signs_read_as_bytes_keep_the_generic_bits(loss, orders):
    # targets and weak outputs that are all -1 or +1 are read as int8; one 0 or -0.0 anywhere keeps float64
    # (the int8 path is for the two signs only), and either way the bits are the generic path's
    rng = np.random.default_rng(34)
    signs = np.where(rng.random((500, 4)) < 0.4, 1.0, -1.0)
    other = np.where(rng.random((500, 4)) < 0.5, -1.0, 1.0)
    row = np.arange(500)[:, np.newaxis]
    cases = {(np.int8, np.int8): (signs, other),
             (np.float64, np.int8): (np.where(row == 7, -0.0, signs), other),
             (np.int8, np.float64): (signs, np.where(row == 9, 0.0, other))}
    for dtypes, (targets, current) in cases.items():
        targets, previous, current = (_layout(a, o) for a, o in
                                      zip((targets, 3.0 * rng.normal(size=(500, 4)), current), orders))
        objective = steps._line_objective(loss, targets, previous, current, None, 1)
        assert (objective.targets.dtype, objective.current.dtype) == dtypes
        for alpha in (np.zeros(4), rng.normal(size=4), np.array([0.0, -0.0, 1e3, -1e3])):
            value, gradient = objective(alpha)
            expected_value, expected_gradient = loss.loss_and_gradient_sum(alpha, targets, previous, current, None)
            assert value == expected_value
            assert gradient.tobytes() == np.asarray(expected_gradient).tobytes()
