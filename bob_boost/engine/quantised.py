"""Quantised gradients: a gradient tree's histograms in integer adds, exact whatever the order.

As LightGBM's ``use_quantized_grad``, each tree's gradients and hessians are
rounded stochastically to a few integer levels: ``q_g = floor(g / s_g + u)``
with ``s_g = max|g| / (levels / 2)``, ``q_h = floor(h / s_h + u')`` with
``s_h = max h / levels`` and ``u, u'`` uniform on [0, 1), so the rounding is
unbiased (``|q_g| <= ceil(levels / 2)``, ``0 <= q_h <= levels``; hessians must
not be negative). A row's ``q_g``, ``q_h`` and a count of 1 are packed into
int64 columns whose integer sums are the sums of the fields, exactly
(:func:`packing`): into one column, ``q_g * 2**(c + a) + q_h * 2**c + 1``
with ``c`` bits for the count and ``a`` for the hessian sum of every sample,
when the three sums fit in 64 bits, so that a histogram bin costs one add per
row (three with float sums and counts); else into two, ``q_g`` and
``q_h * 2**c + 1``, or three, ``q_g``, ``q_h`` and 1, as LightGBM widens its
accumulators for large leaves. The sums, so the trees, do not depend on how
many columns hold them. Subtraction is exact, and the split scan reads the
decoded sums times the scales. The leaves take their values from the real
gradients of their samples, and the tree's sample counts are exact.

The two uniform numbers of a row are the halves of a hash (splitmix64) of the
round, the tree and the row: the same data give the same trees whatever the
thread count.
"""
from __future__ import annotations

import numba
import numpy as np

from ..exceptions import InvalidValueError
from .hashing import GOLDEN, mix

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}


#: The most levels ``quantized_gradients`` takes: the three-column packing then holds the sums of any
#: number of samples below 2**31.
MAX_LEVELS = 1 << 16


def packing(n_samples: int, levels: int) -> tuple[int, int, int]:
    """``(columns, c, a)``: the int64 columns a row's packed fields take for ``n_samples`` rows quantised to
    ``levels``, and the bits of the count and hessian fields (where they share a column).

    One column when the count (``c`` bits), the hessian sum (``a`` bits) and the signed gradient sum
    (up to ``n_samples * ceil(levels / 2)`` in magnitude) fit in 64 bits together; else two when the
    count and hessian fit in the second column's 63 non-negative bits; else three.

    Raises
    ------
    InvalidValueError
        When even a column a field does not hold the sums (more than about ``2**62 / levels`` samples).
    """
    count_bits = int(n_samples).bit_length()
    hessian_bits = int(n_samples * levels).bit_length()
    gradient_bits = int(n_samples * ((levels + 1) // 2)).bit_length() + 1
    if count_bits + hessian_bits + gradient_bits <= 64:
        return 1, count_bits, hessian_bits
    if gradient_bits > 64 or hessian_bits > 63:
        raise InvalidValueError(f"quantized_gradients: {n_samples} samples at {levels} levels do not fit the "
                                f"64-bit sums; use fewer levels or quantized_gradients=None")
    if count_bits + hessian_bits <= 63:
        return 2, count_bits, hessian_bits
    return 3, count_bits, hessian_bits


@numba.njit(**_JIT)
def quantise(gradient, hessian, first, last, levels, seed, count_bits, hessian_bits, packed, real, scales):
    """Columns ``first:last`` of ``gradient``/``hessian`` packed into ``packed`` (#samples, w * (last - first)),
    the ``w`` columns of :func:`packing` for each.

    ``real`` (last - first, #samples, 2) receives each column's gradients and
    hessians side by side (the leaves' values come from them) and ``scales``
    (last - first, 2) their scales. ``seed`` keys the rounding's uniform
    numbers (with the column and the row). The rows are read once for all
    the columns (a row's entries lie together), then each column is rounded
    on its own contiguous copy.
    """
    n_samples = gradient.shape[0]
    columns = last - first
    largest = np.zeros((columns, 2))
    for i in range(n_samples):
        for j in range(columns):
            g = gradient[i, first + j]
            h = hessian[i, first + j]
            real[j, i, 0] = g
            real[j, i, 1] = h
            largest[j, 0] = max(largest[j, 0], abs(g))
            largest[j, 1] = max(largest[j, 1], h)
    width = packed.shape[1] // columns
    gradient_unit = np.int64(1) << (count_bits + hessian_bits)
    hessian_unit = np.int64(1) << count_bits
    half = np.uint64(0xFFFFFFFF)
    for j in range(columns):
        scales[j, 0] = largest[j, 0] / (levels / 2) if largest[j, 0] > 0 else 1.0
        scales[j, 1] = largest[j, 1] / levels if largest[j, 1] > 0 else 1.0
        gradient_scale, hessian_scale = scales[j, 0], scales[j, 1]
        values = real[j]
        base = (np.uint64(seed) * np.uint64(1 << 20) + np.uint64(first + j)) * np.uint64(n_samples)
        for i in range(n_samples):
            z = mix(base + np.uint64(i) + GOLDEN)
            q_g = np.int64(np.floor(values[i, 0] / gradient_scale + np.float64(z >> np.uint64(32)) *
                                    (1.0 / 4294967296.0)))
            q_h = np.int64(np.floor(values[i, 1] / hessian_scale + np.float64(z & half) * (1.0 / 4294967296.0)))
            if width == 1:
                packed[i, j] = q_g * gradient_unit + q_h * hessian_unit + 1
            elif width == 2:
                packed[i, 2 * j] = q_g
                packed[i, 2 * j + 1] = q_h * hessian_unit + 1
            else:
                packed[i, 3 * j] = q_g
                packed[i, 3 * j + 1] = q_h
                packed[i, 3 * j + 2] = 1


@numba.njit(**_JIT)
def decode(sums, count_bits, hessian_bits, scales, out_sums, out_counts):
    """Packed (#bins, w) ``sums`` (:func:`packing`'s ``w`` columns) as gradient and hessian sums ``out_sums``
    (#bins, 2) and ``out_counts``."""
    width = sums.shape[1]
    count_mask = (np.int64(1) << count_bits) - 1
    hessian_mask = (np.int64(1) << hessian_bits) - 1
    gradient_shift = count_bits + hessian_bits
    for b in range(sums.shape[0]):
        s = np.int64(sums[b, 0])
        if width == 1:
            out_counts[b] = s & count_mask
            out_sums[b, 1] = ((s >> count_bits) & hessian_mask) * scales[1]
            out_sums[b, 0] = (s >> gradient_shift) * scales[0]
        elif width == 2:
            second = np.int64(sums[b, 1])
            out_counts[b] = second & count_mask
            out_sums[b, 1] = (second >> count_bits) * scales[1]
            out_sums[b, 0] = s * scales[0]
        else:
            out_counts[b] = sums[b, 2]
            out_sums[b, 1] = np.int64(sums[b, 1]) * scales[1]
            out_sums[b, 0] = s * scales[0]
