"""The round's per-sample arithmetic on row blocks in threads gives the whole matrix's bits."""
import numpy as np
import pytest

import bob_boost
from bob_boost.boosting import rows
from bob_boost.compat.bob import losses as bob_losses
from bob_boost.engine.threads import MIN_PARALLEL_WORK
from bob_boost.losses.base import joined_derivatives
from bob_boost.losses.log_link import GammaLoss, PoissonLoss, TweedieLoss
from bob_boost.losses.robust import AbsoluteErrorLoss, HuberLoss, QuantileLoss

SAMPLES = MIN_PARALLEL_WORK // 4 + 123  # several blocks and a ragged last one, at 4 outputs


@pytest.fixture
def threaded_calls(monkeypatch):
    """How many times the row blocks went to the threads (proof that the threaded path ran)."""
    calls = []

    def spy(kernel, blocks, n_threads, work=None):
        calls.append(len(blocks))
        return real(kernel, blocks, n_threads, work)

    real = rows.run_blocks
    monkeypatch.setattr(rows, "run_blocks", spy)
    return calls


def _targets(loss, rng, outputs):
    if isinstance(loss, bob_boost.SoftmaxLoss):
        return np.eye(outputs)[rng.integers(0, outputs, SAMPLES)]
    if isinstance(loss, (bob_boost.SquaredLoss, bob_boost.HuberLoss, bob_boost.AbsoluteErrorLoss,
                         bob_boost.QuantileLoss)):
        return rng.normal(size=(SAMPLES, outputs))
    if isinstance(loss, bob_boost.GammaLoss):
        return rng.gamma(2.0, size=(SAMPLES, outputs))
    if isinstance(loss, bob_boost.TweedieLoss):
        return rng.poisson(2.0, size=(SAMPLES, outputs)).astype(float)
    return rng.choice([-1.0, 1.0], size=(SAMPLES, outputs))


SEPARABLE_LOSSES = [bob_boost.SoftmaxLoss(), bob_boost.ExponentialLoss(), bob_boost.LogitLoss(),
                    bob_boost.SquaredLoss(), bob_losses.ExponentialLoss(), bob_losses.LogitLoss(),
                    bob_boost.HuberLoss(), bob_boost.AbsoluteErrorLoss(), bob_boost.QuantileLoss(0.3),
                    bob_boost.PoissonLoss(), bob_boost.GammaLoss(), bob_boost.TweedieLoss(1.4),
                    bob_boost.FocalLoss(2.0, 0.25), bob_boost.MultiLabelLogitLoss()]


def _loss_id(loss):
    return f"{type(loss).__module__}.{type(loss).__name__}"


@pytest.mark.parametrize("loss", SEPARABLE_LOSSES, ids=_loss_id)
@pytest.mark.parametrize("with_hessian", [True, False])
def test_blocked_derivatives_equal_the_whole_matrix(loss, with_hessian, threaded_calls):
    rng = np.random.default_rng(3)
    scores = rng.normal(scale=3.0, size=(SAMPLES, 4))
    scores[::997] *= 400.0  # where exponentials overflow (bob's logit falls back to bob_boost's form)
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
    assert threaded_calls == [len(rows._blocks(SAMPLES))]
    # the layout of the whole matrix's derivatives, for Fortran-ordered scores too
    assert gradient.flags.c_contiguous and whole_gradient.flags.c_contiguous
    fortran_gradient, _ = rows.loss_derivatives(loss, targets, np.asfortranarray(scores), with_hessian, 2)
    whole_fortran = loss.loss_gradient(targets, np.asfortranarray(scores))
    np.testing.assert_array_equal(fortran_gradient, whole_fortran)
    assert fortran_gradient.flags.c_contiguous == whole_fortran.flags.c_contiguous
    # Fortran-ordered targets: computed whole (its layout may then follow them)
    rows.loss_derivatives(loss, np.asfortranarray(targets), scores, with_hessian, 2)
    assert len(threaded_calls) == 2


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


