"""Boosting from the class prior against bob's model without intercept, on the binary UCI sets.

Each data set is split by 5-fold stratified cross-validation (seed 0); in every fold
``BoostingClassifier`` is fitted with ``boost_from_average=True`` (the default) and ``False`` (bob's model),
for stumps (the default: exponential loss, 100 rounds) and gradient trees (``weak_learner="tree",
loss="logit"``, 100 rounds), once with ``class_weight=None`` and once with ``class_weight="balanced"``. The
table gives the mean held-out accuracy, balanced accuracy and log-loss (of ``predict_proba``, clipped to
[1e-15, 1 - 1e-15]) over the folds. The sets are ``../shared/data/uci/<name>/<name>.tsv.gz``; pendigits and
letter are made binary as one class against the others (digit 3; class 1, the letter A).

Usage::

    python bench/bench_class_prior.py [--data-dir DIR] [--sets credit-g diabetes ...]
"""
from __future__ import annotations

import argparse
import datetime
import gzip
from pathlib import Path

import numpy as np

from _machine import cpu_model  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
SETS = ("credit-g", "diabetes", "ionosphere", "pendigits", "letter")
#: The sets with more than two classes, and the class that is the positive one.
ONE_AGAINST_REST = {"pendigits": 3, "letter": 1}
LEARNERS = {"stumps": {}, "trees": {"weak_learner": "tree", "loss": "logit"}}


def _load(data_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
    with gzip.open(data_dir / "uci" / name / f"{name}.tsv.gz", "rt") as handle:
        handle.readline()
        table = np.loadtxt(handle, delimiter="\t")
    X, y = table[:, :-1], table[:, -1]
    if name in ONE_AGAINST_REST:
        y = y == ONE_AGAINST_REST[name]
    return X, np.unique(y, return_inverse=True)[1]


def _scores(model, X, y) -> tuple[float, float, float]:
    from sklearn.metrics import balanced_accuracy_score, log_loss

    predicted = model.predict(X)
    probabilities = np.clip(model.predict_proba(X)[:, 1], 1e-15, 1 - 1e-15)
    return (float(np.mean(predicted == y)), float(balanced_accuracy_score(y, predicted)),
            float(log_loss(y, probabilities, labels=[0, 1])))


def main() -> None:
    from sklearn.model_selection import StratifiedKFold

    from bob_boost.sklearn import BoostingClassifier

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--sets", nargs="+", default=list(SETS))
    args = parser.parse_args()
    print(f"# {datetime.date.today()}, {cpu_model()}; 5-fold stratified CV, mean over folds")
    print("| set | learner | class_weight | accuracy (prior / bob) | balanced accuracy (prior / bob) "
          "| log-loss (prior / bob) |")
    print("|---|---|---|---|---|---|")
    for name in args.sets:
        X, y = _load(args.data_dir, name)
        folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
        for learner, options in LEARNERS.items():
            for class_weight in (None, "balanced"):
                results = {}
                for prior in (True, False):
                    per_fold = [_scores(BoostingClassifier(n_estimators=100, class_weight=class_weight,
                                                           boost_from_average=prior, **options).fit(X[a], y[a]),
                                        X[b], y[b]) for a, b in folds]
                    results[prior] = np.mean(per_fold, axis=0)
                cells = " | ".join(f"{results[True][i]:.4f} / {results[False][i]:.4f}" for i in range(3))
                print(f"| {name} ({y.size}, {np.mean(y):.0%} positive) | {learner} | {class_weight} | {cells} |",
                      flush=True)


if __name__ == "__main__":
    main()
