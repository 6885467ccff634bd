"""SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
2014): the one hash behind every draw that must not depend on threads, blocks or partitions (held-out rows,
sampled rows and columns, the rounding of quantised gradients). It is a bijection of uint64 whose outputs look
independent for consecutive inputs; uint64 arithmetic wraps modulo 2**64, which it relies on. And the exact
selection of the smallest keys of each group from keys held in blocks (held-out rows, stratified and GOSS
samples on partitions).
"""
from __future__ import annotations

import numba
import numpy as np

#: 2**64 divided by the golden ratio: the step between consecutive keys (a Weyl sequence).
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(nogil=True, cache=True)
def mix(z):
    """The finaliser of a uint64 ``z`` (in compiled code)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(nogil=True, cache=True)
def mixed(keys):
    """:func:`mix` of every entry of the uint64 vector ``keys`` (a new array), in one pass."""
    out = np.empty_like(keys)
    for i in range(keys.size):
        out[i] = mix(keys[i])
    return out


def row_hashes(rows: np.ndarray, seed: int) -> np.ndarray:
    """(n,) uint64 hashes of the global row indices ``rows`` under ``seed`` (distinct rows, distinct hashes):
    :func:`mixed` of each row's key ``(row + seed + 1)`` Weyl steps from 0.

    Array arithmetic on uint64 wraps modulo 2**64, which the hash relies on.
    """
    offset = np.array([(int(seed) & ((1 << 64) - 1))], dtype=np.uint64) * GOLDEN  # (seed + 1) Weyl steps from 0
    keys = np.asarray(rows).astype(np.uint64) * GOLDEN + offset + GOLDEN
    return mixed(np.ascontiguousarray(keys).ravel()).reshape(keys.shape)


# -- the smallest keys of each group, from blocks of keys (rows in partitions or chunks) ----------------------------
#
# The k-th smallest key of a group is found exactly in two passes over the blocks, each bringing back little:
# the first counts each group's keys per bucket of their top BUCKET_BITS bits (summed over the blocks), which
# gives the bucket of the k-th key; the second brings back the group's keys in that bucket, whose sorted order
# gives it. Uniform hashes spread a group over the buckets, so the second pass brings about n / 4096 keys.

#: The top bits of a key that give its bucket in the first pass.
BUCKET_BITS = 12


def _grouped(keys: np.ndarray, groups: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The keys of rows in a group (group >= 0) and their groups (None: every key in group 0)."""
    if groups is None:
        return keys, np.zeros(keys.size, dtype=np.int64)
    taking = groups >= 0
    return keys[taking], groups[taking]


def bucket_counts(keys: np.ndarray, groups: np.ndarray | None, number: int) -> np.ndarray:
    """(number, 2**BUCKET_BITS) a block's keys per group (``groups``; -1 takes no part; None: one group) and
    bucket."""
    keys, groups = _grouped(keys, groups)
    cells = groups << BUCKET_BITS | (keys >> np.uint64(64 - BUCKET_BITS)).astype(np.int64)
    return np.bincount(cells, minlength=number << BUCKET_BITS).reshape(number, 1 << BUCKET_BITS)


def last_buckets(counts: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The bucket of every group's ``ranks[g]``-th smallest key (1-based), from the blocks' summed
    :func:`bucket_counts`."""
    cumulative = np.cumsum(counts, axis=1)
    buckets = np.array([np.searchsorted(cumulative[g], max(int(ranks[g]), 1)) for g in range(len(ranks))],
                       dtype=np.int64)
    return np.minimum(buckets, cumulative.shape[1] - 1)


def bucket_keys(keys: np.ndarray, groups: np.ndarray | None, buckets: np.ndarray) -> list[np.ndarray]:
    """Per group ``g``, a block's keys of ``g`` in bucket ``buckets[g]``."""
    keys, groups = _grouped(keys, groups)
    bucket = (keys >> np.uint64(64 - BUCKET_BITS)).astype(np.int64)
    return [keys[(groups == g) & (bucket == b)] for g, b in enumerate(buckets)]


def kth_keys(counts: np.ndarray, candidates: list[list[np.ndarray]], ranks: np.ndarray) -> np.ndarray:
    """(#groups,) every group's ``ranks[g]``-th smallest key (0 for rank 0), from the summed
    :func:`bucket_counts` and every block's :func:`bucket_keys` of the :func:`last_buckets`: exactly the key
    ``numpy.partition`` finds among them all, however the keys were split into blocks."""
    buckets = last_buckets(counts, ranks)
    cumulative = np.cumsum(counts, axis=1)
    thresholds = np.zeros(len(ranks), dtype=np.uint64)
    for g in np.flatnonzero(np.asarray(ranks) > 0):
        below = int(cumulative[g, buckets[g] - 1]) if buckets[g] > 0 else 0
        thresholds[g] = np.sort(np.concatenate([found[g] for found in candidates]))[int(ranks[g]) - below - 1]
    return thresholds
