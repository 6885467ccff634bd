"""Shapley values of boosted models: bob_boost next to LightGBM's ``pred_contrib``, XGBoost's ``pred_contribs`` and
the shap package's ``TreeExplainer``, and the time of stumps and look-up tables.

Path-dependent values (no background rows), the kind LightGBM and XGBoost compute: the data
``make_classification(n_samples=--rows, n_features=50, n_informative=20, random_state=0)``; each library
trains 100 depth-6 trees on it and explains every row, on 2 threads:

- bob_boost ``Boosting(TreeTrainer(max_depth=6, max_leaves=None, growth="levelwise", n_threads=2),
  LogitLoss(), learning_rate=0.1)``, ``machine.shap_values(rows)``;
- LightGBM ``LGBMClassifier(n_estimators=100, max_depth=6, num_leaves=64, learning_rate=0.1, n_jobs=2)``,
  ``predict(rows, pred_contrib=True)``;
- XGBoost ``XGBClassifier(n_estimators=100, max_depth=6, tree_method="hist", learning_rate=0.1, n_jobs=2)``,
  ``get_booster().predict(DMatrix(rows), pred_contribs=True)``;
- shap ``TreeExplainer(bob_boost's trees, feature_perturbation="tree_path_dependent")`` on the first
  ``--reference-rows`` rows: the largest difference from bob_boost's values.

Then 100 stumps and 100 look-up tables (the features quantised to 16 levels) on the same rows: they record no
training cover, so their values are computed against ``--background`` background rows (interventional), as
are bob_boost's trees once more for comparison (on ``--interventional-rows`` rows, whose cost grows with
rows x background rows), next to shap's interventional ``TreeExplainer``. Fastest of ``--repeats``, each
library in turn; printed: seconds and rows per second.

``--mnist-figure FILE.png`` draws instead the Shapley values of 200 stumps trained on MNIST's 5s and 6s
(``../shared/data``) for the first test 5 and 6 they classify correctly, against 200 training digits, as
28 x 28 images.

``--uci-figure FILE.png`` draws the summary plot of the path-dependent values of
``BoostingClassifier(weak_learner="tree")`` (every other parameter its default) on the UCI Pima Indians
diabetes data (``tests/data/uci/diabetes.tsv.gz``, 768 patients, 8 measurements), every row explained.

Usage: ``python bench/bench_explain.py [--rows 100000] [--background 100] [--repeats 3] [--mnist-figure FILE]
[--uci-figure FILE]``.
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


MNIST = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist" / "mnist_data.hdf5"


def _mnist_figure(path: Path) -> None:
    """The Shapley values of MNIST stumps on a test 5 and 6, red towards "6", blue towards "5"."""
    import bob_boost
    from bob_boost.datasets import load_mnist_hdf5
    from bob_boost.plots import new_figure

    data = load_mnist_hdf5(MNIST)
    train = np.isin(data.train_labels, [5, 6])
    features, targets = data.train_data[train], np.where(data.train_labels[train] == 6, 1.0, -1.0)
    machine = bob_boost.Boosting(bob_boost.StumpTrainer(n_threads=2), bob_boost.LogitLoss()).train(
        features, targets, 200)
    right = machine.decision_scores(data.test_data)[:, 0] * np.where(data.test_labels == 6, 1, -1) > 0
    test = [int(np.flatnonzero((data.test_labels == digit) & right)[0]) for digit in (5, 6)]
    rows = data.test_data[test]
    values = machine.shap_values(rows, features[::features.shape[0] // 200][:200])
    figure = new_figure(figsize=(9, 2.6), layout="constrained")
    limit = float(np.abs(values[:, :-1]).max())
    panels = figure.subplots(1, 4)
    for k, digit in enumerate((5, 6)):
        image, shapley = panels[2 * k], panels[2 * k + 1]
        image.imshow(rows[k].reshape(28, 28), cmap="gray_r")
        image.set_title(f"test {digit}: score {machine.decision_scores(rows[k:k + 1])[0, 0]:+.2f}", fontsize=8)
        shown = shapley.imshow(values[k, :-1].reshape(28, 28), cmap="coolwarm", vmin=-limit, vmax=limit)
        shapley.set_title(f"its Shapley values (expected {values[k, -1]:+.2f})", fontsize=8)
        for axes in (image, shapley):
            axes.set_xticks([])
            axes.set_yticks([])
    figure.colorbar(shown, ax=panels, shrink=0.9, label="towards 6 (red), 5 (blue)")
    figure.savefig(path, format="png", dpi=100)
    print(f"# python bench/bench_explain.py --mnist-figure {path}: 200 stumps; the first correctly classified "
          f"test 5 and 6: test rows {test}")


#: The UCI description's names of the Pima Indians diabetes measurements, in the file's column order.
PIMA = ["pregnancies", "plasma glucose", "diastolic blood pressure", "triceps skin fold", "2-hour serum insulin",
        "body mass index", "diabetes pedigree", "age"]


def _uci_figure(path: Path) -> None:
    """The summary plot of a default tree classifier's path-dependent values on every Pima diabetes row."""
    from bob_boost.explanation_plots import plot_shap_summary
    from bob_boost.io.tables import read_table
    from bob_boost.sklearn import BoostingClassifier

    table = read_table(Path(__file__).resolve().parents[1] / "tests" / "data" / "uci" / "diabetes.tsv.gz")
    model = BoostingClassifier(weak_learner="tree").fit(table.features, table.labels)
    values = model.shap_values(table.features)
    plot_shap_summary(values, table.features, PIMA, path=path)
    order = np.argsort(-np.abs(values[:, :-1]).mean(axis=0))
    print(f"# python bench/bench_explain.py --uci-figure {path}: {model.n_iter_} rounds; mean |value|: "
          + ", ".join(f"{PIMA[j]} {np.abs(values[:, j]).mean():.3f}" for j in order))


