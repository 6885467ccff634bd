"""Categorical splits on the UCI sets that are mostly categories: bob_boost beside LightGBM, and against codes
split by order and one-hot columns.

Data: car, cmc, credit-g and krkopt from ``../shared/data/uci`` (integer-coded categories; a feature is
categorical where the set's ``metadata.yaml`` says ``type: categorical``). Every model boosts 100 rounds of
31-leaf trees grown leaf-wise at learning rate 0.1 on 2 threads, with the logistic loss for two classes and
the softmax for more:

- ``bob_boost, categorical``: ``BoostingClassifier(weak_learner="tree", loss=..., n_estimators=100,
  early_stopping=False, categorical_features=<the categorical columns>)``;
- ``bob_boost, codes by order``: the same with ``categorical_features=None`` (codes split as numbers);
- ``bob_boost, one-hot``: the same on ``sklearn.preprocessing.OneHotEncoder`` columns of the categorical
  features (the encoder fitted on the training fold, unknown categories ignored);
- ``bob_boost, defaults``: ``BoostingClassifier(weak_learner="tree", categorical_features=...)`` with every
  other parameter at its default (for two classes the exponential loss; early stopping on 10% of the rows
  above 10,000 samples);
- ``LightGBM, categorical``: ``LGBMClassifier(n_estimators=100, num_leaves=31, learning_rate=0.1, n_jobs=2)``
  fitted with ``categorical_feature=<the categorical columns>`` (its defaults ``max_cat_to_onehot=4``,
  ``cat_smooth=10``, ``cat_l2=10``, ``max_cat_threshold=32``, ``min_data_per_group=100``, which bob_boost's
  trees share);
- ``LightGBM, codes by order``: the same without ``categorical_feature``;
- ``bob_boost SAMME trees, categorical`` and ``..., codes by order``: the cost-sensitive multi-class trees,
  ``BAdaCostClassifier(n_estimators=100, early_stopping=False, categorical_features=...)`` (depth-2 trees,
  SAMME's costs: every other parameter at its default), with the categorical columns and with None.

The table gives the mean held-out accuracy over 5 stratified folds (seed 0) and the total fit time of the 5
folds, fastest of ``--repeats`` (the models interleaved, after one untimed fit of each).

Usage::

    python bench/bench_categorical.py [--repeats 3] [--data-dir DIR] [--sets car cmc credit-g krkopt]
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import re
import time
from pathlib import Path

import numpy as np

from _machine import cpu_model  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
SETS = ("car", "cmc", "credit-g", "krkopt")


def _load(data_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray, list[int]]:
    folder = data_dir / "uci" / name
    with gzip.open(folder / f"{name}.tsv.gz", "rt") as handle:
        names = handle.readline().rstrip("\n").split("\t")[:-1]
        table = np.loadtxt(handle, delimiter="\t")
    # metadata.yaml lists "- name: <feature>" then "  type: <kind>" for every feature (and the target)
    kinds = dict(re.findall(r"- name: (.+)\n\s+type: (\w+)", (folder / "metadata.yaml").read_text()))
    categorical = [j for j, feature in enumerate(names) if kinds.get(feature) == "categorical"]
    labels = np.unique(table[:, -1], return_inverse=True)[1]
    return table[:, :-1], labels, categorical


def _models(categorical: list[int], classes: int) -> dict:
    import lightgbm
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from bob_boost.sklearn import BAdaCostClassifier, BoostingClassifier

    loss = "logit" if classes == 2 else "softmax"
    ours = dict(weak_learner="tree", loss=loss, n_estimators=100, early_stopping=False, n_threads=2)
    theirs = dict(n_estimators=100, num_leaves=31, learning_rate=0.1, n_jobs=2, verbose=-1)

    def one_hot():
        encoder = ColumnTransformer([("categories", OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                                      categorical)], remainder="passthrough")
        return make_pipeline(encoder, BoostingClassifier(**ours))

    class LightGBMCategorical(lightgbm.LGBMClassifier):
        def fit(self, X, y):
            return super().fit(X, y, categorical_feature=categorical)

    return {
        "bob_boost, categorical": lambda: BoostingClassifier(categorical_features=categorical, **ours),
        "bob_boost, codes by order": lambda: BoostingClassifier(categorical_features=None, **ours),
        "bob_boost, one-hot": one_hot,
        "bob_boost, defaults": lambda: BoostingClassifier(weak_learner="tree", categorical_features=categorical),
        "LightGBM, categorical": lambda: LightGBMCategorical(**theirs),
        "LightGBM, codes by order": lambda: lightgbm.LGBMClassifier(**theirs),
        "bob_boost SAMME trees, categorical": lambda: BAdaCostClassifier(n_estimators=100, early_stopping=False,
                                                                         categorical_features=categorical),
        "bob_boost SAMME trees, codes by order": lambda: BAdaCostClassifier(n_estimators=100, early_stopping=False,
                                                                            categorical_features=None),
    }


def _run(X: np.ndarray, y: np.ndarray, categorical: list[int], repeats: int) -> dict:
    from sklearn.model_selection import StratifiedKFold

    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    models = _models(categorical, int(y.max()) + 1)
    for make in models.values():  # compile and warm up
        make().fit(X[folds[0][0]], y[folds[0][0]])
    results = {name: [np.inf, 0.0] for name in models}
    for _ in range(repeats):
        for name, make in models.items():
            fitted, start = [], time.perf_counter()
            for train, _test in folds:
                fitted.append(make().fit(X[train], y[train]))
            results[name][0] = min(results[name][0], time.perf_counter() - start)
            results[name][1] = float(np.mean([np.mean(model.predict(X[test]) == y[test])
                                              for model, (_train, test) in zip(fitted, folds)]))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    args = parser.parse_args()
    print(f"# {datetime.date.today()}, {cpu_model()}; 5 stratified folds (seed 0), fastest of {args.repeats}")
    print("| set | rows | categorical / features | model | accuracy | fit time of 5 folds (s) |")
    print("|---|---:|---:|---|---:|---:|")
    for name in args.sets:
        X, y, categorical = _load(args.data_dir, name)
        for model, (seconds, accuracy) in _run(X, y, categorical, args.repeats).items():
            print(f"| {name} | {X.shape[0]} | {len(categorical)} / {X.shape[1]} | {model} | {accuracy:.4f} | "
                  f"{seconds:.3f} |", flush=True)


if __name__ == "__main__":
    main()
