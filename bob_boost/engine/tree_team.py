"""A gradient tree's node histograms and row partitions, shared out to a team of threads (:mod:`.team`).

The compiled grower (:func:`~bob_boost.engine.tree_kernels.grow_tree`) leads; the team's other threads wait
in :func:`serve` for its jobs, and every thread claims their shares. Every kind of job gives the bits one
thread gives, whatever the number of shares and whichever thread does which:

- a node's histogram (one output's float gradients): each share adds every row of the node to the bins of
  its own run of dense features (the first share also the sparse features' entries and the node's sums),
  each bin adding its rows in ascending order (:func:`~bob_boost.engine.bin_quads.add_share`);
- a split's partition: each share splits its run of the node's rows stably into a buffer, then, knowing
  every share's count, moves its rows to their places; the result is the one stable partition.

- a node's split scan (one output's float gradients, no constraints, no categories): each share scores the
  splits of its run of features (:func:`~bob_boost.engine.split_scan.scan_single`); the leader takes the
  largest gain of all and chooses the split as one thread would;
- the grown tree's leaves: each share sets each row's leaf and sums the rows of the leaves that start in its
  run of the row order (a leaf's rows are summed in order by one share).

``crew`` is ``(control, shares, share_counts, scratch, leaf_totals, gains, feature_top, node_allowed,
scan_values, root_counts)``: the team's control array, the number of shares (1: no team), a count per share,
room for histograms in quads (:func:`~bob_boost.engine.bin_quads.quad_scratch`, empty: none) and for the
leaves' sums, the split scan's (every split's gain, every feature's largest, the features a node may split on,
and the regularization and least hessian followed by each share's largest gain), and the counts of the root's
bins when it holds every row of the data (empty: unknown; its histogram then needs no count lane).
"""
from __future__ import annotations

import numba
import numpy as np

from . import team
from .bin_quads import add_pairs_share, add_share, quads_of, uses_quads
from .prefetch import DISTANCE, PARTITION_SPREAD, prefetch
from .split_scan import scan_single
from .tree_histograms import _recover_frequent_bins, node_total
from .unliteral import ZERO

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

# numpy scalars, not literals (:mod:`.unliteral`): the leader compiles once for every kind of job
_HISTOGRAM, _SPLIT, _MOVE, _LEAVES, _SCAN = (np.int64(kind) for kind in range(5))
#: Places in the context (:func:`~bob_boost.engine.tree_kernels.team_context`).
(_LAYOUT, _MODE_BINS, _OFFSETS, _VALUES, _STORED, _ORDER, _BUFFER, _SLOT_SUMS, _SLOT_COUNTS, _TOTALS, _CREW,
 _NODE_FEATURE, _SAMPLE_NODE, _REAL, _START, _STOP) = range(16)


#: A node's histogram is shared out when its rows times its dense features reach this (the threads
#: repeat each row's reading, and a job costs about a microsecond to hand out).
SHARED_HISTOGRAM_WORK = 1 << 14
#: A histogram is shared out when each share gets at least this many dense features: every share reads each
#: of the node's rows, which costs as much as adding a few features (20,000 rows of 6 features: a tree took
#: 0.93 ms with the histograms shared by two threads, 0.84 ms on one).
SHARED_FEATURES = 4
#: A split's rows are shared out from this many.
SHARED_PARTITION_ROWS = 1 << 12


@numba.njit(**_JIT)
def crew_of(shares, scratch, nodes, width, bins, features, root_counts):
    """A fresh ``crew`` of ``shares`` shares (see the module) with ``scratch`` for quads, room for the leaves'
    sums of a tree of ``nodes`` nodes and ``width`` columns of gradients and hessians, and for the split scans
    of histograms of ``bins`` bins of ``features`` features; ``root_counts``, every row's count in each bin
    (empty: unknown)."""
    return (team.control_array(), shares, np.zeros(shares, dtype=np.int64), scratch, np.zeros((nodes, width)),
            np.empty(2 * bins), np.empty(features), np.ones(features, dtype=np.bool_), np.zeros(2 + shares),
            root_counts)


