"""SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
2014): the one hash behind every draw that must not depend on threads, blocks or partitions (held-out rows,
sampled rows and columns, the rounding of quantised gradients). It is a bijection of uint64 whose outputs look
independent for consecutive inputs; uint64 arithmetic wraps modulo 2**64, which it relies on.
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