def test_a_subclass_with_its_own_derivatives_is_not_row_separable_unless_it_says_so():
    class Scaled(bob_boost.SquaredLoss):
        def loss_gradient(self, targets, scores, sample_weight=None):
            return 2.0 * super().loss_gradient(targets, scores, sample_weight)

    class Declared(Scaled):
        row_separable = True

    class Renamed(bob_boost.SquaredLoss):
        name = "renamed"

    assert not Scaled.row_separable and Declared.row_separable and Renamed.row_separable
    assert not bob_losses.JesorskyLoss.row_separable and not bob_losses.TangentialLoss.row_separable


@pytest.mark.parametrize("n_threads", [1, 2, 4])
@pytest.mark.parametrize("order", ["C", "F"])
def test_updated_scores_are_a_new_array_with_the_same_bits(n_threads, order):
    rng = np.random.default_rng(5)
    scores = rng.normal(size=(SAMPLES, 4))
    weak = np.asarray(rng.normal(size=(SAMPLES, 4)), order=order)
    weight = rng.normal(size=4)
    kept = scores.copy()
    updated = rows.updated_scores(scores, weight, weak, n_threads)
    whole = weight * weak + scores
    np.testing.assert_array_equal(updated, whole)
    # laid out as the whole-matrix product, so that sums along rows round alike
    assert updated.flags.f_contiguous == whole.flags.f_contiguous == (order == "F")
    np.testing.assert_array_equal(np.sum(updated, axis=1), np.sum(whole, axis=1))
    np.testing.assert_array_equal(scores, kept)
    assert updated is not scores
    # a broadcast update (one weak output for several scores) still adds up
    np.testing.assert_array_equal(rows.updated_scores(scores, weight, weak[:, :1], n_threads),
                                  scores + weight * weak[:, :1])


@pytest.mark.long
def test_training_above_the_threshold_is_the_same_at_one_and_two_threads():
    # look-up tables give Fortran-ordered weak outputs; a callback sees every round's scores
    rng = np.random.default_rng(6)
    samples = MIN_PARALLEL_WORK // 10 + 500
    features = rng.integers(0, 16, size=(samples, 6))
    labels = (features[:, 0] + features[:, 1] + rng.integers(0, 4, samples)) % 10
    runs = []
    for n_threads in (1, 2):
        seen = []
        trainer = bob_boost.Boosting(bob_boost.LUTTrainer(16, 10, n_threads=n_threads), bob_boost.SoftmaxLoss())
        machine = trainer.train(features, labels, 4, callback=lambda r, m, scores: seen.append(
            (scores.copy(order="K"), float(np.sum(bob_boost.SoftmaxLoss().loss(np.eye(10)[labels], scores))))))
        runs.append((machine(features), seen))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    for (scores_1, loss_1), (scores_2, loss_2) in zip(runs[0][1], runs[1][1]):
        np.testing.assert_array_equal(scores_1, scores_2)
        assert scores_1.flags.f_contiguous == scores_2.flags.f_contiguous
        assert loss_1 == loss_2


