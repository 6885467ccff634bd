"""A monotone credit model: accuracy and time of monotone constraints against free trees, bob_boost beside LightGBM.

UCI credit-g (``../shared/data/uci/credit-g``; 1,000 applicants, target 1 = good credit): the chance of good
credit is constrained to fall with the loan's ``duration``, ``credit_amount`` and ``installment_commitment``
and to rise with ``age``. Each model is boosted 100 rounds of 31-leaf trees grown leaf-wise, learning rate
0.1, 2 threads: ``BoostingClassifier(weak_learner="tree", loss="logit", n_estimators=100,
early_stopping=False, monotonic_cst=...)`` (bob_boost's basic method) and ``LGBMClassifier(n_estimators=100,
monotone_constraints=..., monotone_constraints_method="basic")``, each also without constraints. The table
gives the mean held-out accuracy and log-loss over 5 stratified folds (seed 0), and the total fit time of the
5 folds, fastest of ``--repeats`` (the configurations interleaved, after one untimed fit of each).

Usage::

    python bench/bench_monotone.py [--repeats 3] [--data-dir DIR]
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import time
from pathlib import Path

import numpy as np

from _machine import cpu_model  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
DIRECTIONS = {"duration": -1, "credit_amount": -1, "installment_commitment": -1, "age": 1}


def _credit(data_dir: Path):
    with gzip.open(data_dir / "uci" / "credit-g" / "credit-g.tsv.gz", "rt") as handle:
        names = handle.readline().rstrip("\n").split("\t")[:-1]
        table = np.loadtxt(handle, delimiter="\t")
    constraints = [DIRECTIONS.get(name, 0) for name in names]
    return table[:, :-1], table[:, -1].astype(int), constraints


def _models(constraints):
    import lightgbm
    from bob_boost.sklearn import BoostingClassifier

    ours = dict(weak_learner="tree", loss="logit", n_estimators=100, early_stopping=False, n_threads=2)
    theirs = dict(n_estimators=100, num_leaves=31, learning_rate=0.1, n_jobs=2, verbose=-1)
    return {
        "bob_boost, free": lambda: BoostingClassifier(**ours),
        "bob_boost, monotone": lambda: BoostingClassifier(monotonic_cst=constraints, **ours),
        "LightGBM, free": lambda: lightgbm.LGBMClassifier(**theirs),
        "LightGBM, monotone (basic)": lambda: lightgbm.LGBMClassifier(
            monotone_constraints=constraints, monotone_constraints_method="basic", **theirs),
    }


def main() -> None:
    from sklearn.metrics import log_loss
    from sklearn.model_selection import StratifiedKFold

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    X, y, constraints = _credit(args.data_dir)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    models = _models(constraints)
    for make in models.values():  # compile and warm up
        make().fit(X[:200], y[:200])
    times = {name: np.inf for name in models}
    scores = {}
    for _ in range(args.repeats):
        for name, make in models.items():
            fitted, start = [], time.perf_counter()
            for train, _test in folds:
                fitted.append(make().fit(X[train], y[train]))
            times[name] = min(times[name], time.perf_counter() - start)
            scores[name] = [(np.mean(model.predict(X[test]) == y[test]),
                             log_loss(y[test], model.predict_proba(X[test])[:, 1], labels=[0, 1]))
                            for model, (_train, test) in zip(fitted, folds)]
    print(f"# {datetime.date.today()}, {cpu_model()}; credit-g, 5 stratified folds, constraints "
          f"{ {k: v for k, v in DIRECTIONS.items()} }")
    print("| model | accuracy | log-loss | fit time of 5 folds (s) |")
    print("|---|---:|---:|---:|")
    for name in models:
        accuracy, loss = np.mean(scores[name], axis=0)
        print(f"| {name} | {accuracy:.4f} | {loss:.4f} | {times[name]:.3f} |")


if __name__ == "__main__":
    main()
