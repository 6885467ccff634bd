"""Binary cost-sensitive boosting compared on UCI sets, after Nikolaou et al. ("Cost-sensitive boosting algorithms:
do we really need them?", Machine Learning 104, 2016), whose conclusion is that AdaBoost with calibrated
probabilities and the minimum-expected-cost threshold (calibrated AdaMEC) does as well as or better than the
cost-sensitive variants.

Protocol (this script's; the paper's own data sets, splits and normalisation were not available here): the
binary UCI sets credit-g, diabetes and ionosphere, and letter as the letter A against the others; on each
set the minority class is the positive one and a false negative costs ``k`` times a false positive, for
``k`` in 1, 2, 5 and 10 (``--ratios``). Stratified 5-fold cross-validation (seed 0); every algorithm boosts
100 decision stumps (``--rounds``) on the training folds. The score of a test fold is its normalised
cost ``(k FN + FP) / min(k P, N)``: the cost of the predictions over that of the better constant prediction
(below 1: better than predicting one class for every row). The tables give each algorithm's mean and
standard deviation over the folds, and its rank (1 is the lowest mean cost; ties share the mean rank) for each
set and ratio; the last table averages the ranks over every set and ratio at ``k > 1``.

The algorithms and their costs:

- AdaBoost: ``Boosting(StumpTrainer(), ExponentialLoss())``, the sign of its score (cost-blind);
- CGAda: the same with initial weights ``k`` on the positive rows (Landesa-Vazquez and Alba-Castro's
  cost-generalised AdaBoost);
- AdaMEC and AdaMEC (Platt): ``AdaMECClassifier(cost_positive=k, cost_negative=1)`` with ``calibration=None``
  (the exponential loss's link, ``sigmoid(2F)``) and its default ``"platt"`` (half the training rows held out to
  calibrate), both predicting the positive class where its probability exceeds ``1 / (1 + k)``;
- AdaC2, CSB0, CSB1, CSB2, AsymBoost (``T`` = the rounds), AdaBoostDB and Cost-Sensitive AdaBoost: costs
  ``(C_P, C_N) = (k, 1)``;
- AdaC1, AdaC3: ``(1, 1/k)`` (their costs must lie in (0, 1]);
- AdaCost: ``(0.1, 0.1/k)``: its step is positive only where a stump's edge exceeds the weighted mean cost, so at
  ``(1, 1/k)`` it stops at once; the column ``empty`` counts the folds where it still trained nothing.

Nothing is timed. Usage::

    python bench/bench_cost_binary.py [--data-dir ../shared/data] [--sets credit-g diabetes ionosphere letter] \
        [--ratios 1 2 5 10] [--rounds 100]

writes the tables to standard output (bench/results/cost_binary_epyc-zen4.log holds a run).
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import platform
import warnings
from pathlib import Path

import numpy as np
import scipy.stats

from _machine import cpu_model  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
SETS = ("credit-g", "diabetes", "ionosphere", "letter")
#: Multi-class sets made binary: this class (its position among the sorted labels) against the others.
ONE_AGAINST_REST = {"letter": 0}
RATIOS = (1, 2, 5, 10)
FOLDS = 5


def _load(data_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and targets in {-1, +1}, +1 the minority class."""
    with gzip.open(data_dir / "uci" / name / f"{name}.tsv.gz", "rt") as handle:
        handle.readline()
        table = np.loadtxt(handle, delimiter="\t")
    labels, indices = np.unique(table[:, -1], return_inverse=True)
    if name in ONE_AGAINST_REST:
        labels, indices = labels[:2], (indices == ONE_AGAINST_REST[name]).astype(np.int64)
    if labels.size != 2:
        raise SystemExit(f"{name}: {labels.size} classes; this comparison is binary")
    minority = int(np.argmin(np.bincount(indices)))
    return table[:, :-1], np.where(indices == minority, 1.0, -1.0)


