"""The rows early stopping holds out, computed from their definition with Python integers: an independent
reference for :mod:`bob_boost.holdout` and its Dask twin.

Row ``i`` gets SplitMix64's output for the state ``(i + seed + 1) * 0x9E3779B97F4A7C15`` (mod 2**64); each
class (a regressor's rows: one group) holds out the ``ceil(fraction * size)`` rows with the smallest outputs;
rows of weight 0 take no part.
"""
from __future__ import annotations

import math

import numpy as np

MASK = (1 << 64) - 1


def splitmix64(state: int) -> int:
    """SplitMix64's output for ``state`` (the value after its Weyl step)."""
    z = state & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def held_out_rows(n: int, seed: int, fraction: float = 0.1, labels=None, weights=None) -> np.ndarray:
    """(n,) bool: the held-out rows of ``n`` rows (stratified by ``labels`` when given)."""
    groups = [0] * n if labels is None else list(np.asarray(labels).tolist())
    eligible = [True] * n if weights is None else list((np.asarray(weights) > 0).tolist())
    mask = np.zeros(n, dtype=bool)
    for group in set(groups):
        rows = [i for i in range(n) if groups[i] == group and eligible[i]]
        rows.sort(key=lambda i: splitmix64((i + seed + 1) * 0x9E3779B97F4A7C15))
        mask[rows[:math.ceil(round(fraction * len(rows), 9))]] = True
    return mask
