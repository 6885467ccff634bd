"""A round's lone gradient tree on the trainer's threads, the same for any number of them: one output's float
gradients with a team that shares out its large nodes (:mod:`~bob_boost.engine.tree_team`), other trees with
their large histograms built in parts here, added in part order."""
from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from ..engine import team, tree_batches, tree_kernels, tree_team
from ..engine.bin_quads import quad_scratch
from ..engine.codes import MAX_PARTIAL_ENTRIES
from ..engine.threads import MIN_PARALLEL_WORK, run_blocks

#: A lone tree's histograms of nodes of at least twice this many rows (the root's too) are built in
#: parts on the trainer's threads (packed quantised gradients or several outputs; one output's float trees
#: take a team from this many rows): one part per this many rows, at most :data:`MOST_PARTS` (and at most
#: :data:`~bob_boost.engine.codes.MAX_PARTIAL_ENTRIES` entries in all), added in order afterwards, so that
#: the sums depend on the data only, never on ``n_threads``. The compiled grower
#: (:func:`bob_boost.engine.tree_kernels.grow_tree`'s ``part_rows``) builds the smaller ones itself.
#: On 2 cores (epyc-zen4), 28 features, 31 leaves, a round took 143 ms at 1,000,000 rows with parts of
#: 4,096 rows, against 159 ms with parts of 16,384 (42.5 against 45.4 ms at 300,000 rows, 13.7 against
#: 14.2 ms at 60,000, 6.9 against 7.1 ms at 20,000); parts of 2,048 or 1,024 rows gained nothing more at
#: 1,000,000 rows and lost at 300,000.
PART_ROWS = 1 << 12
MOST_PARTS = 8
#: A lone tree of one output's float gradients and at least twice :data:`PART_ROWS` rows takes a team of the
#: trainer's threads when each would get this many dense features of a shared histogram, or when its rows times
#: dense features reach :data:`TEAM_WORK`. A smaller tree grows faster alone: its shared jobs are its partitions
#: and split scans, whose hand-overs cost more than they save. On 2 cores (xeon-avx512), 31-leaf trees of a
#: squared loss took 1.20 times one thread's time with a team at 20,000 x 6, 1.07 at 40,000 x 8, 1.02 at
#: 20,000 x 12, 0.97 at 80,000 x 8, 0.94 at 20,000 x 16 and 0.85 at 20,000 x 28.
TEAM_FEATURES = 8
TEAM_WORK = 1 << 19


#: Parts hold packed quantised sums or several outputs' (one output's float trees grow with a team instead),
#: never added in quads.
_NO_QUADS = np.empty(0)


def team_shares(n_threads: int, rows: int, dense: int) -> int:
    """The shares of the team of a lone tree of one output's float gradients on ``rows`` rows with ``dense`` dense
    features and ``n_threads`` threads (1: no team)."""
    if n_threads > 1 and rows >= 2 * PART_ROWS and (dense >= TEAM_FEATURES * n_threads or rows * dense >= TEAM_WORK):
        return n_threads
    return 1


