"""Cost-sensitive binary boosting: DoubleBaseLoss, AdaBoostDB and Cost-Sensitive AdaBoost."""
import logging
import math

import numpy as np
import pytest
import scipy.optimize
from conftest import load_uci

from bob_boost import BoostedMachine, Boosting, StumpTrainer
from bob_boost.evaluation import false_negative_rate, false_positive_rate
from bob_boost.losses.double_base import DoubleBaseLoss
from bob_boost.registry import loss_class
from bob_boost.trainers.cost_sensitive import (ALPHA_CAP_MARGIN, AdaBoostDBTrainer,
                                               CostSensitiveAdaBoostTrainer)
from bob_boost.weak_trainers.stump_pool.bounds import bound_coefficients, tangents_meet
from bob_boost.weak_trainers.stump_pool.pool import StumpPool
from bob_boost.boosting.roots import double_base_root, double_base_roots

#: The 19 cost pairs (C_P, C_N) of the AdaBoostDB paper, by increasing C_P / C_N.
PAPER_COSTS = [(1, 100), (1, 50), (1, 25), (1, 10), (1, 7), (1, 5), (1, 3), (1, 2), (2, 3), (1, 1), (3, 2),
               (2, 1), (3, 1), (5, 1), (7, 1), (10, 1), (25, 1), (50, 1), (100, 1)]


