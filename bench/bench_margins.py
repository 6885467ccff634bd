"""Margins of AdaBoost and arc-gv with decision stumps (the AdaBoost chapter's Figure 7.11, bottom).

Breiman's arc-gv raises the minimum margin ``min_i y_i F(x_i) / sum_t alpha_t``; Reyzin and Schapire found
that with stumps (whose complexity is fixed) AdaBoost's whole margin distribution is nonetheless better.
Data: scikit-learn's copy of the UCI Wisconsin diagnostic breast cancer set (569 tumours, 30 features;
the chapter's figure uses a UCI breast cancer set). Both models boost ``--rounds`` stumps on every sample:
AdaBoost ``Boosting(StumpTrainer(max_bins=None), ExponentialLoss())`` (the exact AdaBoost weight) and
arc-gv ``ArcGVTrainer(StumpTrainer(max_bins=None))``. Printed: the minimum margin, the margins' 5%, 10% and
50% quantiles, the training error, and the 5-fold cross-validated test error (stratified, seed 0) of each;
``--figure FILE.png`` draws the cumulative margin distributions.

Usage: ``python bench/bench_margins.py [--rounds 100 500] [--figure FILE.png]``.
"""
from __future__ import annotations

import argparse
import datetime

import numpy as np

from _machine import cpu_model  # bench/, beside this script


def _models(rounds: int):
    from bob_boost import ArcGVTrainer, Boosting, ExponentialLoss, StumpTrainer
    return {"AdaBoost": lambda X, y: Boosting(StumpTrainer(max_bins=None), ExponentialLoss()).train(X, y, rounds),
            "arc-gv": lambda X, y: ArcGVTrainer(StumpTrainer(max_bins=None)).train(X, y, rounds)}


def _margins(machine, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return y * machine.decision_scores(X)[:, 0] / np.abs(machine.weights).sum()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--figure", default=None)
    args = parser.parse_args()
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import StratifiedKFold
    X, labels = load_breast_cancer(return_X_y=True)
    y = np.where(labels == 1, 1.0, -1.0)
    print(f"# {datetime.date.today()}, {cpu_model()}; breast cancer (569 x 30), stumps")
    print("| rounds | model | stumps kept | minimum margin | 5% | 10% | median | training error | 5-fold test error |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    curves = {}
    for rounds in args.rounds:
        for name, train in _models(rounds).items():
            machine = train(X, y)
            margins = _margins(machine, X, y)
            errors = []
            for fit, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, labels):
                errors.append(np.mean(np.sign(train(X[fit], y[fit]).decision_scores(X[test])[:, 0]) != y[test]))
            q5, q10, q50 = np.quantile(margins, [0.05, 0.10, 0.5])
            print(f"| {rounds} | {name} | {len(machine)} | {margins.min():.4f} | {q5:.4f} | {q10:.4f} | {q50:.4f} | "
                  f"{np.mean(np.sign(machine.decision_scores(X)[:, 0]) != y):.4f} | {np.mean(errors):.4f} |",
                  flush=True)
            curves[(rounds, name)] = np.sort(margins)
    if args.figure:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        figure, axes = plt.subplots(figsize=(6, 4))
        for (rounds, name), margins in curves.items():
            axes.plot(margins, np.arange(1, margins.size + 1) / margins.size,
                      label=f"{name}, {rounds} stumps", linestyle="-" if name == "AdaBoost" else "--")
        axes.set_xlabel("normalised margin y F(x) / sum alpha")
        axes.set_ylabel("cumulative share of training samples")
        axes.set_title("AdaBoost and arc-gv with stumps, breast cancer")
        axes.legend()
        figure.tight_layout()
        figure.savefig(args.figure, dpi=100)
        print(f"wrote {args.figure}")


if __name__ == "__main__":
    main()
