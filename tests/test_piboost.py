"""PIBoost: every subset's stump and step are Cost-Sensitive AdaBoost's with the costs of the BAdaCost paper's
Corollary 3, and the step is the positive root of the paper's polynomial (Appendix D)."""
from __future__ import annotations

import numpy as np
import pytest

from bob_boost.trainers.piboost import PIBoostTrainer, label_subsets, subset_vector


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5) + (X[:, 2] > 1.0)


def _paper_step(E1, E2, A1, A2, k, s) -> float:
    """beta = s (K-s)(K-1) log x for the positive root x of E1 (K-s) x^(2(K-s)) + E2 s x^K - s (A2 - E2) x^(K-2s)
    - (K-s)(A1 - E1)."""
    degree = 2 * (k - s)
    coefficients = np.zeros(degree + 1)  # highest power first
    coefficients[degree - 2 * (k - s)] += E1 * (k - s)
    coefficients[degree - k] += E2 * s
    coefficients[degree - (k - 2 * s)] += -s * (A2 - E2)
    coefficients[degree] += -(k - s) * (A1 - E1)
    roots = np.roots(coefficients)
    positive = [r.real for r in roots if abs(r.imag) < 1e-9 and r.real > 0]
    assert len(positive) == 1  # Descartes: one sign change, one positive root
    return s * (k - s) * (k - 1) * np.log(positive[0])


@pytest.mark.parametrize("subset_size", [1, 2])
def test_every_subset_step_is_the_root_of_the_papers_polynomial(subset_size):
    X, labels = _data()
    k = 4
    subsets = label_subsets(k, subset_size)
    assert len(subsets) == (4 if subset_size == 1 else 7)
    machine = PIBoostTrainer(number_of_rounds=2 * len(subsets), subset_size=subset_size).train(X, labels)
    assert len(machine) == 2 * len(subsets)
    scores = np.zeros((labels.size, k))
    coding = np.where(np.arange(k) == labels[:, None], 1.0, -1.0 / (k - 1))
    losses = []
    for place, tree in enumerate(machine.weak_machines):
        weights = np.exp(-(coding * scores).sum(axis=1) / k)
        losses.append(weights.mean())
        weights /= weights.sum()
        for subset in (subsets[place % len(subsets)],):  # the subsets in turn
            root = 0
            vector = tree.values[tree.right_children[root]]  # the right leaf: +-beta y_S
            beta = np.abs(vector).max() / np.abs(subset_vector(subset, k)).max()
            inside = np.isin(labels, subset)
            sign = np.sign(vector @ subset_vector(subset, k))  # the right leaf votes for S (+1) or against it
            votes_inside = np.where(X[:, tree.features[root]] >= tree.thresholds[root], sign, -sign)
            wrong = votes_inside != np.where(inside, 1.0, -1.0)
            s = len(subset)
            E1, E2 = weights[wrong & inside].sum(), weights[wrong & ~inside].sum()
            A1, A2 = weights[inside].sum(), weights[~inside].sum()
            assert beta == pytest.approx(_paper_step(E1, E2, A1, A2, k, s), rel=1e-7)
        scores += tree.forward(X)
    losses.append(np.exp(-(coding * scores).sum(axis=1) / k).mean())
    assert np.all(np.diff(losses) < 0)  # every update's optimal step lowers the loss


def test_the_subsets_and_their_margin_vectors():
    assert label_subsets(3, 1) == [(0,), (1,), (2,)]
    assert label_subsets(4, 2)[-3:] == [(0, 1), (0, 2), (0, 3)]  # a pair and its complement once
    vector = subset_vector((0, 2), 5)
    np.testing.assert_allclose(vector, [0.5, -1 / 3, 0.5, -1 / 3, -1 / 3])
    coding = np.where(np.arange(5) == 0, 1.0, -1.0 / 4)
    assert coding @ vector == pytest.approx(5 / (2 * 4))  # y_l^T y_S = K / (s (K-1)) for l in S


def test_it_learns_and_its_bad_input():
    X, labels = _data()
    machine = PIBoostTrainer(number_of_rounds=100).train(X, labels)
    majority = np.bincount(labels).max() / labels.size
    assert machine.decision_rule == "argmax" and np.mean(machine.predict(X) == labels) > majority + 0.15
    with pytest.raises(ValueError, match="subset_size"):
        PIBoostTrainer(subset_size=0)
    with pytest.raises(ValueError, match="labels: has 599 samples"):
        PIBoostTrainer().train(X, labels[:599])


def test_estimator_defaults_beat_the_majority_and_load_back(tmp_path):
    from test_defaults import MARGIN, load, majority

    from bob_boost.sklearn import PIBoostClassifier, load_estimator
    x, y, x_test, y_test = load("pendigits_600")
    estimator = PIBoostClassifier().fit(x, y)
    assert estimator.score(x_test, y_test) >= majority(y_test) + MARGIN
    probabilities = estimator.predict_proba(x_test)
    np.testing.assert_array_equal(estimator.classes_[probabilities.argmax(axis=1)], estimator.predict(x_test))
    estimator.machine_.save(tmp_path / "machine.hdf5")  # a bare machine file adopts the estimator too
    for path in (tmp_path / "machine.hdf5",):
        loaded = load_estimator(path)
        assert type(loaded) is PIBoostClassifier
        np.testing.assert_array_equal(loaded.predict(x_test), estimator.predict(x_test))
    with pytest.raises(ValueError, match="subset_size"):
        PIBoostClassifier(subset_size=0).fit(x, y)


def test_estimator_loss_falls_every_round_where_accuracy_does_not():
    """On car's 500 rows (two classes of 18 and 13 rows among 350) the multi-class exponential loss falls every
    round while training accuracy falls after 20: the loss reads only each row's own class's score, and the
    tiny classes' subsets get their share of the updates. The docstring says so."""
    from test_defaults import load

    from bob_boost.costs import margin_vectors
    from bob_boost.sklearn import PIBoostClassifier
    x, y, _, _ = load("car_500")
    estimator = PIBoostClassifier(n_estimators=100).fit(x, y)
    encoded = np.searchsorted(estimator.classes_, y)
    vectors = margin_vectors(estimator.classes_.size)
    losses, accuracies = [], []
    for scores in estimator.machine_.staged_decision_scores(x):
        losses.append(np.mean(np.exp(-np.sum(vectors[encoded] * scores, axis=1) / estimator.classes_.size)))
        accuracies.append(np.mean(scores.argmax(axis=1) == encoded))
    assert np.all(np.diff(losses) < 0)
    assert accuracies[-1] < max(accuracies[:20]) - 0.1