@numba.njit(**_JIT)
def shares_histogram(context, rows, width, counted):
    """Whether the histogram of a node of ``rows`` rows is shared out (a team, one output's float gradients,
    work and dense features enough)."""
    layout, crew = context[_LAYOUT], context[_CREW]
    dense = layout[1].size
    return (crew[1] > 1 and width == 2 and counted and rows * dense >= SHARED_HISTOGRAM_WORK
            and dense >= SHARED_FEATURES * crew[1])


@numba.njit(**_JIT)
def _arguments(control, a, b, c, d, e, f):
    """A job's six arguments into the control array (before :func:`~bob_boost.engine.team.start_job`)."""
    control[team.ARGUMENTS] = a
    control[team.ARGUMENTS + 1] = b
    control[team.ARGUMENTS + 2] = c
    control[team.ARGUMENTS + 3] = d
    control[team.ARGUMENTS + 4] = e
    control[team.ARGUMENTS + 5] = f


@numba.njit(**_JIT)
def _histogram_share(context, share, start, stop, slot, node, in_quads, counted):
    layout, offsets, values, order = context[_LAYOUT], context[_OFFSETS], context[_VALUES], context[_ORDER]
    slot_sums, slot_counts, totals, crew = context[_SLOT_SUMS], context[_SLOT_COUNTS], context[_TOTALS], context[_CREW]
    shares = crew[1]
    dense = layout[1].size
    first, last = dense * share // shares, dense * (share + 1) // shares
    # the first share also sums the node's rows
    total = totals[node] if share == 0 else totals[node, :0]
    if counted:
        add_pairs_share(layout, offsets, values, order, start, stop, first, last, share == 0, slot_sums[slot],
                        slot_counts[slot], crew[9], total)
        return
    quads = quads_of(crew[3], slot_sums.shape[1]) if in_quads else np.empty((0, 4))
    add_share(layout, offsets, values, order, start, stop, first, last, share == 0, in_quads, quads, slot_sums[slot],
              slot_counts[slot], total)


@numba.njit(**_JIT)
def root_counted(context, rows, width):
    """Whether the root of ``rows`` rows has its bins' counts in the crew (``root_counts``, for every row of the
    data), for a histogram of one output's float gradients added as pairs
    (:func:`~bob_boost.engine.bin_quads.add_pairs_share`)."""
    return context[_CREW][9].size > 0 and width == 2 and rows == context[_SAMPLE_NODE].size


@numba.njit(**_JIT)
def shared_histogram(context, start, stop, slot, node, counted):
    """The histogram of the node ``node`` (rows ``order[start:stop]``) into slot ``slot`` and its sums into
    ``totals[node]``, shared out to the team: :func:`~bob_boost.engine.tree_histograms.build_histogram`'s bits.
    ``counted``: the node is the root of :func:`root_counted`, whose counts are the crew's."""
    mode_bins, offsets, totals, crew = context[_MODE_BINS], context[_OFFSETS], context[_TOTALS], context[_CREW]
    slot_sums, slot_counts = context[_SLOT_SUMS], context[_SLOT_COUNTS]
    in_quads = uses_quads(stop - start, context[_LAYOUT][1].size, slot_sums.shape[1], crew[3]) and not counted
    _arguments(crew[0], start, stop, slot, node, np.int64(in_quads), np.int64(counted))
    _lead(context, _HISTOGRAM)
    # the first share's own bins: the sparse features' frequent bins, from its node sums and counts
    _recover_frequent_bins(mode_bins, offsets, totals[node], stop - start, slot_sums[slot], slot_counts[slot])


