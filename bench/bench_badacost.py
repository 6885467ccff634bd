"""BAdaCost vs SAMME vs scikit-learn's AdaBoostClassifier on the UCI sets of the BAdaCost paper.

Protocol (after the paper's Table 1): stratified k-fold cross validation;
in every fold

1. SAMME (``bob_boost.trainers.badacost.SAMMETrainer``) is trained on the
   training part;
2. the imbalance cost matrix (``bob_boost.costs.imbalance_cost_matrix``) is
   built from SAMME's confusions on that training part -- a 0|1 model, as
   the paper's appendix F prescribes -- with ``--smoothing`` pseudo-counts
   and scale ``--cost-scale``;
3. BAdaCost with that matrix and scikit-learn's ``AdaBoostClassifier``
   (SAMME, ``DecisionTreeClassifier(max_depth=--depth)``) are trained on the
   same part;
4. all three are scored on the held-out part with the fold's cost matrix:
   average misclassification cost ``1/N sum_n C[l_n, H(x_n)]`` and accuracy.

All models use ``--rounds`` rounds of trees of depth ``--depth``. The
table reports the mean (and standard deviation) over folds and the mean
training seconds of each method (BAdaCost's time excludes the SAMME run
that provides its costs).

Usage::

    python bench/bench_badacost.py [--rounds 100] [--folds 5] [--depth 2] \
        [--datasets car,krkopt,cmc,letter,shuttle,optdigits,pendigits] [--markdown results.md]
"""
from __future__ import annotations

import argparse
import gzip
import platform
import time
from pathlib import Path

import numpy as np
import sklearn
from sklearn.ensemble import AdaBoostClassifier
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from bob_boost.costs import imbalance_cost_matrix
from bob_boost.trainers.badacost import BAdaCostTrainer, SAMMETrainer
from bob_boost.weak_trainers.multiclass import CostSensitiveTreeTrainer

UCI = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "uci"
DATASETS = ("car", "krkopt", "cmc", "letter", "shuttle", "optdigits", "pendigits")
METHODS = ("BAdaCost", "SAMME", "sklearn")


def load(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels (re-coded to 0..K-1) of a UCI set."""
    with gzip.open(UCI / name / f"{name}.tsv.gz", "rt") as stream:
        table = np.loadtxt(stream, delimiter="\t", skiprows=1)
    return table[:, :-1], np.unique(table[:, -1], return_inverse=True)[1]


def timed(function, *args):
    """Result of ``function(*args)`` and the seconds it took."""
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def run_dataset(name: str, args: argparse.Namespace) -> dict[str, dict[str, list[float]]]:
    """Per-method lists over folds of cost, accuracy and training seconds."""
    features, labels = load(name)
    results = {method: {"cost": [], "accuracy": [], "seconds": []} for method in METHODS}
    folds = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed)
    for fold, (train, test) in enumerate(folds.split(features, labels)):
        k = int(labels.max()) + 1
        tree = CostSensitiveTreeTrainer(max_depth=args.depth)
        samme, samme_seconds = timed(
            SAMMETrainer(tree, args.rounds, number_of_classes=k).train, features[train], labels[train])
        costs = imbalance_cost_matrix(labels[train], samme.predict(features[train]), k,
                                      scale=args.cost_scale, smoothing=args.smoothing)
        badacost, badacost_seconds = timed(
            BAdaCostTrainer(costs, tree, args.rounds).train, features[train], labels[train])
        reference = AdaBoostClassifier(DecisionTreeClassifier(max_depth=args.depth), n_estimators=args.rounds,
                                       random_state=args.seed)
        _, sklearn_seconds = timed(reference.fit, features[train], labels[train])
        predictions = {"BAdaCost": badacost.predict(features[test]), "SAMME": samme.predict(features[test]),
                       "sklearn": reference.predict(features[test])}
        seconds = {"BAdaCost": badacost_seconds, "SAMME": samme_seconds, "sklearn": sklearn_seconds}
        for method in METHODS:
            results[method]["cost"].append(float(costs[labels[test], predictions[method]].mean()))
            results[method]["accuracy"].append(float(np.mean(predictions[method] == labels[test])))
            results[method]["seconds"].append(seconds[method])
        print(f"  {name} fold {fold + 1}/{args.folds}: " + ", ".join(
            f"{m} cost {results[m]['cost'][-1] * 1e4:.1f}e-4 acc {results[m]['accuracy'][-1]:.4f} "
            f"{results[m]['seconds'][-1]:.2f}s" for m in METHODS), flush=True)
    return results


def table(all_results: dict[str, dict], sizes: dict[str, tuple[int, int]]) -> str:
    """Markdown table of the averaged results."""
    lines = ["| data set | N | K | avg. cost x1e-4: BAdaCost | SAMME | sklearn | accuracy %: BAdaCost | SAMME "
             "| sklearn | train s: BAdaCost | SAMME | sklearn |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, results in all_results.items():
        n, k = sizes[name]
        cost = [f"{np.mean(results[m]['cost']) * 1e4:.2f} (±{np.std(results[m]['cost']) * 1e4:.2f})"
                for m in METHODS]
        accuracy = [f"{np.mean(results[m]['accuracy']) * 100:.2f}" for m in METHODS]
        seconds = [f"{np.mean(results[m]['seconds']):.2f}" for m in METHODS]
        lines.append(f"| {name} | {n} | {k} | " + " | ".join(cost + accuracy + seconds) + " |")
    return "\n".join(lines)


def main() -> None:
    """Parse the options, run every data set, print (and optionally write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100, help="boosting rounds of every method")
    parser.add_argument("--folds", type=int, default=5, help="number of stratified folds")
    parser.add_argument("--depth", type=int, default=2, help="tree depth of every method")
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated UCI set names")
    parser.add_argument("--cost-scale", type=float, default=0.1, help="lambda of the imbalance cost matrix")
    parser.add_argument("--smoothing", type=float, default=1.0,
                        help="pseudo-count added to every off-diagonal confusion before normalising")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fold split and of scikit-learn")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    names = [name.strip() for name in args.datasets.split(",") if name.strip()]
    unknown = sorted(set(names) - set(DATASETS))
    if unknown:
        parser.error(f"unknown data set(s) {unknown}; choose from {list(DATASETS)}")
    settings = (f"rounds={args.rounds}, folds={args.folds}, depth={args.depth}, cost scale={args.cost_scale}, "
                f"smoothing={args.smoothing}, seed={args.seed}; Python {platform.python_version()}, "
                f"numpy {np.__version__}, scikit-learn {sklearn.__version__}")
    print(settings, flush=True)
    all_results, sizes = {}, {}
    for name in names:
        features, labels = load(name)
        sizes[name] = (features.shape[0], int(labels.max()) + 1)
        all_results[name] = run_dataset(name, args)
    output = table(all_results, sizes)
    print(output)
    if args.markdown is not None:
        args.markdown.write_text(f"Settings: {settings}\n\n{output}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
