"""The regression losses' gradient trees against scikit-learn's HistGradientBoostingRegressor with the same loss,
on features whose every distinct value has a bin of its own in both (so the same bin edges)."""
from __future__ import annotations

import numpy as np
import pytest

ensemble = pytest.importorskip("sklearn.ensemble", reason="the comparison needs scikit-learn")
from bob_boost.sklearn import BoostingRegressor  # noqa: E402


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    features = rng.integers(0, 20, size=(n, 5)).astype(float)  # 20 values a feature: a bin each, in both
    return features, 0.5 * features[:, 0] + np.sin(features[:, 1]) + rng.normal(size=n)


@pytest.mark.parametrize("loss", ["squared_error", "poisson", "gamma"])
def test_the_same_trees_as_scikit_learns_histogram_boosting(loss):
    features, targets = _data()
    if loss != "squared_error":
        targets = np.abs(targets) + 0.1
    options = dict(learning_rate=0.1, early_stopping=False)
    theirs = ensemble.HistGradientBoostingRegressor(loss=loss, max_iter=10, max_leaf_nodes=31, min_samples_leaf=20,
                                                    l2_regularization=0.0, **options).fit(features, targets)
    ours = BoostingRegressor(weak_learner="tree", loss=loss, n_estimators=10, max_leaves=31, **options).fit(
        features, targets)
    # scikit-learn sums float32 gradients and hessians (its G_H_DTYPE): the leaves agree to its rounding
    np.testing.assert_allclose(ours.predict(features), theirs.predict(features), rtol=1e-6)
