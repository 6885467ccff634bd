"""Which rows early stopping holds out: a function of each row's index in the data and a seed.

The in-memory estimators and the Dask estimators hold out the same rows of the same data, whatever its
chunking: every row gets a 64-bit hash of its global index (SplitMix64's finaliser, a bijection, so no two
rows of a fit tie), and each class holds out ``ceil(validation_fraction * its size)`` of its rows with the
smallest hashes (stratified, as scikit-learn's ``train_test_split`` with ``stratify``; a regressor's rows
form one group). Rows without positive weight take no part: they are dropped before training in memory and
keep weight 0 on Dask. In memory the choice is a sort; on Dask it is two passes over the chunks
(``bob_boost.dask._dask.holdout``) that find, per class, the largest hash held out.
"""
from __future__ import annotations

import math

import numpy as np

from .engine.hashing import row_hashes
from .exceptions import InvalidValueError

def held_out_counts(sizes: np.ndarray, fraction: float, names=None,
                    parameter: str = "validation_fraction") -> np.ndarray:
    """How many rows each group of ``sizes`` rows holds out: ``ceil(fraction * size)`` (the product rounded
    to 9 decimals first, so that ``0.1 * 30`` holds out 3).

    Raises
    ------
    ValueError
        When a non-empty group would keep no training row: the class ``names[g]`` (a classifier's), or the
        samples (a regressor's one group, ``names`` None); the message names ``parameter``, the fraction's.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.array([math.ceil(round(fraction * int(n), 9)) for n in sizes], dtype=np.int64)
    for group in np.flatnonzero((sizes > 0) & (counts >= sizes)):
        if names is None:
            raise InvalidValueError(f"{parameter}: {fraction} cannot hold out a validation set from "
                                    f"{int(sizes[group])} samples and keep some for training")
        raise InvalidValueError(f"{parameter}: {fraction} leaves class {names[group]!r} without "
                                f"training samples")
    return counts


def held_out_mask(rows: np.ndarray, groups: np.ndarray, counts: np.ndarray, seed: int) -> np.ndarray:
    """(n,) bool: the rows held out, ``counts[g]`` of group ``g`` (``groups`` are 0 .. len(counts) - 1) with
    the smallest :func:`row_hashes` of their global indices ``rows``."""
    hashes = row_hashes(rows, seed)
    order = np.lexsort((hashes, groups))
    sorted_groups = groups[order]
    starts = np.searchsorted(sorted_groups, np.arange(len(counts)))
    rank = np.arange(order.size) - starts[sorted_groups]
    mask = np.zeros(order.size, dtype=bool)
    mask[order[rank < counts[sorted_groups]]] = True
    return mask


def group_sizes(groups: np.ndarray, number_of_groups: int) -> np.ndarray:
    """(G,) the number of rows of each group."""
    return np.bincount(groups, minlength=number_of_groups)