def two_gaussians(n_per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two overlapping 2-D Gaussian classes (balanced), the paper's "Bayes" setting."""
    rng = np.random.default_rng(seed)
    positives = rng.normal([1.0, 0.5], 1.0, size=(n_per_class, 2))
    negatives = rng.normal([-0.5, -0.5], 1.0, size=(n_per_class, 2))
    return np.vstack([positives, negatives]), np.repeat([1.0, -1.0], n_per_class)


def all_stumps(features: np.ndarray) -> list[tuple[int, float, float]]:
    """(index, threshold, polarity) of every stump, written independently of the library."""
    stumps = []
    for index in range(features.shape[1]):
        values = np.unique(features[:, index])
        for threshold in (values[:-1] + values[1:]) / 2:
            stumps += [(index, threshold, 1.0), (index, threshold, -1.0)]
    return stumps


def stump_output(features, stump) -> np.ndarray:
    index, threshold, polarity = stump
    return np.where(features[:, index] >= threshold, polarity, -polarity)


def brute_force_step(weights, targets, output, costs) -> tuple[float, float]:
    """Minimiser and minimum of ``sum w exp(-C y alpha h)`` by Brent's method on the derivative."""
    margin = costs * targets * output

    def slope(alpha):
        with np.errstate(over="ignore"):  # far from the root the sum may overflow to -inf / +inf
            return -np.sum(weights * margin * np.exp(-alpha * margin))

    alpha = scipy.optimize.brentq(slope, -50.0, 50.0, xtol=1e-15, rtol=1e-15)
    return alpha, float(np.sum(weights * np.exp(-alpha * margin)))


def weights_of(machine: BoostedMachine) -> np.ndarray:
    return machine.weights[:, 0]


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    @property
    def text(self) -> str:
        return "\n".join(self.messages)


@pytest.fixture
def log():
    """INFO messages of the "bob_boost" logger, caught on the logger itself (it may not propagate)."""
    logger = logging.getLogger("bob_boost")
    handler, level = _Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


# -- the loss ---------------------------------------------------------------------
def test_double_base_loss_values_gradient_and_registry():
    loss = DoubleBaseLoss(3.0, 0.5)
    targets = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    scores = np.array([[0.2], [-1.0], [0.4], [-2.0]])
    expected = np.exp(-np.array([[3.0 * 0.2], [3.0 * -1.0], [-0.5 * 0.4], [-0.5 * -2.0]]))
    np.testing.assert_allclose(loss.loss(targets, scores), expected, rtol=1e-15)
    step = 1e-6
    numeric = (loss.loss(targets, scores + step) - loss.loss(targets, scores - step)) / (2 * step)
    np.testing.assert_allclose(loss.loss_gradient(targets, scores), numeric, rtol=1e-8)
    assert np.all(np.isfinite(loss.loss(targets, np.full((4, 1), 1e6))))
    assert np.all(np.isfinite(loss.loss_gradient(targets, np.full((4, 1), -1e6))))
    assert loss_class("double_base") is DoubleBaseLoss
    with pytest.raises(ValueError, match="targets"):
        loss.check_targets([1.0, 0.0])


@pytest.mark.parametrize("bad", [0, -1.0, np.nan, np.inf])
def test_costs_must_be_finite_and_positive(bad):
    for make in (lambda c: DoubleBaseLoss(c, 1.0), lambda c: AdaBoostDBTrainer(1.0, c),
                 lambda c: CostSensitiveAdaBoostTrainer(c, 1.0)):
        with pytest.raises(ValueError, match="cost_"):
            make(bad)
    with pytest.raises(TypeError, match="cost_positive"):
        AdaBoostDBTrainer("1", 1.0)
    with pytest.raises(TypeError, match="cost_negative"):
        CostSensitiveAdaBoostTrainer(1.0, True)


# -- equal costs: discrete AdaBoost -------------------------------------------------
def test_equal_costs_reduce_to_discrete_adaboost():
    features, targets = two_gaussians(40, seed=5)
    cost = 2.0
    rounds = 8
    machines = {
        "generic": Boosting(StumpTrainer(), DoubleBaseLoss(cost, cost)).train(features, targets, rounds),
        "db-alpha": AdaBoostDBTrainer(cost, cost).train(features, targets, rounds),
        "db-loss": AdaBoostDBTrainer(cost, cost, selection="loss").train(features, targets, rounds),
        "cs": CostSensitiveAdaBoostTrainer(cost, cost).train(features, targets, rounds),
    }
    reference = machines["db-alpha"]
    assert len(reference) == rounds
    # discrete AdaBoost's weights, recomputed here: 0.5 ln((1 - e) / e), divided by the cost
    scores = np.zeros(len(targets))
    for stump, weight in zip(reference.weak_machines, weights_of(reference)):
        distribution = np.exp(-cost * targets * scores)
        distribution /= distribution.sum()
        output = stump(features)[:, 0]
        error = distribution[output != targets].sum()
        assert weight == pytest.approx(0.5 * np.log((1 - error) / error) / cost, rel=1e-12)
        scores += weight * output
    for name, machine in machines.items():
        assert machine.weak_machines == reference.weak_machines, name
        tolerance = 1e-6 if name == "generic" else 1e-12  # the generic trainer fits weights by L-BFGS
        np.testing.assert_allclose(weights_of(machine), weights_of(reference), rtol=tolerance, err_msg=name)


def test_uniform_initial_weights_match_the_generic_trainer_on_real_data():
    features, labels = load_uci("ionosphere")
    targets = np.where(labels == labels.max(), 1.0, -1.0)
    generic = Boosting(StumpTrainer(), DoubleBaseLoss(1.5, 1.5)).train(features, targets, 10)
    uniform = np.full(len(targets), 1.0 / len(targets))
    db = AdaBoostDBTrainer(1.5, 1.5).train(features, targets, 10, sample_weights=uniform)
    assert db.weak_machines == generic.weak_machines
    np.testing.assert_allclose(weights_of(db), weights_of(generic), rtol=1e-6)


# -- asymmetric costs: the algorithms against brute force and against each other ----------
@pytest.mark.parametrize("costs", [(1.0, 4.0), (7.0, 1.0), (2.5, 0.7)])
def test_steps_and_choices_match_brute_force_over_the_pool(costs):
    cost_p, cost_n = costs
    features, targets = two_gaussians(12, seed=11)
    features, targets = features[2:], targets[2:]  # 10 positives, 12 negatives
    stumps = all_stumps(features)
    sample_costs = np.where(targets > 0, cost_p, cost_n)
    initial = 0.5 / np.where(targets > 0, np.sum(targets > 0), np.sum(targets < 0))
    rounds = 5
    by_loss = CostSensitiveAdaBoostTrainer(cost_p, cost_n).train(features, targets, rounds)
    by_alpha = AdaBoostDBTrainer(cost_p, cost_n).train(features, targets, rounds)
    for machine, rule in ((by_loss, "loss"), (by_alpha, "alpha")):
        assert len(machine) == rounds
        scores = np.zeros(len(targets))
        for stump, weight in zip(machine.weak_machines, weights_of(machine)):
            # D_1 gives each class half the weight; the cost-weighted margins do the rest
            weights = initial * np.exp(-sample_costs * targets * scores)
            steps = [brute_force_step(weights, targets, stump_output(features, s), sample_costs) for s in stumps]
            alphas = np.array([alpha for alpha, _ in steps])
            bounds = np.array([bound for _, bound in steps])
            # a stump with a negative step is the mirror of one with the same bound and a positive step
            best = int(np.argmin(np.where(alphas > 0, bounds, np.inf)) if rule == "loss" else np.argmax(alphas))
            assert (stump.index, stump.threshold, stump.polarity) == stumps[best]
            assert weight == pytest.approx(alphas[best], rel=1e-9)
            scores += weight * stump(features)[:, 0]


@pytest.mark.parametrize("costs", [(1.0, 5.0), (10.0, 1.0), (3.0, 2.0)])
def test_exact_rule_matches_cost_sensitive_adaboost_on_real_data(costs):
    features, labels = load_uci("diabetes")
    targets = np.where(labels == 2, 1.0, -1.0)  # positive: tested positive for diabetes
    rounds = 25
    reference = CostSensitiveAdaBoostTrainer(*costs)
    expected = reference.train(features, targets, rounds)
    pool_size = reference.root_searches // rounds
    machines, searches = {}, {}
    for search in ("bound", "pareto", "exhaustive"):
        trainer = AdaBoostDBTrainer(*costs, selection="loss", search=search)
        machine = machines[search] = trainer.train(features, targets, rounds)
        searches[search] = trainer.root_searches
        assert machine.weak_machines == expected.weak_machines, search
        np.testing.assert_allclose(weights_of(machine), weights_of(expected), rtol=1e-8, err_msg=search)
        np.testing.assert_array_equal(weights_of(machine), weights_of(machines["bound"]), err_msg=search)
    assert reference.root_searches == rounds * pool_size
    assert searches["bound"] <= 0.01 * reference.root_searches
    assert searches["pareto"] < 0.5 * searches["exhaustive"] < reference.root_searches


def test_bound_search_keeps_every_stump_tied_with_the_best():
    # duplicated columns make stumps with identical errors on different features: the tie rule
    # picks the first in pool order, which the bound search must not have screened out
    features, targets = two_gaussians(30, seed=4)
    features = np.hstack([features[:, 1:], features, features[:, ::-1]])  # columns x1, x0, x1, x1, x0
    for costs in ((1.0, 6.0), (4.0, 1.0)):
        machines = {search: AdaBoostDBTrainer(*costs, selection="loss", search=search).train(features, targets, 6)
                    for search in ("bound", "exhaustive")}
        assert machines["bound"].weak_machines == machines["exhaustive"].weak_machines
        np.testing.assert_array_equal(weights_of(machines["bound"]), weights_of(machines["exhaustive"]))
        # columns 0 and 1 are the first copies of the two distinct features
        assert all(stump.index in (0, 1) for stump in machines["bound"].weak_machines)


def test_class_errors_match_exact_sums_and_duplicates_tie_exactly():
    rng = np.random.default_rng(3)
    features = rng.integers(0, 40, size=(60, 3)).astype(float)
    features = np.hstack([features, features[:, :1], np.linspace(0, 1, 60)[:, np.newaxis]])
    targets = np.where(rng.random(60) < 0.4, 1.0, -1.0)
    weights = rng.random(60) * 10.0 ** rng.integers(-30, 1, size=60)  # weights over 30 decades
    weights[::7] = 0.0  # and some exactly 0, whose bins must sum to exactly 0
    class_weights = np.zeros((60, 2))
    class_weights[targets > 0, 0] = weights[targets > 0]
    class_weights[targets < 0, 1] = weights[targets < 0]
    pool = StumpPool(features)
    computed = pool.class_errors(class_weights)
    # every stump of the pool, summed exactly (math.fsum) from its definition
    expected = [[], [], [], []]
    for index, threshold, polarity in all_stumps(features):
        above = features[:, index] >= threshold
        predicted_positive = above if polarity > 0 else ~above
        for column, values in ((0, class_weights[:, 0]), (1, class_weights[:, 1])):
            wrong = (predicted_positive != (targets > 0)) if column == 0 else predicted_positive
            expected[2 * column].append(math.fsum(values[wrong & ((targets > 0) == (column == 0))]))
            expected[2 * column + 1].append(math.fsum(values[~wrong & ((targets > 0) == (column == 0))]))
    for got, want in zip(computed, expected):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    # column 3 duplicates column 0: its candidates come out bit for bit the same
    sizes = [2 * (np.unique(features[:, k]).size - 1) for k in range(features.shape[1])]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for values in computed:
        np.testing.assert_array_equal(values[starts[0]:starts[1]], values[starts[3]:starts[4]])


def test_searches_agree_in_extreme_regimes():
    # edge cases: a tiny sample weight (the bound search once screened out everything),
    # a class share rounding to 0 at costs (1, 1000), a static parameter underflowing at (1000, 1)
    # (a division by zero), and steps at rounding level (the searches once disagreed there)
    cases = [
        (np.array([[2.0], [2.0], [2.0], [0.0], [1.0], [1.0], [1.0]]), np.array([1, 1, 1, 1, -1, -1, -1.0]),
         np.array([1.0, 1.0, 1.0, 1e-30, 1.0, 1.0, 1.0]), (1.0, 1.0), 1),
        (np.array([[3, 1], [1, 5], [0, 0], [4, 3], [2, 2], [5, 4]], float), np.array([-1, 1, 1, 1, 1, 1.0]),
         None, (1.0, 1000.0), 20),
        (np.array([[0, 2], [2, 0], [2, 0], [0, 0], [1, 2], [0, 1], [2, 1]], float),
         np.array([1, -1, -1, -1, 1, 1, -1.0]), None, (1000.0, 1.0), 4),
        (np.array([[1.0], [1.0], [0.0], [0.0], [2.0], [1.0], [1.0]]), np.array([1, -1, -1, 1, -1, 1, 1.0]),
         None, (1.0, 1.0), 15),
    ]
    for features, targets, sample_weights, costs, rounds in cases:
        for selection, searches in (("alpha", ("conditional", "pareto", "exhaustive")),
                                    ("loss", ("bound", "pareto", "exhaustive"))):
            machines = [AdaBoostDBTrainer(*costs, selection=selection, search=search)
                        .train(features, targets, rounds, sample_weights=sample_weights) for search in searches]
            for machine in machines[:-1]:
                assert machine.weak_machines == machines[-1].weak_machines, (costs, selection)
                np.testing.assert_array_equal(weights_of(machine), weights_of(machines[-1]))
            assert np.all(np.isfinite(weights_of(machines[-1])))
    # the exact rule is Cost-Sensitive AdaBoost's, also where a class's share of the weight is ~1e-45
    features, targets, _, costs, rounds = cases[1]
    expected = CostSensitiveAdaBoostTrainer(*costs).train(features, targets, rounds)
    machine = AdaBoostDBTrainer(*costs, selection="loss").train(features, targets, rounds)
    assert machine.weak_machines[:15] == expected.weak_machines[:15]


def test_scalar_and_vectorised_roots_agree_when_the_scaled_error_is_subnormal():
    # b * eps_N = 2.7e-314: a quotient by it overflowed and the scalar root came out infinite (fuzzing)
    error_p, error_n, a, b, costs = 0.0, 5.253119924800847e-177, 1.0, 5.0851186099969847e-138, (1.0, 1000.0)
    scalar = double_base_root(error_p, error_n, a, b, *costs)
    vectorised = double_base_roots(np.array([error_p]), np.array([error_n]), a, b, *costs)[0]
    assert math.isfinite(scalar)
    assert scalar == pytest.approx(vectorised, rel=1e-12)


def test_tangent_lower_bounds_never_exceed_the_minimum():
    rng = np.random.default_rng(8)
    full_grid = np.array([0.0, 0.01, 0.1, 0.15, 0.2, 0.25, 0.3, 0.7, 1.5, 4.0])
    # the last case has optimal bounds near 1e-20, far below the bound at 0 (which is 1): the tangent from 0
    # must not lose its lower-bound property to cancellation
    for p, costs, scale in ((0.5, (1.0, 1.0), 1.0), (0.2, (1.0, 9.0), 1.0), (0.9, (30.0, 2.0), 1.0),
                            (1e-30, (1.0, 200.0), 1e-40)):
        q = 1.0 - p if p > 1e-3 else 1.0
        error_p, error_n = rng.random(300) ** 2, scale * (0.1 + rng.random(300))
        grid = full_grid[full_grid <= 600.0 / max(costs)]
        value_coefficients, slope_coefficients = bound_coefficients(p, q, *costs, grid)
        errors = np.stack([np.ones_like(error_p), error_p, error_n], axis=1)
        value, slope = errors @ value_coefficients, errors @ slope_coefficients
        high = np.argmax(slope > 0, axis=1)
        rows = np.flatnonzero((high > 0) & (slope[np.arange(300), high] > 0))
        low, high = high[rows] - 1, high[rows]
        low[::2] = 0  # also brackets that reach back to 0
        _, lower = tangents_meet((grid[low], value[rows, low], slope[rows, low]),
                                 (grid[high], value[rows, high], slope[rows, high]), max(costs))
        assert rows.size > 100
        for row, bound in zip(rows, lower):
            def loss(alpha, row=row):
                return (p * ((1 - error_p[row]) * np.exp(-costs[0] * alpha) + error_p[row] * np.exp(costs[0] * alpha))
                        + q * ((1 - error_n[row]) * np.exp(-costs[1] * alpha)
                               + error_n[row] * np.exp(costs[1] * alpha)))
            # any value of the loss is at least its minimum, so the bound must not exceed the best found
            minimum = scipy.optimize.minimize_scalar(loss, bounds=(0.0, 4.0), method="bounded",
                                                     options={"xatol": 1e-14}).fun
            assert bound <= minimum * (1 + 1e-14), (p, costs, row)


@pytest.mark.parametrize("costs", [(1.0, 7.0), (25.0, 1.0)])
def test_scalar_root_search_selects_the_same_models_as_the_vectorised_one(costs):
    features, labels = load_uci("diabetes")
    targets = np.where(labels == 2, 1.0, -1.0)
    rounds = 8
    machines, searches = {}, {}
    for root_search in ("vectorised", "scalar"):
        trainer = CostSensitiveAdaBoostTrainer(*costs, root_search=root_search)
        machines[root_search] = trainer.train(features, targets, rounds)
        searches[root_search] = trainer.root_searches
    vectorised, scalar = machines["vectorised"], machines["scalar"]
    assert len(vectorised) == rounds
    assert scalar.weak_machines == vectorised.weak_machines
    np.testing.assert_allclose(weights_of(scalar), weights_of(vectorised), rtol=1e-8)
    assert searches["scalar"] == searches["vectorised"] > 0
    assert scalar.metadata["root_search"] == "scalar"


def test_scalar_root_search_survives_a_rounding_edge_at_a_zero_step():
    # right and wrong weight are equal (as floats) at equal costs, so the step is 0 and its bracket [0, 0];
    # the equation evaluated there is -1.1e-16, not 0, so the ends have no sign change for Brent's method
    targets = np.array([1.0, 1.0, -1.0, -1.0])
    predictions = np.array([-1.0, 1.0, 1.0, -1.0])  # wrong, right, wrong, right
    weights = np.array([0.30331788788358993, 0.3631774650815174, 0.3647482804919992, 0.3048887032940717])
    assert weights[0] + weights[2] == weights[1] + weights[3]
    scalar = CostSensitiveAdaBoostTrainer(1.0, 1.0, root_search="scalar")
    assert scalar.optimal_step(targets, predictions, weights) == 0.0
    assert abs(CostSensitiveAdaBoostTrainer(1.0, 1.0).optimal_step(targets, predictions, weights)) < 1e-15


@pytest.mark.parametrize("costs", [(1.0, 10.0), (5.0, 1.0), (2.0, 3.0)])
def test_the_three_searches_agree_on_real_data(costs):
    features, labels = load_uci("ionosphere")
    targets = np.where(labels == labels.max(), 1.0, -1.0)
    rounds = 25
    machines, searches = {}, {}
    for search in ("conditional", "exhaustive", "pareto"):
        trainer = AdaBoostDBTrainer(*costs, search=search)
        machines[search] = trainer.train(features, targets, rounds)
        searches[search] = trainer.root_searches
    reference = machines["exhaustive"]
    assert len(reference) == rounds
    for search in ("conditional", "pareto"):
        assert machines[search].weak_machines == reference.weak_machines, search
        np.testing.assert_array_equal(weights_of(machines[search]), weights_of(reference))
    assert searches["conditional"] < 0.01 * searches["exhaustive"]
    assert searches["pareto"] < 0.1 * searches["exhaustive"]


def test_optimal_step_of_both_trainers_minimises_the_bound():
    rng = np.random.default_rng(2)
    targets = np.where(rng.random(60) < 0.3, 1.0, -1.0)
    predictions = np.where(rng.random(60) < 0.75, targets, -targets)
    weights = rng.random(60)
    for cost_p, cost_n in ((1.0, 1.0), (4.0, 0.5), (0.2, 30.0)):
        expected, _ = brute_force_step(weights, targets, predictions, np.where(targets > 0, cost_p, cost_n))
        for trainer in (CostSensitiveAdaBoostTrainer(cost_p, cost_n), AdaBoostDBTrainer(cost_p, cost_n),
                        CostSensitiveAdaBoostTrainer(cost_p, cost_n, root_search="scalar")):
            assert trainer.optimal_step(targets, predictions, weights) == pytest.approx(expected, rel=1e-10)
    trainer = CostSensitiveAdaBoostTrainer(1.0, 2.0)
    flipped, _ = brute_force_step(weights, targets, -predictions, np.where(targets > 0, 1.0, 2.0))
    assert flipped < 0
    assert trainer.optimal_step(targets, -predictions, weights) == pytest.approx(flipped, rel=1e-10)
    assert trainer.optimal_step(targets, targets, weights) == np.inf
    assert AdaBoostDBTrainer(1.0, 2.0).optimal_step(targets, -targets, weights) == -np.inf
    with pytest.raises(ValueError, match="predictions"):
        trainer.optimal_step(targets, predictions * 0.5, weights)
    with pytest.raises(ValueError, match="sample_weights"):
        trainer.optimal_step(targets, predictions, -weights)


def test_every_root_search_converges_with_extreme_costs(log):
    # stumps on projections of two Gaussians, costs (1, 100): many steps within rounding of their root
    rng = np.random.default_rng(0)
    points = np.vstack([rng.normal(1.06, 1.0, (150, 2)), rng.normal(-1.06, 1.0, (150, 2))])
    theta = np.arange(24) * np.pi / 24
    features = points @ np.stack([np.cos(theta), np.sin(theta)])
    targets = np.repeat([1.0, -1.0], 150)
    exact = AdaBoostDBTrainer(1.0, 100.0, selection="loss").train(features, targets, 40)
    reference = CostSensitiveAdaBoostTrainer(1.0, 100.0).train(features, targets, 40)
    assert "did not converge" not in log.text
    assert exact.weak_machines == reference.weak_machines
    np.testing.assert_allclose(weights_of(exact), weights_of(reference), rtol=1e-8)


# -- cost-sensitive behaviour ----------------------------------------------------------
def test_raising_the_positive_cost_trades_false_negatives_for_false_positives():
    train_x, train_t = two_gaussians(150, seed=1)
    test_x, test_t = two_gaussians(500, seed=2)
    fn, fp = [], []
    for cost_p, cost_n in PAPER_COSTS:
        machine = AdaBoostDBTrainer(cost_p, cost_n).train(train_x, train_t, 15)
        predictions = machine.predict(test_x)
        fn.append(false_negative_rate(test_t, predictions))
        fp.append(false_positive_rate(test_t, predictions))
    fn, fp = np.array(fn), np.array(fp)
    # on average monotone: the rank correlation with C_P / C_N is close to -1 (FN) and +1 (FP) ...
    ranks = np.arange(len(PAPER_COSTS))
    assert np.corrcoef(ranks, np.argsort(np.argsort(fn)))[0, 1] < -0.9
    assert np.corrcoef(ranks, np.argsort(np.argsort(fp)))[0, 1] > 0.9
    # ... and the two halves of the sweep sit on the expected sides of equal costs
    assert fn[:9].mean() > fn[9] > fn[10:].mean()
    assert fp[:9].mean() < fp[9] < fp[10:].mean()


# -- degenerate cases and bad input ---------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: AdaBoostDBTrainer(2.0, 0.5), lambda: CostSensitiveAdaBoostTrainer(2.0, 0.5),
                                  lambda: AdaBoostDBTrainer(2.0, 0.5, selection="loss")])
