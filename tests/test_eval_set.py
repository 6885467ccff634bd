"""``fit(X, y, eval_set=[...])``: every set scored every round, the first the early-stopping set, in memory and
on Dask, and bad sets named."""
from __future__ import annotations

import copy

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the estimators need scikit-learn")
from sklearn.datasets import load_breast_cancer, load_diabetes  # noqa: E402

from bob_boost.sklearn import (AdaBoostDBClassifier, BAdaCostClassifier, BoostingClassifier,  # noqa: E402
                               BoostingRegressor)


def _cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return X[:300], y[:300], X[300:420], y[300:420], X[420:], y[420:]


def test_every_set_is_scored_every_round_and_the_first_stops_training():
    X, y, X1, y1, X2, y2 = _cancer()
    fitted = BoostingClassifier(n_estimators=40, early_stopping=True, n_iter_no_change=3).fit(
        X, y, eval_set=[(X1, y1), (X2, y2)])
    assert set(fitted.evals_result_) == {"validation_0", "validation_1"}
    for scores in fitted.evals_result_.values():
        assert scores.shape == (fitted.n_iter_ + 1,)
    np.testing.assert_array_equal(fitted.validation_score_, fitted.evals_result_["validation_0"])
    # the second set's scores are minus the mean loss of the machine truncated to each round
    machine = fitted.machine_
    targets = np.where(y2 == 1, 1.0, -1.0)[:, None]
    for rounds in (0, 1, fitted.n_iter_):
        truncated = copy.deepcopy(machine)
        truncated.truncate(rounds)
        scores = truncated.decision_scores(X2)  # with no round, the baseline (the class prior)
        expected = -np.mean(machine_loss(targets, scores))
        assert fitted.evals_result_["validation_1"][rounds] == pytest.approx(expected, rel=1e-12)
    # nothing is held out of X when the sets are given: every training row is scored
    assert fitted.train_score_.shape == (fitted.n_iter_ + 1,)


def machine_loss(targets, scores):
    from bob_boost import ExponentialLoss
    return ExponentialLoss().loss(targets, scores)[:, 0]


def test_a_scorer_scores_the_sets_and_every_estimator_records_them():
    X, y, X1, y1, _, _ = _cancer()
    fitted = BoostingClassifier(n_estimators=6, scoring="accuracy").fit(X, y, eval_set=[(X1, y1)])
    assert fitted.evals_result_["validation_0"][-1] == pytest.approx(fitted.score(X1, y1))
    for estimator in (BAdaCostClassifier(n_estimators=4), AdaBoostDBClassifier(n_estimators=4)):
        estimator.fit(X, y, eval_set=[(X1, y1, np.ones(y1.size))])
        assert estimator.evals_result_["validation_0"].shape == (estimator.n_iter_ + 1,)
    Xr, yr = load_diabetes(return_X_y=True)
    regressor = BoostingRegressor(weak_learner="tree", n_estimators=5).fit(Xr[:300], yr[:300],
                                                                           eval_set=[(Xr[300:], yr[300:])])
    assert np.all(np.diff(regressor.evals_result_["validation_0"]) > 0)  # minus the squared loss, improving
    assert BoostingClassifier(n_estimators=2).fit(X, y).evals_result_ == {}


@pytest.mark.parametrize("eval_set, kind, message", [
    ([(np.zeros((5, 3)), np.zeros(5))], ValueError, r"eval_set\[0\]: X has 3 features"),
    ([(np.zeros((5, 30)), np.zeros(4))], ValueError, r"eval_set\[0\]: y must be a vector of 5"),
    ([(np.zeros((2, 30)), np.array([0, 7]))], ValueError, r"eval_set\[0\]: labels \['7'\] were not seen"),
    ([(np.zeros((2, 30)), np.zeros(2), -np.ones(2))], ValueError, r"eval_set\[0\]: sample_weight"),
    ("train", TypeError, "eval_set: expected a list"),
    ([np.zeros((2, 30))], TypeError, r"eval_set\[0\]: expected \(X, y\)")])
def test_a_bad_set_is_named_and_nothing_passed_is_modified(eval_set, kind, message):
    X, y, *_ = _cancer()
    copies = X.copy(), y.copy()
    with pytest.raises(kind, match=message):
        BoostingClassifier(n_estimators=2).fit(X, y, eval_set=eval_set)
    assert np.array_equal(X, copies[0]) and np.array_equal(y, copies[1])


def test_a_regressors_set_is_checked_by_its_loss():
    Xr, yr = load_diabetes(return_X_y=True)
    with pytest.raises(ValueError, match=r"eval_set\[0\]: PoissonLoss needs non-negative"):
        BoostingRegressor(loss="poisson", n_estimators=2).fit(Xr, yr, eval_set=[(Xr, -yr)])
    with pytest.raises(ValueError, match=r"eval_set\[0\]: y must be a vector of 442 entries"):
        BoostingRegressor(n_estimators=2).fit(Xr, yr, eval_set=[(Xr, np.column_stack([yr, yr]))])


def test_the_dask_estimators_record_the_sets_as_in_memory(client):
    da = pytest.importorskip("dask.array", reason="distributed training needs the dask extra")
    from bob_boost.dask import DaskBAdaCostClassifier, DaskBoostingClassifier
    X, y, X1, y1, X2, y2 = _cancer()
    options = dict(n_estimators=20, max_bins=64, early_stopping=True, n_iter_no_change=3)
    memory = BoostingClassifier(**options).fit(X, y, eval_set=[(X1, y1), (X2, y2)])
    remote = DaskBoostingClassifier(**options).fit(da.from_array(X, chunks=(100, 30)), y,
                                                   eval_set=[(da.from_array(X1, chunks=(60, 30)), y1), (X2, y2)])
    assert remote.n_iter_ == memory.n_iter_
    for name, scores in memory.evals_result_.items():
        np.testing.assert_allclose(remote.evals_result_[name], scores, rtol=1e-9)
    badacost = DaskBAdaCostClassifier(n_estimators=3).fit(da.from_array(X, chunks=(100, 30)), y, eval_set=[(X1, y1)])
    np.testing.assert_allclose(badacost.evals_result_["validation_0"],
                               BAdaCostClassifier(n_estimators=3).fit(X, y, eval_set=[(X1, y1)]).evals_result_[
                                   "validation_0"], rtol=1e-9)
