"""AdaC2.M1, MultiBoost and Lp-CSB: the BAdaCost paper's multi-class cost-sensitive competitors."""
from __future__ import annotations

import h5py
import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris

from bob_boost import BoostedMachine
from bob_boost.boosting.steps import adac2_m1_step, multiboost_step
from bob_boost.costs import margin_vectors
from bob_boost.exceptions import ModelFormatError
from bob_boost.trainers.badacost import AdaBoostM1Trainer, AdaC2M1Trainer, BAdaCostTrainer
from bob_boost.trainers.lp_csb import LpCSBTrainer
from bob_boost.trainers.multiboost import MultiBoostTrainer
from bob_boost.weak.relational import RelationalTreeMachine
from bob_boost.weak_trainers.multiclass import CostSensitiveTreeTrainer
from bob_boost.weak_trainers.relational import RelationalTreeTrainer


@pytest.fixture(scope="module")
def digits():
    features, labels = load_digits(return_X_y=True)
    return features[::2], labels[::2], features[1::2], labels[1::2]


def _zero_one(k: int) -> np.ndarray:
    return np.ones((k, k)) - np.eye(k)


def _costly_class(k: int, row: int, factor: float) -> np.ndarray:
    matrix = _zero_one(k)
    matrix[row] *= factor
    return matrix


# -- AdaC2.M1 ---------------------------------------------------------------------------------------------

def test_adac2_m1_with_equal_costs_is_adaboost_m1_with_half_steps(digits):
    x, y, x_test, _ = digits
    trees = CostSensitiveTreeTrainer(max_depth=5)
    adac2 = AdaC2M1Trainer(_zero_one(10), trees, number_of_rounds=20).train(x, y)
    m1 = AdaBoostM1Trainer(trees, number_of_rounds=20).train(x, y)
    assert len(adac2) == len(m1) == 20
    assert adac2.weak_machines == m1.weak_machines
    np.testing.assert_allclose(2 * adac2.weights, m1.weights, rtol=1e-12)
    np.testing.assert_array_equal(adac2.predict(x_test), m1.predict(x_test))


def test_adac2_m1_step_matches_its_formula():
    confusion = np.array([[5.0, 1.0, 0.0], [2.0, 7.0, 1.0], [0.0, 0.5, 3.0]])
    costs = np.array([1.0, 2.0, 4.0])
    correct = 5.0 * 1 + 7.0 * 2 + 3.0 * 4
    wrong = 1.0 * 1 + 3.0 * 2 + 0.5 * 4
    assert adac2_m1_step(confusion, costs) == pytest.approx(0.5 * np.log(correct / wrong), rel=1e-15)
    assert adac2_m1_step(np.diag([1.0, 2.0, 3.0]), costs) == np.inf


def test_adac2_m1_multiplies_the_weights_by_the_class_costs_every_round(digits):
    x, y, _, _ = digits
    matrix = _costly_class(10, 3, 4.0)
    seen = []

    def record(round_index, machine, scores):
        seen.append(None)

    machine = AdaC2M1Trainer(matrix, CostSensitiveTreeTrainer(max_depth=5), number_of_rounds=3).train(
        x, y, callback=record)
    # replaying the rule by hand: D <- C_l D exp(-alpha I), I = +1 right, -1 wrong
    class_costs = matrix.sum(axis=1)
    weights = np.full(y.size, 1.0 / y.size)
    for weak, alpha in zip(machine.weak_machines, machine.weights[:, 0]):
        right = weak.forward_labels(x) == y
        confusion = np.zeros((10, 10))
        np.add.at(confusion, (y, weak.forward_labels(x)), weights)
        assert alpha == pytest.approx(adac2_m1_step(confusion, class_costs), rel=1e-10)
        weights = class_costs[y] * weights * np.exp(np.where(right, -alpha, alpha))
        weights /= weights.sum()
    assert len(seen) == 3


