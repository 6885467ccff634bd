"""The regression losses against LightGBM's objectives: held-out metric and training time, side by side.

Each case trains 100 rounds of 31-leaf trees grown leaf-wise at learning rate 0.1 on 2 threads:

- bob_boost ``BoostingRegressor(weak_learner="tree", loss=..., n_threads=2, early_stopping=False)`` (the
  tree options are the defaults: 31 leaves leaf-wise, 20 samples a leaf, 256 bins; the learning rate's
  default for trees is 0.1), with LightGBM's objective where ours has its parameter (Poisson:
  ``poisson_max_delta_step=0.7``, LightGBM's default, whose hessian is ``exp(0.7)`` times the true one), and
  with every default of ours (``early_stopping="auto"``, which holds out 10% above 10,000 samples; Poisson:
  the true hessian);
- LightGBM ``LGBMRegressor(objective=..., n_estimators=100, learning_rate=0.1, num_leaves=31, n_jobs=2)``
  (its defaults: 20 samples a leaf, 255 bins, ``boost_from_average``).

The cases:

- ``huber-diabetes``: scikit-learn's diabetes data (442 rows; a seeded quarter held out), Huber with
  ``delta = alpha = 1.0``, RMSE;
- ``quantile-0.1`` / ``-0.5`` / ``-0.9``: 30,000 synthetic rows with noise that grows with a feature (10,000
  held out), the pinball loss and the share of held-out targets at or below the prediction (coverage);
- ``poisson-synthetic``: 70,000 counts of a known log-linear rate (20,000 held out), mean Poisson deviance;
- ``poisson-cmc``: the UCI cmc survey's number of children ever born from the other attributes (1,473
  rows, a seeded quarter held out; ``../shared/data/uci``), mean Poisson deviance;
- ``gamma-synthetic``: 40,000 Gamma targets of a known log-linear mean (10,000 held out), mean Gamma deviance.

Times are the fastest of ``--repeats`` fits, the libraries interleaved in one process, after one untimed fit
of each (compilation and imports stay out).

Usage::

    python bench/bench_losses.py [--repeats 3] [--cases huber-diabetes,poisson-synthetic] [--data-dir DIR]
"""
from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

import numpy as np

from _machine import cpu_model  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]



def _split(features, targets, held_out, seed=0):
    order = np.random.default_rng(seed).permutation(targets.size)
    test, train = order[:held_out], order[held_out:]
    return features[train], targets[train], features[test], targets[test]


