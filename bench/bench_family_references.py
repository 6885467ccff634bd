"""bob_boost's SAMME.R and RUSBoost against the reference implementations, on the same UCI data.

(a) SAMME.R: ``SAMMERTrainer(ProbabilityTreeTrainer(max_depth=d, quantized=False), number_of_rounds=50)``
against scikit-learn 1.5's ``AdaBoostClassifier(estimator=DecisionTreeClassifier(max_depth=d),
n_estimators=50, algorithm="SAMME.R", learning_rate=1.0, random_state=0)`` (scikit-learn removed SAMME.R in
1.6, so this part runs in a separate interpreter given by ``--python-sk15``, with this checkout's bob_boost
first on its path), for depths 1 and 2, on a stratified 70/30 split (seed 0) of each multi-class set. The
table gives both held-out accuracies, the share of held-out rows both predict the same class for, and the
largest absolute difference of the held-out scores: bob_boost's are the plain sum over the rounds of
``(K-1) (log p_k - mean_j log p_j)``; scikit-learn 1.5's ``decision_function`` is that sum divided by the sum
of its estimator weights (1 for every fitted SAMME.R round), so it is multiplied back by that sum first.
Where the two models differ, the round of the first tree whose outputs differ (on the training and
held-out rows) is given, with both trees' splits and why they differ: either a tie (both splits score the
same weighted Gini reduction on that round's weights, and each tree breaks it its own way: scikit-learn
by its random feature order, bob_boost by the lowest feature) or something else, which is then named.

(b) RUSBoost: ``RUSBoostTrainer(CostSensitiveTreeTrainer(max_depth=1), number_of_rounds=50, ratio=1.0,
random_state=seed)`` against imbalanced-learn's ``RUSBoostClassifier(estimator=DecisionTreeClassifier(
max_depth=1), n_estimators=50, random_state=seed)`` (SAMME on a random under-sample of the larger class every
round), on the imbalanced binary sets, for seeds 0..9, each with its own stratified 70/30 split: the mean
and standard deviation of the held-out balanced accuracy of each, and the mean of their per-seed
differences. The two draw their under-samples from different random streams, so only the distributions
can agree; the target is bob_boost within 1 point of imbalanced-learn.

The sets are ``<data-dir>/uci/<name>/<name>.tsv.gz``. Nothing is timed.

Usage::

    python bench/bench_family_references.py --python-sk15 /tmp/venv_sk15/bin/python [--data-dir DIR] \
        [--samme-r-sets car cmc ...] [--rusboost-sets credit-g diabetes ...]

where the interpreter was made by ``python -m venv /tmp/venv_sk15 && /tmp/venv_sk15/bin/pip install
"scikit-learn==1.5.2" numpy scipy h5py threadpoolctl numba``.
"""
from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import cpu_model  # noqa: E402  (bench/, beside this script)

ROOT = Path(__file__).resolve().parents[1]
SAMME_R_SETS = ("car", "cmc", "krkopt", "letter", "pendigits")
RUSBOOST_SETS = ("credit-g", "diabetes", "ionosphere")
DEPTHS = (1, 2)
ROUNDS = 50
SEEDS = range(10)
#: Two trees whose outputs (on every training and held-out row) differ by no more than this are the same.
SAME_OUTPUTS = 1e-8


