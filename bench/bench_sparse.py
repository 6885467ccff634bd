"""Sparse (CSR) features against their dense form and LightGBM: training time, peak memory, held-out AUC.

The data: ``--rows`` x ``--columns`` features of which a share ``--density`` is non-zero (standard normal
values at uniformly random places, seed 0), labels ``sign(X w + 0.5 e)`` for standard normal ``w`` and noise
``e``; the last 20% of the rows are held out. Each configuration runs in a process of its own, one after
the other, which builds the data, trains ``--repeats`` times and predicts the held-out rows ``--repeats``
times (the times are the fastest), and reports its
peak resident memory (``ru_maxrss``) and the resident memory once the library was imported and the data
built:

- bob_boost ``BoostingClassifier(weak_learner="tree", n_estimators=100, early_stopping=False, n_threads=2)``
  (31 leaves grown leaf-wise at learning rate 0.1, the tree defaults) on the CSR matrix, and on its dense
  float64 form (``--no-dense`` leaves that out where it does not fit in memory);
- bob_boost ``BoostingClassifier()`` with every default (stumps, early stopping above 10,000 rows) on the CSR
  matrix;
- LightGBM ``LGBMClassifier(n_estimators=100, num_leaves=31, learning_rate=0.1, n_jobs=2)`` on the CSR matrix.

Usage::

    python bench/bench_sparse.py [--rows 200000] [--columns 2000] [--density 0.0025] [--repeats 3] [--no-dense]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

from _machine import cpu_model  # bench/, beside this script

CONFIGURATIONS = ("bob_boost trees, CSR", "bob_boost trees, dense", "bob_boost defaults, CSR", "LightGBM, CSR")


def _data(rows: int, columns: int, density: float):
    import scipy.sparse

    rng = np.random.default_rng(0)
    features = scipy.sparse.random(rows, columns, density=density, format="csr", random_state=rng,
                                   data_rvs=rng.standard_normal)
    scores = features @ rng.standard_normal(columns) + 0.5 * rng.standard_normal(rows)
    return features, (scores > 0).astype(np.int64)


def _resident_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def _model(name: str):
    if name.startswith("LightGBM"):
        from lightgbm import LGBMClassifier
        return LGBMClassifier(n_estimators=100, num_leaves=31, learning_rate=0.1, n_jobs=2, verbose=-1)
    from bob_boost.sklearn import BoostingClassifier
    if name.startswith("bob_boost defaults"):
        return BoostingClassifier()
    return BoostingClassifier(weak_learner="tree", n_estimators=100, early_stopping=False, n_threads=2)


def run_one(name: str, rows: int, columns: int, density: float, repeats: int) -> dict:
    """One configuration, in this process: its fastest fit, held-out AUC and memory."""
    from sklearn.metrics import roc_auc_score

    _model(name)  # the library imported before the data: "resident after data" includes it
    features, labels = _data(rows, columns, density)
    split = int(0.8 * rows)
    train, test = features[:split], features[split:]
    if name.endswith("dense"):
        train, test = train.toarray(), test.toarray()
    data_mib = _resident_mib()
    best = np.inf
    for _ in range(repeats):
        model = _model(name)
        start = time.perf_counter()
        model.fit(train, labels[:split])
        best = min(best, time.perf_counter() - start)
    predict_seconds = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        probabilities = model.predict_proba(test)[:, 1]
        predict_seconds = min(predict_seconds, time.perf_counter() - start)
    return {"name": name, "fit": best, "predict": predict_seconds, "auc": roc_auc_score(labels[split:], probabilities),
            "data_mib": data_mib, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "nnz": int(features.nnz)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--columns", type=int, default=2_000)
    parser.add_argument("--density", type=float, default=0.0025)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-dense", action="store_true", help="leave out the dense form (too large)")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a single configuration, in a child process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.rows, args.columns, args.density, args.repeats)))
        return
    print(f"# bench_sparse: {cpu_model()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; "
          f"{args.rows} x {args.columns}, density {args.density}, fastest of {args.repeats}")
    print("| configuration | fit (s) | predict (s) | held-out AUC | resident after data (MiB) | peak (MiB) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in CONFIGURATIONS:
        if args.no_dense and name.endswith("dense"):
            continue
        command = [sys.executable, __file__, "--one", name, "--rows", str(args.rows), "--columns",
                   str(args.columns), "--density", str(args.density), "--repeats", str(args.repeats)]
        result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        print(f"| {name} | {result['fit']:.2f} | {result['predict']:.2f} | {result['auc']:.4f} | "
              f"{result['data_mib']:.0f} | {result['peak_mib']:.0f} |", flush=True)
    print(f"(non-zeros: {result['nnz']}; dense float64 training features: "
          f"{0.8 * args.rows * args.columns * 8 / 2 ** 20:.0f} MiB; one-byte bin codes: "
          f"{0.8 * args.rows * args.columns / 2 ** 20:.0f} MiB)")


if __name__ == "__main__":
    main()
