"""AdaBoostDB vs Cost-Sensitive AdaBoost: the experiments of the AdaBoostDB paper.

Protocol (after the paper's section 4): for every data set and each of the
19 cost pairs (C_P, C_N) from (1, 100) to (100, 1), 3-fold stratified cross
validation. In every fold, on the same training part, the script trains

* AdaBoostDB with the paper's rule (largest alpha) and each search strategy:
  Conditional Search ("DB-cond", the paper's algorithm), all roots
  ("DB-exh") and Pareto front ("DB-pareto");
* AdaBoostDB with the exact rule (smallest bound, bound search, "DB-loss");
* Cost-Sensitive AdaBoost ("CS"), a root search for every candidate, all
  candidates of a round solved together by vectorised Newton steps;

and scores DB-cond, DB-loss and CS on the held-out part: false-negative and
false-positive rates (FN, FP), classification error (CE) and Normalized
Expected Cost NEC = FN PCF + FP (1 - PCF) with PCF = C_P / (C_P + C_N) (the
paper's p(+) = 1/2). Rates are averaged over the folds. Root searches and
training seconds (binning included) are summed over folds and cost pairs.

Literal baseline: the paper times Cost-Sensitive AdaBoost as its Algorithm 1
states it, one scalar root search per candidate. That baseline
("CS-scalar", ``root_search="scalar"``: one ``scipy.optimize.brentq`` call
per candidate in a Python loop) is 26 to 53 times slower than "CS" (measured
with this script), so it runs on a subset of the same trainings: the first
``--scalar-folds`` fold(s) (default 1) of the cost pairs in
``SCALAR_COSTS`` that the run includes. On that subset the script prints the
training seconds of every method and AdaBoostDB's time as a percentage of
both baselines, and checks that CS-scalar made as many root searches as CS
and gave the same models (1e-8).

Data sets:

* "bayes": two 2-D Gaussians with unit covariance, equal priors, means
  +-(1.5/sqrt 2)(1, 1) (Bayes error 6.7 % at equal costs);
* "two-clouds": positives uniform in the unit disc at (0, 0), negatives
  uniform in the annulus 0.5 <= r <= 1.3 around (0.6, 0); the two overlap;
* credit-g (positive: bad credit, 300 of 1000), ionosphere (positive: good
  radar return, 225 of 351), diabetes (positive: tested positive, 268 of 768)
  from ``shared/data/uci``.

For the two synthetic sets the features are the projections of the points
on ``--angles`` directions evenly spaced over [0, pi), so stumps are
half-planes at those orientations, as in the paper.

Training seconds: with ``--repeats N`` every training (baselines included)
runs N times and the fastest run counts; the models must be identical.

Usage::

    python bench/bench_adaboostdb.py [--rounds 20] [--repeats 1] [--quick] [--datasets bayes,credit-g] \
        [--synthetic-samples 600] [--angles 24] [--scalar-folds 1] \
        [--figure doc/figures/adaboostdb_cost_curves.png]

``--quick`` runs 5 cost pairs and 15 rounds, for a smoke test.
``--scalar-folds 0`` skips the literal baseline.
"""
from __future__ import annotations

import argparse
import gzip
import math
import platform
import time
from pathlib import Path

import numpy as np
import scipy.stats

from bob_boost.evaluation import (classification_error, false_negative_rate, false_positive_rate, lower_envelope,
                                  normalized_expected_cost, probability_cost_function)
from bob_boost.trainers.cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer

ROOT = Path(__file__).resolve().parents[1]
UCI = ROOT.parent / "shared" / "data" / "uci"
DATASETS = ("bayes", "two-clouds", "credit-g", "ionosphere", "diabetes")
#: Label of the positive (more valuable) class in each UCI set.
POSITIVE_LABEL = {"credit-g": 0, "ionosphere": 1, "diabetes": 2}
COSTS = ((1, 100), (1, 50), (1, 25), (1, 10), (1, 7), (1, 5), (1, 3), (1, 2), (2, 3), (1, 1), (3, 2), (2, 1),
         (3, 1), (5, 1), (7, 1), (10, 1), (25, 1), (50, 1), (100, 1))
