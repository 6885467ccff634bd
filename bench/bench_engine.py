"""The histogram engine against LightGBM, XGBoost and scikit-learn: training time, accuracy, memory, prediction.

Every measurement runs in a fresh process (``--worker``), which loads the
data from a cache, runs one small warm-up fit of the same library (numba
loads its compiled kernels from its cache; LightGBM and XGBoost load their
libraries), records its resident memory, resets the kernel's record of the
process's peak resident memory (``/proc/self/clear_refs``) and trains; the
peak (``VmHWM``) is read after training. Where that reset is not available,
a Python thread samples the resident memory every 5 ms instead: that thread
competes for the GIL with bob_boost's threads (on 2 cores it makes bob's
L-BFGS LUT training 8-11% slower) and can miss a peak shorter than its
period. A table row gives the fastest of
``--repeats`` runs (runs are interleaved: repeat 1 of every method, then
repeat 2, ...), the test accuracy, and the largest increase of resident
memory during training over the memory in use just before it.

Cases (``--cases``, comma separated; default all):

- ``stumps``: 100 rounds of stumps: MNIST 5 vs 6 (uint8), synthetic
  ``make_classification`` float data 10k, 100k, 1M x 50 and 100k x 500;
  bob_boost with the default 256 bins and (accuracy only, one run) the exact
  mode; LightGBM ``num_leaves=2, learning_rate=1.0, min_child_samples=1``;
  XGBoost ``max_depth=1, learning_rate=1.0, tree_method="hist"``; scikit-learn
  ``HistGradientBoostingClassifier(max_leaf_nodes=2, learning_rate=1.0)``
  and, on MNIST 5 vs 6, ``AdaBoostClassifier`` on depth-1 trees.
- ``trees``: 100 rounds of SAMME with depth-2 and depth-4 trees and BAdaCost
  (0/1 costs) depth-2 on letter (16000/4000) and full MNIST; scikit-learn's
  SAMME (one run: minutes on MNIST); LightGBM / XGBoost multiclass with 4 and
  16 leaves.
- ``gtrees``: 100 rounds of depth-4 gradient trees: bob_boost's ``TreeTrainer``
  (one tree per class; level by level to depth 4, and ``growth="leafwise"`` with
  16 leaves as LightGBM grows them; ``*_q4``, ``*_q32``: on gradients quantised to 4 or
  32 levels, ``quantized_gradients=4`` or ``32``) + ``SoftmaxLoss``, learning rate 0.1, against LightGBM
  / XGBoost multiclass with 16 leaves and scikit-learn's
  ``HistGradientBoostingClassifier(max_depth=4)``, on letter, pendigits and full
  MNIST; and the squared loss on scikit-learn's diabetes regression set
  (350/92 split), test RMSE.
- ``lut``: bob's multi-variate LUT experiments on full MNIST (10 outputs,
  logit loss, 100 rounds, independent and shared selection, Newton steps and,
  ``*_lbfgs``, the default L-BFGS steps of bob's experiments) against LightGBM's
  2-leaf multiclass.
- ``predict``: rows per second of 100- and 1000-round stump models (trained
  on 100k x 50) on 1M x 50 rows; ``bob_onnx`` is onnxruntime running the
  machine's ONNX export (``bob_boost.onnx``, float32 input prepared once).

Usage::

    python bench/bench_engine.py [--repeats 3] [--cases stumps,trees,lut,predict] [--markdown FILE]

Needs ``../shared/data`` (MNIST, letter), scikit-learn, lightgbm and xgboost (``pip install ".[bench]"``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CACHE = Path(os.environ.get("BOB_BOOST_BENCH_CACHE", "/tmp/bob_boost_bench"))
ROUNDS = 100


# -- data ---------------------------------------------------------------------------------------

def dataset(name: str) -> dict[str, np.ndarray]:
    """Train/test arrays of a named data set, generated or read once into the cache."""
    path = CACHE / f"{name}.npz"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        np.savez(path, **_make(name))
    with np.load(path) as archive:
        return {key: archive[key] for key in archive.files}


def _make(name: str) -> dict[str, np.ndarray]:
    if name in ("mnist56", "mnist"):
        import h5py
        with h5py.File(SHARED / "mnist" / "mnist_data.hdf5", "r") as h5:
            parts = {part: (h5[f"{part}/data"][()], h5[f"{part}/labels"][()].astype(np.int64))
                     for part in ("train", "test")}
        if name == "mnist56":
            for part, (x, y) in parts.items():
                keep = (y == 5) | (y == 6)
                parts[part] = (x[keep], np.where(y[keep] == 5, 1, 0))
        return {"x": parts["train"][0], "y": parts["train"][1], "xt": parts["test"][0], "yt": parts["test"][1]}
    if name in ("letter", "pendigits"):
        import gzip
        with gzip.open(SHARED / "uci" / name / f"{name}.tsv.gz", "rt") as stream:
            table = np.loadtxt(stream, delimiter="\t", skiprows=1)
        x, y = table[:, :-1], table[:, -1].astype(np.int64)
        y -= y.min()
        cut = 16000 if name == "letter" else 7494  # letter: the usual split; pendigits: its train/test sizes
        return {"x": x[:cut], "y": y[:cut], "xt": x[cut:], "yt": y[cut:]}
    if name == "diabetes_regression":
        from sklearn.datasets import load_diabetes
        x, y = load_diabetes(return_X_y=True)
        order = np.random.default_rng(0).permutation(y.size)
        x, y = x[order], y[order]
        return {"x": x[:350], "y": y[:350], "xt": x[350:], "yt": y[350:]}
    from sklearn.datasets import make_classification
    samples, features = {"s10k": (10_000, 50), "s100k": (100_000, 50), "s1m": (1_000_000, 50),
                         "s100kx500": (100_000, 500)}[name]
    test = min(samples // 4, 100_000)
    x, y = make_classification(n_samples=samples + test, n_features=features, n_informative=min(20, features // 2),
                               random_state=0)
    return {"x": x[:samples], "y": y[:samples], "xt": x[samples:], "yt": y[samples:]}


# -- methods (run inside a worker) -----------------------------------------------------------------

def _bob_stumps(x, y, threads, max_bins=256):
    import bob_boost
    trainer = bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=max_bins, n_threads=threads),
                                 bob_boost.ExponentialLoss())
    machine = trainer.train(x, np.where(y > 0, 1.0, -1.0), ROUNDS)
    return lambda xt: (machine.predict(xt) > 0).astype(int), machine


def _bob_multiclass(x, y, threads, algorithm="samme", depth=2):
    import bob_boost
    tree = bob_boost.CostSensitiveTreeTrainer(max_depth=depth)
    classes = int(y.max()) + 1
    if algorithm == "samme":
        trainer = bob_boost.SAMMETrainer(weak_learner=tree, number_of_rounds=ROUNDS)
    else:
        trainer = bob_boost.BAdaCostTrainer(1.0 - np.eye(classes), weak_learner=tree, number_of_rounds=ROUNDS)
    tree.n_threads = threads
    machine = trainer.train(x, y)
    return machine.predict, machine


def _bob_lut(x, y, threads, style="independent", step_rule="newton"):
    import bob_boost
    targets = np.where(y[:, np.newaxis] == np.arange(10), 1.0, -1.0)
    trainer = bob_boost.Boosting(bob_boost.LUTTrainer(256, 10, style, n_threads=threads), bob_boost.LogitLoss(),
                                 step_rule=step_rule)
    machine = trainer.train(x, targets, ROUNDS)
    return lambda xt: np.argmax(machine(xt), axis=1), machine


def _bob_gradient_trees(x, y, threads, regression=False, leafwise=False, quantized=None):
    import bob_boost
    shape = (dict(max_depth=None, max_leaves=16, growth="leafwise") if leafwise
             else dict(max_depth=4, growth="levelwise"))
    tree = bob_boost.TreeTrainer(n_threads=threads, multi_output="per_output", quantized_gradients=quantized,
                                 **shape)
    if regression:
        trainer = bob_boost.Boosting(tree, bob_boost.SquaredLoss(), learning_rate=0.1)
        machine = trainer.train(x, y.astype(np.float64), ROUNDS, baseline=float(np.mean(y)))
    else:
        machine = bob_boost.Boosting(tree, bob_boost.SoftmaxLoss(), learning_rate=0.1).train(x, y, ROUNDS)
    return machine.predict, machine


def _regressors(x, y, threads, library):
    if library == "lightgbm":
        import lightgbm
        model = lightgbm.LGBMRegressor(n_estimators=ROUNDS, num_leaves=16, learning_rate=0.1, n_jobs=threads,
                                       verbose=-1)
    elif library == "xgboost":
        import xgboost
        model = xgboost.XGBRegressor(n_estimators=ROUNDS, max_depth=4, learning_rate=0.1, tree_method="hist",
                                     n_jobs=threads)
    else:
        from sklearn.ensemble import HistGradientBoostingRegressor
        model = HistGradientBoostingRegressor(max_iter=ROUNDS, max_depth=4, learning_rate=0.1, early_stopping=False)
    model.fit(x, y)
    return model.predict, model


def _sklearn_hgb_depth4(x, y, threads):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits
    with threadpool_limits(threads):
        model = HistGradientBoostingClassifier(max_iter=ROUNDS, max_depth=4, learning_rate=0.1,
                                               early_stopping=False).fit(x, y)
    return model.predict, model


def _lightgbm(x, y, threads, leaves=2, multiclass=False):
    import lightgbm
    model = lightgbm.LGBMClassifier(n_estimators=ROUNDS, num_leaves=leaves, learning_rate=1.0 if leaves == 2 and
                                    not multiclass else 0.1, min_child_samples=1 if leaves == 2 else 20,
                                    n_jobs=threads, verbose=-1, max_bin=255)
    model.fit(x, y)
    return model.predict, model


def _xgboost(x, y, threads, depth=1, multiclass=False):
    import xgboost
    model = xgboost.XGBClassifier(n_estimators=ROUNDS, max_depth=depth, learning_rate=1.0 if depth == 1 else 0.3,
                                  tree_method="hist", n_jobs=threads, max_bin=256)
    model.fit(x, y)
    return model.predict, model


def _sklearn_hgb(x, y, threads):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits
    with threadpool_limits(threads):
        model = HistGradientBoostingClassifier(max_iter=ROUNDS, max_leaf_nodes=2, learning_rate=1.0,
                                               early_stopping=False).fit(x, y)
    return model.predict, model


def _sklearn_adaboost(x, y, threads, depth=1):
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier
    model = AdaBoostClassifier(DecisionTreeClassifier(max_depth=depth), n_estimators=ROUNDS).fit(x, y)
    return model.predict, model


METHODS = {"bob": _bob_stumps, "bob_onnx": _bob_stumps, "bob_exact": lambda x, y, t: _bob_stumps(x, y, t, None),
           "bob_samme2": lambda x, y, t: _bob_multiclass(x, y, t, "samme", 2),
           "bob_samme4": lambda x, y, t: _bob_multiclass(x, y, t, "samme", 4),
           "bob_badacost2": lambda x, y, t: _bob_multiclass(x, y, t, "badacost", 2),
           "bob_lut_independent": lambda x, y, t: _bob_lut(x, y, t, "independent"),
           "bob_lut_shared": lambda x, y, t: _bob_lut(x, y, t, "shared"),
           # the default step rule on MNIST's pixels (one bin per value: L-BFGS, bob's weights)
           "bob_lut_independent_lbfgs": lambda x, y, t: _bob_lut(x, y, t, "independent", "auto"),
           "bob_lut_shared_lbfgs": lambda x, y, t: _bob_lut(x, y, t, "shared", "auto"),
           "lightgbm": _lightgbm, "lightgbm_4": lambda x, y, t: _lightgbm(x, y, t, 4, True),
           "lightgbm_16": lambda x, y, t: _lightgbm(x, y, t, 16, True),
           "lightgbm_2mc": lambda x, y, t: _lightgbm(x, y, t, 2, True),
           "xgboost": _xgboost, "xgboost_4": lambda x, y, t: _xgboost(x, y, t, 2, True),
           "xgboost_16": lambda x, y, t: _xgboost(x, y, t, 4, True),
           "sklearn_hgb": _sklearn_hgb, "sklearn_adaboost": _sklearn_adaboost,
           "sklearn_samme2": lambda x, y, t: _sklearn_adaboost(x, y, t, 2),
           "sklearn_samme4": lambda x, y, t: _sklearn_adaboost(x, y, t, 4),
           "bob_gtree": _bob_gradient_trees, "bob_gtree_reg": lambda x, y, t: _bob_gradient_trees(x, y, t, True),
           "bob_gtree_leafwise16": lambda x, y, t: _bob_gradient_trees(x, y, t, leafwise=True),
           "bob_gtree_q4": lambda x, y, t: _bob_gradient_trees(x, y, t, quantized=4),
           "bob_gtree_q32": lambda x, y, t: _bob_gradient_trees(x, y, t, quantized=32),
           "bob_gtree_leafwise16_q32": lambda x, y, t: _bob_gradient_trees(x, y, t, leafwise=True, quantized=32),
           "bob_gtree_reg_q4": lambda x, y, t: _bob_gradient_trees(x, y, t, True, quantized=4),
           "bob_gtree_reg_q32": lambda x, y, t: _bob_gradient_trees(x, y, t, True, quantized=32),
           "bob_gtree_reg_leafwise16": lambda x, y, t: _bob_gradient_trees(x, y, t, True, True),
           "sklearn_hgb4": _sklearn_hgb_depth4,
           "lightgbm_reg": lambda x, y, t: _regressors(x, y, t, "lightgbm"),
           "xgboost_reg": lambda x, y, t: _regressors(x, y, t, "xgboost"),
           "sklearn_hgb_reg": lambda x, y, t: _regressors(x, y, t, "sklearn")}


def _resident() -> int:
    with open("/proc/self/statm") as stream:
        return int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak() -> bool:
    """Reset the kernel's peak resident memory of this process to its current one (Linux 4.0+)."""
    try:
        with open("/proc/self/clear_refs", "w") as stream:
            stream.write("5")
        return True
    except OSError:
        return False


