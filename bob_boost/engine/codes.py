"""Features as compact per-feature bin codes, and their histograms from the compiled kernels."""
from __future__ import annotations

import numpy as np

from ..sparse import is_sparse
from . import kernels, listed, tree_histograms
from .listed import CodedEntries, sparse_entries
from .threads import MIN_PARALLEL_WORK, balanced_ranges, run_blocks

#: A feature whose most frequent bin holds more than this share of the samples is stored sparse.
SPARSE_SHARE = 0.5

#: Rows per block of the gradient histograms: blocks are summed in order afterwards, so the sums depend on
#: the data only, never on the thread count; a data set of at most this many rows is one block.
HISTOGRAM_ROWS = 1 << 16

#: Largest number of partial-histogram entries (blocks x bins x outputs) kept at once; wider histograms
#: get longer row blocks (a choice made from the data's shape, not from the thread count).
MAX_PARTIAL_ENTRIES = 1 << 23

#: Two dense features whose bin counts multiply to at most this many share one uint8 code in the packed
#: histograms of quantised gradient trees (:meth:`CodedFeatures.pair_layout`).
PAIR_BINS = 256


def code_dtype(number_of_bins: int) -> type:
    """uint8 for up to 256 bins per feature, else uint16."""
    return np.uint8 if number_of_bins <= 256 else np.uint16


def padded_thresholds(thresholds: list[np.ndarray]) -> np.ndarray:
    """(#features, P) thresholds padded with +inf: P = 256 for up to 255 thresholds, else a power of two."""
    longest = max((t.size for t in thresholds), default=0)
    width = 256 if longest < 256 else 1 << int(np.ceil(np.log2(longest + 1)))
    padded = np.full((len(thresholds), width), np.inf)
    for f, t in enumerate(thresholds):
        padded[f, :t.size] = t
    return padded


def encode(features: np.ndarray, thresholds: np.ndarray, n_threads: int,
           missing_codes: np.ndarray | None = None) -> np.ndarray | CodedEntries:
    """(#features, #samples) codes ``#(thresholds[f] <= x[i, f])``, in the loop order that suits the layout;
    a sparse matrix's codes per stored value (:class:`CodedEntries`).

    NaN gets ``missing_codes[f]`` (the feature's missing-value bin).
    """
    n_samples, n_features = features.shape
    if missing_codes is None:
        missing_codes = np.zeros(n_features, dtype=np.int64)
    largest = max(thresholds.shape[1], int(missing_codes.max()) + 1)
    if is_sparse(features):
        return sparse_entries(features, listed.code_entries, (thresholds, missing_codes), code_dtype(largest),
                              n_threads)
    out = np.empty((n_features, n_samples), dtype=code_dtype(largest))
    if features.flags.f_contiguous and not features.flags.c_contiguous:
        blocks = [(features, thresholds, missing_codes, a, b, out)
                  for a, b in balanced_ranges(np.ones(n_features), 4 * n_threads)]
        run_blocks(kernels.code_columns, blocks, n_threads)
    else:
        blocks = [(features, thresholds, missing_codes, a, b, out) for a, b in _row_blocks(n_samples, n_threads)]
        run_blocks(kernels.code_rows, blocks, n_threads)
    return out