def test_training_runs_blas_on_one_thread_and_gives_the_threads_back():
    """The loop's many tiny BLAS calls run on one thread while a trainer trains, and the BLAS libraries get their
    thread counts back afterwards, training after training (the libraries are found once per process)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads():
        return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]

    seen = []
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), np.where(rng.random(200) < 0.5, 1.0, -1.0)
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        for _ in range(2):
            bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.LogitLoss()).train(
                X, y, 3, callback=lambda *_: seen.append(blas_threads()))
            assert blas_threads() == before
    assert before and all(threads == 2 for threads in before)
    assert len(seen) == 6 and all(threads == [1] * len(before) for threads in seen)


def test_a_rounds_derivatives_fill_the_last_rounds_arrays_with_the_same_bits(monkeypatch):
    """The loop computes a round's derivatives into the arrays of the round before (the weak trainer has read
    them): they are filled, not reallocated, and the model is the one of new arrays every round, bit for bit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(SAMPLES, 4))
    targets = np.eye(4)[rng.integers(0, 4, SAMPLES)]
    addresses = []

    class Spy(bob_boost.TreeTrainer):
        def propose(self, prepared, state):
            addresses.append(state.gradient.__array_interface__["data"][0])
            return super().propose(prepared, state)

    def train():
        return bob_boost.Boosting(Spy(max_leaves=4, n_threads=2), bob_boost.SoftmaxLoss(),
                                  learning_rate=0.3).train(X, targets, 5)

    reused = train()
    assert len(addresses) == 5 and len(set(addresses[1:])) == 1  # the rounds after the first: one pair
    real = rows._buffers
    monkeypatch.setattr(rows, "_buffers", lambda shape, out, joint=False: real(shape, None, joint))
    fresh = train()
    assert fresh.weak_machines == reused.weak_machines and np.array_equal(fresh.weights, reused.weights)


def _bits(array):
    return np.ascontiguousarray(array).view(np.uint64)


@pytest.mark.parametrize("loss", SEPARABLE_LOSSES, ids=_loss_id)
@pytest.mark.parametrize("n_threads", [1, 2])
def test_joint_derivatives_are_the_halves_of_one_array_with_the_same_bits(loss, n_threads):
    """Asked for joint derivatives, the loop gets the gradient and hessian as the halves of one C-ordered
    (#samples, 2K) array, the bits of the loss's separate arrays, filled again next round."""
    rng = np.random.default_rng(7)
    scores = rng.normal(scale=3.0, size=(SAMPLES, 4))
    scores[::997] *= 400.0
    targets = _targets(loss, rng, 4)
    whole_gradient, whole_hessian = loss.gradient_and_hessian(targets, scores)
    gradient, hessian = rows.loss_derivatives(loss, targets, scores, True, n_threads, joint=True)
    joint = joined_derivatives(gradient, hessian)
    assert joint is not None and joint.shape == (SAMPLES, 8) and joint.flags.c_contiguous
    np.testing.assert_array_equal(_bits(gradient), _bits(whole_gradient))
    np.testing.assert_array_equal(_bits(hessian), _bits(whole_hessian))
    moved = scores + 0.5
    again = rows.derivatives_and_total(loss, targets, moved, True, None, n_threads, (gradient, hessian), joint=True)
    assert joined_derivatives(again[0], again[1]) is joint  # filled, not reallocated
    separate = rows.derivatives_and_total(loss, targets, moved, True, None, n_threads)
    for got, expected in zip(again, separate):
        np.testing.assert_array_equal(_bits(got), _bits(expected))


def test_compiled_logit_derivatives_have_the_bits_of_numpy_and_scipy():
    loss = bob_boost.LogitLoss()
    margins = np.array([0.0, -0.0, 1e-300, 0.5, 36.0, 37.0, 700.0, 709.0, 710.0, 745.0, 746.0, 1000.0, 1e308])
    scores = np.concatenate([margins, -margins, np.random.default_rng(8).normal(scale=20.0, size=5000)])
    targets = np.where(np.arange(scores.size) % 3 == 0, -1.0, 1.0)
    scores, targets = scores.reshape(-1, 2), targets.reshape(-1, 2)
    out = np.full((scores.shape[0], 4), np.nan)
    loss.derivatives_into(targets, scores, out)
    gradient, hessian = loss.gradient_and_hessian(targets, scores)
    np.testing.assert_array_equal(_bits(out[:, :2]), _bits(gradient))
    np.testing.assert_array_equal(_bits(out[:, 2:]), _bits(hessian))