def _peak() -> int:
    """The kernel's peak resident memory of this process (``VmHWM``), in bytes."""
    with open("/proc/self/status") as stream:
        line = next(line for line in stream if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def worker(spec: dict) -> dict:
    """Train one method on one data set; time, peak memory above the start, accuracy (or prediction speed)."""
    data = dataset(spec["data"])
    method = METHODS[spec["method"]]
    small = min(2000, data["x"].shape[0])
    method(data["x"][:small], data["y"][:small], spec["threads"])  # warm-up: load kernels and libraries
    if spec.get("predict_rounds"):
        return _predict_worker(spec, data)
    start_memory, peak = _resident(), [0]
    exact = _reset_peak()
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _resident())
            time.sleep(0.005)

    sampler = None if exact else threading.Thread(target=sample, daemon=True)
    if sampler is not None:
        sampler.start()
    start = time.perf_counter()
    predict, _ = method(data["x"], data["y"], spec["threads"])
    seconds = time.perf_counter() - start
    peak[0] = max(peak[0], _peak() if exact else _resident())
    done.set()
    if sampler is not None:
        sampler.join()
    predictions = predict(data["xt"])
    memory = peak[0] - start_memory
    if spec.get("metric") == "rmse":
        return {"seconds": seconds, "memory": memory, "rmse": float(np.sqrt(np.mean((predictions - data["yt"]) ** 2)))}
    return {"seconds": seconds, "memory": memory, "accuracy": float(np.mean(predictions == data["yt"]))}