def _part_bounds(start: int, stop: int, entries: int) -> np.ndarray:
    """The bounds of the parts of the rows ``start:stop`` of a histogram of ``entries`` sums."""
    most = max(1, min(MOST_PARTS, MAX_PARTIAL_ENTRIES // entries))
    parts = max(1, min(most, (stop - start) // PART_ROWS))
    return start + ((stop - start) * np.arange(parts + 1, dtype=np.int64)) // parts


class Parts:
    """Histograms of a lone tree's large nodes in parts (:data:`PART_ROWS`), with room for the parts after
    the first, which goes straight into the node's slot. Packed quantised sums are integers: their parts
    add up to the one-pass sums exactly."""

    def __init__(self, coded, offsets: np.ndarray, layout: tuple, pairs: tuple, values: np.ndarray, sums: np.ndarray,
                 counts: np.ndarray) -> None:
        self.coded, self.offsets, self.layout, self.pairs, self.values = coded, offsets, layout, pairs, values
        self.entries = sums.shape[1] * values.shape[1]
        room = max(1, min(MOST_PARTS, MAX_PARTIAL_ENTRIES // self.entries))
        self.sums = np.empty((room - 1,) + sums.shape[1:], dtype=sums.dtype)
        self.counts = np.empty((room - 1,) + counts.shape[1:], dtype=counts.dtype)
        self.totals = np.zeros((room, values.shape[1]), dtype=values.dtype)
        self.joint = np.empty((room, pairs[1][-1]), dtype=values.dtype)

    def build(self, order: np.ndarray, start: int, stop: int, total: np.ndarray, sums: np.ndarray,
              counts: np.ndarray) -> None:
        """The histogram of the rows ``order[start:stop]`` into ``sums``/``counts`` (its sums into ``total``)."""
        coded, values, layout = self.coded, self.values, self.layout
        edges = _part_bounds(start, stop, self.entries)

        def part(k: int) -> None:
            target = (sums, counts) if k == 0 else (self.sums[k - 1], self.counts[k - 1])
            tree_kernels.node_histogram(layout, self.pairs, self.joint[k], coded.mode_bins, self.offsets, values,
                                        order, edges[k], edges[k + 1], self.totals[k], *target, _NO_QUADS)
        parts = edges.size - 1
        run_blocks(part, [(k,) for k in range(parts)], coded.n_threads, work=float(stop - start) * coded.n_features)
        total[:] = self.totals[0]
        for k in range(1, parts):  # in part order
            sums += self.sums[k - 1]
            counts += self.counts[k - 1]
            total += self.totals[k]


def grow_alone(coded, common: tuple, limits: tuple, slots: tuple, nodes_out: tuple, values: np.ndarray,
               quantised_as: tuple | None = None, own_rows: bool = False) -> np.ndarray:
    """Grow a round's lone tree on (#samples, 2K) ``values`` with the coded features' threads: with one output's
    float gradients, the compiled grower leads a team of them; otherwise it leaves the histograms of large
    nodes (:data:`PART_ROWS`), the root's first when it is one, to be built here in parts.
    Returns the (#samples,) leaf node of every row the tree grew on (0 for the others).

    Packed quantised ``values`` come with ``quantised_as``: the real gradients and hessians of the
    leaves, the packing's field bits and the scales. ``own_rows``: the rows of ``common`` are this call's to
    rearrange (every row, made for it), not copied.
    """
    sums, counts = slots
    (node_feature, node_bin, node_nan_left, node_left, node_right, node_sets, leaf_values, node_records, n_nodes,
     outputs) = nodes_out
    samples, width = values.shape
    mode_bins, layout, pairs, offsets, feature_of_bin, columns, rows = common[:7]
    if quantised_as is None:
        real, packing, scales, scan = values, np.zeros(2, dtype=np.int64), np.ones(2), (0, 0)
    else:
        (real, packing, scales), scan = quantised_as, (sums.shape[1], sums.shape[1])
    state = tree_kernels.tree_state(rows if own_rows else rows.copy(), node_feature.shape[1], sums.shape[0], width,
                                    values)
    order, slot, totals = state[0], state[5], state[6]
    root_total = np.zeros(width, dtype=values.dtype)
    # one output's float trees: the grower builds every histogram, sharing the large ones out to a team of the
    # threads (the bits of one thread); other trees' large histograms are built here in parts. A root of
    # fewer rows is one part, which the compiled grower builds as this would (the same sums).
    one_output = quantised_as is None and width == 2
    shares = team_shares(coded.n_threads, rows.size, layout[1].size) if one_output else 1
    # a large root of every row of every feature copies its bins' counts, known from the binning (a small one
    # would spend more on finding them than they save)
    every_row = rows.size == samples >= 2 * PART_ROWS and layout is coded.row_layout(offsets)
    root_counts = coded.bin_counts(offsets) if one_output and every_row else np.empty(0, dtype=counts.dtype)
    crew = tree_team.crew_of(shares, quad_scratch(offsets[-1]) if one_output and layout[1].size > 0 else np.empty(0),
                             node_feature.shape[1], real.shape[1], offsets[-1], offsets.size - 1,
                             root_counts.astype(counts.dtype, copy=False))
    parts = None
    if not one_output and rows.size >= 2 * PART_ROWS:
        parts = Parts(coded, offsets, layout, pairs, values, sums, counts)
        parts.build(order, 0, rows.size, root_total, sums[0], counts[0])  # slot 0: the root's
    sample_node = np.zeros(samples, dtype=np.int64)
    stored = coded.splitting()
    arguments = ((stored, mode_bins, layout, pairs, offsets, feature_of_bin, columns,
                  values, real, packing, scales, np.empty((scan[0], 2)), np.empty(scan[1], dtype=np.int32))
                 + limits + (sums, counts, node_feature[0], node_bin[0], node_nan_left[0], node_left[0],
                             node_right[0], node_sets[0], leaf_values[0], node_records[0], sample_node,
                             parts is not None, root_total,
                             0 if one_output else 2 * PART_ROWS, state, crew))
    # the helpers' view of the grower's arguments (no helpers: none)
    context = None if shares == 1 else tree_kernels.team_context(layout, mode_bins, offsets, values, stored, state,
                                                                 sums, counts, crew, node_feature[0], sample_node,
                                                                 real)
    with team.helpers(tree_team.serve, context, shares, crew[0]) if shares > 1 else nullcontext():
        while (grown := tree_kernels.grow_tree(*arguments)) < 0:
            node, start, stop = tree_kernels.requested_node(state)
            parts.build(order, start, stop, totals[node], sums[slot[node]], counts[slot[node]])
    n_nodes[0] = grown
    # every row's output written in place: any split of the rows gives the same outputs
    leaf_width, work = real.shape[1] // 2, float(rows.size) * real.shape[1]
    blocks = coded.n_threads if work >= MIN_PARALLEL_WORK else 1
    bounds = [rows.size * k // blocks for k in range(blocks + 1)]
    if rows.size == samples:  # every row (rearranged by the growing when they were this call's)
        run_blocks(tree_batches.leaf_outputs_between, [(leaf_values[0], sample_node, 0, leaf_width, outputs, a, b)
                                                       for a, b in zip(bounds, bounds[1:])], coded.n_threads, work)
    else:
        run_blocks(tree_batches.leaf_outputs, [(leaf_values[0], sample_node, 0, leaf_width, outputs, rows[a:b])
                                               for a, b in zip(bounds, bounds[1:])], coded.n_threads, work)
    return sample_node