@numba.njit(**_JIT)
def _split_share(context, share, start, stop, f, local_bin, missing_code, nan_left):
    """Split this share's rows stably into the buffer: those going left from its first place on, those going
    right from its last place back; their count into ``share_counts``."""
    stored, order, buffer, crew = context[_STORED], context[_ORDER], context[_BUFFER], context[_CREW]
    codes, code_rows = stored[0], stored[1]
    column = codes[code_rows[f]] if code_rows[f] >= 0 else stored[5]
    shares, rows = crew[1], stop - start
    first, last = start + rows * share // shares, start + rows * (share + 1) // shares
    # one loop for each case, as the one-thread partition's
    ahead = rows * PARTITION_SPREAD < column.size
    if missing_code >= 0 and ahead:
        left = _split_sweep(order, buffer, first, last, column, local_bin, missing_code, nan_left, True, True)
    elif missing_code >= 0:
        left = _split_sweep(order, buffer, first, last, column, local_bin, missing_code, nan_left, True, False)
    elif ahead:
        left = _split_sweep(order, buffer, first, last, column, local_bin, missing_code, nan_left, False, True)
    else:
        left = _split_sweep(order, buffer, first, last, column, local_bin, missing_code, nan_left, False, False)
    crew[2][share] = left - first


@numba.njit(**dict(_JIT, inline="always"))
def _split_sweep(order, buffer, first, last, column, local_bin, missing_code, nan_left, with_missing, ahead):
    """:func:`_split_share`'s pass over the rows ``order[first:last]``; returns the end of the left rows."""
    left, right = first, last - 1
    nan_right = not nan_left
    for p in range(first, last):
        if ahead and p + DISTANCE < last:
            prefetch(column, order[p + DISTANCE])
        i = order[p]
        code = column[i]
        goes_right = code > local_bin
        if with_missing:
            goes_right = nan_right if code == missing_code else goes_right
        # branch-free, as the one-thread partition: both ends get the row and only one end moves (the two
        # places differ until the last row, and neither holds a row kept before)
        buffer[left] = i
        buffer[right] = i
        step = np.intp(goes_right)
        left += 1 - step
        right -= step
    return left


@numba.njit(**_JIT)
def _move_share(context, share, start, stop):
    """Move this share's rows from the buffer to their places: its left rows after the earlier shares' left
    rows, its right rows (kept backwards) after every left row and the earlier shares' right rows."""
    order, buffer, crew = context[_ORDER], context[_BUFFER], context[_CREW]
    shares, counts, rows = crew[1], crew[2], stop - start
    first, last = start + rows * share // shares, start + rows * (share + 1) // shares
    lefts_before = 0
    for s in range(share):
        lefts_before += counts[s]
    lefts = 0
    for s in range(shares):
        lefts += counts[s]
    mine = counts[share]
    for q in range(mine):
        order[start + lefts_before + q] = buffer[first + q]
    right_start = start + lefts + (first - start - lefts_before)
    for r in range(last - first - mine):
        order[right_start + r] = buffer[last - 1 - r]


@numba.njit(**_JIT)
def shared_partition(context, start, stop, f, local_bin, missing_code, nan_left):
    """:func:`~bob_boost.engine.tree_kernels._partition` of ``order[start:stop]`` by feature ``f``'s codes (its
    column set for those rows), shared out to the team; returns the boundary."""
    crew = context[_CREW]
    _arguments(crew[0], start, stop, f, local_bin, missing_code, np.int64(nan_left))
    _lead(context, _SPLIT)
    _lead(context, _MOVE)
    middle = start
    for s in range(crew[1]):
        middle += crew[2][s]
    return middle


@numba.njit(**_JIT)
def leaves_share(context, share, shares, n_nodes):
    """Share ``share`` of ``shares`` of the grown tree's leaves: every row's leaf into ``sample_node`` and each
    leaf's sums of the real gradients and hessians into the crew's ``leaf_totals``, for the leaves whose rows
    start in this share's run of the row order."""
    order, crew, node_feature = context[_ORDER], context[_CREW], context[_NODE_FEATURE]
    sample_node = context[_SAMPLE_NODE]
    real, start, stop = context[_REAL], context[_START], context[_STOP]
    n_root = order.shape[0]
    first, last = n_root * share // shares, n_root * (share + 1) // shares
    for node in range(n_nodes):
        if node_feature[node] < 0 and first <= start[node] < last:
            for p in range(start[node], stop[node]):
                sample_node[order[p]] = node
            node_total(real, order, start[node], stop[node], crew[4][node])


