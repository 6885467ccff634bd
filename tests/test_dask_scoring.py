"""Early stopping of the Dask estimators by a scikit-learn scorer on the held-out rows, as in memory."""
from __future__ import annotations

import numpy as np
import pytest

import bob_boost

da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")
pytest.importorskip("sklearn", reason="the estimators need scikit-learn")

from sklearn.metrics import accuracy_score, r2_score  # noqa: E402

from bob_boost.dask import (DaskAdaBoostDBClassifier, DaskBAdaCostClassifier, DaskBoosting,  # noqa: E402
                            DaskBoostingClassifier, DaskBoostingRegressor)
from held_out_rows import held_out_rows  # noqa: E402


def _noisy(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 15, size=(n, 6))
    noisy = features[:, 0] + rng.normal(0, 6, n)  # mostly noise: the held-out score soon stops improving
    rows = (4 * n // 15, 11 * n // 30, 37)
    return features, noisy, da.from_array(features, chunks=(rows + (n - sum(rows),), (6,)))


def _expected_stop(scores: list[float], patience: int, tol: float) -> int:
    """The round an early stopper keeps: the last improvement by more than ``tol`` before ``patience`` rounds
    without one."""
    best, best_round = scores[0], 0
    for round_index, score in enumerate(scores[1:], start=1):
        if score - best > tol:
            best, best_round = score, round_index
        elif round_index - best_round >= patience:
            return best_round
    raise AssertionError("the scores were still improving")


@pytest.mark.long
def test_an_accuracy_scorer_stops_where_the_scores_of_the_growing_model_say(client):
    features, noisy, dX = _noisy()
    labels = np.where(noisy > 7, "up", "down")
    model = DaskBoostingClassifier(loss="logit", n_estimators=100, early_stopping=True, n_iter_no_change=4,
                                   scoring="accuracy", random_state=5, boost_from_average=False,
                                   client=client).fit(dX, labels)  # the core trainer's model, from 0
    # the same rounds, held-out rows weighing 0, without early stopping (up to where the model says the
    # scores stopped improving); scored here by scikit-learn
    held_out = held_out_rows(len(labels), 5, labels=labels)
    direct = DaskBoosting(bob_boost.LogitLoss(), client=client).train(
        dX, np.where(labels == "up", 1.0, -1.0), model.n_iter_ + 4, sample_weight=np.where(held_out, 0.0, 1.0))
    rows, truth = features[held_out], labels[held_out]
    staged = [np.full(truth.size, "down")] + [np.where(s[:, 0] > 0, "up", "down")
                                              for s in direct.staged_decision_scores(rows)]
    scores = [accuracy_score(truth, predicted) for predicted in staged]
    stop = _expected_stop(scores, 4, 1e-7)
    assert 0 < model.n_iter_ == stop < 100
    np.testing.assert_array_equal(model.validation_score_, scores[:stop + 1])  # accuracies, not minus losses
    assert model.machine_.weak_machines == direct.weak_machines[:stop]
    assert model.to_local().scoring == "accuracy"


@pytest.mark.parametrize("name", ["regressor", "adaboostdb", "badacost"])
@pytest.mark.long
def test_every_estimator_records_its_scorer_on_the_growing_model(client, name):
    features, noisy, dX = _noisy(seed=1)
    # as many rounds as patience: every round is scored and recorded, and none is cut
    options = dict(n_estimators=8, early_stopping=True, n_iter_no_change=8, random_state=6, client=client)
    if name == "regressor":
        y, model, score = noisy, DaskBoostingRegressor(scoring="r2", **options), r2_score
    elif name == "adaboostdb":
        y, model, score = noisy > 7, DaskAdaBoostDBClassifier(2.0, 1.0, scoring="accuracy", **options), accuracy_score
    else:
        y = np.digitize(noisy, [4, 10])
        model, score = DaskBAdaCostClassifier(max_depth=2, scoring="accuracy", **options), accuracy_score
    model.fit(dX, y)
    held_out = held_out_rows(len(y), 6, labels=None if name == "regressor" else y)
    rows, truth = features[held_out], y[held_out]
    local = model.to_local()
    staged = list(local.staged_predict(rows))
    assert len(staged) == model.n_iter_ == 8
    np.testing.assert_allclose(model.validation_score_[1:], [score(truth, p) for p in staged], rtol=1e-12)


def test_a_scoring_that_is_not_a_scorer_is_the_in_memory_error(client):
    _, noisy, dX = _noisy(seed=2, n=300)
    for model, y in ((DaskBoostingClassifier(client=client), noisy > 7), (DaskBoostingRegressor(client=client), noisy),
                     (DaskAdaBoostDBClassifier(client=client), noisy > 7),
                     (DaskBAdaCostClassifier(client=client), noisy > 7)):
        with pytest.raises(ValueError, match="scoring.*'nonsense'"):
            model.set_params(scoring="nonsense").fit(dX, y)
