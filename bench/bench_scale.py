"""Gradient trees at scale: bob_boost against LightGBM and XGBoost on 31- and 255-leaf trees, millions of rows.

The data: ``sklearn.datasets.make_classification(n_samples=n + 200000, n_features=28, n_informative=18,
n_redundant=4, flip_y=0.05, class_sep=0.8, random_state=0)`` (``--sizes``; sizes of 5,000,000 and more are
kept as float32), the last 200,000 rows held out. Each library trains 100 rounds (``--rounds``) of binary
logistic boosting at learning rate 0.1 on 2 threads, trees grown leaf-wise to ``--leaves`` leaves:

- bob_boost ``Boosting(TreeTrainer(max_depth=None, max_leaves=L, growth="leafwise", n_threads=2),
  LogitLoss(), learning_rate=0.1)``; with ``L = 31`` these are ``TreeTrainer``'s defaults (every other
  argument too, ``n_threads=None`` being both cores here), so the 31-leaf rows are also the default's;
- LightGBM ``LGBMClassifier(num_leaves=L, learning_rate=0.1, n_jobs=2)``;
- XGBoost ``XGBClassifier(max_leaves=L, grow_policy="lossguide", max_depth=0, tree_method="hist",
  learning_rate=0.1, n_jobs=2)``.

Every measurement runs in a fresh process that loads the data from a ``.npy`` file and first fits 2
rounds on 2,000 rows (neither timed: one-time costs such as loading compiled kernels stay out); the
libraries, sizes and leaf counts are interleaved, ``--repeats`` times (fastest kept). Reported: training
time, held-out AUC, the training's peak resident memory above the process's resident memory once the data
is loaded (``VmHWM`` after resetting it through ``/proc/self/clear_refs``, Linux only), and prediction
rows/s of the held-out rows (fastest of 3 in the process). ``--mnist`` adds MNIST (10 classes, 31 leaves,
bob's HDF5 from ``../shared/data``, accuracy on its test set).

Usage::

    python bench/bench_scale.py [--sizes 300000,1000000] [--leaves 31,255] [--rounds 100] [--repeats 3]
        [--libraries bob,lightgbm,xgboost] [--mnist] [--data-dir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _machine import cpu_model  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
HELD_OUT = 200_000
LARGE = 5_000_000


def _resident_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")



def _generate(n: int, folder: Path) -> tuple[Path, Path]:
    """The data set of ``n`` training rows (and the held-out rows) as .npy files in ``folder``; sizes of
    5,000,000 rows and more are kept as float32."""
    from sklearn.datasets import make_classification

    features_path, labels_path = folder / f"features_{n}.npy", folder / f"labels_{n}.npy"
    if features_path.exists():
        return features_path, labels_path
    features, labels = make_classification(n_samples=n + HELD_OUT, n_features=28, n_informative=18, n_redundant=4,
                                           flip_y=0.05, class_sep=0.8, random_state=0)
    np.save(features_path, features.astype(np.float32) if n >= LARGE else features)
    np.save(labels_path, labels)
    return features_path, labels_path


def _train(library: str, features: np.ndarray, labels: np.ndarray, leaves: int, rounds: int, classes: int):
    """The library's model, trained; and a function giving its scores on rows."""
    if library == "bob":
        import bob_boost

        tree = bob_boost.TreeTrainer(max_depth=None, max_leaves=leaves, growth="leafwise", n_threads=2)
        loss = bob_boost.LogitLoss() if classes == 2 else bob_boost.SoftmaxLoss()
        targets = np.where(labels > 0, 1.0, -1.0) if classes == 2 else labels
        machine = bob_boost.Boosting(tree, loss, learning_rate=0.1).train(features, targets, rounds)
        machine.n_threads = 2
        return lambda rows: machine.decision_scores(rows)
    if library == "lightgbm":
        import lightgbm

        model = lightgbm.LGBMClassifier(n_estimators=rounds, num_leaves=leaves, learning_rate=0.1, n_jobs=2,
                                        verbose=-1).fit(features, labels)
        return lambda rows: model.predict_proba(rows)
    import xgboost

    model = xgboost.XGBClassifier(n_estimators=rounds, max_leaves=leaves, grow_policy="lossguide", max_depth=0,
                                  tree_method="hist", learning_rate=0.1, n_jobs=2).fit(features, labels)
    return lambda rows: model.predict_proba(rows)