def _algorithms(k: float, rounds: int) -> dict:
    """Every algorithm as ``fit(X, y) -> predict(X) -> +-1``, at the cost ratio ``k``."""
    import bob_boost as bb
    from bob_boost.sklearn import AdaMECClassifier

    def trainer(make):
        def fit(X, y):
            machine = make().train(X, y, rounds)
            return lambda Z: np.where(machine.decision_scores(Z)[:, 0] > 0, 1.0, -1.0), len(machine)
        return fit

    def weighted_adaboost(X, y):
        machine = bb.Boosting(bb.StumpTrainer(), bb.ExponentialLoss()).train(X, y, rounds,
                                                                             sample_weight=np.where(y > 0, k, 1.0))
        return lambda Z: np.where(machine.decision_scores(Z)[:, 0] > 0, 1.0, -1.0), len(machine)

    def adamec(calibration):
        def fit(X, y):
            estimator = AdaMECClassifier(cost_positive=k, cost_negative=1.0, n_estimators=rounds,
                                         calibration=calibration, random_state=0).fit(X, y)
            return lambda Z: estimator.predict(Z), len(estimator.machine_)
        return fit

    return {
        "AdaBoost": trainer(lambda: bb.Boosting(bb.StumpTrainer(), bb.ExponentialLoss())),
        "CGAda": weighted_adaboost,
        "AdaMEC": adamec(None),
        "AdaMEC (Platt)": adamec("platt"),
        "AdaC1": trainer(lambda: bb.AdaC1Trainer(1.0, 1.0 / k)),
        "AdaC2": trainer(lambda: bb.AdaC2Trainer(k, 1.0)),
        "AdaC3": trainer(lambda: bb.AdaC3Trainer(1.0, 1.0 / k)),
        "AdaCost": trainer(lambda: bb.AdaCostTrainer(0.1, 0.1 / k)),
        "CSB0": trainer(lambda: bb.CSB0Trainer(k, 1.0)),
        "CSB1": trainer(lambda: bb.CSB1Trainer(k, 1.0)),
        "CSB2": trainer(lambda: bb.CSB2Trainer(k, 1.0)),
        "AsymBoost": trainer(lambda: bb.AsymBoostTrainer(k, 1.0, asymmetry_rounds=rounds)),
        "AdaBoostDB": trainer(lambda: bb.AdaBoostDBTrainer(k, 1.0)),
        "CS-AdaBoost": trainer(lambda: bb.CostSensitiveAdaBoostTrainer(k, 1.0)),
    }


def _normalised_cost(y: np.ndarray, predicted: np.ndarray, k: float) -> float:
    false_negatives = np.sum((y > 0) & (predicted < 0))
    false_positives = np.sum((y < 0) & (predicted > 0))
    return float((k * false_negatives + false_positives) / min(k * np.sum(y > 0), np.sum(y < 0)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--sets", nargs="+", default=list(SETS))
    parser.add_argument("--ratios", nargs="+", type=float, default=list(RATIOS))
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    from sklearn.model_selection import StratifiedKFold

    print(f"# bench_cost_binary: {datetime.date.today()}, {cpu_model()}, Python {platform.python_version()}; "
          f"{FOLDS}-fold stratified CV (seed 0), {args.rounds} stumps")
    ranks: dict[str, list[float]] = {}
    for name in args.sets:
        X, y = _load(args.data_dir, name)
        print(f"\n## {name}: {y.size} rows, {X.shape[1]} features, {int(np.sum(y > 0))} positive (minority)")
        folds = list(StratifiedKFold(FOLDS, shuffle=True, random_state=0).split(X, y))
        for k in args.ratios:
            costs: dict[str, list[float]] = {}
            empty: dict[str, int] = {}
            for train, test in folds:
                for algorithm, fit in _algorithms(k, args.rounds).items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # an empty machine's warning: counted below
                        predict, size = fit(X[train], y[train])
                    costs.setdefault(algorithm, []).append(_normalised_cost(y[test], predict(X[test]), k))
                    empty[algorithm] = empty.get(algorithm, 0) + (size == 0)
            means = {algorithm: float(np.mean(values)) for algorithm, values in costs.items()}
            order = scipy.stats.rankdata(list(means.values()))
            print(f"\n### {name}, k = {k:g}\n\n| algorithm | normalised cost | rank | empty |\n|---|---:|---:|---:|")
            for (algorithm, values), rank in zip(costs.items(), order):
                print(f"| {algorithm} | {np.mean(values):.3f} ({np.std(values):.3f}) | {rank:g} | {empty[algorithm]} |")
                if k > 1:
                    ranks.setdefault(algorithm, []).append(float(rank))
    if ranks:
        conditions = len(next(iter(ranks.values())))
        print(f"\n## Average rank over {conditions} set and ratio conditions with k > 1\n\n| algorithm | average rank |"
              f"\n|---|---:|")
        for algorithm, values in sorted(ranks.items(), key=lambda item: np.mean(item[1])):
            print(f"| {algorithm} | {np.mean(values):.2f} |")


if __name__ == "__main__":
    main()
