"""What the workers run for multi-class boosting of trees (BAdaCost, SAMME, AdaBoost.M1): numpy on one chunk.

A chunk's tree state is ``sample_node``, every row's current node; each level sends per-node class
histograms, each round a (K, K) confusion matrix.
"""
from __future__ import annotations

import numpy as np

from ..costs import check_class_labels
from ..engine.codes import CodedFeatures, integral_features, step_codes
from ..engine.threads import check_threads
from ..exceptions import InvalidValueError


def value_range(chunk: np.ndarray, n_threads: int | None = 1,
                missing: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's smallest and largest value and whether it holds only integers; NaN is an error, unless
    ``missing`` (NaN a missing value, skipped: a column of NaN only gives +inf and -inf). Infinity is an error
    either way."""
    if missing and chunk.dtype.kind == "f":
        if np.isinf(chunk).any():
            raise InvalidValueError("features: contain infinite values")
        present = ~np.isnan(chunk)
        low = np.where(present, chunk, np.inf).min(axis=0, initial=np.inf)
        high = np.where(present, chunk, -np.inf).max(axis=0, initial=-np.inf)
    else:
        if not np.isfinite(chunk).all():
            raise InvalidValueError("features: contain NaN or infinite values")
        low, high = chunk.min(axis=0), chunk.max(axis=0)
    # the in-memory test, which skips NaN, on the chunk's rows: all chunks integral is the whole matrix integral
    return low.astype(np.float64), high.astype(np.float64), integral_features(chunk, check_threads(n_threads))


def quantized_codes(chunk: np.ndarray, low: np.ndarray, step: np.ndarray, top: int, bins: int,
                    n_threads: int | None = 1, missing_codes: np.ndarray | None = None) -> CodedFeatures:
    """The chunk coded into the global quantised bins (:class:`bob_boost.engine.edges.QuantizedLayout`), NaN as
    its feature's ``missing_codes`` (with missing values), its node histograms built on ``n_threads``."""
    threads = check_threads(n_threads)
    return CodedFeatures(step_codes(chunk, low, step, threads, top, missing_codes), bins, threads)


def class_indices(chunk: np.ndarray, number_of_classes: int) -> np.ndarray:
    """The chunk's labels as int64 classes ``0 .. K-1`` (checked)."""
    return check_class_labels(chunk, number_of_classes)


def largest_label(chunk: np.ndarray) -> int:
    """The largest label of the chunk (labels must be integers >= 0)."""
    return int(check_class_labels(chunk, np.iinfo(np.int64).max).max(initial=0))