def _row(name: str, seconds: float, rows: int, note: str = "-") -> str:
    return f"| {name} | {seconds:.3f} | {rows / seconds:,.0f} | {note} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100000)
    parser.add_argument("--background", type=int, default=100)
    parser.add_argument("--interventional-rows", type=int, default=2000)
    parser.add_argument("--reference-rows", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mnist-figure", type=Path)
    parser.add_argument("--uci-figure", type=Path)
    args = parser.parse_args()
    if args.mnist_figure is not None or args.uci_figure is not None:
        if args.mnist_figure is not None:
            _mnist_figure(args.mnist_figure)
        if args.uci_figure is not None:
            _uci_figure(args.uci_figure)
        return
    import lightgbm
    import shap
    import xgboost
    from sklearn.datasets import make_classification

    import bob_boost

    features, labels = make_classification(n_samples=args.rows, n_features=50, n_informative=20, random_state=0)
    targets = np.where(labels == 1, 1.0, -1.0)
    trees = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=6, max_leaves=None, growth="levelwise", n_threads=2),
                               bob_boost.LogitLoss(), learning_rate=0.1).train(features, targets, 100)
    light = lightgbm.LGBMClassifier(n_estimators=100, max_depth=6, num_leaves=64, learning_rate=0.1, n_jobs=2,
                                    verbose=-1).fit(features, labels)
    extreme = xgboost.XGBClassifier(n_estimators=100, max_depth=6, tree_method="hist", learning_rate=0.1,
                                    n_jobs=2).fit(features, labels)
    stumps = bob_boost.Boosting(bob_boost.StumpTrainer(n_threads=2), bob_boost.LogitLoss(),
                                step_rule="newton").train(features, targets, 100)
    levels = np.clip(np.floor((features - features.mean(0)) / features.std(0) * 3 + 8), 0, 15)
    tables = bob_boost.Boosting(bob_boost.LUTTrainer(16, n_threads=2), bob_boost.LogitLoss(),
                                step_rule="newton").train(levels, targets, 100)
    for machine in (trees, stumps, tables):
        machine.n_threads = 2
    matrix = xgboost.DMatrix(features)
    background = features[:args.background]
    few = features[-args.interventional_rows:]

    ours, values = fastest(lambda: trees.shap_values(features), args.repeats)
    lightgbm_time, _ = fastest(lambda: light.predict(features, pred_contrib=True), args.repeats)
    xgboost_time, _ = fastest(lambda: extreme.get_booster().predict(matrix, pred_contribs=True), args.repeats)
    model = _shap_trees(trees)
    for tree, weak in zip(model["trees"], trees.weak_machines):
        tree["node_sample_weight"] = np.array(weak.cover)
    reference = shap.TreeExplainer(model, feature_perturbation="tree_path_dependent").shap_values(
        features[:args.reference_rows])
    path_difference = np.abs(values[:args.reference_rows, :-1] - reference).max()
    stump_time, _ = fastest(lambda: stumps.shap_values(features, background), args.repeats)
    table_time, _ = fastest(lambda: tables.shap_values(levels, levels[:args.background]), args.repeats)
    interventional, chosen = fastest(lambda: trees.shap_values(few, background), args.repeats)
    explainer = shap.TreeExplainer(_shap_trees(trees), data=background, feature_perturbation="interventional")
    shap_time, theirs = fastest(lambda: explainer.shap_values(few), args.repeats)

    rows = args.rows
    leaves = {"bob_boost": np.mean([np.sum(weak.features < 0) for weak in trees.weak_machines]),
              "LightGBM": np.mean([tree["num_leaves"] for tree in light.booster_.dump_model()["tree_info"]]),
              "XGBoost": np.mean([dump.count("leaf=") for dump in extreme.get_booster().get_dump()])}
    print(f"# python bench/bench_explain.py --rows {rows} --background {args.background} --interventional-rows "
          f"{args.interventional_rows} --reference-rows {args.reference_rows} --repeats {args.repeats}")
    print(f"# {cpu_model()}, 2 threads; fastest of {args.repeats}; lightgbm {lightgbm.__version__}, xgboost "
          f"{xgboost.__version__}, shap {shap.__version__}")
    print()
    print(f"Path-dependent, every one of {rows:,} rows x 50 features, 100 depth-6 trees:")
    print()
    print("| explained | seconds | rows/s | note |")
    print("|---|---:|---:|---|")
    print(_row("bob_boost shap_values(rows)", ours, rows, f"{leaves['bob_boost']:.1f} leaves a tree; largest "
               f"difference from shap's TreeExplainer: {path_difference:.1e}"))
    print(_row("LightGBM predict(pred_contrib=True)", lightgbm_time, rows, f"{leaves['LightGBM']:.1f} leaves a tree"))
    print(_row("XGBoost predict(pred_contribs=True)", xgboost_time, rows, f"{leaves['XGBoost']:.1f} leaves a tree"))
    print()
    print(f"Against {args.background} background rows (interventional):")
    print()
    print("| explained | seconds | rows/s | note |")
    print("|---|---:|---:|---|")
    print(_row(f"100 stumps, bob_boost, {rows:,} rows", stump_time, rows,
               f"{ours / stump_time:.0f}x faster than the trees' path-dependent values"))
    print(_row(f"100 look-up tables, bob_boost, {rows:,} rows", table_time, rows,
               f"{ours / table_time:.0f}x faster than the trees' path-dependent values"))
    print(_row(f"100 depth-6 trees, bob_boost, {few.shape[0]:,} rows", interventional, few.shape[0],
               f"largest difference from shap: {np.abs(chosen[:, :-1] - theirs).max():.1e}"))
    print(_row(f"100 depth-6 trees, shap TreeExplainer, {few.shape[0]:,} rows", shap_time, few.shape[0]))


if __name__ == "__main__":
    main()
