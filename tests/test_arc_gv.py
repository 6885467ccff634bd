"""arc-gv: every weight is the chapter's formula of the edge and the minimum margin before it, recomputed here
from the machine's own weak machines; the first is AdaBoost's."""
from __future__ import annotations

import numpy as np
import pytest

from bob_boost import ArcGVTrainer, Boosting, ExponentialLoss, StumpTrainer
from bob_boost.boosting.steps import arc_gv_step


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    return X, np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.5, 1.0, -1.0)


def test_every_weight_is_the_formula_of_its_edge_and_the_minimum_margin_before_it():
    X, y = _data()
    machine = ArcGVTrainer().train(X, y, 150)
    scores, total, corrected = np.zeros(y.size), 0.0, 0
    for weight, weak in zip(machine.weights[:, 0], machine.weak_machines):
        distribution = np.exp(-y * scores)
        distribution /= distribution.sum()
        outputs = weak.forward(X)[:, 0]
        edge = np.sum(distribution * y * outputs)
        margin = max(np.min(y * scores) / total, 0.0) if total else 0.0
        corrected += margin > 0
        expected = 0.5 * np.log((1 + edge) / (1 - edge)) - 0.5 * np.log((1 + margin) / (1 - margin))
        assert weight == pytest.approx(expected, rel=1e-9)
        scores += weight * outputs
        total += weight
    assert corrected > 10  # the ensemble separated the rows, and the margin term took part
    adaboost = Boosting(StumpTrainer(), ExponentialLoss()).train(X, y, 1)
    assert machine.weights[0, 0] == pytest.approx(adaboost.weights[0, 0], rel=1e-9)


def test_a_margin_at_the_edge_stops_training_and_a_perfect_stump_ends_it():
    assert arc_gv_step(0.3, 0.3) == 0.0 and arc_gv_step(0.3, 0.5) == 0.0
    assert arc_gv_step(0.5, 0.0) == pytest.approx(0.5 * np.log(3.0))
    X, y = _data()
    separable = np.where(X[:, 0] > 0, 1.0, -1.0)
    assert len(ArcGVTrainer(StumpTrainer(max_bins=None)).train(X, separable, 10)) == 1


def test_the_estimator_and_its_recipe():
    pytest.importorskip("sklearn", reason="the estimator needs scikit-learn")
    from bob_boost.recipes import make_recipe
    from bob_boost.sklearn import ArcGVClassifier
    X, y = _data(seed=1)
    estimator = ArcGVClassifier(n_estimators=30).fit(X, np.where(y > 0, "yes", "no"))
    assert estimator.score(X, np.where(y > 0, "yes", "no")) > 0.9
    assert not hasattr(estimator, "predict_proba")
    with pytest.raises(ValueError, match="max_depth: arc-gv boosts decision stumps"):
        ArcGVClassifier(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="weak_learner: 'arc-gv' boosts"):
        make_recipe("arc-gv", number_of_classes=2, weak_learner="tree")
    with pytest.raises(ValueError, match="is binary but there are 3 classes"):
        make_recipe("arc-gv", number_of_classes=3)
