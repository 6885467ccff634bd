"""Histograms of one output's float gradients added four lanes at a time.

A bin of a one-output histogram takes a gradient, a hessian and a count from
every row in it: three separate read-modify-writes. Held as one aligned
32-byte quad ``(gradient, hessian, count, 0)``, a bin takes a row in one vector
add, which leaves each lane's sum exactly what the separate adds give (the same
additions in the same order; counts are whole numbers, exact in a double). The
quads are then copied out into the histogram's sums and counts, so the rest of
the engine reads the usual layout.

On 300,000 rows of 28 one-byte features (2-core AVX-512 Xeon), the histogram of
a node of 4,096 scattered rows took 110 us instead of 159 (16,384 rows: 434
against 643), the quads' clearing and copying out included; under about 700
rows the copy costs more than it saves (:data:`QUAD_ROWS_PER_BIN`).
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from .prefetch import DISTANCE, prefetch

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: A node's histogram is built in quads when its rows times its features reach this many times its
#: bins (28 features of 256 bins: 768 rows); the clearing and copying out cost about three row-feature
#: adds' savings a bin.
QUAD_ROWS_PER_BIN = 3


@numba.njit(**_JIT)
def quad_scratch(bins):
    """Room for the quads of a histogram of ``bins`` bins at a 32-byte boundary (:func:`quads_of`)."""
    return np.empty(4 * bins + 4)


@intrinsic
def _add_row(typingctx, flat, index, gradient, hessian):
    """Add ``(gradient, hessian, 1, 0)`` to ``flat[index:index + 4]`` as one vector (float64 ``flat``)."""
    if not (isinstance(flat, types.Array) and flat.dtype == types.float64):
        return None
    signature = types.void(flat, index, types.float64, types.float64)

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0])
        quad = ir.VectorType(ir.DoubleType(), 4)
        pointer = builder.bitcast(builder.gep(data.data, [args[1]]), quad.as_pointer())
        row = ir.Constant(quad, [ir.Undefined, ir.Undefined, 1.0, 0.0])
        row = builder.insert_element(row, args[2], ir.Constant(ir.IntType(32), 0))
        row = builder.insert_element(row, args[3], ir.Constant(ir.IntType(32), 1))
        # alignment 8 (an unaligned move, as fast as an aligned one on an aligned address): never a fault
        builder.store(builder.fadd(builder.load(pointer, align=8), row), pointer, align=8)
        return context.get_dummy_value()
    return signature, codegen


@numba.njit(**_JIT)
def quads_of(scratch, bins):
    """The (bins, 4) quads in ``scratch`` (:func:`quad_scratch`), from its first 32-byte boundary."""
    shift = (-(scratch.ctypes.data // 8)) % 4
    return scratch[shift:shift + 4 * bins].reshape(bins, 4)


@numba.njit(**_JIT)
def accumulate_quads(dense_rows, dense_bases, row_starts, entry_bins, order, start, stop, values, quads, sums,
                     counts, total):
    """Add the rows ``order[start:stop]`` of (#samples, 2) float ``values`` into ``quads`` (cleared here) a row
    at a time, then copy them out into ``sums``/``counts``; their sums go into ``total``, added in row order.

    The rows' bins are read as :func:`~bob_boost.engine.tree_histograms.build_histogram`'s row pass reads
    them, and every bin adds its rows in ascending order: the sums are that pass's, bit for bit.
    """
    quads[:, :] = 0
    flat = quads.reshape(-1)
    node_gradient = 0.0
    node_hessian = 0.0
    for p in range(start, stop):
        if p + DISTANCE < stop:  # scattered rows: ask for a later row's values and codes now
            ahead = order[p + DISTANCE]
            prefetch(values, ahead * 2)
            prefetch(dense_rows, ahead * dense_rows.shape[1])
        i = order[p]
        row = dense_rows[i]
        gradient = np.float64(values[i, 0])
        hessian = np.float64(values[i, 1])
        node_gradient += gradient
        node_hessian += hessian
        for j in range(dense_bases.size):
            _add_row(flat, 4 * (dense_bases[j] + np.intp(row[j])), gradient, hessian)
        for e in range(row_starts[i], row_starts[i + 1]):
            _add_row(flat, 4 * np.intp(entry_bins[e]), gradient, hessian)
    total[0] = node_gradient
    total[1] = node_hessian
    for b in range(counts.size):
        sums[b, 0] = quads[b, 0]
        sums[b, 1] = quads[b, 1]
        counts[b] = np.int64(quads[b, 2])
