"""bob_boost's SAMME.R and RUSBoost against the reference implementations, on the same UCI data.

(a) SAMME.R: ``SAMMERTrainer(ProbabilityTreeTrainer(max_depth=d, quantized=False), number_of_rounds=50)``
against scikit-learn 1.5's ``AdaBoostClassifier(estimator=DecisionTreeClassifier(max_depth=d),
n_estimators=50, algorithm="SAMME.R", learning_rate=1.0, random_state=0)``, for depths 1 and 2, on a
stratified 70/30 split (seed 0) of each multi-class set. scikit-learn removed SAMME.R in 1.6, so this part
runs in the interpreter given by ``--python-sk15``, with this checkout's bob_boost first on its path. The
table gives both held-out accuracies, the share of held-out rows both predict the same class for, and the
largest absolute difference of the held-out scores: bob_boost's are the plain sum over the rounds of
``(K-1) (log p_k - mean_j log p_j)``, scikit-learn 1.5's ``decision_function`` is that sum divided by the sum
of its estimator weights (1 for every fitted SAMME.R round), so it is multiplied back by that sum. The same
columns are given against scikit-learn's model with one change, which locates the main difference: its
rounds get the plain (normalised) products of the weight updates rather than the weights its ``fit`` raises
to float64 eps before every round. For each pair that differs, the notes give the first round whose trees'
outputs differ (on the training and held-out rows), both trees' splits, and why: the same splits with other
leaf values (other weights), a tie between equally good splits (equal up to rounding, or within bob_boost's
tie tolerance of 1e-12 of the split score, where it takes the first feature and threshold), or a node only
one of them splits.

(b) RUSBoost: ``RUSBoostTrainer(CostSensitiveTreeTrainer(max_depth=1), number_of_rounds=50, ratio=1.0,
random_state=seed)`` against imbalanced-learn's ``RUSBoostClassifier(estimator=DecisionTreeClassifier(
max_depth=1), n_estimators=50, random_state=seed)`` (SAMME on a random under-sample of the larger class every
round), on imbalanced binary sets (credit-g, diabetes, ionosphere, and letter as the letter A against the
rest), for seeds 0..9 (``--seeds``), each with its own stratified 70/30 split: the mean and standard
deviation of the held-out balanced accuracy of each, the mean of their per-seed differences with its
standard error, and the mean number of trees each kept. The two draw their under-samples from different
random streams, so only the distributions can agree; for scale, the same difference between imbalanced-learn
with seeds s + 1000 and s is given too. The target is bob_boost within 1 point of imbalanced-learn.

The sets are ``<data-dir>/uci/<name>/<name>.tsv.gz``. Nothing is timed.

Usage::

    python bench/bench_family_references.py --python-sk15 /tmp/venv_sk15/bin/python [--data-dir DIR] \
        [--samme-r-sets car cmc ...] [--rusboost-sets credit-g diabetes ...] [--seeds 10]

with scikit-learn 1.5's interpreter made by ``python -m venv /tmp/venv_sk15 && /tmp/venv_sk15/bin/pip install
"scikit-learn==1.5.2" numpy scipy h5py threadpoolctl numba``, and imbalanced-learn installed beside bob_boost
(``pip install imbalanced-learn``).
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

from _machine import cpu_model  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
SAMME_R_SETS = ("car", "cmc", "krkopt", "letter", "pendigits")
RUSBOOST_SETS = ("credit-g", "diabetes", "ionosphere", "letter")
#: Multi-class sets made binary for part (b) as one class against the others: the class's position among the
#: sorted labels (letter: 0, the letter A).
ONE_AGAINST_REST = {"letter": 0, "pendigits": 3}
#: imbalanced-learn's noise reference runs with seed s + this.
NOISE_SEED = 1000
DEPTHS = (1, 2)
ROUNDS = 50
#: Two trees whose outputs (on every training and held-out row) differ by no more than this are the same.
SAME_OUTPUTS = 1e-8
#: bob_boost's trees take splits whose scores are within this share of the best as tied with it.
TIE_TOLERANCE = 1e-12
#: Split scores within this share of each other are equal up to the rounding of their sums.
ROUNDING = 16 * np.finfo(np.float64).eps


def _load(data_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and class indices 0 .. K-1 (the sorted labels' positions) of a UCI set."""
    with gzip.open(data_dir / "uci" / name / f"{name}.tsv.gz", "rt") as handle:
        handle.readline()
        table = np.loadtxt(handle, delimiter="\t")
    return table[:, :-1], np.unique(table[:, -1], return_inverse=True)[1]


