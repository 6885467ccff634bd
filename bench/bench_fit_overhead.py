"""Time ``BoostingClassifier.fit`` (10k x 50 synthetic float data, 100 stumps), fastest of 3.

Used to check that the estimators' histories and importances cost nothing measurable: run it
for two checkouts side by side, interleaved, e.g.::

    for i in 1 2; do PYTHONPATH=OLD python bench/bench_fit_overhead.py old
                     PYTHONPATH=NEW python bench/bench_fit_overhead.py new; done
"""
from __future__ import annotations

import sys
import time

from sklearn.datasets import make_classification

from bob_boost.sklearn import BoostingClassifier


def main() -> None:
    """Print the label given on the command line, the fastest fit in seconds and the machine's length."""
    features, labels = make_classification(n_samples=10000, n_features=50, random_state=0)
    estimator = BoostingClassifier(n_estimators=100)
    estimator.fit(features[:500], labels[:500])  # compile the kernels before timing
    times = []
    for _ in range(3):
        start = time.perf_counter()
        estimator.fit(features, labels)
        times.append(time.perf_counter() - start)
    label = sys.argv[1] if len(sys.argv) > 1 else "fit"
    print(label, f"{min(times):.3f} s", len(estimator.machine_))


if __name__ == "__main__":
    main()