def test_adac2_m1_protects_the_costly_class(digits):
    x, y, x_test, y_test = digits
    trees = CostSensitiveTreeTrainer(max_depth=5)
    plain = AdaC2M1Trainer(_zero_one(10), trees, number_of_rounds=30).train(x, y)
    costly = AdaC2M1Trainer(_costly_class(10, 8, 5.0), trees, number_of_rounds=30).train(x, y)
    missed = [np.sum((m.predict(x_test) != 8) & (y_test == 8)) for m in (plain, costly)]
    assert missed[1] < missed[0]


def test_adac2_m1_continues_bit_for_bit_and_round_trips(digits, tmp_path):
    x, y, x_test, _ = digits
    trainer = AdaC2M1Trainer(_costly_class(10, 2, 3.0), CostSensitiveTreeTrainer(max_depth=4), number_of_rounds=12)
    whole = trainer.train(x, y)
    part = trainer.train(x, y, number_of_rounds=5)
    trainer.train(x, y, number_of_rounds=7, boosted_machine=part)
    assert part.weak_machines == whole.weak_machines
    np.testing.assert_array_equal(part.weights, whole.weights)
    path = tmp_path / "adac2m1.hdf5"
    whole.save(path)
    loaded = BoostedMachine.load(path)
    np.testing.assert_array_equal(loaded.predict(x_test), whole.predict(x_test))
    assert loaded.metadata["class_costs"] == trainer.class_costs.tolist()
    with pytest.raises(ValueError, match="class costs"):
        AdaC2M1Trainer(_zero_one(10), CostSensitiveTreeTrainer(max_depth=4)).train(x, y, boosted_machine=loaded)


def test_adac2_m1_refuses_a_row_without_cost():
    matrix = _zero_one(3)
    matrix[1] = 0.0
    with pytest.raises(ValueError, match=r"cost_matrix: rows \[1\]"):
        AdaC2M1Trainer(matrix)
    with pytest.raises(ValueError, match="cost_matrix"):
        AdaC2M1Trainer(-_zero_one(3))


# -- MultiBoost ------------------------------------------------------------------------------------------

def test_multiboost_step_minimises_its_loss():
    rng = np.random.default_rng(0)
    k, n = 4, 50
    costs = rng.uniform(0.1, 2.0, (k, k)) * (1 - np.eye(k))
    labels = rng.integers(0, k, n)
    scores = rng.normal(0.0, 0.3, (n, k))
    predicted = rng.integers(0, k, n)
    terms = costs[labels] * np.exp(scores)
    a = terms[np.arange(n), predicted].sum()
    step = multiboost_step(a, terms.sum() - a, k)

    def loss(beta):
        return np.sum(costs[labels] * np.exp(scores + beta * margin_vectors(k)[predicted]))

    assert step > 0
    for other in (step * 0.99, step * 1.01, 0.0):
        assert loss(step) < loss(other)
    assert multiboost_step(0.0, 1.0, k) == np.inf
    assert multiboost_step(1.0, 2.0, 3) == 0.0  # B = (K-1) A: no descent


def test_multiboost_lowers_its_loss_every_round_and_continues_exactly(digits, tmp_path):
    x, y, x_test, y_test = digits
    matrix = _costly_class(10, 5, 3.0)
    trainer = MultiBoostTrainer(matrix, number_of_rounds=30, pool_size=300, random_state=4)
    losses = []

    def record(round_index, machine, scores):
        losses.append(np.mean(np.sum(matrix[y] * np.exp(scores), axis=1)))

    whole = trainer.train(x, y, callback=record)
    assert len(whole) == 30
    assert np.all(np.diff(losses) < 0)
    assert whole.decision_rule == "argmax"
    assert np.mean(whole.predict(x_test) == y_test) > 0.7
    part = trainer.train(x, y, number_of_rounds=10)
    trainer.train(x, y, number_of_rounds=20, boosted_machine=part)
    assert part.weak_machines == whole.weak_machines
    np.testing.assert_allclose(part.weights, whole.weights, rtol=1e-12)
    path = tmp_path / "multiboost.hdf5"
    whole.save(path)
    np.testing.assert_array_equal(BoostedMachine.load(path).predict(x_test), whole.predict(x_test))
    with pytest.raises(ValueError, match="cost matrix"):
        MultiBoostTrainer(_zero_one(10), pool_size=10).train(x, y, boosted_machine=whole)