@numba.njit(**_JIT)
def shared_leaves(context, n_nodes):
    """:func:`leaves_share` of every share, shared out to the team."""
    crew = context[_CREW]
    _arguments(crew[0], n_nodes, ZERO, ZERO, ZERO, ZERO, ZERO)
    _lead(context, _LEAVES)


@numba.njit(**_JIT)
def _scan_share(context, share, slot, node, count, min_samples, missing):
    """Score the splits of this share's run of features of node ``node`` (histogram slot ``slot``); its largest
    gain into the crew's scan values."""
    crew, offsets = context[_CREW], context[_OFFSETS]
    features = offsets.size - 1
    values = crew[8]
    values[2 + share] = scan_single(context[_SLOT_SUMS][slot], context[_SLOT_COUNTS][slot], context[_MODE_BINS],
                                    offsets, context[_TOTALS][node], count, values[0], min_samples, values[1],
                                    missing, crew[5], crew[7], np.empty(0, dtype=np.int64), -np.inf, np.inf,
                                    crew[6], features * share // crew[1], features * (share + 1) // crew[1])


@numba.njit(**_JIT)
def shared_scan(context, slot, node, count, regularization, min_samples, min_hessian, missing):
    """The split scan of node ``node`` (``count`` rows, histogram slot ``slot``) over the crew's ``node_allowed``
    features, shared out to the team: the crew's gains and feature_top filled as
    :func:`~bob_boost.engine.split_scan.best_split` fills them (one output, no constraints, no categories);
    returns the largest gain (0 if none)."""
    crew = context[_CREW]
    values = crew[8]
    values[0], values[1] = regularization, min_hessian
    _arguments(crew[0], slot, node, count, min_samples, np.int64(missing), ZERO)
    _lead(context, _SCAN)
    # each share's largest is a largest of its features' from 0, as the one scan's: their largest is the one's
    top = 0.0
    for share in range(crew[1]):
        top = max(top, values[2 + share])
    return top


@numba.njit(**_JIT)
def _do_shares(context, generation):
    """Claim the shares of the job of ``generation`` and do them, until none is left (its arguments are in the
    control array)."""
    control = context[_CREW][0]
    while True:
        share = team.claim(control, generation, context[_CREW][1])
        if share < 0:
            return
        kind = control[team.KIND]
        a = control[team.ARGUMENTS:team.ARGUMENTS + 6]
        if kind == _HISTOGRAM:
            _histogram_share(context, share, a[0], a[1], a[2], a[3], a[4] != 0, a[5] != 0)
        elif kind == _SPLIT:
            _split_share(context, share, a[0], a[1], a[2], a[3], a[4], a[5] != 0)
        elif kind == _MOVE:
            _move_share(context, share, a[0], a[1])
        elif kind == _SCAN:
            _scan_share(context, share, a[0], a[1], a[2], a[3], a[4] != 0)
        else:
            leaves_share(context, share, context[_CREW][1], a[0])
        team.share_done(control)


@numba.njit(**_JIT)
def _lead(context, kind):
    """Publish a job of ``kind`` (its arguments in the control array), do the shares no helper claims, and wait
    for the others."""
    crew = context[_CREW]
    _do_shares(context, team.start_job(crew[0], kind))
    team.finish_job(crew[0], crew[1])


@numba.njit(**_JIT)
def serve(context, helper):
    """A helper's loop: claim and do shares of each job the leader publishes, until it stops the team."""
    control = context[_CREW][0]
    seen = ZERO
    while True:
        seen, kind = team.next_job(control, seen)
        if kind == team.STOP:
            return
        _do_shares(context, seen)