def _row_blocks(n_samples: int, n_threads: int) -> list[tuple[int, int]]:
    step = max(4096, -(-n_samples // (4 * n_threads)))
    return [(s, min(s + step, n_samples)) for s in range(0, n_samples, step)]


def count_integer_values(features: np.ndarray, low: np.ndarray, span: int, n_threads: int) -> np.ndarray:
    """(#features, span) count of every value ``low[f] .. low[f] + span - 1`` of each integer feature.

    Each row block counts into its own array; integer sums are exact, so the
    total does not depend on the blocks.
    """
    if is_sparse(features):
        return _sparse_value_counts(features, low, span)
    blocks = _row_blocks(features.shape[0], n_threads)
    partial = np.zeros((len(blocks), features.shape[1], span), dtype=np.int64)
    run_blocks(kernels.count_values, [(features, low, a, b, partial[j]) for j, (a, b) in enumerate(blocks)],
               n_threads)
    return partial.sum(axis=0)


def _sparse_value_counts(features, low: np.ndarray, span: int) -> np.ndarray:
    """:func:`count_integer_values` of a canonical CSR matrix: its stored values, then each column's implicit
    zeros (exact integer counts, as over the dense rows)."""
    n_features = features.shape[1]
    columns = features.indices.astype(np.int64)
    slots = columns * span + (features.data.astype(np.int64) - low[columns])
    counts = np.bincount(slots, minlength=n_features * span).reshape(n_features, span)
    zeros = features.shape[0] - np.bincount(columns, minlength=n_features)
    holding = np.flatnonzero(zeros)
    counts[holding, -low[holding]] += zeros[holding]
    return counts


def rank_codes(features: np.ndarray, low: np.ndarray, ranks: np.ndarray,
               n_threads: int) -> np.ndarray | CodedEntries:
    """(#features, #samples) codes ``ranks[f, x[i, f] - low[f]]`` of integer features (of a sparse matrix:
    :class:`CodedEntries`)."""
    dtype = code_dtype(int(ranks.max()) + 1)
    if is_sparse(features):  # a column without implicit zeros is never asked for the rank of 0
        return sparse_entries(features, listed.rank_entries, (low, ranks), dtype, n_threads)
    out = np.empty((features.shape[1], features.shape[0]), dtype=dtype)
    run_blocks(kernels.rank_rows, [(features, low, ranks, a, b, out) for a, b in _row_blocks(features.shape[0],
                                                                                             n_threads)], n_threads)
    return out


def integral_features(features: np.ndarray, n_threads: int) -> np.ndarray:
    """(#features,) whether every value of each feature is an integer (always, for integer dtypes)."""
    integral = np.ones(features.shape[1], dtype=bool)
    if np.issubdtype(features.dtype, np.integer):
        return integral
    blocks = _row_blocks(features.shape[0], n_threads)
    partial = np.ones((len(blocks), features.shape[1]), dtype=bool)
    run_blocks(kernels.integral_columns, [(features, a, b, partial[j]) for j, (a, b) in enumerate(blocks)],
               n_threads)
    return partial.all(axis=0)


def step_codes(features: np.ndarray, low: np.ndarray, step: np.ndarray, n_threads: int, top: int = 255,
               missing_codes: np.ndarray | None = None) -> np.ndarray:
    """(#features, #samples) uint8 codes ``round((x - low) / step)``, clipped to 0 .. ``top``.

    NaN gets ``missing_codes[f]`` (the feature's missing-value bin, where missing values are handled).
    """
    if missing_codes is None:
        missing_codes = np.zeros(features.shape[1], dtype=np.int64)
    out = np.empty((features.shape[1], features.shape[0]), dtype=np.uint8)
    run_blocks(kernels.step_rows, [(features, low, step, float(top), missing_codes, a, b, out)
                                   for a, b in _row_blocks(features.shape[0], n_threads)], n_threads)
    return out


class CodedFeatures:
    """Bin codes of (#features, #samples) entries, with the rows outside each sparse feature's frequent bin.

    A feature whose frequent bin holds more than :data:`SPARSE_SHARE` of the samples is *sparse*: its rows
    outside that bin are listed with their codes (:mod:`~bob_boost.engine.listed`). The codes of a dense
    matrix are kept whole; those of a sparse matrix (:class:`CodedEntries`) only for its dense features, so
    that their memory follows the non-zeros.

    Parameters
    ----------
    codes : numpy.ndarray or CodedEntries
        (#features, #samples) uint8 or uint16 bin of every entry within its feature, or a sparse
        matrix's codes per stored value.
    number_of_bins : int
        At least every feature's largest code + 1: the width of :attr:`counts` and of the class trees' padded
        node histograms (:meth:`node_histograms`; the gradient trees' hold each feature's own bins, at the
        offsets their layouts take).
    n_threads : int
        Threads for :meth:`histograms`.

    Attributes
    ----------
    codes : numpy.ndarray
        (#stored features, #samples) codes; feature ``f``'s are row ``code_rows[f]`` (-1: listed only).
    mode_bins : numpy.ndarray
        Each feature's frequent bin, -1 for a dense feature.
    row_starts, rows, listed_codes : numpy.ndarray
        Sparse feature ``f``'s rows outside its frequent bin, ascending, are
        ``rows[row_starts[f]:row_starts[f + 1]]``, their codes alongside in ``listed_codes``.
    """

    def __init__(self, codes: np.ndarray | CodedEntries, number_of_bins: int, n_threads: int) -> None:
        self.number_of_bins = number_of_bins
        self.n_threads = n_threads
        entries = codes if isinstance(codes, CodedEntries) else None
        if entries is None:
            codes = np.ascontiguousarray(codes)
            self.n_features, self.n_samples = codes.shape
            dtype = codes.dtype
        else:
            self.n_features, self.n_samples = entries.indptr.size - 1, entries.n_samples
            dtype = entries.stored.dtype
        n_features, n_samples = self.n_features, self.n_samples
        counts = np.zeros((n_features, number_of_bins), dtype=np.int64)
        feature_blocks = balanced_ranges(np.ones(n_features), 4 * n_threads)
        if entries is None:
            run_blocks(kernels.count_bins, [(codes, a, b, counts) for a, b in feature_blocks], n_threads)
        else:
            run_blocks(listed.count_entries, [(entries.indptr, entries.stored, entries.zero_codes, n_samples, a, b,
                                               counts) for a, b in feature_blocks], n_threads)
        self.counts = counts
        modes = np.argmax(counts, axis=1)
        sparse = counts[np.arange(n_features), modes] > SPARSE_SHARE * n_samples
        self.mode_bins = np.where(sparse, modes, -1).astype(np.int64)
        listed_counts = np.where(sparse, n_samples - counts[np.arange(n_features), modes], 0)
        self.row_starts = np.concatenate([[0], np.cumsum(listed_counts)]).astype(np.int64)
        self.rows = np.empty(int(self.row_starts[-1]), dtype=np.int32 if n_samples < 2 ** 31 else np.int64)
        self.listed_codes = np.empty(self.rows.size, dtype=dtype)
        if entries is None:
            self.codes = codes
            self.code_rows = np.arange(n_features, dtype=np.int64)
            run_blocks(listed.list_codes, [(codes, self.mode_bins, self.row_starts, a, b, self.rows, self.listed_codes)
                                           for a, b in feature_blocks], n_threads)
        else:  # only the dense features get a row of codes
            self.code_rows = np.where(sparse, -1, np.cumsum(~sparse) - 1).astype(np.int64)
            self.codes = np.empty((int(np.count_nonzero(~sparse)), n_samples), dtype=dtype)
            costs = np.where(sparse, np.diff(entries.indptr), n_samples) + 1
            run_blocks(listed.fill_entries,
                       [(entries.indptr, entries.indices, entries.stored, entries.zero_codes, self.mode_bins,
                         self.code_rows, self.row_starts, n_samples, a, b, self.codes, self.rows, self.listed_codes)
                        for a, b in balanced_ranges(costs, 4 * n_threads)], n_threads)
        # a feature costs a pass over its rows (dense) or over its listed rows (sparse)
        self._blocks = balanced_ranges(np.where(sparse, listed_counts, n_samples) + 1, 4 * n_threads)
        self._row_plans: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._row_layout: tuple[np.ndarray, ...] | None = None
        self._pair_layout: tuple[np.ndarray, ...] | None = None
        self._bin_counts: tuple[tuple, np.ndarray] | None = None
        self._spare: dict[tuple, list[np.ndarray]] = {}

    @property
    def whole(self) -> bool:
        """Whether every feature has its row of :attr:`codes` (the codes of a dense matrix)."""
        return self.codes.shape[0] == self.n_features

    def column(self, feature: int) -> np.ndarray:
        """(#samples,) codes of one feature (a view of :attr:`codes` where it has a row)."""
        if self.code_rows[feature] >= 0:
            return self.codes[self.code_rows[feature]]
        out = np.full(self.n_samples, self.mode_bins[feature], dtype=self.codes.dtype)
        span = slice(self.row_starts[feature], self.row_starts[feature + 1])
        out[self.rows[span]] = self.listed_codes[span]
        return out

    def whole_codes(self) -> np.ndarray:
        """(#features, #samples) codes of every feature: :attr:`codes` itself, or built from the listed rows
        (as large as a dense matrix's codes)."""
        if self.whole:
            return self.codes
        return np.stack([self.column(f) for f in range(self.n_features)])

    def codes_at(self, features: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The codes of entries (``rows[k]``, ``features[k]``)."""
        if self.whole:
            return self.codes[features, rows]
        out = np.empty(rows.size, dtype=self.codes.dtype)
        listed.codes_at(self.stored(), self.mode_bins, features, rows, out)
        return out

    def stored(self) -> tuple[np.ndarray, ...]:
        """``(codes, code_rows, row_starts, rows, listed_codes)``, the storage the compiled growers read."""
        return self.codes, self.code_rows, self.row_starts, self.rows, self.listed_codes

    def splitting(self) -> tuple[np.ndarray, ...]:
        """:meth:`stored` and a new scratch column, room for one listed feature's codes where a grower splits
        rows (:func:`~bob_boost.engine.listed.node_codes`; empty when every feature has its row of
        :attr:`codes`): one for each thread that grows trees."""
        return self.stored() + (np.empty(0 if self.whole else self.n_samples, dtype=self.codes.dtype),)

    def borrow(self, shape: tuple[int, ...], dtype: type) -> np.ndarray:
        """An uninitialised array of ``shape`` and ``dtype``: one given back by :meth:`give_back` if there is one.

        The growers' histogram slots are tens of megabytes on wide data (MNIST's 31 slots of 139,000 bins:
        86 MB a thread); a fresh array each round has the system map and clear its pages again (on an AMD EPYC,
        MNIST's training spent 4.5% of its time clearing pages, 2.7% with the slots reused, and half the system
        time). Several threads may borrow at once: each gets an array of its own.
        """
        try:
            return self._spare.get((tuple(shape), np.dtype(dtype).str), []).pop()
        except IndexError:
            return np.empty(shape, dtype=dtype)

    def give_back(self, *arrays: np.ndarray) -> None:
        """Keep ``arrays`` (borrowed, no longer used) for the next :meth:`borrow` of their shape and type."""
        for array in arrays:
            self._spare.setdefault((array.shape, array.dtype.str), []).append(array)

    def row_layout(self, offsets: np.ndarray) -> tuple[np.ndarray, ...]:
        """The codes row by row, for histograms over a node's rows (built once for these ``offsets``).

        A histogram holds every feature's bins one after the other, feature ``f``'s at the global bins
        ``offsets[f]:offsets[f + 1]`` (the binning's offsets: a feature of few bins takes few, whatever the
        others take). Returns ``(dense_rows, dense_bases, row_starts, entry_bins)``: the
        dense features' codes as a (#samples, #dense) matrix and each dense feature's first bin; and, in
        compressed rows, the global bin of every entry of a sparse feature outside its frequent bin (row ``i``'s
        are ``entry_bins[row_starts[i]:row_starts[i + 1]]``, in feature order). A row's codes lie together, and a
        node's histogram costs its own rows' entries only.
        """
        return self._layouts(offsets)[1]

    def _layouts(self, offsets: np.ndarray) -> tuple:
        """``(offsets, row layout, its unpaired pair layout, the feature of every global bin)``, made once for
        these ``offsets``."""
        offsets = np.asarray(offsets, dtype=np.int64)
        known = self._row_layout  # read once: another thread may replace it meanwhile
        if known is not None and (known[0] is offsets or np.array_equal(known[0], offsets)):
            return known
        n_features, n_samples = self.n_features, self.n_samples
        dense = np.flatnonzero(self.mode_bins < 0)
        # the listed rows (feature by feature) placed row by row, features in order: from the listed
        # entries alone, no (#samples x #features) mask
        row_starts = np.zeros(n_samples + 1, dtype=np.int64)
        index = np.int32 if offsets[-1] < 2 ** 31 else np.int64
        entry_bins = np.empty(self.rows.size, dtype=index)
        # without listed rows every range is empty: the zeros stay as allocated, pages the system has not
        # handed out (8 MB of a million rows that would only hold zeros)
        if self.rows.size:
            np.cumsum(np.bincount(self.rows, minlength=n_samples), out=row_starts[1:])
            kernels.entries_by_row(self.rows, np.repeat(np.arange(n_features), np.diff(self.row_starts)),
                                   self.listed_codes, offsets, row_starts, entry_bins)
        dense_rows = self.code_rows[dense]
        # every feature dense: the codes transposed as they are, not through a copy of their rows first
        coded = self.codes if dense.size == n_features else self.codes[dense_rows]
        layout = (np.ascontiguousarray(coded.T), offsets[dense], row_starts, entry_bins)
        unpaired = (np.empty((n_samples, 0), dtype=np.uint8), np.zeros(1, dtype=np.int64),
                    np.empty((0, 2), dtype=np.int64), np.empty((0, 2), dtype=np.int64), layout[0], layout[1])
        self._pair_layout = None
        known = self._row_layout = (offsets, layout, unpaired, np.repeat(np.arange(n_features), np.diff(offsets)))
        return known

    def feature_of_bin(self, offsets: np.ndarray) -> np.ndarray:
        """(#bins,) the feature of every global bin of ``offsets`` (made once for them, with :meth:`row_layout`)."""
        return self._layouts(offsets)[3]

    def bin_counts(self, offsets: np.ndarray) -> np.ndarray:
        """Every row's count in each global bin of :meth:`row_layout` of ``offsets`` (computed once for them):
        the counts of a histogram of all the rows, which a tree's root copies instead of counting its rows."""
        layout = self.row_layout(offsets)
        known = self._bin_counts  # read once: another thread may replace it meanwhile
        if known is None or known[0] is not layout:
            counts = np.empty(int(offsets[-1]), dtype=np.int32 if self.n_samples < 2 ** 31 else np.int64)
            tree_histograms.layout_counts(layout, self.mode_bins, np.asarray(offsets, dtype=np.int64), counts)
            known = self._bin_counts = (layout, counts)
        return known[1]

    def column_layout(self, columns: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, ...]:
        """:meth:`row_layout` of the features ``columns`` only (a round's column sample), built anew: histograms
        over it leave the other features' bins at zero, and cost the sampled features' entries only.

        The sums of a sampled feature's bins are those of the full layout, bit for bit: each bin still adds its
        rows in ascending order.
        """
        dense_rows, dense_bases, row_starts, entry_bins = self.row_layout(offsets)
        allowed = np.zeros(self.n_features, dtype=bool)
        allowed[columns] = True
        kept_dense = allowed[self.mode_bins < 0]
        starts = np.empty(row_starts.size, dtype=np.int64)
        kept = np.empty_like(entry_bins)
        feature_of_bin = self.feature_of_bin(offsets)
        count = kernels.kept_entries(row_starts, entry_bins, feature_of_bin, allowed, starts, kept)
        return np.ascontiguousarray(dense_rows[:, kept_dense]), dense_bases[kept_dense], starts, kept[:count]

    def pair_layout(self, offsets: np.ndarray, paired: bool = True) -> tuple[np.ndarray, ...]:
        """The dense features two by two where their bins allow, for packed histograms (built once).

        A row then adds once for a pair, at the pair's joint code, into a
        joint histogram that is summed out into each feature's bins
        afterwards: half the adds where features have few bins (letter's 16
        features of 16 values), exact for integer sums. Features are paired
        by bin count, smallest with the largest that fits :data:`PAIR_BINS`
        joint bins (the most pairs there can be).

        Returns ``(pair_rows, pair_bases, pair_features, pair_bins,
        single_rows, single_bases)``: the joint codes ``a * bins_b + b``
        (#samples, #pairs) uint8, where each pair's joint bins start
        (#pairs + 1, cumulative), the features of each pair and their bin
        counts (#pairs, 2), and the unpaired dense features' codes and first
        bins as in :meth:`row_layout`. With ``paired=False``, no pairs (the
        same types, for histograms that do not pair features).
        """
        if not paired:
            return self._layouts(offsets)[2]
        dense_rows, dense_bases = self.row_layout(offsets)[:2]  # (a layout of other offsets forgets the pairs)
        layout = self._pair_layout  # read once: another thread's row_layout may forget it meanwhile
        if layout is None:
            dense = np.flatnonzero(self.mode_bins < 0)
            used = self.counts[dense] > 0
            bins = self.number_of_bins - np.argmax(used[:, ::-1], axis=1)  # largest code + 1
            order = np.argsort(bins, kind="stable")
            pairs, low, high = [], 0, order.size - 1
            while low < high:
                if bins[order[low]] * bins[order[high]] <= PAIR_BINS:
                    pairs.append((order[low], order[high]))
                    low += 1
                high -= 1
            paired = np.array(pairs, dtype=np.int64).reshape(-1, 2)
            single = np.setdiff1d(np.arange(dense.size), paired.ravel())
            pair_bins = bins[paired].astype(np.int64).reshape(-1, 2)
            # joint codes are below 256: uint16 holds the product and sum without a wider temporary
            pair_rows = (dense_rows[:, paired[:, 0]].astype(np.uint16) * pair_bins[:, 1].astype(np.uint16) +
                         dense_rows[:, paired[:, 1]])
            # without pairs the unpaired codes are row_layout's own array, not a copy
            single_rows = dense_rows if not pairs else np.ascontiguousarray(dense_rows[:, single])
            layout = (np.ascontiguousarray(pair_rows, dtype=np.uint8),
                      np.concatenate([[0], np.cumsum(pair_bins.prod(axis=1))]).astype(np.int64),
                      dense[paired], pair_bins, single_rows, dense_bases[single])
            self._pair_layout = layout
        return layout

    def _row_plan(self, width: int) -> tuple[np.ndarray, np.ndarray]:
        """Row-block edges for histograms ``width`` entries wide, and where each feature's listed rows enter them."""
        if width not in self._row_plans:
            n_features, n_samples = self.n_features, self.n_samples
            most = max(1, MAX_PARTIAL_ENTRIES // width)
            size = max(HISTOGRAM_ROWS, -(-n_samples // most))
            edges = np.append(np.arange(0, n_samples, size), n_samples).astype(np.int64)
            bounds = np.empty((n_features, edges.size), dtype=np.int64)
            for f in range(n_features):
                listed_rows = self.rows[self.row_starts[f]:self.row_starts[f + 1]]
                bounds[f] = self.row_starts[f] + np.searchsorted(listed_rows, edges)
            self._row_plans[width] = edges, bounds
        return self._row_plans[width]

    def histograms(self, values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """(#bins, #outputs) sums of ``values`` ((#samples, #outputs) float64, C order) per bin.

        Feature ``f``'s bins are rows ``offsets[f]:offsets[f + 1]`` (at most :attr:`number_of_bins` of them).
        """
        totals = values.sum(axis=0)
        edges, bounds = self._row_plan(int(offsets[-1]) * values.shape[1])
        partial = np.zeros((edges.size - 1, int(offsets[-1]), values.shape[1]))
        tasks = [(self.codes, self.code_rows, self.listed_codes, values, self.mode_bins, bounds, self.rows, offsets,
                  edges[r], edges[r + 1], r, a, b, partial[r]) for r in range(edges.size - 1) for a, b in self._blocks]
        run_blocks(kernels.histograms, tasks, self.n_threads)
        out = partial[0]
        for r in range(1, partial.shape[0]):  # in block order
            out += partial[r]
        kernels.recover_frequent_bins(out, offsets, self.mode_bins, totals)
        return out

    def node_histograms(self, sample_node: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                        totals: np.ndarray, node_counts: np.ndarray,
                        features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-node class sums (#nodes, #features, #bins, #classes) and counts (#nodes, #features, #bins), of
        the codes of a dense matrix (:attr:`whole`: the multi-class trees read no sparse matrix).

        Only ``features`` are filled (the others stay 0); ``sample_node`` is
        each sample's node or -1. See :func:`~bob_boost.engine.kernels.node_histograms`.
        """
        n_nodes, n_classes = totals.shape
        shape = (n_nodes, self.codes.shape[0], self.number_of_bins)
        sums = np.zeros(shape + (n_classes,))
        counts = np.zeros(shape, dtype=np.int64)
        costs = np.where(self.mode_bins[features] < 0, self.codes.shape[1],
                         np.diff(self.row_starts)[features]) + 1
        work = float(costs.sum())
        # each feature's sums are its own: one block of all of them when the work is too small for threads
        ranges = (balanced_ranges(costs, 4 * self.n_threads) if self.n_threads > 1 and work >= MIN_PARALLEL_WORK
                  else [(0, features.size)])
        blocks = [(self.codes, sample_node, labels, weights, totals, node_counts, self.mode_bins, self.row_starts,
                   self.rows, features, a, b, sums, counts) for a, b in ranges]
        run_blocks(kernels.node_histograms, blocks, self.n_threads)
        return sums, counts

    def above(self, feature: int, bin_index: int, high: float, low: float, missing_code: int = -1,
              missing_above: bool = False) -> np.ndarray:
        """(#samples, 1) ``high`` where feature's code exceeds ``bin_index``, else ``low`` (a stump's outputs).

        Samples in bin ``missing_code`` get ``high`` if ``missing_above`` else ``low``.
        """
        out = np.empty((self.n_samples, 1))
        kernels.select_above(self.column(feature), bin_index, missing_code, missing_above, high, low, out[:, 0])
        return out