def test_multiboost_pool_is_deterministic_and_sampled(digits):
    x, y, _, _ = digits
    first = MultiBoostTrainer(_zero_one(10), pool_size=30, random_state=1).pool(x, y)
    second = MultiBoostTrainer(_zero_one(10), pool_size=30, random_state=1).pool(x, y)
    other = MultiBoostTrainer(_zero_one(10), pool_size=30, random_state=2).pool(x, y)
    assert first.machines == second.machines
    assert first.machines != other.machines
    assert len(set(map(repr, first.machines))) >= 1 and len(first.machines) == 30

    class TrainOnly:
        """A weak learner of bob_boost 0.1's protocol (``train``, which checks its inputs every member)."""

        def __init__(self):
            self.inner = CostSensitiveTreeTrainer(max_depth=2)

        def prepare(self, features):
            return self.inner.prepare(features)

        def train(self, prepared, labels, weights, loss_matrix):
            return self.inner.train(prepared, labels, weights, loss_matrix)
    # the built-in trainer's members come from its propose, on trusted inputs: the same trees
    assert MultiBoostTrainer(_zero_one(10), TrainOnly(), pool_size=30, random_state=1).pool(x, y).machines == \
        first.machines


@pytest.mark.parametrize("options, message", [
    (dict(pool_size=0), "pool_size"),
    (dict(sample_fractions=()), "sample_fractions"),
    (dict(sample_fractions=(0.5, 1.5)), "sample_fractions"),
    (dict(random_state="seed"), "random_state"),
])
def test_multiboost_bad_options(options, message):
    with pytest.raises((ValueError, TypeError), match=message):
        MultiBoostTrainer(_zero_one(3), **options)


# -- Lp-CSB ----------------------------------------------------------------------------------------------