QUICK_COSTS = ((1, 10), (1, 2), (1, 1), (2, 1), (10, 1))
#: Cost pairs on which the literal scalar baseline also runs (those of them in the run's sweep).
SCALAR_COSTS = ((1, 100), (1, 10), (1, 2), (1, 1), (2, 1), (10, 1), (100, 1))
#: AdaBoostDB variants whose training time is compared with both baselines.
DB_METHODS = ("DB-cond", "DB-exh", "DB-pareto", "DB-loss")
BAYES_SHIFT = 1.5 / math.sqrt(2.0)
#: name -> (factory(C_P, C_N), evaluated on the test part?)
METHODS = {
    "DB-cond": (lambda p, n: AdaBoostDBTrainer(p, n, search="conditional"), True),
    "DB-exh": (lambda p, n: AdaBoostDBTrainer(p, n, search="exhaustive"), False),
    "DB-pareto": (lambda p, n: AdaBoostDBTrainer(p, n, search="pareto"), False),
    "DB-loss": (lambda p, n: AdaBoostDBTrainer(p, n, selection="loss", search="bound"), True),
    "CS": (lambda p, n: CostSensitiveAdaBoostTrainer(p, n), True),
}


def projections(points: np.ndarray, angles: int) -> np.ndarray:
    """Project 2-D points on ``angles`` unit vectors evenly spaced over [0, pi)."""
    theta = np.arange(angles) * np.pi / angles
    return points @ np.stack([np.cos(theta), np.sin(theta)])