def test_a_logit_subclass_with_its_own_derivatives_fills_them():
    class Doubled(bob_boost.LogitLoss):
        def loss_gradient(self, targets, scores, sample_weight=None):
            return 2.0 * super().loss_gradient(targets, scores, sample_weight)

    rng = np.random.default_rng(9)
    targets, scores = rng.choice([-1.0, 1.0], size=(50, 1)), rng.normal(size=(50, 1))
    out = np.empty((50, 2))
    Doubled().derivatives_into(targets, scores, out)
    np.testing.assert_array_equal(out[:, :1], 2.0 * bob_boost.LogitLoss().loss_gradient(targets, scores))
    np.testing.assert_array_equal(out[:, 1:], bob_boost.LogitLoss().loss_hessian(targets, scores))


@pytest.mark.parametrize("loss", [bob_boost.SquaredLoss(), HuberLoss(0.7), AbsoluteErrorLoss(), QuantileLoss(0.3),
                                  QuantileLoss(0.9)], ids=repr)
def test_compiled_residual_derivatives_have_the_bits_of_numpy(loss):
    rng = np.random.default_rng(10)
    targets = rng.normal(size=(3000, 2))
    scores = targets + rng.normal(scale=2.0, size=targets.shape)
    scores[::7] = targets[::7]  # residuals of exactly 0
    scores[1::11] = targets[1::11] + 0.7  # at Huber's delta
    out = np.full((scores.shape[0], 4), np.nan)
    loss.derivatives_into(targets, scores, out)
    gradient, hessian = loss.gradient_and_hessian(targets, scores)
    np.testing.assert_array_equal(_bits(out[:, :2]), _bits(gradient))
    np.testing.assert_array_equal(_bits(out[:, 2:]), _bits(hessian))


@pytest.mark.parametrize("loss", [PoissonLoss(), GammaLoss(), TweedieLoss(1.4)], ids=repr)
def test_log_link_derivatives_from_one_exponential_have_the_bits_of_each_derivative(loss):
    rng = np.random.default_rng(12)
    targets = rng.gamma(2.0, 1.5, size=(3000, 2))
    if loss.power < 2:
        targets[::5] = 0.0
    scores = rng.normal(scale=3.0, size=targets.shape)
    scores[::13] = 800.0  # clipped before the exponential
    weights = rng.uniform(0.5, 2.0, size=3000)
    gradient, hessian = loss.loss_gradient(targets, scores, weights), loss.loss_hessian(targets, scores, weights)
    both = loss.gradient_and_hessian(targets, scores, weights)
    np.testing.assert_array_equal(_bits(both[0]), _bits(gradient))
    np.testing.assert_array_equal(_bits(both[1]), _bits(hessian))
    out = np.full((targets.shape[0], 4), np.nan)
    loss.derivatives_into(targets, scores, out)
    np.testing.assert_array_equal(_bits(out[:, :2]), _bits(loss.loss_gradient(targets, scores)))
    np.testing.assert_array_equal(_bits(out[:, 2:]), _bits(loss.loss_hessian(targets, scores)))


def test_a_residual_subclass_with_its_own_gradient_fills_it():
    class Steeper(QuantileLoss):
        def loss_gradient(self, targets, scores, sample_weight=None):
            return 3.0 * super().loss_gradient(targets, scores, sample_weight)

    rng = np.random.default_rng(11)
    targets, scores = rng.normal(size=(50, 1)), rng.normal(size=(50, 1))
    out = np.empty((50, 2))
    Steeper(0.2).derivatives_into(targets, scores, out)
    np.testing.assert_array_equal(out[:, :1], 3.0 * QuantileLoss(0.2).loss_gradient(targets, scores))
    np.testing.assert_array_equal(out[:, 1:], 1.0)

    class Stiffer(bob_boost.SquaredLoss):
        def loss_hessian(self, targets, scores, sample_weight=None):
            return 2.0 * super().loss_hessian(targets, scores, sample_weight)

    assert Steeper.gradient_form is None and Stiffer.gradient_form is None
    Stiffer().derivatives_into(targets, scores, out)
    np.testing.assert_array_equal(out[:, :1], scores - targets)
    np.testing.assert_array_equal(out[:, 1:], 2.0)