def test_lp_csb_averages_stochastic_hypotheses(digits):
    x, y, x_test, y_test = digits
    machine = LpCSBTrainer(_zero_one(10), p=2.0, number_of_rounds=40).train(x, y)
    assert len(machine) == 40 and np.all(machine.weights == 1.0)
    for weak in machine.weak_machines[:3]:
        hypothesis = weak.forward(x_test)
        assert np.all(hypothesis >= 0)
        np.testing.assert_allclose(hypothesis.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(machine.decision_scores(x_test).sum(axis=1), 40.0, rtol=1e-12)
    assert np.mean(machine.predict(x_test) == y_test) > 0.8


def test_lp_csb_lowers_its_loss_and_prefers_cheap_errors(digits):
    x, y, x_test, y_test = digits
    matrix = _costly_class(10, 1, 5.0)
    losses = []

    def record(round_index, machine, scores):
        average = scores / (round_index + 1)
        losses.append(np.mean(np.sum(matrix[y] * average ** 2, axis=1)))

    costly = LpCSBTrainer(matrix, number_of_rounds=30).train(x, y, callback=record)
    uniform = np.mean(matrix[y].sum(axis=1)) / 10 ** 2  # L_p of H_0 = 1/K
    # one 0|1 hypothesis alone is worse than H_0 under L_2; the average of 30 is better
    assert losses[-1] < uniform < losses[0]
    plain = LpCSBTrainer(_zero_one(10), number_of_rounds=30).train(x, y)
    missed = [np.sum((m.predict(x_test) != 1) & (y_test == 1)) for m in (plain, costly)]
    assert missed[1] <= missed[0]


def test_lp_csb_continues_exactly_and_round_trips(digits, tmp_path):
    x, y, x_test, _ = digits
    trainer = LpCSBTrainer(_zero_one(10), p=3.0, number_of_rounds=8)
    whole = trainer.train(x, y)
    part = trainer.train(x, y, number_of_rounds=3)
    trainer.train(x, y, number_of_rounds=5, boosted_machine=part)
    assert part.weak_machines == whole.weak_machines
    path = tmp_path / "lpcsb.hdf5"
    whole.save(path)
    loaded = BoostedMachine.load(path)
    np.testing.assert_array_equal(loaded.decision_scores(x_test), whole.decision_scores(x_test))
    with pytest.raises(ValueError, match="p"):
        LpCSBTrainer(_zero_one(10), p=2.0).train(x, y, boosted_machine=loaded)


def test_relational_machine_rejects_a_damaged_file(digits, tmp_path):
    x, y, _, _ = digits
    machine = LpCSBTrainer(_zero_one(10), number_of_rounds=1).train(x, y)
    path = tmp_path / "damaged.hdf5"
    machine.save(path)
    with h5py.File(path, "r+") as handle:
        groups = []
        handle.visit(lambda name: groups.append(name) if name.endswith("/Tree") else None)
        del handle[groups[0]]
    with pytest.raises(ModelFormatError):
        BoostedMachine.load(path)


@pytest.mark.parametrize("options, error, message", [
    (dict(p=0.5), ValueError, "p"),
    (dict(p="two"), TypeError, "p"),
    (dict(weak_learner=CostSensitiveTreeTrainer()), TypeError, "weak_learner"),
    (dict(weak_learner=RelationalTreeTrainer(4)), ValueError, "weak_learner"),
])
def test_lp_csb_bad_options(options, error, message):
    with pytest.raises(error, match=message):
        LpCSBTrainer(_zero_one(3), **options)


def test_relational_machine_validates_its_tree(digits):
    x, y, _, _ = digits
    with pytest.raises(ValueError, match="tree"):
        RelationalTreeMachine(CostSensitiveTreeTrainer().train(x, y, np.ones(y.size), _zero_one(10)))


def test_lp_csb_learns_where_every_pair_is_balanced_at_the_start():
    # three equal classes: at H_0 = 1/K every sample's good and bad pairs weigh the same, so only a learner
    # that votes per label after a split on the features can improve
    features, labels = load_iris(return_X_y=True)
    machine = LpCSBTrainer(_zero_one(3), number_of_rounds=20).train(features, labels)
    assert np.mean(machine.predict(features) == labels) > 0.9


# -- front doors ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["adac2-m1", "multiboost", "lp-csb"])
def test_estimator_defaults_beat_the_majority_and_round_trip(algorithm, tmp_path):
    """Every parameter at its default (MultiBoost's pool of 6,000 trees included) on car's 500 rows."""
    from test_defaults import MARGIN, load, majority

    from bob_boost.sklearn import MultiClassCostClassifier, load_estimator
    x, y, x_test, y_test = load("car_500")
    estimator = MultiClassCostClassifier(algorithm).fit(x, y)
    assert estimator.score(x_test, y_test) >= majority(y_test) + MARGIN
    probabilities = estimator.predict_proba(x_test)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(estimator.classes_[probabilities.argmax(axis=1)], estimator.predict(x_test))
    path = tmp_path / "estimator.hdf5"
    estimator.save(path)
    loaded = load_estimator(path)
    assert type(loaded) is MultiClassCostClassifier and loaded.algorithm == algorithm
    np.testing.assert_array_equal(loaded.predict(x_test), estimator.predict(x_test))


def test_estimator_costs_and_warm_start(digits):
    from bob_boost.sklearn import MultiClassCostClassifier
    x, y, x_test, _ = digits
    matrix = _costly_class(10, 7, 4.0)
    whole = MultiClassCostClassifier("lp-csb", cost_matrix=matrix, n_estimators=12).fit(x, y)
    warm = MultiClassCostClassifier("lp-csb", cost_matrix=matrix, n_estimators=5, warm_start=True).fit(x, y)
    warm.set_params(n_estimators=12).fit(x, y)
    np.testing.assert_array_equal(warm.decision_function(x_test), whole.decision_function(x_test))
    np.testing.assert_array_equal(whole.cost_matrix_, matrix)
    adac2 = MultiClassCostClassifier(cost_matrix=matrix, n_estimators=10).fit(x, y)
    assert adac2.machine_.metadata["class_costs"] == matrix.sum(axis=1).tolist()


@pytest.mark.parametrize("options, message", [
    (dict(algorithm="adac9"), "algorithm"),
    (dict(algorithm="lp-csb", p=0.5), "p"),
    (dict(algorithm="multiboost", pool_size=0), "pool_size"),
    (dict(cost_matrix=np.ones((3, 3))), "cost_matrix"),
    (dict(cost_matrix=_zero_one(4)), "cost_matrix"),
    (dict(algorithm="multiboost", shrinkage=0.5), "shrinkage"),
    (dict(algorithm="lp-csb", min_weight_fraction_leaf=0.1), "min_weight_fraction_leaf"),
])
def test_estimator_bad_input_names_the_argument(digits, options, message):
    from bob_boost.sklearn import MultiClassCostClassifier
    x, y, _, _ = digits
    labels = y % 3
    before = (x.copy(), labels.copy())
    with pytest.raises((ValueError, TypeError), match=message):
        MultiClassCostClassifier(**options).fit(x, labels)
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(labels, before[1])


@pytest.mark.parametrize("trainer", ["adac2-m1", "multiboost", "lp-csb"])
def test_command_line_trains_and_the_model_loads_as_the_estimator(trainer, tmp_path, digits):
    from bob_boost.cli import main
    from bob_boost.sklearn import MultiClassCostClassifier, load_estimator
    x, y, x_test, y_test = digits
    data, costs, model = tmp_path / "train.csv", tmp_path / "costs.csv", tmp_path / "model.hdf5"
    np.savetxt(data, np.column_stack([x, y]), delimiter=",", header=",".join(
        [f"f{j}" for j in range(x.shape[1])] + ["label"]), comments="", fmt="%g")
    np.savetxt(costs, _zero_one(10), delimiter=",")
    assert main(["train", str(data), "-o", str(model), "--trainer", trainer, "-w", "tree", "--cost-matrix",
                 str(costs), "-r", "15", "--pool-size", "200", "--tree-depth", "4", "-q"]) == 0
    estimator = load_estimator(model)
    assert type(estimator) is MultiClassCostClassifier and estimator.algorithm == trainer
    assert np.mean(estimator.predict(x_test).astype(int) == y_test) > 0.7
    assert main(["train", str(data), "-o", str(tmp_path / "bad.hdf5"), "--trainer", trainer, "-w", "tree", "-q"]) != 0
    assert not (tmp_path / "bad.hdf5").exists()


# -- example-dependent costs (BAdaCost) ------------------------------------------------------------------------

def test_check_sample_costs_validates_and_reads_matrices():
    from bob_boost.costs import check_sample_costs, class_mean_costs
    labels = np.array([0, 1, 2, 1])
    rows = np.array([[0, 1, 2], [3, 0, 1], [1, 1, 0], [5, 0, 5]], dtype=float)
    np.testing.assert_array_equal(check_sample_costs(rows, labels, 3), rows)
    matrices = np.zeros((4, 3, 3))
    matrices[np.arange(4), labels] = rows
    np.testing.assert_array_equal(check_sample_costs(matrices, labels, 3), rows)
    np.testing.assert_array_equal(class_mean_costs(labels, rows, 3), [[0, 1, 2], [4, 0, 3], [1, 1, 0]])
    for bad, message in [(rows[:3], "shape"), (-rows, "non-negative"), (rows + 1, "own class"),
                         (np.full((4, 3), np.nan), "finite"), (matrices + np.eye(3), "diagonal")]:
        with pytest.raises(ValueError, match=message):
            check_sample_costs(bad, labels, 3)
    with pytest.raises(TypeError, match="sample_costs"):
        check_sample_costs(rows.astype(object), labels, 3)


def test_badacost_with_each_class_row_per_sample_is_badacost(digits):
    x, y, x_test, _ = digits
    matrix = _costly_class(10, 3, 4.0) * 0.01
    trainer = BAdaCostTrainer(matrix, CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=15)
    plain = trainer.train(x, y)
    for costs in (matrix[y], np.broadcast_to(matrix, (y.size, 10, 10))):
        per_sample = trainer.train(x, y, sample_costs=costs)
        assert per_sample.weak_machines == plain.weak_machines
        np.testing.assert_allclose(per_sample.weights, plain.weights, rtol=1e-12)
        np.testing.assert_array_equal(per_sample.predict(x_test), plain.predict(x_test))


def test_badacost_descends_the_example_dependent_loss(digits):
    """Every round's exact step lowers ``sum_n exp(c*_n @ f(x_n))``, and only the step that minimises it does."""
    x, y, _, _ = digits
    matrix = _zero_one(10) * 0.01
    rng = np.random.default_rng(5)
    costs = matrix[y] * rng.uniform(0.1, 10.0, (y.size, 10))
    star = costs.copy()
    star[np.arange(y.size), y] = -costs.sum(axis=1)
    losses = []

    def record(round_index, machine, scores):
        losses.append(np.sum(np.exp(np.sum(star * scores, axis=1))))

    trainer = BAdaCostTrainer(matrix, CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=20)
    per_sample = trainer.train(x, y, callback=record, sample_costs=costs)
    assert len(per_sample) == 20 and np.all(np.diff(losses) < 0)
    before = per_sample.decision_scores(x) - per_sample.weights[-1, 0] * per_sample.weak_machines[-1].forward(x)
    last = per_sample.weak_machines[-1].forward(x)

    def loss(step):
        return np.sum(np.exp(np.sum(star * (before + step * last), axis=1)))

    step = per_sample.weights[-1, 0]
    assert loss(step) < min(loss(step * 0.98), loss(step * 1.02))


def test_tree_leaves_take_the_cheapest_class_of_their_rows_costs():
    from bob_boost.boosting.protocol import RoundState
    rng = np.random.default_rng(3)
    features = rng.normal(size=(200, 3))
    labels = rng.integers(0, 3, 200)
    row_losses = rng.uniform(0.0, 1.0, (200, 3))
    weights = rng.uniform(0.5, 1.5, 200)
    trainer = CostSensitiveTreeTrainer(max_depth=2)
    prepared = trainer.prepare(features)
    tree = trainer.propose(prepared, RoundState(features=features, scores=None, labels=labels,
                                               sample_weights=weights, loss_matrix=_zero_one(3),
                                               row_losses=row_losses)).machine
    leaves = tree.forward_labels(features)
    for leaf_class in np.unique(leaves):
        # every row a leaf holds gets the class of least summed weighted row loss over that leaf's rows
        for rows in [np.flatnonzero(leaves == leaf_class)]:
            assert leaf_class in np.flatnonzero(np.isclose((weights[rows, None] * row_losses[rows]).sum(axis=0),
                                                           (weights[rows, None] * row_losses[rows]).sum(axis=0)
                                                           .min()))


def test_sample_costs_are_badacosts_alone(digits):
    x, y, _, _ = digits
    from bob_boost.trainers.badacost import SAMMETrainer
    from bob_boost.weak_trainers.multiclass import MultiClassStumpTrainer
    with pytest.raises(ValueError, match="sample_costs"):
        SAMMETrainer(CostSensitiveTreeTrainer()).train(x, y, number_of_rounds=2, sample_costs=_zero_one(10)[y])
    with pytest.raises(ValueError, match="sample_costs"):
        BAdaCostTrainer(_zero_one(10), MultiClassStumpTrainer()).train(x, y, 2, sample_costs=_zero_one(10)[y])


def test_estimator_sample_costs(digits):
    from bob_boost.sklearn import BAdaCostClassifier
    x, y, x_test, _ = digits
    matrix = _costly_class(10, 4, 3.0) * 0.01
    plain = BAdaCostClassifier(cost_matrix=matrix, n_estimators=15).fit(x, y)
    costs = matrix[y]
    before = costs.copy()
    per_sample = BAdaCostClassifier(n_estimators=15).fit(x, y, sample_costs=costs)
    np.testing.assert_array_equal(costs, before)
    np.testing.assert_allclose(per_sample.cost_matrix_, matrix, rtol=1e-12)
    np.testing.assert_array_equal(per_sample.predict(x_test), plain.predict(x_test))
    with pytest.raises(ValueError, match="sample_costs: expected"):
        BAdaCostClassifier().fit(x, y, sample_costs=costs[:10])
    with pytest.raises(ValueError, match="eval_set"):
        BAdaCostClassifier(early_stopping=True).fit(x, y, sample_costs=costs)
    weights = np.ones(y.size)
    weights[:10] = 0.0  # dropped rows drop their costs with them
    dropped = BAdaCostClassifier(n_estimators=5).fit(x, y, sample_weight=weights, sample_costs=costs)
    reference = BAdaCostClassifier(n_estimators=5).fit(x[10:], y[10:], sample_costs=costs[10:])
    np.testing.assert_array_equal(dropped.decision_function(x_test), reference.decision_function(x_test))


def test_cmel_with_each_class_row_per_sample_is_cmel_bit_for_bit():
    from bob_boost import Boosting, LUTTrainer
    from bob_boost.losses import CMELoss, SampleCostCMELoss
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 4, (300, 3))
    classes = np.where(codes[:, 0] < 2, 0, np.where(codes[:, 1] < 2, 1, 2))
    matrix = 0.5 * _zero_one(3)
    matrix[1] *= 3.0
    plain = Boosting(LUTTrainer(4, 3), CMELoss(matrix)).train(codes, classes, 8)
    targets = SampleCostCMELoss.targets(classes, matrix[classes], 3)
    per_sample = Boosting(LUTTrainer(4, 3), SampleCostCMELoss(matrix)).train(codes, targets, 8)
    assert per_sample.weak_machines == plain.weak_machines
    np.testing.assert_array_equal(per_sample.weights, plain.weights)
    np.testing.assert_array_equal(per_sample.cost_matrix, matrix)
    # dearer samples: the generic trainer's loss still never rises
    costs = matrix[classes] * rng.uniform(0.2, 5.0, (300, 1))
    loss = SampleCostCMELoss(matrix)
    rows = SampleCostCMELoss.targets(classes, costs, 3)
    machine = Boosting(LUTTrainer(4, 3), loss).train(codes, rows, 8)
    values = [loss.loss(rows, scores).sum() for scores in machine.staged_decision_scores(codes)]
    assert np.all(np.diff(values) <= 1e-12 * values[0])