def _diabetes(_):
    from sklearn.datasets import load_diabetes
    features, targets = load_diabetes(return_X_y=True)
    return _split(features, targets, targets.size // 4)


def _heteroscedastic(_):
    rng = np.random.default_rng(1)
    features = rng.uniform(-2, 2, size=(30_000, 6))
    targets = features[:, 0] + 0.5 * np.sin(3 * features[:, 2]) + (0.3 + np.abs(features[:, 1])) * rng.normal(
        size=30_000)
    return _split(features, targets, 10_000)


def _counts(_):
    rng = np.random.default_rng(2)
    features = rng.normal(size=(70_000, 8))
    rate = np.exp(0.3 * features[:, 0] - 0.2 * features[:, 1] + 0.4 * np.sin(features[:, 2]) + 0.1)
    return _split(features, rng.poisson(rate).astype(np.float64), 20_000)


def _cmc(data_dir):
    path = Path(data_dir) / "uci" / "cmc" / "cmc.tsv.gz"
    with gzip.open(path, "rt") as handle:
        header = handle.readline().rstrip("\n").split("\t")
        table = np.loadtxt(handle, delimiter="\t")
    column = header.index("Number_of_children_ever_born")
    features = np.delete(table, [column, len(header) - 1], axis=1)  # the class label is not a feature here
    return _split(features, table[:, column], table.shape[0] // 4)


def _gamma(_):
    rng = np.random.default_rng(3)
    features = rng.normal(size=(40_000, 8))
    mean = np.exp(0.4 * features[:, 0] - 0.3 * features[:, 3] + 0.2 * features[:, 5] ** 2)
    return _split(features, rng.gamma(2.0, mean / 2.0), 10_000)


def _pinball(q):
    def metric(truth, predicted):
        difference = truth - predicted
        return float(np.mean(np.maximum(q * difference, (q - 1) * difference)))
    return metric


def _rmse(truth, predicted):
    return float(np.sqrt(np.mean((truth - predicted) ** 2)))


def _cases():
    from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance
    cases = {"huber-diabetes": (_diabetes, {"loss": "huber", "huber_delta": 1.0}, {"objective": "huber", "alpha": 1.0},
                                "RMSE", _rmse)}
    for q in (0.1, 0.5, 0.9):
        cases[f"quantile-{q}"] = (_heteroscedastic, {"loss": "quantile", "quantile": q},
                                  {"objective": "quantile", "alpha": q}, "pinball", _pinball(q))
    # LightGBM's Poisson objective: its poisson_max_delta_step, 0.7 by default
    cases["poisson-synthetic"] = (_counts, {"loss": "poisson"}, {"objective": "poisson"}, "Poisson deviance",
                                  mean_poisson_deviance, {"poisson_max_delta_step": 0.7})
    cases["poisson-cmc"] = (_cmc, {"loss": "poisson"}, {"objective": "poisson"}, "Poisson deviance",
                            mean_poisson_deviance, {"poisson_max_delta_step": 0.7})
    cases["gamma-synthetic"] = (_gamma, {"loss": "gamma"}, {"objective": "gamma"}, "Gamma deviance",
                                mean_gamma_deviance)
    return cases


def _models(bob_options, lgb_options, matching):
    from lightgbm import LGBMRegressor

    from bob_boost.sklearn import BoostingRegressor
    return {
        "bob_boost": lambda: BoostingRegressor(weak_learner="tree", n_threads=2, early_stopping=False, **bob_options,
                                               **matching),
        "bob_boost (defaults)": lambda: BoostingRegressor(weak_learner="tree", **bob_options),
        "LightGBM": lambda: LGBMRegressor(n_estimators=100, learning_rate=0.1, num_leaves=31, n_jobs=2, verbose=-1,
                                          **lgb_options),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default=None, help="comma-separated case names (default: all)")
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    args = parser.parse_args()
    cases = _cases()
    names = list(cases) if args.cases is None else args.cases.split(",")
    print(f"# bench_losses: {cpu_model()}, {__import__('os').cpu_count()} cores, {time.strftime('%Y-%m-%d')}")
    print("| case | library | metric | held-out | coverage | time (s) | rounds |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name in names:
        load, bob_options, lgb_options, metric_name, metric, *matching = cases[name]
        train_x, train_y, test_x, test_y = load(args.data_dir)
        models = _models(bob_options, lgb_options, matching[0] if matching else {})
        times = {library: np.inf for library in models}
        fitted = {}
        for make in models.values():  # untimed: compilation, imports
            make().fit(train_x[:2000], train_y[:2000])
        for _ in range(args.repeats):
            for library, make in models.items():
                model = make()
                start = time.perf_counter()
                model.fit(train_x, train_y)
                times[library] = min(times[library], time.perf_counter() - start)
                fitted[library] = model
        for library, model in fitted.items():
            predicted = model.predict(test_x)
            coverage = f"{np.mean(test_y <= predicted):.3f}" if name.startswith("quantile") else ""
            rounds = getattr(model, "n_iter_", None) or getattr(model, "n_estimators_", "")
            print(f"| {name} | {library} | {metric_name} | {metric(test_y, predicted):.4f} | {coverage} | "
                  f"{times[library]:.3f} | {rounds} |", flush=True)


if __name__ == "__main__":
    main()
