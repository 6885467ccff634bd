"""Histograms of one output's float gradients added four lanes at a time.

A bin of a one-output histogram takes a gradient, a hessian and a count from
every row in it: three separate read-modify-writes. Held as one aligned
32-byte quad ``(gradient, hessian, count, 0)``, a bin takes a row in one vector
add, which leaves each lane's sum exactly what the separate adds give (the same
additions in the same order; counts are whole numbers, exact in a double). The
quads are then copied out into the histogram's sums and counts, so the rest of
the engine reads the usual layout.

On 300,000 rows of 28 random one-byte codes (2-core AVX-512 Xeon), the histogram
of a node of 4,096 scattered rows took 110 us instead of 159 (16,384 rows: 434
against 643), the quads' clearing and copying out included; under about 700
rows the copy costs more than it saves (:data:`QUAD_ROWS_PER_BIN`).

A node whose bins' counts are known beforehand (every row of the data: a tree's
root, whose counts are the binning's) needs no count lane: its rows are added as
16-byte pairs ``(gradient, hessian)`` straight into the sums, the same additions
in the same order (:func:`add_pairs_share`; the root of 300,000 x 28 codes took
5.0 ms in pairs against 6.7 in quads on one thread).
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from .prefetch import DISTANCE, prefetch
from .unliteral import FALSE, TRUE, ZERO

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


@intrinsic
def _add_pair(typingctx, flat, index, gradient, hessian):
    """Add ``(gradient, hessian)`` to ``flat[index:index + 2]`` as one vector (of ``flat``'s type: the packed
    histograms' integer sums type the same code, which never runs on them)."""
    if not (isinstance(flat, types.Array) and isinstance(flat.dtype, (types.Float, types.Integer))):
        return None
    signature = types.void(flat, index, gradient, hessian)

    def codegen(context, builder, sig, args):
        element = sig.args[0].dtype
        data = context.make_array(sig.args[0])(context, builder, args[0])
        pair = ir.VectorType(context.get_value_type(element), 2)
        pointer = builder.bitcast(builder.gep(data.data, [args[1]]), pair.as_pointer())
        row = ir.Constant(pair, [ir.Undefined, ir.Undefined])
        for lane in (0, 1):
            value = context.cast(builder, args[2 + lane], sig.args[2 + lane], element)
            row = builder.insert_element(row, value, ir.Constant(ir.IntType(32), lane))
        add = builder.fadd if isinstance(element, types.Float) else builder.add
        builder.store(add(builder.load(pointer, align=8), row), pointer, align=8)
        return context.get_dummy_value()
    return signature, codegen


@numba.njit(**_JIT)
def quads_of(scratch, bins):
    """The (bins, 4) quads in ``scratch`` (:func:`quad_scratch`), from its first 32-byte boundary."""
    shift = (-(scratch.ctypes.data // 8)) % 4
    return scratch[shift:shift + 4 * bins].reshape(bins, 4)


@numba.njit(**_JIT)
def _feature_at(offsets, first_bin):
    """The feature whose bins start at the global bin ``first_bin`` (every feature has a bin)."""
    return np.searchsorted(offsets, first_bin, side="right") - 1


@numba.njit(**_JIT)
def _bins(first, last, in_quads, quads, sums, counts, copy_out, known):
    if copy_out:
        for b in range(first, last):
            sums[b, 0] = quads[b, 0]
            sums[b, 1] = quads[b, 1]
            counts[b] = np.int64(quads[b, 2])
    elif in_quads:
        quads[first:last, :] = 0
    else:
        sums[first:last, :] = 0
        if known.size > 0:
            counts[first:last] = known[first:last]
        else:
            counts[first:last] = 0


@numba.njit(**_JIT)
def _own_bins(offsets, dense_bases, first_dense, last_dense, entries, in_quads, quads, sums, counts, copy_out,
              known):
    """Clear (or, with ``copy_out``, copy out of the quads) the bins a share answers for: those of the layout's
    dense features ``first_dense .. last_dense - 1`` and, with ``entries``, every other feature's; cleared counts
    are set to ``known``'s where it is not empty."""
    if entries and first_dense == 0 and last_dense == dense_bases.size:  # the whole histogram: in one go
        _bins(ZERO, offsets[-1], in_quads, quads, sums, counts, copy_out, known)
        return
    for j in range(first_dense, last_dense):
        f = _feature_at(offsets, dense_bases[j])
        _bins(offsets[f], offsets[f + 1], in_quads, quads, sums, counts, copy_out, known)
    if entries:
        in_layout = np.zeros(offsets.size - 1, dtype=np.bool_)
        for j in range(dense_bases.size):
            in_layout[_feature_at(offsets, dense_bases[j])] = True
        for f in range(offsets.size - 1):
            if not in_layout[f]:
                _bins(offsets[f], offsets[f + 1], in_quads, quads, sums, counts, copy_out, known)


@numba.njit(**_JIT)
def add_share(layout, offsets, values, order, start, stop, first_dense, last_dense, entries, in_quads,
              quads, sums, counts, total):
    """A share of the histogram of one output's (#samples, 2) float ``values`` at the rows ``order[start:stop]``:
    the bins of the dense features ``first_dense .. last_dense - 1`` and, with ``entries``, the sparse features'
    listed entries (their frequent bins are left at zero; the node's sums recover them). ``total``, unless
    empty, gets the rows' sums, added in row order (:func:`~bob_boost.engine.tree_histograms.node_total`'s).

    ``in_quads``: added in ``quads`` (:func:`quads_of`), then copied out into ``sums``/``counts``. The rows'
    bins are read as :func:`~bob_boost.engine.tree_histograms.build_histogram`'s row pass reads them and every
    bin adds its rows in ascending order, so the sums do not depend on how the features were shared out.
    Shares of other features may run at the same time: each writes only its own bins.
    """
    dense_rows, dense_bases, row_starts, entry_bins = layout[0], layout[1], layout[2], layout[3]
    unknown = np.empty(0, dtype=counts.dtype)
    _own_bins(offsets, dense_bases, first_dense, last_dense, entries, in_quads, quads, sums, counts, FALSE, unknown)
    # the dense features and the entries in passes of their own: the row loops stay simple (one pass of both
    # kinds of adds behind flags took 30 ns a row of 28 features against 22), and every bin still adds its
    # rows in ascending order
    if in_quads:
        _quad_rows(dense_rows, dense_bases, order, start, stop, first_dense, last_dense, values, quads.reshape(-1),
                   total)
    else:
        _rows(dense_rows, dense_bases, order, start, stop, first_dense, last_dense, values, sums.reshape(-1), counts,
              total)
    if entries and entry_bins.size > 0:
        _entries(row_starts, entry_bins, order, start, stop, values, in_quads, quads.reshape(-1), sums.reshape(-1),
                 counts, TRUE)
    if in_quads:
        _own_bins(offsets, dense_bases, first_dense, last_dense, entries, in_quads, quads, sums, counts, TRUE,
                  unknown)


@numba.njit(**_JIT)
def add_pairs_share(layout, offsets, values, order, start, stop, first_dense, last_dense, entries, sums, counts,
                    known, total):
    """:func:`add_share` (not in quads) of a node whose bins' counts are ``known``: its share's counts are copied
    from them, and its rows add their gradients and hessians only, as 16-byte pairs."""
    dense_rows, dense_bases, row_starts, entry_bins = layout[0], layout[1], layout[2], layout[3]
    _own_bins(offsets, dense_bases, first_dense, last_dense, entries, FALSE, np.empty((0, 4)), sums, counts, FALSE,
              known)
    _pair_rows(dense_rows, dense_bases, order, start, stop, first_dense, last_dense, values, sums.reshape(-1), total)
    if entries and entry_bins.size > 0:
        _entries(row_starts, entry_bins, order, start, stop, values, FALSE, np.empty(0), sums.reshape(-1), counts,
                 FALSE)


@numba.njit(**_JIT)
def _pair_rows(dense_rows, dense_bases, order, start, stop, first_dense, last_dense, values, flat, total):
    _vector_rows(dense_rows, dense_bases, order, start, stop, first_dense, last_dense, values, flat, total, True)


@numba.njit(**_JIT)
def _quad_rows(dense_rows, dense_bases, order, start, stop, first_dense, last_dense, values, flat, total):
    _vector_rows(dense_rows, dense_bases, order, start, stop, first_dense, last_dense, values, flat, total, False)


@numba.njit(**dict(_JIT, inline="always"))
def _vector_rows(dense_rows, dense_bases, order, start, stop, first_dense, last_dense, values, flat, total, pairs):
    """The dense features ``first_dense .. last_dense - 1`` of the rows ``order[start:stop]`` added as vectors to
    ``flat``: quads, or with ``pairs`` (a constant of each copy) gradient and hessian pairs of a root's rows,
    in order, for which nothing is asked for ahead; the rows' sums into ``total`` unless it is empty."""
    summing = total.size > 0
    # a slice's indices are known to be positive: no wraparound test on every add (the root of 300,000 x 28
    # codes took 5.3 ms in pairs this way, 6.2 indexed from first_dense)
    bases = dense_bases[first_dense:last_dense]
    node_gradient = 0.0
    node_hessian = 0.0
    for p in range(start, stop):
        if not pairs and p + DISTANCE < stop:  # scattered rows: ask for a later row's values and codes now
            ahead = order[p + DISTANCE]
            prefetch(values, ahead * 2)
            prefetch(dense_rows, ahead * dense_rows.shape[1])
        i = order[p]
        row = dense_rows[i, first_dense:last_dense]
        gradient = np.float64(values[i, 0])
        hessian = np.float64(values[i, 1])
        if summing:
            node_gradient += gradient
            node_hessian += hessian
        for j in range(bases.size):
            if pairs:
                _add_pair(flat, 2 * (bases[j] + np.intp(row[j])), gradient, hessian)
            else:
                _add_row(flat, 4 * (bases[j] + np.intp(row[j])), gradient, hessian)
    if summing:
        total[0] = node_gradient
        total[1] = node_hessian


@numba.njit(**_JIT)
def _rows(dense_rows, dense_bases, order, start, stop, first_dense, last_dense, values, flat, counts, total):
    summing = total.size > 0
    bases = dense_bases[first_dense:last_dense]  # as in _quad_rows
    node_gradient = 0.0
    node_hessian = 0.0
    for p in range(start, stop):
        if p + DISTANCE < stop:
            ahead = order[p + DISTANCE]
            prefetch(values, ahead * 2)
            prefetch(dense_rows, ahead * dense_rows.shape[1])
        i = order[p]
        row = dense_rows[i, first_dense:last_dense]
        gradient = values[i, 0]
        hessian = values[i, 1]
        if summing:
            node_gradient += gradient
            node_hessian += hessian
        for j in range(bases.size):
            b = bases[j] + np.intp(row[j])
            flat[2 * b] += gradient
            flat[2 * b + 1] += hessian
            counts[b] += 1
    if summing:
        total[0] = node_gradient
        total[1] = node_hessian


@numba.njit(**_JIT)
def _entries(row_starts, entry_bins, order, start, stop, values, in_quads, quads_flat, flat, counts, counting):
    """The sparse features' listed entries of the rows ``order[start:stop]``, into the quads or the sums (and,
    ``counting``, the counts)."""
    for p in range(start, stop):
        i = order[p]
        gradient = values[i, 0]
        hessian = values[i, 1]
        for e in range(row_starts[i], row_starts[i + 1]):
            b = np.intp(entry_bins[e])
            if in_quads:
                _add_row(quads_flat, 4 * b, np.float64(gradient), np.float64(hessian))
            else:
                flat[2 * b] += gradient
                flat[2 * b + 1] += hessian
                if counting:
                    counts[b] += 1


@numba.njit(**_JIT)
def uses_quads(rows, dense, bins, scratch):
    """Whether a histogram of ``rows`` rows and ``dense`` dense features of ``bins`` bins in all is added in quads
    (``scratch`` of :func:`quad_scratch`, empty: never)."""
    return scratch.size >= 4 * bins + 4 and rows * dense >= QUAD_ROWS_PER_BIN * bins