def _predict_worker(spec: dict, data: dict) -> dict:
    global ROUNDS
    ROUNDS = spec["predict_rounds"]
    _, model = METHODS[spec["method"]](data["x"], data["y"], spec["threads"])
    probe = dataset("s1m")["x"]
    if spec["method"] == "bob_onnx":
        run = _onnx_run(model, probe, spec["threads"])
    elif spec["method"].startswith("bob"):
        model.n_threads = spec["threads"]
        run = lambda: model.decision_scores(probe)  # noqa: E731
    elif spec["method"] == "lightgbm":
        run = lambda: model.predict(probe, raw_score=True, num_threads=spec["threads"])  # noqa: E731
    else:
        model.set_params(n_jobs=spec["threads"])
        run = lambda: model.predict(probe, output_margin=True)  # noqa: E731
    run()
    best = min(_timed(run) for _ in range(3))
    return {"seconds": best, "rows_per_second": probe.shape[0] / best, "predict_rounds": spec["predict_rounds"]}


def _onnx_run(machine, probe: np.ndarray, threads: int):
    """onnxruntime on the exported machine: its float32 input is made once, outside the timing."""
    import onnxruntime

    from bob_boost.onnx import to_onnx

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    session = onnxruntime.InferenceSession(to_onnx(machine).SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    features = probe.astype(np.float32)
    return lambda: session.run(["scores"], {"features": features})


def _timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


# -- the driver ---------------------------------------------------------------------------------

def plan(cases: list[str]) -> list[dict]:
    """Every (data, method, threads) measurement of the chosen cases; ``once`` marks single runs."""
    specs = []
    if "stumps" in cases:
        for data in ("mnist56", "s10k", "s100k", "s1m", "s100kx500"):
            specs += [dict(case="stumps", data=data, method="bob", threads=2),
                      dict(case="stumps", data=data, method="bob", threads=1)]
            specs += [dict(case="stumps", data=data, method=m, threads=t)
                      for m in ("lightgbm", "xgboost") for t in (1, 2)]
            specs.append(dict(case="stumps", data=data, method="sklearn_hgb", threads=2))
            specs.append(dict(case="stumps", data=data, method="bob_exact", threads=2, once=True))
        specs.append(dict(case="stumps", data="mnist56", method="sklearn_adaboost", threads=1, once=True))
    if "trees" in cases:
        for data in ("letter", "mnist"):
            specs += [dict(case="trees", data=data, method=m, threads=2)
                      for m in ("bob_samme2", "bob_samme4", "bob_badacost2")]
            specs += [dict(case="trees", data=data, method=m, threads=t)
                      for m in ("lightgbm_4", "lightgbm_16", "xgboost_4", "xgboost_16") for t in (1, 2)]
            specs += [dict(case="trees", data=data, method=m, threads=1, once=data == "mnist")
                      for m in ("sklearn_samme2", "sklearn_samme4")]
    if "gtrees" in cases:
        for data in ("letter", "pendigits", "mnist"):
            specs += [dict(case="gtrees", data=data, method=m, threads=t)
                      for m in ("bob_gtree", "bob_gtree_leafwise16", "bob_gtree_q32", "bob_gtree_leafwise16_q32",
                                "lightgbm_16", "xgboost_16") for t in (1, 2)]
            specs.append(dict(case="gtrees", data=data, method="sklearn_hgb4", threads=2))
        specs += [dict(case="gtrees", data="diabetes_regression", method=m, threads=2, metric="rmse")
                  for m in ("bob_gtree_reg", "bob_gtree_reg_leafwise16", "bob_gtree_reg_q32", "lightgbm_reg",
                            "xgboost_reg", "sklearn_hgb_reg")]
    if "lut" in cases:
        specs += [dict(case="lut", data="mnist", method=m, threads=2)
                  for m in ("bob_lut_independent", "bob_lut_shared", "bob_lut_independent_lbfgs",
                            "bob_lut_shared_lbfgs")]
        specs += [dict(case="lut", data="mnist", method="lightgbm_2mc", threads=t) for t in (1, 2)]
    if "predict" in cases:
        specs += [dict(case="predict", data="s100k", method=m, threads=t, predict_rounds=r)
                  for r in (100, 1000) for m in ("bob", "bob_onnx", "lightgbm", "xgboost") for t in (1, 2)]
    return specs


def run(specs: list[dict], repeats: int) -> list[dict]:
    results = {i: [] for i in range(len(specs))}
    for repeat in range(repeats):
        for i, spec in enumerate(specs):
            if spec.get("once") and repeat:
                continue
            output = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True,
                                    text=True, cwd=ROOT, check=False)
            if output.returncode:
                print(f"failed: {spec}\n{output.stderr[-2000:]}", file=sys.stderr)
                continue
            results[i].append(json.loads(output.stdout.strip().splitlines()[-1]))
            print(f"repeat {repeat + 1}: {spec['case']} {spec['data']} {spec['method']} x{spec['threads']}: "
                  f"{results[i][-1]}", file=sys.stderr, flush=True)
    rows = []
    for i, spec in enumerate(specs):
        if results[i]:
            best = dict(min(results[i], key=lambda r: r["seconds"]))
            best["memory"] = max(r.get("memory", 0) for r in results[i])
            rows.append(dict(spec, **best, runs=len(results[i])))
    return rows