@pytest.mark.parametrize("targets, message", [
    (np.zeros((3, 2)), "shape"),
    (np.array([[1.0, 1.0, 1.0]] * 3), "minus their sum"),
    (np.array([[-1.0, -1.0, 2.0]] * 3), "minus their sum"),
    (np.array([[-1.0, 1.0, np.nan]] * 3), "minus their sum"),
])
def test_sample_cost_cmel_rejects_other_targets(targets, message):
    from bob_boost.losses import SampleCostCMELoss
    with pytest.raises(ValueError, match=message):
        SampleCostCMELoss(_zero_one(3)).check_targets(targets)


def test_trainers_defaults_learn_on_ten_classes():
    """Every parameter at its default on pendigits' 600 rows: AdaC2.M1's trees have a leaf for every class."""
    from test_defaults import MARGIN, load, majority
    x, y, x_test, y_test = load("pendigits_600")
    matrix = _zero_one(10)
    assert AdaC2M1Trainer(matrix).weak_learner.max_depth == 4
    for trainer in (AdaC2M1Trainer(matrix), LpCSBTrainer(matrix), MultiBoostTrainer(matrix, pool_size=600)):
        machine = trainer.train(x, y)
        assert np.mean(machine.predict(x_test) == y_test) >= majority(y_test) + MARGIN, type(trainer).__name__


