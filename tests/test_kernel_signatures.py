"""The gradient-tree kernels are compiled once for each kind of argument, never once for each constant a caller
passes: numba compiles a jitted function again for every distinct literal a jitted caller gives it, and every such
compilation optimises again everything the function calls (see ``bob_boost/engine/unliteral.py``)."""
from __future__ import annotations

import importlib

import numba
import numpy as np

from bob_boost.sklearn import BoostingClassifier, BoostingRegressor

#: The engine modules a gradient tree's growing runs through.
TREE_KERNEL_MODULES = ("bin_quads", "categorical", "newton_gain", "split_scan", "team", "tree_batches",
                       "tree_histograms", "tree_kernels", "tree_team")


def literal_overloads() -> list[str]:
    """Every compiled (or cached and loaded) version of the tree kernels that has a literal argument type."""
    found = []
    for name in TREE_KERNEL_MODULES:
        module = importlib.import_module(f"bob_boost.engine.{name}")
        for attribute, value in vars(module).items():
            if isinstance(value, numba.core.registry.CPUDispatcher) and value.py_func.__module__ == module.__name__:
                found += [f"{name}.{attribute}{signature}" for signature in value.overloads
                          if any(isinstance(argument, numba.core.types.Literal) or "Literal" in str(argument)
                                 for argument in signature)]
    return found


def test_tree_kernels_have_no_version_for_a_literal_argument():
    rng = np.random.default_rng(0)
    features = np.round(rng.normal(size=(5000, 10)), 2)
    features[:, 9] = rng.integers(0, 6, size=5000)
    target = features[:, 0] + (features[:, 9] == 2) + 0.3 * rng.normal(size=5000)
    classes = np.digitize(features[:, 1], [-0.5, 0.5])
    # one output whose large nodes two threads share, a categorical feature; three outputs grown in batches;
    # quantised gradients
    BoostingRegressor(weak_learner="tree", n_estimators=2, n_threads=2, categorical_features=[9],
                      early_stopping=False).fit(features, target)
    BoostingClassifier(weak_learner="tree", loss="softmax", n_estimators=2, n_threads=2,
                       early_stopping=False).fit(features, classes)
    BoostingRegressor(weak_learner="tree", n_estimators=2, quantized_gradients=16,
                      early_stopping=False).fit(features, target)
    assert literal_overloads() == []