def test_joined_derivatives_recognises_only_the_two_halves_in_order():
    joint = np.zeros((10, 4))
    assert joined_derivatives(joint[:, :2], joint[:, 2:]) is joint
    assert joined_derivatives(joint[:, 2:], joint[:, :2]) is None
    assert joined_derivatives(joint[:, ::2], joint[:, 1::2]) is None
    assert joined_derivatives(joint[:, :1], joint[:, 1:2]) is None  # not the halves of four columns
    assert joined_derivatives(np.zeros((10, 2)), np.zeros((10, 2))) is None
    fortran = np.zeros((10, 4), order="F")
    assert joined_derivatives(fortran[:, :2], fortran[:, 2:]) is None
    assert joined_derivatives(joint[:5, :2], joint[:5, 2:]) is None  # a slice of rows has another base


@pytest.mark.parametrize("weights", ["none", "ones", "random"])
def test_trees_of_joint_derivatives_are_the_trees_of_separate_ones(weights):
    """The gradient trees read the joint derivatives the loop gives them (with no or unit sample weights; other
    weights make new arrays) and grow the trees of separate gradient and hessian arrays, bit for bit."""
    rng = np.random.default_rng(10)
    X = rng.normal(size=(SAMPLES, 5))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=SAMPLES) > 0, 1.0, -1.0)
    sample_weight = {"none": None, "ones": np.ones(SAMPLES), "random": rng.random(SAMPLES) + 0.5}[weights]
    seen = []

    class Joint(bob_boost.TreeTrainer):
        def propose(self, prepared, state):
            seen.append(joined_derivatives(state.gradient, state.hessian) is not None)
            return super().propose(prepared, state)

    class Separate(bob_boost.TreeTrainer):
        def joint_derivatives(self, outputs):
            return False

    def train(trainer):
        return bob_boost.Boosting(trainer, bob_boost.LogitLoss(), learning_rate=0.3).train(
            X, y, 4, sample_weight=sample_weight)

    joint = train(Joint(max_leaves=8, n_threads=2))
    separate = train(Separate(max_leaves=8, n_threads=2))
    assert seen == [weights != "random"] * 4
    assert joint.weak_machines == separate.weak_machines
    np.testing.assert_array_equal(joint.weights, separate.weights)
    np.testing.assert_array_equal(_bits(joint(X)), _bits(separate(X)))


@pytest.mark.parametrize("loss", [loss for loss in SEPARABLE_LOSSES if loss.curvature is not None], ids=_loss_id)
def test_a_losses_curvature_bounds_every_step(loss):
    """``L(s + d) <= L(s) + grad . d + curvature / 2 |d|^2`` for every sample, at scores and steps of every size."""
    rng = np.random.default_rng(7)
    for scale in (0.1, 1.0, 10.0):
        scores = rng.normal(scale=3.0, size=(SAMPLES, 4))
        targets = _targets(loss, rng, 4)
        step = rng.normal(scale=scale, size=scores.shape)
        # per sample: a loss of one term per output sums its outputs' (each bounded on its own), the softmax has one
        before = np.sum(loss.loss(targets, scores), axis=1)
        after = np.sum(loss.loss(targets, scores + step), axis=1)
        linear = np.sum(loss.loss_gradient(targets, scores) * step, axis=1)
        bound = before + linear + 0.5 * loss.curvature * np.sum(step * step, axis=1)
        assert np.all(after <= bound + 1e-9 * (1.0 + np.abs(bound)))


def test_a_subclass_with_its_own_loss_or_derivatives_keeps_no_curvature_bound_or_step_count_unless_it_says_so():
    class Mine(bob_boost.LogitLoss):
        def loss(self, targets, scores, sample_weight=None):
            return 2.0 * super().loss(targets, scores, sample_weight)

    class Bounded(Mine):
        curvature = 0.5

    class OwnGradient(bob_boost.LogitLoss):
        def loss_gradient(self, targets, scores, sample_weight=None):
            return super().loss_gradient(targets, scores, sample_weight)

    assert bob_boost.LogitLoss().curvature == 0.25 and Mine().curvature is None and Bounded().curvature == 0.5
    # numpy's derivatives of its own, not the compiled pass: threads only from as many rows as numpy's losses
    assert OwnGradient().curvature is None and OwnGradient().derivative_steps == 1 < Mine().derivative_steps