def test_a_perfect_stump_gets_the_capped_alpha_and_ends_training(make, log):
    features = np.array([[0.0, 5.0], [1.0, 3.0], [2.0, 4.0], [3.0, 1.0]])
    targets = np.array([-1.0, -1.0, 1.0, 1.0])
    trainer = make()
    machine = trainer.train(features, targets, 10)
    assert len(machine) == 1
    assert machine.weak_machines[0].index == 0 and machine.weak_machines[0].threshold == 1.5
    assert weights_of(machine)[0] == ALPHA_CAP_MARGIN / 0.5 == trainer.alpha_cap
    assert "classifies every training sample correctly" in log.text
    np.testing.assert_array_equal(machine.predict(features), targets)


def test_a_stump_perfect_on_one_class_has_a_finite_step():
    features = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    targets = np.array([-1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
    machine = AdaBoostDBTrainer(1.0, 1.0).train(features, targets, 1)
    # the best stump (x >= 1.5) gets every positive right and one negative in three wrong
    assert machine.weak_machines[0].threshold == 1.5
    error = 0.5 * (1 / 3)
    assert weights_of(machine)[0] == pytest.approx(0.5 * np.log((1 - error) / error), rel=1e-12)


@pytest.mark.parametrize("make", [lambda: AdaBoostDBTrainer(1.0, 1.0), lambda: CostSensitiveAdaBoostTrainer(3.0, 3.0),
                                  lambda: AdaBoostDBTrainer(1.0, 1.0, selection="loss", search="exhaustive")])
def test_no_contributing_stump_stops_training(make, log):
    # every point is once positive and once negative: no stump beats chance at equal costs
    points = np.array([[0.0], [1.0], [2.0], [3.0]])
    features = np.vstack([points, points])
    targets = np.repeat([1.0, -1.0], 4)
    machine = make().train(features, targets, 5)
    assert len(machine) == 0
    assert "Contribution Condition" in log.text


def test_training_rejects_bad_input():
    features, targets = two_gaussians(10, seed=0)
    trainer = AdaBoostDBTrainer(1.0, 2.0)
    with pytest.raises(ValueError, match="targets"):
        trainer.train(features, np.where(targets > 0, 1.0, 0.0))
    with pytest.raises(ValueError, match="both classes"):
        trainer.train(features, np.ones(len(targets)))
    with pytest.raises(ValueError, match="targets"):
        trainer.train(features, targets[:-1])
    with pytest.raises(ValueError, match="features"):
        trainer.train(np.where(features > 0, np.nan, features), targets)
    with pytest.raises(ValueError, match="constant"):
        CostSensitiveAdaBoostTrainer(1.0, 2.0).train(np.ones((len(targets), 2)), targets)
    with pytest.raises(ValueError, match="number_of_rounds"):
        trainer.train(features, targets, 0)
    with pytest.raises(ValueError, match="sample_weights"):
        trainer.train(features, targets, sample_weights=-np.ones(len(targets)))
    with pytest.raises(ValueError, match="sample_weights"):
        trainer.train(features, targets, sample_weights=np.where(targets > 0, 1.0, 0.0))
    with pytest.raises(TypeError, match="boosted_machine"):
        trainer.train(features, targets, boosted_machine="machine")
    with pytest.raises(ValueError, match="selection"):
        AdaBoostDBTrainer(1.0, 2.0, selection="margin")
    with pytest.raises(ValueError, match="search"):
        AdaBoostDBTrainer(1.0, 2.0, search="greedy")
    with pytest.raises(ValueError, match="root_search"):
        CostSensitiveAdaBoostTrainer(1.0, 2.0, root_search="newton")
    with pytest.raises(ValueError, match="Conditional Search"):
        AdaBoostDBTrainer(1.0, 2.0, selection="loss", search="conditional")
    with pytest.raises(ValueError, match="bound search"):
        AdaBoostDBTrainer(1.0, 2.0, selection="alpha", search="bound")


def test_training_is_deterministic_leaves_inputs_alone_and_continues(ionosphere):
    features, targets = ionosphere
    features_copy, targets_copy = features.copy(), targets.copy()
    trainer = AdaBoostDBTrainer(1.0, 3.0)
    once = trainer.train(features, targets, 12)
    again = trainer.train(features, targets, 12)
    assert once.weak_machines == again.weak_machines
    np.testing.assert_array_equal(once.weights, again.weights)
    np.testing.assert_array_equal(features, features_copy)
    np.testing.assert_array_equal(targets, targets_copy)
    continued = trainer.train(features, targets, 5)
    trainer.train(features, targets, 7, boosted_machine=continued)
    assert continued.weak_machines == once.weak_machines
    np.testing.assert_allclose(continued.weights, once.weights, rtol=1e-12)


def test_save_and_load_round_trip(tmp_path, ionosphere):
    features, targets = ionosphere
    machine = CostSensitiveAdaBoostTrainer(1.0, 5.0).train(features, targets, 10)
    path = tmp_path / "cs.hdf5"
    machine.save(path)
    loaded = BoostedMachine.load(path)
    assert loaded.weak_machines == machine.weak_machines
    np.testing.assert_array_equal(loaded.weights, machine.weights)
    np.testing.assert_array_equal(loaded.predict(features), machine.predict(features))
    assert loaded.metadata == {"loss": "double_base", "trainer": "CostSensitiveAdaBoost",
                               "cost_positive": 1.0, "cost_negative": 5.0, "root_search": "vectorised"}