def _load_binary(data_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A set's features and 0/1 classes: its own, or one class (:data:`ONE_AGAINST_REST`) as 1 against the rest."""
    X, y = _load(data_dir, name)
    if name in ONE_AGAINST_REST:
        y = (y == ONE_AGAINST_REST[name]).astype(np.int64)
    return X, y


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


def _split_score(X: np.ndarray, y: np.ndarray, w: np.ndarray, k: int, rows: np.ndarray, feature: int,
                 threshold: float) -> tuple[float, float]:
    """The score ``sum_c W_Lc^2 / W_L + sum_c W_Rc^2 / W_R`` of a split of ``rows`` (a boolean mask), which both
    trees maximise, and its gain over the unsplit node's ``sum_c W_c^2 / W`` (the weighted Gini reduction)."""
    def score(mask):
        sums = np.bincount(y[mask], weights=w[mask], minlength=k)
        return float(np.sum(sums ** 2) / sums.sum()) if sums.sum() > 0 else 0.0
    left = rows & (X[:, feature] <= threshold)
    children = score(left) + score(rows & ~left)
    return children, children - score(rows)


def _first_parting_node(X: np.ndarray, splits_a, splits_b):
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
        found = _first_parting_node(X_train, sk_split, bob_split)
        result = {"round": t + 1, "output_gap": gap, "sklearn": _sklearn_splits(tree),
                  "bob": _bob_splits(machine), "weight_gap": float(np.max(np.abs(sk_w - bob_w)
                                                                          / np.maximum(sk_w, bob_w).clip(1e-300))),
                  "below_eps": int(np.sum(bob_w < np.finfo(np.float64).eps))}
        if found is not None:
            rows, a, b = found
            sums = np.bincount(y_train[rows], weights=sk_w[rows], minlength=k)
            result.update(node_rows=int(rows.sum()), node_weight=float(sums.sum()),
                          node_gini=float(1 - np.sum((sums / sums.sum()) ** 2)),
                          sklearn_node=None if a is None else a[:2], bob_node=None if b is None else b[:2])
            result.update({f"{source}_scores": [None if split is None else
                                                _split_score(X_train, y_train, w, k, rows, *split[:2])
                                                for split in (a, b)]
                           for source, w in (("sklearn", sk_w), ("bob", bob_w))})
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
          "weights compared are the two models' normalised sample weights entering that round; a split's score "
          "is `sum_c W_Lc^2/W_L + sum_c W_Rc^2/W_R`, which both trees maximise, and its gain that less the "
          "node's `sum_c W_c^2/W` (the weighted Gini reduction), at the first node where the splits part:\n")
    for row, variant in notes:
        d = row[variant]["difference"]
        which = "scikit-learn" if variant == "sklearn" else "scikit-learn without the eps clip"
        text = (f"- {row['set']}, depth {row['depth']}, {which}: round {d['round']}, outputs differ by up to "
                f"{d['output_gap']:.3g}; scikit-learn `{d['sklearn']}`, bob_boost `{d['bob']}`. The weights "
                f"entering the round differ by up to {d['weight_gap']:.2g} of a row's weight; {d['below_eps']} of "
                "bob_boost's (normalised) are below float64 eps.")
        if "node_rows" not in d:
            text += (" The splits agree, the leaf values do not: the leaves' class probabilities come from "
                     "different weights.")
        elif d["sklearn_node"] is None or d["bob_node"] is None:
            splitter, other = ("scikit-learn", "bob_boost") if d["bob_node"] is None else ("bob_boost", "scikit-learn")
            node = d["sklearn_node"] if d["bob_node"] is None else d["bob_node"]
            gain = d["sklearn_scores"][0 if d["bob_node"] is None else 1][1]
            text += (f" At a node of {d['node_rows']} training rows (weight {d['node_weight']:.3g}, Gini impurity "
                     f"{d['node_gini']:.2g}) {splitter} splits x{node[0]} <= {node[1]:.6g}, gain {gain:.2g} "
                     f"({gain / d['node_weight']:.2g} of the node's weight), and {other} does not: bob_boost takes no "
                     f"split whose gain is at most {TIE_TOLERANCE:g} of the node's weight (it counts such a gain "
                     "as rounding), scikit-learn splits every node whose impurity exceeds float64 eps; here the "
                     "split only separates rows of tiny weight, whose leaf probabilities, and so log-probability "
                     "outputs, then differ. Not a tie.")
        else:
            (sk_a, sk_b), (bob_a, bob_b) = d["sklearn_scores"], d["bob_scores"]
            relative = [(a[0] - b[0]) / max(abs(a[0]), abs(b[0])) for a, b in ((sk_a, sk_b), (bob_a, bob_b))]
            gains = (sk_a[1] - sk_b[1]) / max(abs(sk_a[1]), abs(sk_b[1]))
            largest = max(abs(r) for r in relative)
            if largest <= ROUNDING:
                verdict = ("a tie up to rounding, which bob_boost breaks to the first feature and threshold and "
                           "scikit-learn to the larger score as rounded in its own sums")
            elif largest <= TIE_TOLERANCE:
                verdict = (f"a near-tie: the gains differ by {gains:.2g} of the gain, but the split scores by less "
                           f"than bob_boost's tie tolerance ({TIE_TOLERANCE:g} of the score; the node's weight is "
                           "nearly all one class, so its gains are tiny next to its score), within which bob_boost "
                           "takes the first feature and threshold, while scikit-learn takes the larger score")
            else:
                verdict = "not a tie"
            text += (f" At the first node where the splits part ({d['node_rows']} training rows, weight "
                     f"{d['node_weight']:.3g}) scikit-learn splits x{d['sklearn_node'][0]} <= "
                     f"{d['sklearn_node'][1]:.6g} (gain {sk_a[1]:.6g} on its weights), bob_boost "
                     f"x{d['bob_node'][0]} <= {d['bob_node'][1]:.6g} (gain {bob_b[1]:.6g} on its weights); "
                     f"scikit-learn's split scores higher than bob_boost's by {relative[0]:.2g} of the split "
                     f"score on scikit-learn's weights and by {relative[1]:.2g} on bob_boost's: {verdict}.")
        print(text)