def merge_logs(paths: list[Path]) -> list[dict]:
    """Rows from the progress lines of earlier runs (their stderr): the fastest run per measurement.

    Lets a long benchmark be completed by further, shorter runs of the same code: every run's lines
    count, and the table says how many runs each row had.
    """
    import ast
    import re
    pattern = re.compile(r"^repeat \d+: (\S+) (\S+) (\S+) x(\d+): (\{.*\})$")
    runs: dict[tuple, list[dict]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            match = pattern.match(line)
            if match:
                case, data, method, threads, text = match.groups()
                result = ast.literal_eval(text)
                key = (case, data, method, int(threads), result.get("predict_rounds"))
                runs.setdefault(key, []).append(result)
    rows = []
    for (case, data, method, threads, _), results in runs.items():
        best = dict(min(results, key=lambda r: r["seconds"]))
        best["memory"] = max(r.get("memory", 0) for r in results)
        rows.append(dict(dict(case=case, data=data, method=method, threads=threads, runs=len(results)), **best))
    order = {name: i for i, name in enumerate(("stumps", "trees", "gtrees", "lut", "predict"))}
    return sorted(rows, key=lambda r: (order.get(r["case"], 9), r["data"], r.get("predict_rounds") or 0))


def table(rows: list[dict]) -> str:
    lines = ["| case | data | method | threads | runs | seconds | accuracy / rows per second | training memory |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        if "rows_per_second" in row:
            quality = f"{row['rows_per_second'] / 1e6:.2f}M rows/s ({row['predict_rounds']} rounds)"
        elif "rmse" in row:
            quality = f"RMSE {row['rmse']:.2f}"
        else:
            quality = f"{row['accuracy']:.4f}"
        memory = f"{row['memory'] / 2 ** 20:.0f} MB" if "rows_per_second" not in row else ""
        lines.append(f"| {row['case']} | {row['data']} | {row['method']} | {row['threads']} | {row['runs']} | "
                     f"{row['seconds']:.2f} | {quality} | {memory} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default="stumps,trees,gtrees,lut,predict")
    parser.add_argument("--data", help="only these data sets (comma separated)")
    parser.add_argument("--methods", help="only these methods (comma separated)")
    parser.add_argument("--threads", help="only these thread counts (comma separated)")
    parser.add_argument("--skip-slow", action="store_true",
                        help="leave out the single-run measurements and 1-thread trees on MNIST (for extra repeats)")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument("--from-logs", type=Path, nargs="+", help="only merge the progress output of earlier runs")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    if args.from_logs:
        text = table(merge_logs(args.from_logs))
        print(text)
        if args.markdown:
            args.markdown.write_text(text + "\n")
        return
    specs = plan(args.cases.split(","))
    if args.data:
        specs = [s for s in specs if s["data"] in args.data.split(",")]
    if args.methods:
        specs = [s for s in specs if s["method"] in args.methods.split(",")]
    if args.threads:
        specs = [s for s in specs if str(s["threads"]) in args.threads.split(",")]
    if args.skip_slow:
        specs = [s for s in specs if not s.get("once") and not (
            s["data"] == "mnist" and s["case"] in ("trees", "gtrees") and s["threads"] == 1)]
    for name in sorted({s["data"] for s in specs} | ({"s1m"} if "predict" in args.cases else set())):
        dataset(name)  # build the caches before any timing
    text = table(run(specs, args.repeats))
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


if __name__ == "__main__":
    main()