def bayes_points(samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The "Bayes" set: two unit-covariance Gaussians, equal priors."""
    half = samples // 2
    positives = rng.normal(BAYES_SHIFT, 1.0, size=(half, 2))
    negatives = rng.normal(-BAYES_SHIFT, 1.0, size=(samples - half, 2))
    return np.vstack([positives, negatives]), np.repeat([1.0, -1.0], [half, samples - half])


def uniform_annulus(count: int, inner: float, outer: float, centre, rng: np.random.Generator) -> np.ndarray:
    """``count`` points uniform in an annulus (a disc for ``inner = 0``)."""
    radius = np.sqrt(rng.uniform(inner ** 2, outer ** 2, count))
    angle = rng.uniform(0.0, 2 * np.pi, count)
    return np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1) + np.asarray(centre)


def two_clouds_points(samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The "two clouds" set: a disc of positives overlapping an annulus of negatives."""
    half = samples // 2
    positives = uniform_annulus(half, 0.0, 1.0, (0.0, 0.0), rng)
    negatives = uniform_annulus(samples - half, 0.5, 1.3, (0.6, 0.0), rng)
    return np.vstack([positives, negatives]), np.repeat([1.0, -1.0], [half, samples - half])


def load(name: str, args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray]:
    """Features and -1/+1 targets of a data set."""
    rng = np.random.default_rng(args.seed)
    if name == "bayes":
        points, targets = bayes_points(args.synthetic_samples, rng)
        return projections(points, args.angles), targets
    if name == "two-clouds":
        points, targets = two_clouds_points(args.synthetic_samples, rng)
        return projections(points, args.angles), targets
    with gzip.open(UCI / name / f"{name}.tsv.gz", "rt") as stream:
        table = np.loadtxt(stream, delimiter="\t", skiprows=1)
    return table[:, :-1], np.where(table[:, -1] == POSITIVE_LABEL[name], 1.0, -1.0)


def stratified_folds(targets: np.ndarray, folds: int, seed: int) -> list[np.ndarray]:
    """Test indices of each fold; every class is split evenly over the folds."""
    rng = np.random.default_rng(seed)
    parts = [[] for _ in range(folds)]
    for label in (1.0, -1.0):
        members = rng.permutation(np.flatnonzero(targets == label))
        for fold, chunk in enumerate(np.array_split(members, folds)):
            parts[fold].append(chunk)
    return [np.sort(np.concatenate(part)) for part in parts]


def bayes_rates(cost_positive: float, cost_negative: float) -> tuple[float, float]:
    """FN and FP of the Bayes-optimal classifier of the "bayes" set, in closed form.

    The log-likelihood ratio is N(+-d^2/2, d^2) under each class (d: distance
    of the means); the Bayes rule thresholds it at log(C_N / C_P).
    """
    distance = 2 * BAYES_SHIFT * math.sqrt(2.0)
    threshold = math.log(cost_negative / cost_positive)

    def phi(value: float) -> float:
        return 0.5 * math.erfc(-value / math.sqrt(2.0))

    false_negative = phi((threshold - distance ** 2 / 2) / distance)
    false_positive = 1.0 - phi((threshold + distance ** 2 / 2) / distance)
    return false_negative, false_positive


def run_dataset(name: str, args: argparse.Namespace, costs) -> dict:
    """Train every method on every fold and cost pair; return rates, searches and seconds."""
    features, targets = load(name, args)
    folds = stratified_folds(targets, 3, args.seed)
    rates = {method: np.zeros((len(costs), 3)) for method, (_, tested) in METHODS.items() if tested}
    searches = {method: 0 for method in METHODS}
    seconds = {method: 0.0 for method in METHODS}
    # do the three searches of the paper's rule return the same models, and the exact rule CS's?
    agree = {"searches": True, "DB-loss = CS": True, "CS-scalar = CS": True}
    # the subset on which the literal scalar baseline runs: seconds of every method there
    subset_methods = (*METHODS, "CS-scalar")
    subset = {"runs": 0, "seconds": {method: 0.0 for method in subset_methods},
              "searches": {method: 0 for method in subset_methods}}
    for row, (cost_p, cost_n) in enumerate(costs):
        for fold, test in enumerate(folds):
            train = np.setdiff1d(np.arange(len(targets)), test)
            in_subset = (cost_p, cost_n) in SCALAR_COSTS and fold < args.scalar_folds
            models, run_seconds, run_searches = {}, {}, {}
            for method, (factory, tested) in METHODS.items():
                machine, run_seconds[method], run_searches[method] = timed_training(
                    factory(cost_p, cost_n), features[train], targets[train], args)
                models[method] = machine
                seconds[method] += run_seconds[method]
                searches[method] += run_searches[method]
                if tested:
                    predictions = machine.predict(features[test])
                    rates[method][row] += np.array([false_negative_rate(targets[test], predictions),
                                                    false_positive_rate(targets[test], predictions),
                                                    classification_error(targets[test], predictions)]) / 3
            agree["searches"] &= same_models(models["DB-cond"], models["DB-exh"], 0.0) and \
                same_models(models["DB-cond"], models["DB-pareto"], 0.0)
            agree["DB-loss = CS"] &= same_models(models["DB-loss"], models["CS"], 1e-8)
            if in_subset:
                scalar, run_seconds["CS-scalar"], run_searches["CS-scalar"] = timed_training(
                    CostSensitiveAdaBoostTrainer(cost_p, cost_n, root_search="scalar"), features[train],
                    targets[train], args)
                agree["CS-scalar = CS"] &= same_models(scalar, models["CS"], 1e-8)
                subset["runs"] += 1
                for method in subset_methods:
                    subset["seconds"][method] += run_seconds[method]
                    subset["searches"][method] += run_searches[method]
    pcf = probability_cost_function([c[0] for c in costs], [c[1] for c in costs])
    nec = {method: normalized_expected_cost(r[:, 0], r[:, 1], pcf) for method, r in rates.items()}
    return {"samples": len(targets), "features": features.shape[1], "rates": rates, "nec": nec,
            "searches": searches, "seconds": seconds, "agree": agree, "subset": subset}


def timed_training(trainer, features: np.ndarray, targets: np.ndarray, args: argparse.Namespace):
    """Train ``args.repeats`` times; return the model, the fastest run's seconds and the root searches.

    Training is deterministic, so every repeat must give the same model; the
    fastest run is the least disturbed by other work on the machine.
    """
    best, machine = math.inf, None
    for _ in range(args.repeats):
        start = time.perf_counter()
        model = trainer.train(features, targets, args.rounds)
        best = min(best, time.perf_counter() - start)
        if machine is not None and not same_models(machine, model, 0.0):
            raise RuntimeError(f"{trainer!r}: repeated training gave a different model")
        machine = model
    return machine, best, trainer.root_searches


def same_models(first, second, tolerance: float) -> bool:
    """Same stumps, and weights equal to a relative ``tolerance``."""
    return first.weak_machines == second.weak_machines and np.allclose(first.weights, second.weights,
                                                                         rtol=tolerance, atol=0.0)


def rank_correlation(values: np.ndarray) -> float:
    """Spearman correlation of ``values`` with their position (costs are listed by increasing C_P / C_N)."""
    return float(scipy.stats.spearmanr(np.arange(values.size), values)[0])


def format_rate(value: float) -> str:
    return f"{value:.3f}"


def print_tables(results: dict, costs, args: argparse.Namespace) -> None:
    """Print the markdown tables: rates per cost pair, NEC differences, computational burden."""
    print(f"\nSettings: --rounds {args.rounds}, --repeats {args.repeats}, 3-fold stratified CV, seed {args.seed}, "
          f"synthetic sets of {args.synthetic_samples} points on {args.angles} projection angles; "
          f"{len(costs)} cost pairs; literal scalar baseline on --scalar-folds {args.scalar_folds}; "
          f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}.")
    for name, result in results.items():
        print(f"\n### {name} ({result['samples']} samples, {result['features']} features): AdaBoostDB "
              f"(Conditional Search), mean over 3 folds\n")
        print("| (C_P, C_N) | FN | FP | CE | NEC | NEC CS | NEC DB-loss - CS |")
        print("|---|---|---|---|---|---|---|")
        for row, cost in enumerate(costs):
            fn, fp, ce = result["rates"]["DB-cond"][row]
            print(f"| {cost} | {format_rate(fn)} | {format_rate(fp)} | {format_rate(ce)} | "
                  f"{format_rate(result['nec']['DB-cond'][row])} | {format_rate(result['nec']['CS'][row])} | "
                  f"{result['nec']['DB-loss'][row] - result['nec']['CS'][row]:.1e} |")

    print("\n### NEC difference between AdaBoostDB's rule (largest alpha) and Cost-Sensitive AdaBoost "
          "(smallest bound), mean over cost pairs\n")
    print("| data set | mean abs(NEC DB - NEC CS) | max abs(NEC DB - NEC CS) | mean abs(NEC DB-loss - NEC CS) "
          "| mean NEC DB | mean NEC CS | rank corr. FN, C_P/C_N | rank corr. FP, C_P/C_N | 3 searches: same models "
          "| DB-loss = CS (1e-8) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    differences, exact_differences = [], []
    for name, result in results.items():
        difference = np.abs(result["nec"]["DB-cond"] - result["nec"]["CS"])
        exact_difference = np.abs(result["nec"]["DB-loss"] - result["nec"]["CS"])
        differences.append(difference)
        exact_differences.append(exact_difference)
        rates = result["rates"]["DB-cond"]
        agree = result["agree"]
        print(f"| {name} | {difference.mean():.2e} | {difference.max():.2e} | {exact_difference.mean():.2e} | "
              f"{result['nec']['DB-cond'].mean():.4f} | {result['nec']['CS'].mean():.4f} | "
              f"{rank_correlation(rates[:, 0]):+.2f} | {rank_correlation(rates[:, 1]):+.2f} | "
              f"{'yes' if agree['searches'] else 'NO'} | {'yes' if agree['DB-loss = CS'] else 'NO'} |")
    print(f"| all | {np.concatenate(differences).mean():.2e} | {np.concatenate(differences).max():.2e} "
          f"| {np.concatenate(exact_differences).mean():.2e} | | | | | | |")

    print("\n### Root searches and training seconds, summed over cost pairs and folds\n")
    header = " | ".join(f"{method} searches | {method} s" for method in METHODS)
    print(f"| data set | {header} | DB-cond/CS searches | DB-loss/CS searches | DB-cond/CS time |")
    print("|---|" + "---|" * (2 * len(METHODS) + 3))
    for name, result in results.items():
        cells = " | ".join(f"{result['searches'][m]} | {result['seconds'][m]:.2f}" for m in METHODS)
        search_ratios = [result["searches"][m] / result["searches"]["CS"] for m in ("DB-cond", "DB-loss")]
        time_ratio = result["seconds"]["DB-cond"] / result["seconds"]["CS"]
        print(f"| {name} | {cells} | {search_ratios[0]:.3%} | {search_ratios[1]:.3%} | {time_ratio:.1%} |")

    subset_costs = [cost for cost in costs if cost in SCALAR_COSTS]
    if args.scalar_folds == 0 or not subset_costs:
        return
    folds = "fold 1" if args.scalar_folds == 1 else f"folds 1-{args.scalar_folds}"
    print(f"\n### Training seconds against both baselines, on the subset: {folds} of 3, cost pairs "
          f"{', '.join(map(str, subset_costs))}\n")
    print("CS-scalar: Cost-Sensitive AdaBoost with one scalar Brent search per candidate (the paper's "
          "Algorithm 1); CS: the same with all roots of a round solved by vectorised Newton steps.\n")
    print("| data set | trainings | CS-scalar searches | = CS searches | CS-scalar = CS (1e-8) | CS-scalar s | "
          "CS s | " + " | ".join(f"{method} s" for method in DB_METHODS) + " |")
    print("|---|" + "---|" * (6 + len(DB_METHODS)))
    for name, result in results.items():
        subset = result["subset"]
        same_count = subset["searches"]["CS-scalar"] == subset["searches"]["CS"]
        print(f"| {name} | {subset['runs']} | {subset['searches']['CS-scalar']} | {'yes' if same_count else 'NO'} "
              f"| {'yes' if result['agree']['CS-scalar = CS'] else 'NO'} | "
              + " | ".join(f"{subset['seconds'][m]:.2f}" for m in ("CS-scalar", "CS", *DB_METHODS)) + " |")
    print("\nAdaBoostDB's training time as a percentage of each baseline's, on that subset "
          "(target: at most 2 % of Cost-Sensitive AdaBoost's):\n")
    print("| data set | " + " | ".join(f"{m} / CS-scalar" for m in DB_METHODS) + " | "
          + " | ".join(f"{m} / CS" for m in DB_METHODS) + " | CS / CS-scalar |")
    print("|---|" + "---|" * (2 * len(DB_METHODS) + 1))
    for name, result in results.items():
        seconds = result["subset"]["seconds"]
        cells = [seconds[m] / seconds[base] for base in ("CS-scalar", "CS") for m in DB_METHODS]
        print(f"| {name} | " + " | ".join(f"{cell:.2%}" for cell in cells)
              + f" | {seconds['CS'] / seconds['CS-scalar']:.2%} |")


def plot_cost_curves(results: dict, costs, path: Path) -> None:
    """Cost lines and lower envelopes on the "bayes" set (the paper's Figure 4)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figure")
        return
    result = results["bayes"]
    pcf = np.linspace(0.0, 1.0, 501)
    bayes = np.array([bayes_rates(*cost) for cost in costs])
    families = {"Bayes (closed form)": (bayes[:, 0], bayes[:, 1]),
                "AdaBoostDB": (result["rates"]["DB-cond"][:, 0], result["rates"]["DB-cond"][:, 1]),
                "Cost-Sensitive AdaBoost": (result["rates"]["CS"][:, 0], result["rates"]["CS"][:, 1])}
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    fn, fp = families["AdaBoostDB"]
    for line_fn, line_fp in zip(fn, fp):
        left.plot([0, 1], [line_fp, line_fn], color="0.75", linewidth=0.8)
    left.plot(pcf, lower_envelope(fn, fp, pcf)[0], color="C0", linewidth=2, label="lower envelope")
    left.set_title("AdaBoostDB on 'bayes': one line per cost pair")
    for (label, (family_fn, family_fp)), style in zip(families.items(), ("k--", "C0-", "C3:")):
        right.plot(pcf, lower_envelope(family_fn, family_fp, pcf)[0], style, linewidth=2, label=label)
    right.set_title("Lower envelopes")
    for axis in (left, right):
        axis.set_xlabel("Probability Cost Function")
        axis.set_ylabel("Normalized Expected Cost")
        axis.set_xlim(0, 1)
        axis.set_ylim(0, 0.3)
        axis.legend(loc="upper right")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    print(f"\nwrote {path}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20, help="boosting rounds of every model")
    parser.add_argument("--quick", action="store_true", help="5 cost pairs and 15 rounds (smoke test)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="train every model this many times and keep the fastest run's seconds")
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help="comma-separated subset of " + ",".join(DATASETS))
    parser.add_argument("--synthetic-samples", type=int, default=600, help="points in each synthetic set")
    parser.add_argument("--angles", type=int, default=24, help="projection angles of the synthetic sets")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic data and of the folds")
    parser.add_argument("--scalar-folds", type=int, default=1, choices=range(4),
                        help="folds (of 3) on which the literal scalar Cost-Sensitive AdaBoost also runs, for the "
                             "cost pairs in SCALAR_COSTS; 0 skips it")
    parser.add_argument("--figure", type=Path, default=ROOT / "doc" / "figures" / "adaboostdb_cost_curves.png",
                        help="cost-curve figure (needs 'bayes' among the data sets)")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.datasets.split(",") if name.strip()]
    unknown = sorted(set(names) - set(DATASETS))
    if unknown:
        parser.error(f"unknown data set(s) {unknown}; choose from {DATASETS}")
    costs = QUICK_COSTS if args.quick else COSTS
    if args.quick:
        args.rounds = min(args.rounds, 15)
    results = {}
    for name in names:
        start = time.perf_counter()
        results[name] = run_dataset(name, args, costs)
        print(f"{name}: done in {time.perf_counter() - start:.1f} s", flush=True)
    print_tables(results, costs, args)
    if "bayes" in results:
        plot_cost_curves(results, costs, args.figure)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