# --- (b) RUSBoost, in this interpreter ------------------------------------------------------------------------


def rusboost_table(data_dir: Path, sets: list[str], seeds: int) -> None:
    """Prints the class counts and the balanced accuracies of both RUSBoosts."""
    from imblearn.ensemble import RUSBoostClassifier
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.tree import DecisionTreeClassifier

    import bob_boost

    def imblearn(X_train, y_train, seed):
        return RUSBoostClassifier(estimator=DecisionTreeClassifier(max_depth=1), n_estimators=ROUNDS,
                                  random_state=seed).fit(X_train, y_train)

    print("\n## (b) RUSBoost: bob_boost against imbalanced-learn's RUSBoostClassifier")
    print(f"\n{ROUNDS} rounds at most of depth-1 trees, each on a random under-sample of the larger class to the "
          f"smaller's count; seeds 0..{seeds - 1}, each with its own stratified 70/30 split and the same seed for "
          "both models' under-samples; held-out balanced accuracy, mean (standard deviation) over the seeds. "
          "Both stop early, without the round's tree, once a tree's weighted error on all training rows "
          "reaches 1/2 (SAMME's step is then not positive). The two draw their under-samples from different "
          "random streams, so the noise column gives the same difference between imbalanced-learn with seed "
          f"s + {NOISE_SEED} and with seed s on the same split: what different random streams alone give. "
          "Target: bob_boost within 1 point (0.01) of imbalanced-learn.\n")
    print("| set (samples) | class counts (minority share) | trees (imblearn / bob), mean | imbalanced-learn "
          "| bob_boost | bob - imblearn: mean ± s.e. (std) | noise: imblearn - imblearn: mean ± s.e. (std) "
          "| mean within 1 point |")
    print("|---|---|---|---|---|---|---|---|")
    for name in sets:
        X, y = _load_binary(data_dir, name)
        counts = np.bincount(y)
        scores, trees = [], []
        for seed in range(seeds):
            X_train, X_test, y_train, y_test = _split(X, y, seed)
            imb = imblearn(X_train, y_train, seed)
            other = imblearn(X_train, y_train, seed + NOISE_SEED)
            bob = bob_boost.RUSBoostTrainer(bob_boost.CostSensitiveTreeTrainer(max_depth=1), number_of_rounds=ROUNDS,
                                            ratio=1.0, random_state=seed).train(X_train, y_train)
            scores.append([balanced_accuracy_score(y_test, model.predict(X_test)) for model in (imb, bob, other)])
            trees.append([len(imb.estimators_), len(bob)])
        scores, trees = np.array(scores), np.mean(trees, axis=0)
        gap, noise = scores[:, 1] - scores[:, 0], scores[:, 2] - scores[:, 0]
        error = 2 * gap.std(ddof=1) / np.sqrt(seeds)
        within = (f"{'yes' if abs(gap.mean()) <= 0.01 else 'no'} (mean ± 2 s.e. "
                  f"[{gap.mean() - error:+.4f}, {gap.mean() + error:+.4f}])")
        label = name if name not in ONE_AGAINST_REST else f"{name}, class {ONE_AGAINST_REST[name]} against the rest"

        def spread(values):
            return f"{values.mean():+.4f} ± {values.std(ddof=1) / np.sqrt(seeds):.4f} ({values.std():.4f})"
        print(f"| {label} ({y.size}) | {', '.join(f'{c}: {n}' for c, n in enumerate(counts))} "
              f"({counts.min() / y.size:.1%}) | {trees[0]:.1f} / {trees[1]:.1f} | "
              f"{scores[:, 0].mean():.4f} ({scores[:, 0].std():.4f}) | {scores[:, 1].mean():.4f} "
              f"({scores[:, 1].std():.4f}) | {spread(gap)} | {spread(noise)} | {within} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-sk15", help="the Python of an environment with scikit-learn 1.5 (part (a))")
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--samme-r-sets", nargs="+", default=list(SAMME_R_SETS))
    parser.add_argument("--rusboost-sets", nargs="+", default=list(RUSBOOST_SETS))
    parser.add_argument("--seeds", type=int, default=10, help="part (b)'s seeds 0 .. N-1")
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

    print("# bob_boost's SAMME.R and RUSBoost against the reference implementations")
    print(f"\n{datetime.date.today()}, {cpu_model()}; Python {platform.python_version()}, numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}, imbalanced-learn {imblearn.__version__}, bob_boost "
          f"{bob_boost.__version__}; part (a) in {args.python_sk15}")
    sys.stdout.flush()
    samme_r_table(args.python_sk15, args.data_dir, args.samme_r_sets)
    rusboost_table(args.data_dir, args.rusboost_sets, args.seeds)


if __name__ == "__main__":
    main()