def _one(arguments: argparse.Namespace) -> None:
    """One measurement in this process; prints its JSON line."""
    from sklearn.metrics import accuracy_score, roc_auc_score

    if arguments.one_data == "mnist":
        import h5py

        with h5py.File(ROOT.parent / "shared" / "data" / "mnist" / "mnist_data.hdf5", "r") as h5:
            features, labels = h5["train/data"][()], h5["train/labels"][()].astype(np.int64)
            test_features, test_labels = h5["test/data"][()], h5["test/labels"][()].astype(np.int64)
    else:
        features = np.load(arguments.one_data)
        labels = np.load(arguments.one_labels)
        features, test_features = features[:-HELD_OUT], features[-HELD_OUT:]
        labels, test_labels = labels[:-HELD_OUT], labels[-HELD_OUT:]
    classes = int(labels.max()) + 1
    # a small fit first: libraries' one-time costs (loading compiled kernels, thread pools) are not timed
    _train(arguments.one_library, features[:2000], labels[:2000], arguments.one_leaves, 2, classes)
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # resets VmHWM to the current resident set
    before = _resident_kib("VmRSS")
    started = time.perf_counter()
    scores_of = _train(arguments.one_library, features, labels, arguments.one_leaves, arguments.rounds, classes)
    seconds = time.perf_counter() - started
    peak = _resident_kib("VmHWM")
    predict = np.inf
    for _ in range(3):
        started = time.perf_counter()
        scores = np.asarray(scores_of(test_features))
        predict = min(predict, time.perf_counter() - started)
    if classes == 2:
        quality = roc_auc_score(test_labels, scores[:, -1])
    else:
        quality = accuracy_score(test_labels, scores.argmax(axis=1))
    print(json.dumps({"seconds": seconds, "quality": float(quality), "memory_mb": (peak - before) / 1024,
                      "rows_per_second": test_features.shape[0] / predict}))


def _measure(script: Path, library: str, data: str, labels: str, leaves: int, rounds: int) -> dict:
    command = [sys.executable, str(script), "--one-library", library, "--one-data", data, "--one-labels", labels,
               "--one-leaves", str(leaves), "--rounds", str(rounds)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300000,1000000")
    parser.add_argument("--leaves", default="31,255")
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--libraries", default="bob,lightgbm,xgboost")
    parser.add_argument("--mnist", action="store_true")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--one-library", help=argparse.SUPPRESS)
    parser.add_argument("--one-data", help=argparse.SUPPRESS)
    parser.add_argument("--one-labels", help=argparse.SUPPRESS)
    parser.add_argument("--one-leaves", type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.one_library:
        _one(arguments)
        return 0
    libraries = arguments.libraries.split(",")
    folder = Path(arguments.data_dir or tempfile.mkdtemp(prefix="bench_scale_"))
    folder.mkdir(parents=True, exist_ok=True)
    cases = []
    for n in (int(size) for size in arguments.sizes.split(",") if size):  # --sizes "": MNIST alone
        paths = _generate(n, folder)
        cases += [(f"{n:,}", str(paths[0]), str(paths[1]), int(leaves)) for leaves in arguments.leaves.split(",")]
    if arguments.mnist:
        cases.append(("MNIST", "mnist", "-", 31))
    results: dict[tuple, list] = {}
    for _ in range(arguments.repeats):
        for name, data, labels, leaves in cases:
            for library in libraries:
                result = _measure(Path(__file__).resolve(), library, data, labels, leaves, arguments.rounds)
                results.setdefault((name, leaves, library), []).append(result)
    print(f"# python bench/bench_scale.py {' '.join(sys.argv[1:])}")
    print(f"# {cpu_model()}, {os.cpu_count()} cores; fastest of {arguments.repeats} "
          f"runs, interleaved, each in a fresh process; {arguments.rounds} rounds, 2 threads")
    print("\n| rows | leaves | library | training s | vs LightGBM | held-out AUC (MNIST: accuracy) | "
          "peak memory above the data, MB | prediction rows/s |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for (name, leaves, library), runs in results.items():
        fastest = min(runs, key=lambda r: r["seconds"])
        reference = results.get((name, leaves, "lightgbm"))
        ratio = (f"{fastest['seconds'] / min(r['seconds'] for r in reference):.2f}x" if reference else "-")
        print(f"| {name} | {leaves} | {library} | {fastest['seconds']:.2f} | {ratio} | {fastest['quality']:.4f} | "
              f"{min(r['memory_mb'] for r in runs):.0f} | {max(r['rows_per_second'] for r in runs) / 1e6:.3g}M |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
