"""Training and prediction time of every path, for two checkouts side by side.

A refactoring must not slow any path down: this script times the same work
with the code of two checkouts (``--base`` and ``--new``, each a folder
holding ``bob_boost/``), interleaved (for each repeat, each path, each
checkout in turn), every measurement in a fresh process whose import is not
timed, and prints the fastest of ``--repeats`` runs per path and checkout,
their ratio and whether both checkouts produced the same predictions (a
checksum of the scores).

Paths: the generic trainer with stumps and look-up tables (MNIST 5 vs 6,
all ten digits with shared multi-variate LUTs), AdaBoostDB with both
selection rules and Cost-Sensitive AdaBoost (MNIST 5 vs 6), BAdaCost and
SAMME depth-2 trees (letter) and AdaBoost.M1 depth-6 trees (pendigits), the
three estimators' ``fit`` (letter: A-M against N-Z, and all 26 letters),
prediction of a 100-stump machine on 100 copies of the MNIST 5/6 test set,
and reading a gzip-compressed table (letter) five times as ``bob-boost``
does.

Usage::

    git worktree add /tmp/base <commit>
    python bench/bench_paths.py --base /tmp/base --new . [--repeats 5] [--paths stumps,lut]

Needs ``../shared/data`` (MNIST in bob's layout, the UCI sets) and scikit-learn.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"

PATHS = ("stumps", "lut", "lut_multi_shared", "adaboostdb_alpha", "adaboostdb_loss", "cost_sensitive",
         "badacost_tree", "samme_tree", "m1_tree", "sklearn_classifier", "sklearn_regressor", "sklearn_badacost",
         "predict_stumps", "read_table")


# -- the worker: one path, timed, in the checkout on sys.path ------------------------------------------
def _mnist(digits):
    from bob_boost import datasets

    data = datasets.load_mnist(SHARED / "mnist" / "mnist_data.hdf5", download=False)
    return data.subset(digits) if digits is not None else data


def _uci(name: str):
    import numpy as np

    from bob_boost import datasets  # noqa: F401  (the checkout's numpy settings)

    table = np.loadtxt(SHARED / "uci" / name / f"{name}.tsv.gz", delimiter="\t", skiprows=1)
    features, labels = table[:, :-1], table[:, -1]
    return features, np.unique(labels, return_inverse=True)[1]


def _work(path: str):
    """Return (a function doing the timed work, a function of its result giving a checksum)."""
    import numpy as np

    import bob_boost as bb

    def scores_sum(machine, features):
        # squares: the scores of margin-vector machines sum to zero in every row
        return float(np.sum(machine.decision_scores(features) ** 2))

    if path in ("stumps", "lut", "predict_stumps"):
        data = _mnist([5, 6])
        x, t = data.train_data, np.where(data.train_labels == 5, 1.0, -1.0)
        if path == "stumps":
            return (lambda: bb.Boosting(bb.StumpTrainer(), bb.ExponentialLoss()).train(x, t, 100),
                    lambda m: scores_sum(m, data.test_data))
        if path == "lut":
            return (lambda: bb.Boosting(bb.LUTTrainer(256), bb.LogitLoss()).train(x, t, 100),
                    lambda m: scores_sum(m, data.test_data))
        machine = bb.Boosting(bb.StumpTrainer(), bb.ExponentialLoss()).train(x, t, 100)
        test = np.tile(data.test_data, (100, 1))
        return (lambda: machine.decision_scores(test), lambda s: float(np.sum(s)))
    if path == "lut_multi_shared":
        data = _mnist(None)
        x = data.train_data
        t = np.where(data.train_labels[:, None] == np.arange(10), 1.0, -1.0)
        return (lambda: bb.Boosting(bb.LUTTrainer(256, 10, "shared"), bb.LogitLoss()).train(x, t, 20),
                lambda m: scores_sum(m, data.test_data))
    if path in ("adaboostdb_alpha", "adaboostdb_loss", "cost_sensitive"):
        data = _mnist([5, 6])
        x, t = data.train_data, np.where(data.train_labels == 5, 1.0, -1.0)
        trainer = (bb.CostSensitiveAdaBoostTrainer(1.0, 5.0) if path == "cost_sensitive"
                   else bb.AdaBoostDBTrainer(1.0, 5.0, selection=path.split("_")[1]))
        return lambda: trainer.train(x, t, 20), lambda m: scores_sum(m, data.test_data)
    if path in ("sklearn_classifier", "sklearn_regressor"):
        from bob_boost import sklearn as front

        x, y = _uci("letter")
        y = (y < 13).astype(int)  # letters A-M against N-Z
        if path == "sklearn_classifier":
            return (lambda: front.BoostingClassifier(loss="logit", n_estimators=100).fit(x, y),
                    lambda e: float(np.sum(e.decision_function(x))))
        target = x[:, 1] * 3.0 + 50.0
        return (lambda: front.BoostingRegressor(n_estimators=100).fit(x, target),
                lambda e: float(np.sum(e.predict(x))))
    if path in ("badacost_tree", "samme_tree", "m1_tree", "sklearn_badacost"):
        x, y = _uci("letter")
        k = int(y.max()) + 1
        if path == "sklearn_badacost":
            from bob_boost import sklearn as front

            return (lambda: front.BAdaCostClassifier(n_estimators=100, max_depth=2).fit(x, y),
                    lambda e: float(np.sum(e.decision_function(x) ** 2)))
        tree = bb.CostSensitiveTreeTrainer(max_depth=2)
        if path == "m1_tree":  # AdaBoost.M1 needs a weighted error below 1/2 from the start
            x, y = _uci("pendigits")
            k = int(y.max()) + 1
            tree = bb.CostSensitiveTreeTrainer(max_depth=6)
        if path == "badacost_tree":
            costs = 1.0 - np.eye(k)
            costs[0, 1:] = 3.0
            trainer = bb.BAdaCostTrainer(costs, weak_learner=tree, number_of_rounds=100)
        elif path == "samme_tree":
            trainer = bb.SAMMETrainer(weak_learner=tree, number_of_rounds=100)
        else:
            trainer = bb.AdaBoostM1Trainer(weak_learner=tree, number_of_rounds=100)
        return lambda: trainer.train(x, y), lambda m: scores_sum(m, x)
    if path == "read_table":
        try:
            from bob_boost.io.tables import read_table
        except ImportError:  # the layout before bob_boost.io existed
            from bob_boost.cli import read_table
        source = SHARED / "uci" / "letter" / "letter.tsv.gz"
        return (lambda: [read_table(source) for _ in range(5)][-1],
                lambda table: float(table.features.sum() + table.labels.sum()))
    raise ValueError(f"unknown path {path!r}")


def worker(path: str) -> None:
    work, checksum = _work(path)
    start = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - start
    rounds = len(getattr(result, "machine_", result)) if hasattr(getattr(result, "machine_", result), "weak_machines") \
        else None
    print(json.dumps({"seconds": seconds, "checksum": checksum(result), "rounds": rounds}))


# -- the driver ------------------------------------------------------------------------------------------
def measure(checkout: Path, path: str) -> dict:
    environment = dict(os.environ, PYTHONPATH=str(checkout))
    output = subprocess.run([sys.executable, __file__, "--worker", path], env=environment, check=True,
                            capture_output=True, text=True, cwd=checkout).stdout
    return json.loads(output.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--base", type=Path, help="checkout with the code before the change")
    parser.add_argument("--new", type=Path, default=ROOT, help="checkout with the code after the change")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--paths", default=",".join(PATHS))
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    if args.base is None:
        parser.error("--base is required")
    paths = args.paths.split(",")
    checkouts = {"base": args.base.resolve(), "new": args.new.resolve()}
    best: dict[tuple[str, str], float] = {}
    sums: dict[tuple[str, str], float] = {}
    for _ in range(args.repeats):
        for path in paths:
            for name, checkout in checkouts.items():
                result = measure(checkout, path)
                key = (path, name)
                best[key] = min(best.get(key, float("inf")), result["seconds"])
                sums[key] = (result["checksum"], result["rounds"])
    print(f"fastest of {args.repeats} runs, interleaved; base {checkouts['base']}, new {checkouts['new']}")
    print("| path | rounds | base s | new s | new / base | same scores |")
    print("|---|---:|---:|---:|---:|---|")
    for path in paths:
        base, new = best[(path, "base")], best[(path, "new")]
        same = sums[(path, "base")] == sums[(path, "new")]
        rounds = sums[(path, "new")][1]
        print(f"| {path} | {rounds if rounds is not None else '-'} | {base:.3f} | {new:.3f} | {new / base:.3f} | "
              f"{'yes' if same else 'NO'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