@pytest.mark.parametrize("learning_rate", [0.1, 1.0])
def test_steps_the_curvature_bound_shows_to_descend_skip_the_loss_and_keep_the_model(learning_rate):
    """A step the curvature bound shows to lower the training loss is taken without evaluating it: the same model
    as with every step checked, fewer evaluations (none at a small learning rate), and a falling loss."""
    class Counting(bob_boost.LogitLoss):
        convex = True
        curvature = 0.25
        calls = 0

        def loss(self, targets, scores, sample_weight=None):
            type(self).calls += 1
            return super().loss(targets, scores, sample_weight)

    class Unbounded(Counting):
        curvature = None
        calls = 0

    rng = np.random.default_rng(2)
    x = rng.normal(size=(6000, 5))
    y = np.where(x[:, 0] + x[:, 1] * x[:, 2] + 0.5 * rng.normal(size=6000) > 0, 1.0, -1.0)
    weights = rng.uniform(0.2, 3.0, size=6000)
    scores = []
    for loss in (Counting(), Unbounded()):
        trainer = bob_boost.Boosting(bob_boost.TreeTrainer(n_threads=2), loss, learning_rate=learning_rate)
        scores.append(trainer.train(x, y, 20, sample_weight=weights)(x))
    assert np.array_equal(scores[0], scores[1])
    assert Unbounded.calls >= 20 and Counting.calls < Unbounded.calls
    assert Counting.calls == 0 or learning_rate == 1.0


def test_a_failing_curvature_bound_is_tried_again_only_every_few_rounds(monkeypatch):
    """At learning rate 1 the logistic bound fails most rounds: after a failure its sums are skipped until the
    next round that is a multiple of BOUND_RETRY, and the model is the one of a bound tried every round."""
    from bob_boost.boosting import algorithms
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4000, 5))
    y = np.where(x[:, 0] + x[:, 1] * x[:, 2] + 0.5 * rng.normal(size=4000) > 0, 1.0, -1.0)
    tried = []
    real = algorithms.step_moments
    monkeypatch.setattr(algorithms, "step_moments", lambda *args: tried.append(1) or real(*args))

    def train():
        trainer = bob_boost.Boosting(bob_boost.TreeTrainer(n_threads=1), bob_boost.LogitLoss(), learning_rate=1.0)
        return trainer.train(x, y, 32)(x)
    retried = train()
    assert 0 < len(tried) <= 32 // algorithms.BOUND_RETRY + 4
    monkeypatch.setattr(algorithms, "BOUND_RETRY", 1)
    tried.clear()
    assert np.array_equal(train(), retried) and len(tried) == 32


def test_the_trees_of_several_outputs_are_given_separate_derivatives():
    """A lone tree reads the joint derivatives; the trees of several outputs read each output's columns apart, so the
    loop gives them separate C-ordered arrays (no copies to make)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(3000, 4))
    y = rng.integers(0, 3, 3000)
    seen = []

    class Watching(bob_boost.TreeTrainer):
        def propose(self, prepared, state):
            seen.append((joined_derivatives(state.gradient, state.hessian) is not None,
                         state.gradient.flags.c_contiguous))
            return super().propose(prepared, state)

    bob_boost.Boosting(Watching(max_leaves=8), bob_boost.SoftmaxLoss()).train(X, y, 2)
    bob_boost.Boosting(Watching(max_leaves=8, multi_output="shared"), bob_boost.SoftmaxLoss()).train(X, y, 2)
    assert seen == [(False, True)] * 2 + [(True, False)] * 2