@pytest.mark.parametrize("trainer", ["adac2-m1", "multiboost", "lp-csb"])
def test_command_line_defaults_learn(trainer, tmp_path):
    """``bob-boost train --trainer T --cost-matrix C`` with every other option at its default (trees: -w's default
    for these trainers) on pendigits' 600 rows."""
    from test_defaults import MARGIN, load, majority

    from bob_boost.cli import main
    x, y, x_test, y_test = load("pendigits_600")
    data, costs, model = tmp_path / "train.csv", tmp_path / "costs.csv", tmp_path / "model.hdf5"
    np.savetxt(data, np.column_stack([x, y]), delimiter=",", fmt="%g")
    np.savetxt(costs, _zero_one(10), delimiter=",")
    assert main(["train", str(data), "-o", str(model), "--trainer", trainer, "--cost-matrix", str(costs), "-q"]) == 0
    machine = BoostedMachine.load(model)
    assert machine.metadata["weak_learner"] == "tree"
    classes = np.array(machine.metadata["classes"], dtype=float)
    assert np.mean(classes[machine.predict(x_test)] == y_test) >= majority(y_test) + MARGIN


def test_the_command_line_trains_badacost_on_sample_costs(tmp_path, capsys):
    """``bob-boost train --trainer badacost --sample-costs FILE`` trains the trainer's machine on the rows,
    predicting with their class means (or ``--cost-matrix``); bad files are errors naming them."""
    from bob_boost.cli import main
    from bob_boost.costs import class_mean_costs
    rng = np.random.default_rng(2)
    x = rng.normal(size=(240, 4))
    y = np.where(x[:, 0] > 0.4, 2, np.where(x[:, 1] > 0, 1, 0))
    costs = _zero_one(3)[y] * rng.uniform(0.5, 4.0, (240, 3))
    data, rows_file, model = tmp_path / "train.csv", tmp_path / "costs.csv", tmp_path / "model.hdf5"
    np.savetxt(data, np.column_stack([x, y]), delimiter=",", fmt="%.17g")
    np.savetxt(rows_file, costs, delimiter=",", fmt="%.17g")
    assert main(["train", str(data), "-o", str(model), "--trainer", "badacost", "-w", "tree", "--sample-costs",
                 str(rows_file), "-r", "6", "-q"]) == 0
    machine = BoostedMachine.load(model)
    matrix = class_mean_costs(y, costs, 3)
    expected = BAdaCostTrainer(matrix, CostSensitiveTreeTrainer(max_depth=2)).train(x, y, 6, sample_costs=costs)
    np.testing.assert_array_equal(machine.weights, expected.weights)
    np.testing.assert_array_equal(machine.cost_matrix, matrix)
    np.testing.assert_array_equal(machine.predict(x), expected.predict(x))
    # without -w: the costs choose the trees, the only weak learner that reads them
    assert main(["train", str(data), "-o", str(tmp_path / "default.hdf5"), "--trainer", "badacost", "--sample-costs",
                 str(rows_file), "-r", "6", "-q"]) == 0
    default = BoostedMachine.load(tmp_path / "default.hdf5")
    assert default.weak_machines == machine.weak_machines and default.metadata["weak_learner"] == "tree"
    np.testing.assert_array_equal(default.weights, machine.weights)
    bad = tmp_path / "bad.csv"
    np.savetxt(bad, costs[:10], delimiter=",")
    for arguments, message in ((["--sample-costs", str(bad)], "has 10 rows but"),
                               (["--sample-costs", str(tmp_path / "none.csv")], "no such sample-costs file"),
                               (["--sample-costs", str(rows_file), "-w", "stump"], "--sample-costs: example-dep")):
        assert main(["train", str(data), "-o", str(tmp_path / "m.hdf5"), "--trainer", "badacost", "-w", "tree",
                     *arguments, "-q"]) != 0
        assert message in capsys.readouterr().err
    np.savetxt(bad, costs + 1.0, delimiter=",")  # a cost at the sample's own class
    assert main(["train", str(data), "-o", str(tmp_path / "m.hdf5"), "--trainer", "badacost", "-w", "tree",
                 "--sample-costs", str(bad), "-q"]) != 0
    assert "bad.csv: " in capsys.readouterr().err