def _load(data_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and class indices 0 .. K-1 (the sorted labels' positions) of a UCI set."""
    with gzip.open(data_dir / "uci" / name / f"{name}.tsv.gz", "rt") as handle:
        handle.readline()
        table = np.loadtxt(handle, delimiter="\t")
    return table[:, :-1], np.unique(table[:, -1], return_inverse=True)[1]


def _split(X: np.ndarray, y: np.ndarray, seed: int):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)


# --- (a) SAMME.R, run in scikit-learn 1.5's interpreter ------------------------------------------------------


def _sklearn_splits(tree, node: int = 0) -> str:
    """A scikit-learn tree's splits, depth first: ``x[f] <= t (left, right)``."""
    t = tree.tree_
    if t.children_left[node] < 0:
        return "leaf"
    left, right = _sklearn_splits(tree, t.children_left[node]), _sklearn_splits(tree, t.children_right[node])
    inner = "" if left == right == "leaf" else f" ({left}, {right})"
    return f"x{t.feature[node]} <= {t.threshold[node]:.6g}{inner}"


def _bob_splits(machine, node: int = 0) -> str:
    """A bob_boost tree's splits in the same form (its rows go right when ``x[f] >= t``)."""
    if machine.features[node] < 0:
        return "leaf"
    left = _bob_splits(machine, machine.left_children[node])
    right = _bob_splits(machine, machine.right_children[node])
    inner = "" if left == right == "leaf" else f" ({left}, {right})"
    return f"x{machine.features[node]} <= {machine.thresholds[node]:.6g}{inner}"


def _gini_reduction(X: np.ndarray, y: np.ndarray, w: np.ndarray, k: int, rows: np.ndarray, feature: int,
                    threshold: float) -> float:
    """The weighted Gini reduction ``sum_c W_Lc^2 / W_L + sum_c W_Rc^2 / W_R - sum_c W_c^2 / W`` of a split of
    ``rows`` (a boolean mask), the quantity both trees maximise."""
    def score(mask):
        sums = np.bincount(y[mask], weights=w[mask], minlength=k)
        return float(np.sum(sums ** 2) / sums.sum()) if sums.sum() > 0 else 0.0
    left = rows & (X[:, feature] <= threshold)
    return score(left) + score(rows & ~left) - score(rows)


def _root_nodes(X: np.ndarray, splits_a, splits_b):
    """The first node (as a row mask and two ``(feature, threshold)``) where two trees' splits differ,
    descending both from the root while they agree; None when every split agrees."""
    stack = [(np.ones(X.shape[0], dtype=bool), splits_a(0), splits_b(0))]
    while stack:
        rows, a, b = stack.pop(0)
        if a is None or b is None:
            if (a is None) != (b is None):
                return rows, a, b
            continue
        (fa, ta, la, ra), (fb, tb, lb, rb) = a, b
        if fa != fb or not np.isclose(ta, tb, rtol=0, atol=1e-9):
            return rows, a, b
        left = rows & (X[:, fa] <= ta)
        stack += [(left, splits_a(la), splits_b(lb)), (rows & ~left, splits_a(ra), splits_b(rb))]
    return None


def _first_difference(sk_model, bob_model, X_train, y_train, X_all, k: int, sk_weights: list) -> dict | None:
    """Where two SAMME.R models first differ: the round, both trees, and the diagnosis."""
    from sklearn.ensemble._weight_boosting import _samme_proba

    for t, (tree, machine) in enumerate(zip(sk_model.estimators_, bob_model.weak_machines)):
        gap = float(np.max(np.abs(_samme_proba(tree, k, X_all) - machine.forward(X_all))))
        if gap <= SAME_OUTPUTS:
            continue
        # bob_boost's weights of round t: w ~ exp(-(1/K) y^T F_{t-1}), y the class's margin vector
        coding = np.full((k, k), -1.0 / (k - 1))
        np.fill_diagonal(coding, 1.0)
        scores = (np.zeros((X_train.shape[0], k)) if t == 0
                  else list(bob_model.staged_decision_scores(X_train))[t - 1])
        log_w = -(coding[y_train] * scores).sum(axis=1) / k
        bob_w = np.exp(log_w - np.max(log_w))
        bob_w /= bob_w.sum()
        sk_w = sk_weights[t] / sk_weights[t].sum()
        weight_gap = float(np.max(np.abs(sk_w - bob_w)) / np.max(sk_w))
        st = tree.tree_

        def sk_split(node):
            return None if st.children_left[node] < 0 else (int(st.feature[node]), float(st.threshold[node]),
                                                             int(st.children_left[node]),
                                                             int(st.children_right[node]))

        def bob_split(node):
            return None if machine.features[node] < 0 else (int(machine.features[node]),
                                                            float(machine.thresholds[node]),
                                                            int(machine.left_children[node]),
                                                            int(machine.right_children[node]))
        found = _root_nodes(X_train, sk_split, bob_split)
        result = {"round": t + 1, "output_gap": gap, "sklearn": _sklearn_splits(tree),
                  "bob": _bob_splits(machine), "weight_gap": weight_gap, "below_eps": int(np.sum(
                      (bob_w < np.finfo(np.float64).eps) & (bob_w > 0)))}
        if found is not None:
            rows, a, b = found
            gains = [None if s is None else _gini_reduction(X_train, y_train, sk_w, k, rows, s[0], s[1])
                     for s in (a, b)]
            result.update(node_rows=int(rows.sum()), sklearn_gain=gains[0], bob_gain=gains[1],
                          sklearn_node=None if a is None else [a[0], a[1]],
                          bob_node=None if b is None else [b[0], b[1]])
        return result
    return None


def _adaboost(clip_weights: bool):
    """scikit-learn's ``AdaBoostClassifier``, keeping a copy of every round's sample weights; with
    ``clip_weights=False`` its rounds get the plain products of the weight updates (normalised) instead of the
    weights its ``fit`` raises to float64 eps before every round (a diagnosis of where it differs)."""
    from sklearn.ensemble import AdaBoostClassifier

    class RecordingAdaBoost(AdaBoostClassifier):
        def _boost(self, iboost, X, y, sample_weight, random_state):
            if iboost == 0:
                self.round_weights_ = []
            elif not clip_weights:
                sample_weight = self.unclipped_ / self.unclipped_.sum()
            self.round_weights_.append(np.array(sample_weight))
            updated, weight, error = super()._boost(iboost, X, y, np.array(sample_weight), random_state)
            if updated is not None:
                self.unclipped_ = np.array(updated)
            return updated, weight, error
    return RecordingAdaBoost


def _compare(sk, bob, X_train, y_train, X_test, k: int) -> dict:
    """Held-out agreement of a scikit-learn and a bob_boost SAMME.R model, and where they first differ."""
    sk_predicted, bob_predicted = sk.predict(X_test), bob.predict(X_test)
    # 1.5's decision_function divides the sum of the rounds' outputs by the sum of the estimator weights,
    # which SAMME.R sets to 1 for every fitted round
    sk_scores = sk.decision_function(X_test) * sk.estimator_weights_.sum()
    bob_scores = bob.decision_scores(X_test)
    return {"rounds": [len(sk.estimators_), len(bob)], "sklearn_predicted": sk_predicted,
            "same_predictions": float(np.mean(sk_predicted == bob_predicted)),
            "score_gap": float(np.max(np.abs(sk_scores - bob_scores))),
            "largest_score": float(np.max(np.abs(bob_scores))),
            "difference": _first_difference(sk, bob, X_train, y_train, np.vstack([X_train, X_test]), k,
                                            sk.round_weights_)}


def samme_r_worker(data_dir: Path, sets: list[str]) -> dict:
    """Part (a) in scikit-learn 1.5's interpreter: one result per set and depth, as JSON-able dicts."""
    import sklearn
    from sklearn.tree import DecisionTreeClassifier

    import bob_boost

    warnings.filterwarnings("ignore", category=FutureWarning)  # 1.5 deprecates SAMME.R
    rows = []
    for name in sets:
        X, y = _load(data_dir, name)
        k = int(y.max()) + 1
        X_train, X_test, y_train, y_test = _split(X, y, 0)
        for depth in DEPTHS:
            trainer = bob_boost.SAMMERTrainer(bob_boost.ProbabilityTreeTrainer(max_depth=depth, quantized=False),
                                              number_of_rounds=ROUNDS)
            bob = trainer.train(X_train, y_train)
            row = {"set": name, "samples": int(y.size), "classes": k, "depth": depth,
                   "bob_accuracy": float(np.mean(bob.predict(X_test) == y_test))}
            for variant, clip in (("sklearn", True), ("unclipped", False)):
                sk = _adaboost(clip)(estimator=DecisionTreeClassifier(max_depth=depth), n_estimators=ROUNDS,
                                     algorithm="SAMME.R", learning_rate=1.0, random_state=0).fit(X_train, y_train)
                result = _compare(sk, bob, X_train, y_train, X_test, k)
                result["accuracy"] = float(np.mean(result.pop("sklearn_predicted") == y_test))
                row[variant] = result
            rows.append(row)
    return {"python": platform.python_version(), "numpy": np.__version__, "scikit-learn": sklearn.__version__,
            "bob_boost": f"{bob_boost.__version__} ({Path(bob_boost.__file__).parent})", "rows": rows}


def samme_r_table(python: str, data_dir: Path, sets: list[str]) -> None:
    """Runs :func:`samme_r_worker` in ``python`` and prints its tables."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")]
                                                                      if p]))
    completed = subprocess.run([python, __file__, "--samme-r-worker", "--data-dir", str(data_dir),
                                "--samme-r-sets", *sets], env=env, check=True, stdout=subprocess.PIPE, text=True)
    result = json.loads(completed.stdout)
    print(f"\n## (a) SAMME.R: bob_boost against scikit-learn {result['scikit-learn']}'s AdaBoostClassifier"
          f"(algorithm=\"SAMME.R\")")
    print(f"\nInterpreter: Python {result['python']}, numpy {result['numpy']}, scikit-learn "
          f"{result['scikit-learn']}, bob_boost {result['bob_boost']}. {ROUNDS} rounds, stratified 70/30 split "
          "(seed 0), held-out rows. Scores: scikit-learn's decision_function times its estimator-weight sum "
          "(its number of fitted rounds) against bob_boost's decision_scores. The last three columns compare "
          "bob_boost with the same scikit-learn model whose rounds get the plain products of the weight "
          "updates, not the weights scikit-learn's fit raises to float64 eps before every round.\n")
    print("| set (samples, K) | depth | rounds (sklearn / bob) | accuracy sklearn | accuracy bob | same predictions "
          "| max abs score diff (largest abs score) | first differing round | no eps clip: accuracy sklearn "
          "| no eps clip: same predictions | no eps clip: max abs score diff | no eps clip: first differing round |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")

    def first(variant):
        return "none" if variant["difference"] is None else str(variant["difference"]["round"])
    for row in result["rows"]:
        sk, plain = row["sklearn"], row["unclipped"]
        print(f"| {row['set']} ({row['samples']}, {row['classes']}) | {row['depth']} | "
              f"{sk['rounds'][0]} / {sk['rounds'][1]} | {sk['accuracy']:.4f} | {row['bob_accuracy']:.4f} | "
              f"{sk['same_predictions']:.4f} | {sk['score_gap']:.3g} ({sk['largest_score']:.4g}) | {first(sk)} | "
              f"{plain['accuracy']:.4f} | {plain['same_predictions']:.4f} | {plain['score_gap']:.3g} | "
              f"{first(plain)} |")
    notes = [(row, variant) for row in result["rows"] for variant in ("sklearn", "unclipped")
             if row[variant]["difference"] is not None]
    if not notes:
        print("\nEvery model pair agrees: the same trees every round.")
        return
    print("\nWhere the trees first differ (ties between equally good splits can make the trees differ). The "
          "weights compared are the two models' normalised sample weights entering that round; the gains are "
          "the weighted Gini reduction `sum_c W_Lc^2/W_L + sum_c W_Rc^2/W_R - sum_c W_c^2/W` of each tree's "
          "split at the first node where the splits part, on scikit-learn's weights of that round:\n")
    for row, variant in notes:
        d = row[variant]["difference"]
        which = "scikit-learn" if variant == "sklearn" else "scikit-learn without the eps clip"
        text = (f"- {row['set']}, depth {row['depth']}, {which}: round {d['round']}, outputs differ by up to "
                f"{d['output_gap']:.3g}; scikit-learn `{d['sklearn']}`, bob_boost `{d['bob']}`. The weights "
                f"entering the round differ by {d['weight_gap']:.2g} of the largest; {d['below_eps']} of "
                "bob_boost's are below float64 eps.")
        if "sklearn_gain" not in d:
            text += (" The splits agree, the leaf values do not: the leaves' class probabilities come from "
                     "different weights.")
        else:
            a, b = d["sklearn_gain"], d["bob_gain"]
            if a is None or b is None:
                text += f" At a node of {d['node_rows']} training rows only one of the trees splits."
            else:
                tie = abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300)
                verdict = "a tie." if tie else f"not a tie (relative difference {abs(a - b) / max(abs(a), abs(b)):.2g})."
                text += (f" At the first node where they part ({d['node_rows']} training rows) scikit-learn splits "
                         f"x{d['sklearn_node'][0]} <= {d['sklearn_node'][1]:.6g} (gain {a:.12g}), bob_boost "
                         f"x{d['bob_node'][0]} <= {d['bob_node'][1]:.6g} (gain {b:.12g}): {verdict}")
        print(text)


# --- (b) RUSBoost, in this interpreter ------------------------------------------------------------------------


def rusboost_table(data_dir: Path, sets: list[str]) -> None:
    """Prints the class counts and the balanced accuracies of both RUSBoosts."""
    from imblearn.ensemble import RUSBoostClassifier
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.tree import DecisionTreeClassifier

    import bob_boost

    print("\n## (b) RUSBoost: bob_boost against imbalanced-learn's RUSBoostClassifier")
    print(f"\n{ROUNDS} rounds of depth-1 trees, under-sampling to balanced classes every round; seeds "
          f"{SEEDS.start}..{SEEDS.stop - 1}, each with its own stratified 70/30 split and the same seed for both "
          "models' under-samples; held-out balanced accuracy, mean (standard deviation) over the seeds. "
          "Target: bob_boost within 1 point (0.01) of imbalanced-learn.\n")
    print("| set (samples) | class counts (minority share) | imbalanced-learn | bob_boost "
          "| bob - imblearn (std of per-seed difference) | within 1 point |")
    print("|---|---|---|---|---|---|")
    for name in sets:
        X, y = _load(data_dir, name)
        counts = np.bincount(y)
        scores = []
        for seed in SEEDS:
            X_train, X_test, y_train, y_test = _split(X, y, seed)
            imb = RUSBoostClassifier(estimator=DecisionTreeClassifier(max_depth=1), n_estimators=ROUNDS,
                                     random_state=seed).fit(X_train, y_train)
            bob = bob_boost.RUSBoostTrainer(bob_boost.CostSensitiveTreeTrainer(max_depth=1), number_of_rounds=ROUNDS,
                                            ratio=1.0, random_state=seed).train(X_train, y_train)
            scores.append([balanced_accuracy_score(y_test, imb.predict(X_test)),
                           balanced_accuracy_score(y_test, bob.predict(X_test))])
        scores = np.array(scores)
        gap = scores[:, 1] - scores[:, 0]
        within = "yes" if abs(gap.mean()) <= 0.01 else "no"
        print(f"| {name} ({y.size}) | {', '.join(f'{c}: {n}' for c, n in enumerate(counts))} "
              f"({counts.min() / y.size:.1%}) | {scores[:, 0].mean():.4f} ({scores[:, 0].std():.4f}) | "
              f"{scores[:, 1].mean():.4f} ({scores[:, 1].std():.4f}) | {gap.mean():+.4f} ({gap.std():.4f}) | "
              f"{within} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-sk15", help="the Python of an environment with scikit-learn 1.5 (part (a))")
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--samme-r-sets", nargs="+", default=list(SAMME_R_SETS))
    parser.add_argument("--rusboost-sets", nargs="+", default=list(RUSBOOST_SETS))
    parser.add_argument("--samme-r-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.samme_r_worker:
        json.dump(samme_r_worker(args.data_dir, args.samme_r_sets), sys.stdout)
        return
    if args.python_sk15 is None:
        parser.error("--python-sk15 is required (part (a) runs in scikit-learn 1.5's interpreter)")
    import imblearn
    import sklearn

    import bob_boost

    print(f"# bob_boost's SAMME.R and RUSBoost against the reference implementations")
    print(f"\n{datetime.date.today()}, {cpu_model()}; Python {platform.python_version()}, numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}, imbalanced-learn {imblearn.__version__}, bob_boost "
          f"{bob_boost.__version__}; part (a) in {args.python_sk15}")
    sys.stdout.flush()
    samme_r_table(args.python_sk15, args.data_dir, args.samme_r_sets)
    rusboost_table(args.data_dir, args.rusboost_sets)


if __name__ == "__main__":
    main()
