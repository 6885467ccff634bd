"""Every estimator with its defaults against LightGBM's, XGBoost's and scikit-learn's defaults.

On each UCI set in ``../shared/data/uci`` (70/30 split after a permutation by ``numpy.random.default_rng(0)``,
the split ``tests/test_descent.py`` uses), every classifier is fitted with every argument at its default, except
where a default cannot fit the data, which the table says: bob_boost's ``BoostingClassifier()`` boosts stumps,
which are binary, and ``weak_learner="tree"`` is the one argument given for the gradient-tree rows. Held-out
accuracy and fit time (fastest of ``--repeats``, all fits of one set interleaved) are printed as one table,
with each set's best peer and the gap of bob_boost's best default to it.

Usage: ``python bench/bench_defaults.py [--repeats 3] [--rounds N] [--sets car,cmc,...]``; ``--rounds N`` sets
every library's number of rounds to N (the defaults are 100 everywhere but scikit-learn's AdaBoost, 50).
"""
from __future__ import annotations

import argparse
import gzip
import time
import warnings
from pathlib import Path

import numpy as np

from _machine import cpu_model  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
UCI = ROOT.parent / "shared" / "data" / "uci"
GRADIENT_TREES = "BoostingClassifier(weak_learner='tree', loss='softmax')"
SETS = ("car", "cmc", "credit-g", "diabetes", "ionosphere", "krkopt", "letter", "optdigits", "pendigits",
        "shuttle")


def load(name: str):
    with gzip.open(UCI / name / f"{name}.tsv.gz", "rt") as stream:
        table = np.loadtxt(stream, delimiter="\t", skiprows=1)
    features, labels = table[:, :-1], np.unique(table[:, -1], return_inverse=True)[1]
    order = np.random.default_rng(0).permutation(labels.size)
    cut = int(0.7 * labels.size)
    return features[order[:cut]], labels[order[:cut]], features[order[cut:]], labels[order[cut:]]


def estimators(classes: int, rounds: int | None):
    """(name, library, factory or None with the reason it cannot run) for one data set."""
    import lightgbm
    import xgboost
    from sklearn.ensemble import AdaBoostClassifier, HistGradientBoostingClassifier

    from bob_boost.sklearn import AdaBoostDBClassifier, BAdaCostClassifier, BoostingClassifier

    n = {} if rounds is None else {"n_estimators": rounds}
    hgb = {} if rounds is None else {"max_iter": rounds}
    binary = classes == 2
    return [
        ("BoostingClassifier()", "bob_boost",
         (lambda: BoostingClassifier(**n)) if binary else "stumps are binary"),
        ("BoostingClassifier(weak_learner='tree')", "bob_boost", lambda: BoostingClassifier(weak_learner="tree", **n)),
        ("BoostingClassifier(weak_learner='tree', loss='softmax')", "bob_boost",
         lambda: BoostingClassifier(weak_learner="tree", loss="softmax", **n)),
        ("AdaBoostDBClassifier()", "bob_boost", (lambda: AdaBoostDBClassifier(**n)) if binary else "binary only"),
        ("BAdaCostClassifier()", "bob_boost", lambda: BAdaCostClassifier(**n)),
        ("LGBMClassifier()", "lightgbm", lambda: lightgbm.LGBMClassifier(verbose=-1, **n)),
        ("XGBClassifier()", "xgboost", lambda: xgboost.XGBClassifier(**n)),
        ("HistGradientBoostingClassifier()", "scikit-learn", lambda: HistGradientBoostingClassifier(**hgb)),
        ("AdaBoostClassifier()", "scikit-learn", lambda: AdaBoostClassifier(**n)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--sets", default=",".join(SETS))
    args = parser.parse_args()
    import lightgbm
    import sklearn
    import xgboost

    import bob_boost
    cpu = cpu_model()
    print(f"# {time.strftime('%Y-%m-%d')}, {cpu}, {len(__import__('os').sched_getaffinity(0))} cores; bob_boost "
          f"{bob_boost.__version__}, lightgbm {lightgbm.__version__}, xgboost {xgboost.__version__}, "
          f"scikit-learn {sklearn.__version__}, numpy {np.__version__}; rounds: "
          f"{'defaults' if args.rounds is None else args.rounds}, fastest of {args.repeats}")
    print("| data set | estimator | held-out accuracy | fit seconds |")
    print("|---|---|---:|---:|")
    gaps = []
    for name in args.sets.split(","):
        x, y, x_test, y_test = load(name)
        rows = estimators(int(y.max()) + 1, args.rounds)
        best_time: dict[str, float] = {}
        accuracy: dict[str, float] = {}
        for _ in range(args.repeats):
            for label, _library, factory in rows:
                if isinstance(factory, str):
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    start = time.perf_counter()
                    model = factory().fit(x, y)
                    seconds = time.perf_counter() - start
                accuracy[label] = float(np.mean(model.predict(x_test) == y_test))
                best_time[label] = min(best_time.get(label, np.inf), seconds)
        for label, _library, factory in rows:
            if isinstance(factory, str):
                print(f"| {name} | {label} | n/a ({factory}) | |")
            else:
                print(f"| {name} | {label} | {100 * accuracy[label]:.2f}% | {best_time[label]:.2f} |")
        ours = max(accuracy[label] for label, library, _ in rows if library == "bob_boost" and label in accuracy)
        peer, best = max(((accuracy[label], label) for label, library, _ in rows if library != "bob_boost"))
        gaps.append((name, best, 100 * (accuracy[GRADIENT_TREES] - peer), 100 * (ours - peer)))
    print()
    print(f"| data set | best peer | {GRADIENT_TREES} minus it (points) | bob_boost's best default minus it |")
    print("|---|---|---:|---:|")
    for name, best, trees, ours in gaps:
        print(f"| {name} | {best} | {trees:+.2f} | {ours:+.2f} |")


if __name__ == "__main__":
    main()
