"""Shapley values of gradient trees against background rows: bob_boost next to the shap package's
interventional ``TreeExplainer`` on the same trees, and the time of the other weak machines.

The data: ``make_classification(n_samples=20000, n_features=50, n_informative=20, random_state=0)``; 100
gradient trees of depth 6 (``Boosting(TreeTrainer(max_depth=6, growth="levelwise"), LogitLoss(),
learning_rate=0.1)``), 100 stumps and 100 look-up tables (the features quantised to 16 levels) trained on it.
Explained: ``--rows`` rows against ``--background`` background rows (interventional SHAP, whose cost is
rows x background rows x the leaves each pair reaches), on 2 threads; ``shap.TreeExplainer(model,
data=background, feature_perturbation="interventional")`` gets the same trees in its own format. Fastest of
``--repeats``, each library in turn; printed: seconds, rows per second, and the largest difference of the
values.

Usage: ``python bench/bench_explain.py [--rows 2000] [--background 100] [--repeats 3]``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _machine import cpu_model  # noqa: E402  (bench/, beside this script)
from _timing import fastest  # noqa: E402
from test_explanations import _shap_trees  # noqa: E402  (the conversion the tests check)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--background", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import shap
    from sklearn.datasets import make_classification

    import bob_boost

    features, labels = make_classification(n_samples=20000, n_features=50, n_informative=20, random_state=0)
    targets = np.where(labels == 1, 1.0, -1.0)
    trees = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=6, growth="levelwise", n_threads=2),
                               bob_boost.LogitLoss(), learning_rate=0.1).train(features, targets, 100)
    stumps = bob_boost.Boosting(bob_boost.StumpTrainer(n_threads=2), bob_boost.LogitLoss(),
                                step_rule="newton").train(features, targets, 100)
    levels = np.clip(np.floor((features - features.mean(0)) / features.std(0) * 3 + 8), 0, 15)
    tables = bob_boost.Boosting(bob_boost.LUTTrainer(16, n_threads=2), bob_boost.LogitLoss(),
                                step_rule="newton").train(levels, targets, 100)
    rows, background = features[-args.rows:], features[:args.background]
    for machine in (trees, stumps, tables):
        machine.n_threads = 2
    ours, values = fastest(lambda: trees.shap_values(rows, background), args.repeats)
    explainer = shap.TreeExplainer(_shap_trees(trees), data=background, feature_perturbation="interventional")
    theirs, reference = fastest(lambda: explainer.shap_values(rows), args.repeats)
    stump_time, _ = fastest(lambda: stumps.shap_values(rows, background), args.repeats)
    table_time, _ = fastest(lambda: tables.shap_values(levels[-args.rows:], levels[:args.background]), args.repeats)
    print(f"# python bench/bench_explain.py --rows {args.rows} --background {args.background} --repeats "
          f"{args.repeats}")
    print(f"# {cpu_model()}, 2 threads; fastest of {args.repeats}; shap {shap.__version__}")
    print()
    print("| explained | seconds | rows/s | largest difference from shap |")
    print("|---|---:|---:|---:|")
    print(f"| 100 depth-6 trees, bob_boost | {ours:.3f} | {args.rows / ours:,.0f} | "
          f"{np.abs(values[:, :-1] - reference).max():.1e} |")
    print(f"| 100 depth-6 trees, shap TreeExplainer | {theirs:.3f} | {args.rows / theirs:,.0f} | - |")
    print(f"| 100 stumps, bob_boost | {stump_time:.4f} | {args.rows / stump_time:,.0f} | - |")
    print(f"| 100 look-up tables, bob_boost | {table_time:.4f} | {args.rows / table_time:,.0f} | - |")


if __name__ == "__main__":
    main()
