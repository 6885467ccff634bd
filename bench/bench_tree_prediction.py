"""Prediction speed of gradient-tree ensembles: bob_boost against LightGBM and XGBoost, each on its own trees.

Each library trains 100 rounds of 31-leaf trees grown leaf-wise at learning rate 0.1 on the first
100,000 rows of ``make_classification(n_samples=300000, n_features=28, n_informative=18, n_redundant=4,
flip_y=0.05, class_sep=0.8, random_state=0)`` and predicts the other 200,000 rows on ``--threads``
threads. Each prediction is timed ``--repeats`` times, the libraries interleaved, and the fastest kept.
A second table gives the time of one call on the first rows of the same data for each of ``--batches`` (1 and
100 rows: serving requests), the fastest of ``--calls`` calls. ``--other PATH`` also times bob_boost's
prediction of the same model with the code of another checkout (a folder holding ``bob_boost/``, e.g. a
``git worktree`` of an older commit), in a fresh process, and checks that both give the same scores bit for bit.

Usage::

    python bench/bench_tree_prediction.py [--threads 2] [--repeats 3] [--batches 1,100] [--calls 200]
        [--other /tmp/base]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from _timing import fastest  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]

_OTHER = """
import hashlib, json, sys, time
import numpy as np
import bob_boost
machine = bob_boost.BoostedMachine.load(sys.argv[1])
machine.n_threads = int(sys.argv[3])
features = np.load(sys.argv[2])
machine.decision_scores(features[:1000])
result = {}
for batch in [0] + [int(b) for b in sys.argv[5].split(",") if b]:  # 0: every row
    rows = features[:batch] if batch else features
    times = []
    for _ in range(int(sys.argv[4]) if not batch else int(sys.argv[6])):
        started = time.perf_counter()
        scores = machine.decision_scores(rows)
        times.append(time.perf_counter() - started)
    result[str(batch)] = min(times)
    if not batch:
        result["sha256"] = hashlib.sha256(scores.tobytes()).hexdigest()
print(json.dumps(result))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batches", default="1,100", help="rows of the single calls timed (comma-separated)")
    parser.add_argument("--calls", type=int, default=200, help="calls of each batch, the fastest kept")
    parser.add_argument("--other", type=Path, help="another checkout whose bob_boost predicts the same model")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",") if b]
    sys.path.insert(0, str(ROOT))
    import bob_boost
    import lightgbm
    import xgboost
    from sklearn.datasets import make_classification

    features, labels = make_classification(n_samples=300000, n_features=28, n_informative=18, n_redundant=4,
                                           flip_y=0.05, class_sep=0.8, random_state=0)
    train, test = slice(0, 100000), slice(100000, None)
    signed = np.where(labels > 0, 1.0, -1.0)
    machine = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=None, max_leaves=31, growth="leafwise",
                                                       n_threads=args.threads),
                                 bob_boost.LogitLoss(), learning_rate=0.1).train(features[train], signed[train], 100)
    machine.n_threads = args.threads
    light = lightgbm.LGBMClassifier(num_leaves=31, learning_rate=0.1, n_estimators=100, n_jobs=args.threads,
                                    verbose=-1).fit(features[train], labels[train])
    extreme = xgboost.XGBClassifier(max_leaves=31, grow_policy="lossguide", max_depth=0, tree_method="hist",
                                    learning_rate=0.1, n_estimators=100, n_jobs=args.threads).fit(features[train],
                                                                                                   labels[train])
    rows = np.ascontiguousarray(features[test])
    predictors = {"bob_boost": lambda x: machine.decision_scores(x),
                  "LightGBM": lambda x: light.predict(x, raw_score=True),
                  "XGBoost": lambda x: extreme.predict(x, output_margin=True)}
    runs = {name: (lambda predict=predict: predict(rows)) for name, predict in predictors.items()}
    for run in runs.values():
        run()  # compiled or warmed up, untimed
    best = {name: np.inf for name in runs}
    small = {(name, batch): np.inf for name in runs for batch in batches}
    scores = None
    with tempfile.TemporaryDirectory() as folder:
        model, data = Path(folder) / "model.hdf5", Path(folder) / "rows.npy"
        machine.save(model)
        np.save(data, rows)
        other = None
        for _ in range(args.repeats):
            for name, run in runs.items():
                seconds, result = fastest(run, 1)
                best[name] = min(best[name], seconds)
                if name == "bob_boost":
                    scores = result
                for batch in batches:
                    part = rows[:batch]
                    seconds, _ = fastest(lambda predict=predictors[name]: predict(part), args.calls)
                    small[name, batch] = min(small[name, batch], seconds)
            if args.other is not None:
                environment = dict(os.environ, PYTHONPATH=str(args.other))
                output = subprocess.run([sys.executable, "-c", _OTHER, str(model), str(data), str(args.threads), "1",
                                         args.batches, str(args.calls)],
                                        env=environment, capture_output=True, text=True, check=True, cwd=folder)
                measured = json.loads(output.stdout)
                other = measured if other is None else {key: min(value, measured[key]) if key != "sha256" else value
                                                        for key, value in other.items()}
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, {args.threads} threads; "
          f"200,000 rows, 100 trees of 31 leaves; fastest of {args.repeats}")
    print("| library | seconds | rows/s |")
    print("|---|---:|---:|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds:.3f} | {rows.shape[0] / seconds / 1e6:.2f}M |")
    if other is not None:
        print(f"| bob_boost at {args.other} | {other['0']:.3f} | {rows.shape[0] / other['0'] / 1e6:.2f}M |")
    if batches:
        print(f"\n| library | {' | '.join(f'{b:,} row(s), ms' for b in batches)} |")
        print(f"|---|{'---:|' * len(batches)}")
        for name in runs:
            print(f"| {name} | {' | '.join(f'{small[name, b] * 1e3:.3f}' for b in batches)} |")
        if other is not None:
            print(f"| bob_boost at {args.other} | {' | '.join(f'{other[str(b)] * 1e3:.3f}' for b in batches)} |")
    if other is not None:
        same = other["sha256"] == hashlib.sha256(scores.tobytes()).hexdigest()
        print(f"\nsame scores as {args.other}: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
