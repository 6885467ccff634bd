"""BAdaCost, SAMME and AdaBoost.M1 with cost-sensitive trees on a Dask cluster.

The features are quantised once, as :meth:`bob_boost.binning.BinnedFeatures.quantize` does in memory,
from their global ranges (:class:`bob_boost.engine.edges.QuantizedLayout`), and coded on the workers. Each
round the in-memory trainer's configuration runs on sums over the chunks:

- the sample weights ``exp(log w - logsumexp(log w))``: one maximum and one sum per chunk;
- the tree, level by level: every chunk sends its per-node class histograms (#frontier nodes x padded
  bins x K floats), the driver sums them in chunk order and picks each node's split with the in-memory
  rule (:func:`bob_boost.weak_trainers.tree_growing.choose_splits`), and the few numbers of the splits go back
  for the chunks to move their rows to the children; the leaves' labels come from per-node class sums
  (:func:`bob_boost.weak_trainers.tree_growing.label_nodes`);
- the step from the summed (K, K) confusion matrix, by the trainer's own step rule;
- the weight update on every chunk, from the rows' leaves.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..binning import QuantizedLayout
from ..boosting.steps import capped_step
from ..boosting.loop import run
from ..boosting.partitions import in_order, rebuilds
from ..boosting.protocol import Proposal, RoundState
from ..callbacks import check_callback
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..trainers.badacost import BAdaCostTrainer
from ..weak_trainers.multiclass import CostSensitiveTreeTrainer, MultiClassStumpTrainer
from ..weak_trainers.tree_growing import TreeNodes, choose_splits, grow_levels, label_nodes
from ..weak.multiclass import MultiClassStumpMachine, MultiClassTreeMachine
from . import _tasks as tasks
from . import _tree_tasks as tree_tasks
from ._chunks import Chunks, check_cluster_threads
from ._continuation import check_continued


class DaskMultiClassBoosting:
    """Train BAdaCost, SAMME or AdaBoost.M1 with cost-sensitive trees on a Dask cluster.

    The model is the one ``trainer.train`` gives in memory on the same data: the same quantised bins
    (found from the global ranges), so the same trees whenever two splits are not tied within rounding,
    and steps equal to about 1e-12 relative (the sums are added per chunk). While growing a tree the rows
    move to the children by their codes; in memory they move by their raw values, which gives the same
    children except for a raw value exactly on the rounding boundary of two adjacent quantisation steps
    (never for integer features spanning at most 255).

    Parameters
    ----------
    trainer : BAdaCostTrainer, SAMMETrainer or AdaBoostM1Trainer
        The configuration (costs, rounds, shrinkage, feature fraction, random state). Its weak learner must
        be a :class:`~bob_boost.CostSensitiveTreeTrainer` or :class:`~bob_boost.MultiClassStumpTrainer`
        with ``quantized=True``; its ``missing="bin"`` gives NaN a bin of its own after each feature's
        quantised bins, as in memory, and each split learns the side NaN goes to.
    client : distributed.Client or str, optional
        The cluster's client or its scheduler's address; None uses the current default client.
    n_threads : int or None
        Threads of each task's compiled kernels on its worker (coding a chunk, its node histograms), as
        :class:`~bob_boost.dask.DaskBoosting`'s.
    """

    def __init__(self, trainer, client=None, *, n_threads: int | None = 1) -> None:
        if not isinstance(trainer, BAdaCostTrainer):
            raise InvalidTypeError(f"trainer: expected a BAdaCostTrainer, SAMMETrainer or AdaBoostM1Trainer, got "
                                   f"{type(trainer).__name__}")
        weak = trainer.weak_learner
        if not isinstance(weak, (CostSensitiveTreeTrainer, MultiClassStumpTrainer)) or not weak.quantized:
            raise InvalidValueError(f"trainer: its weak learner {weak!r} is not distributed; use "
                                    f"CostSensitiveTreeTrainer(max_depth, quantized=True) or MultiClassStumpTrainer()")
        self.trainer = trainer
        self.client = client
        self.n_threads = check_cluster_threads(n_threads)

    def train(self, features, labels, number_of_rounds: int | None = None, sample_weight=None,
              callback=None, boosted_machine: BoostedMachine | None = None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` trees (default: the trainer's) on the Dask array ``features``.

        Parameters
        ----------
        features : dask.array.Array or dask.dataframe.DataFrame
            (#samples, #features) numeric features with known row chunks.
        labels : dask.array.Array, dask.dataframe.Series or array_like
            (#samples,) classes ``0 .. K-1``; rechunked to the features' rows.
        number_of_rounds : int, optional
            Rounds at most.
        sample_weight : dask.array.Array or array_like, optional
            Non-negative initial weights, rescaled to a mean of 1 as in memory.
        callback : callable or list, optional
            As in memory; its ``scores`` argument is None (the scores stay on the workers).
        boosted_machine : BoostedMachine, optional
            Continue this machine (extended in place and returned; it must hold the run's cost matrix), as in
            memory: its rounds' weight updates and feature draws are replayed, the updates on the workers from
            the raw row blocks; nothing is added when its last tree has no costly training error.

        Raises
        ------
        ValueError
            For labels that are not classes of the cost matrix, infinite features (NaN ones too, unless the
            weak learner has ``missing="bin"``), negative weights, unknown
            chunk sizes, no client, or a machine of another cost matrix or other features.
        """
        from . import _dask
        with _dask.connected(self.client) as client:
            return self._train(client, features, labels, number_of_rounds, sample_weight, callback,
                               boosted_machine)

    def _train(self, client, features, labels, number_of_rounds, sample_weight, callback,
               boosted_machine) -> BoostedMachine:
        from . import _dask
        trainer = self.trainer
        rounds = trainer.number_of_rounds if number_of_rounds is None else \
            check_positive_int(number_of_rounds, "number_of_rounds")
        callback = check_callback(callback)
        array = _dask.as_row_chunked(features, "features")
        row_chunks = array.chunks[0]
        previous = check_continued(boosted_machine, None, array.shape[1])
        classes = _dask.as_matching_targets(labels, row_chunks, "labels", vector=True)
        weights = (None if sample_weight is None
                   else _dask.as_matching_targets(sample_weight, row_chunks, "sample_weight", vector=True))
        layout, coded = _quantized_chunks(client, array, self.n_threads, trainer.weak_learner.missing is not None)
        largest = max(client.gather(_dask.per_chunk(client, tree_tasks.largest_label, classes, name="labels")))
        cost_matrix = trainer._cost_matrix_for(np.array([largest]), previous)
        if previous is not None and (previous.cost_matrix is None
                                     or not np.array_equal(previous.cost_matrix, cost_matrix)):
            raise InvalidValueError("boosted_machine: must hold the trainer's cost matrix")
        k = cost_matrix.shape[0]
        chunks = Chunks.place(client, coded, classes, weights, None, tree_tasks.class_indices, k)
        mean = None
        if weights is not None:
            total = float(chunks.summed(tasks.class_sums, chunks.targets, chunks.weights).sum())
            if not total > 0:
                raise InvalidValueError("sample_weight: must not be all zero")
            mean = total / array.shape[0]
        initial = chunks.each(tree_tasks.initial_log_weights, chunks.targets, chunks.weights, mean)
        algorithm = _ClusterMultiClass(trainer, chunks, layout, cost_matrix, initial, array.shape[1])
        return run(algorithm, None, array, rounds, previous, callback)


class _ClusterMultiClass:
    """BAdaCost's (SAMME's, AdaBoost.M1's) configuration of :func:`bob_boost.boosting.loop.run` on a cluster's
    chunks: the log weights stay on the workers (the state's ``scores`` and a callback's are None)."""

    def __init__(self, trainer, chunks: Chunks, layout: QuantizedLayout, cost_matrix: np.ndarray, initial: list,
                 n_features: int) -> None:
        self.name = type(trainer).__name__
        self.trainer, self.chunks, self.cost_matrix = trainer, chunks, cost_matrix
        self.loss_matrix, self.exponents = trainer._round_matrices(cost_matrix)
        self.grower = _DistributedTrees(chunks, layout, self.loss_matrix, trainer.weak_learner)
        self.subset_size = max(1, int(round(trainer.feature_fraction * n_features)))
        self.rng = np.random.default_rng(trainer.random_state)
        self.initial = self.log_weights = initial  # the initial weights are where the checkpoints rebuild from
        self.history: list[tuple] = []

    def new_machine(self, features) -> BoostedMachine:
        """An empty machine deciding by the cost matrix."""
        return BoostedMachine(cost_matrix=self.cost_matrix, number_of_features=features.shape[1],
                              metadata={"trainer": type(self.trainer).__name__, "distributed": "dask",
                                        "weak_learner": repr(self.trainer.weak_learner)})

    def check_machine(self, machine: BoostedMachine) -> None:
        """Checked before the chunks were coded (its features and cost matrix)."""

    def start(self, features, machine: BoostedMachine) -> RoundState:
        """A continued machine's rounds replayed: their weight updates on the workers, their draws here."""
        n_features = features.shape[1]
        if len(machine):
            chunks = self.chunks
            self.initial = self.log_weights = chunks.raw(features, tree_tasks.replayed_log_weights,
                                                            chunks.targets, self.initial, self.exponents, machine)
            for _ in range(len(machine) * (self.subset_size != n_features)):
                self.rng.choice(n_features, self.subset_size, replace=False)
        return RoundState(features=features, scores=None)

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the step of the machine's last weak machine, at the current weights, is infinite (the in-memory
        test, on the raw rows)."""
        chunks, k = self.chunks, self.exponents.shape[0]
        confusion = in_order(*chunks.gather(chunks.raw(
            state.features, tree_tasks.raw_confusion, chunks.targets,
            _normalised(chunks, self.log_weights), machine.weak_machines[-1], k)))
        return bool(np.isinf(self.trainer._step(confusion, self.exponents)))

    def begin_round(self, state: RoundState) -> None:
        """The normalised sample weights and the round's feature subset."""
        n_features = state.features.shape[1]
        state.extra["weights"] = _normalised(self.chunks, self.log_weights)
        state.feature_subset = (np.arange(n_features) if self.subset_size == n_features
                                else np.sort(self.rng.choice(n_features, self.subset_size, replace=False)))

    def propose(self, prepared, state: RoundState) -> Proposal:
        """The tree grown from the chunks' summed node histograms."""
        weak, *grown = self.grower.grow(state.extra["weights"], state.feature_subset)
        state.extra["grown"] = grown
        return Proposal(weak)

    def step(self, machine, state: RoundState) -> tuple[float, bool] | None:
        """The trainer's step rule on the summed confusion matrix; None when it is not positive."""
        leaves, node_labels, _ = state.extra["grown"]
        confusion = self.chunks.summed(tree_tasks.confusion, self.chunks.targets, leaves, state.extra["weights"],
                                       node_labels, self.exponents.shape[0])
        step = self.trainer._step(confusion, self.exponents)
        if not step > 0:
            return None
        perfect = bool(np.isinf(step))
        return (capped_step(self.exponents) if perfect else step) * self.trainer.shrinkage, perfect

    def end_round(self, state: RoundState, machine, weight: float) -> None:
        """Every chunk's log weights moved by the rows' leaves (rebuilt from the codes every checkpoint)."""
        chunks = self.chunks
        leaves, node_labels, routing = state.extra.pop("grown")
        self.history.append((*routing, node_labels, weight))
        if not rebuilds(chunks, len(self.history)):
            self.log_weights = chunks.each(tree_tasks.updated_log_weights, self.log_weights, chunks.targets, leaves,
                                           node_labels, self.exponents, weight)
        else:
            self.log_weights = chunks.each(tree_tasks.rebuilt_log_weights, chunks.coded, chunks.targets,
                                           self.initial, self.exponents, tuple(self.history))

    def describe(self, state: RoundState) -> str:
        """Nothing beyond the weak machine and its weight."""
        return ""


def _normalised(chunks: Chunks, log_weights: list) -> list:
    """Futures of the normalised weights ``exp(log w - logsumexp(log w))`` of every chunk."""
    peak = max(chunks.gather(chunks.each(tree_tasks.largest, log_weights)))
    total = chunks.summed(tree_tasks.exp_sum, log_weights, peak)
    return chunks.each(tree_tasks.normalised, log_weights, peak + float(np.log(total)))


def _quantized_chunks(client, array, n_threads: int | None, missing: bool) -> tuple[QuantizedLayout, list]:
    """The global quantised layout and the futures of every chunk's codes (with ``missing``, a NaN bin after
    each feature's value bins, as :meth:`bob_boost.binning.BinnedFeatures.quantize` makes it)."""
    from ._dask import per_chunk
    ranges = client.gather(per_chunk(client, tree_tasks.value_range, array, n_threads, missing))
    low = np.min([r[0] for r in ranges], axis=0)
    high = np.max([r[1] for r in ranges], axis=0)
    empty = low > high  # NaN in every row: the range 0 .. 0, as in memory
    low, high = np.where(empty, 0.0, low), np.where(empty, 0.0, high)
    integral = np.all([r[2] for r in ranges], axis=0)
    layout = QuantizedLayout.of(low, high, integral, missing)
    coded = per_chunk(client, tree_tasks.quantized_codes, array, layout.low, layout.step, layout.top,
                      layout.bins_per_feature, n_threads, layout.missing_codes)
    return layout, coded


class _DistributedTrees:
    """The :class:`~bob_boost.weak_trainers.tree_growing.LevelSource` of the chunks: the round's tree grows level by
    level (:func:`~bob_boost.weak_trainers.tree_growing.grow_levels`, as in memory) from the chunks' summed node
    histograms."""

    def __init__(self, chunks: Chunks, layout: QuantizedLayout, loss_matrix: np.ndarray, weak_trainer) -> None:
        self.chunks = chunks
        self.layout = layout
        self.loss_matrix = loss_matrix
        self.k = loss_matrix.shape[0]
        self.max_depth = 1 if isinstance(weak_trainer, MultiClassStumpTrainer) else weak_trainer.max_depth
        self.stump = isinstance(weak_trainer, MultiClassStumpTrainer)
        self.missing = weak_trainer.missing is not None
        offsets = layout.offsets
        sizes = np.diff(offsets)
        self.feature_of_bin = np.repeat(np.arange(sizes.size), sizes)
        starts = np.arange(sizes.size) * layout.bins_per_feature
        self.positions = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1])
        # cost-weighted Gini: class j counts r_j = sum_k (L[j,k] - L[j,j]) times, as in memory
        self.factors = (loss_matrix - np.diag(loss_matrix)[:, np.newaxis]).sum(axis=1)

    def grow(self, sample_weights: list, subset: np.ndarray) -> tuple:
        """``(weak machine, futures of every chunk's leaf per row, the nodes' labels, (the split table of every
        inner node, the depth))``: the last two route rows through the tree again from their codes."""
        chunks, k = self.chunks, self.k
        self.sample_node = chunks.each(tree_tasks.root_nodes, list(chunks.rows), pure=False)
        self.weights, self.subset = sample_weights, subset.astype(np.int64)
        self.splits_made: list[tuple[int, ...]] = []  # node, feature, bin within it, children, NaN code and side
        self.depth = 0  # levels split
        nodes = grow_levels(self, self.feature_of_bin, self.max_depth)
        sums = chunks.summed(tree_tasks.leaf_sums, self.sample_node, chunks.targets, sample_weights,
                             len(nodes.features), k)
        node_labels = label_nodes(sums, nodes.features, nodes.left, nodes.right, self.loss_matrix)
        routing = np.full((len(nodes.features), 6), -1, dtype=np.int64)
        for node, *split in self.splits_made:
            routing[node] = split
        weak = self._machine(nodes.features, nodes.thresholds, nodes.left, nodes.right, node_labels, subset,
                             nodes.nan_left if self.missing else None)
        return weak, self.sample_node, node_labels, (routing, self.depth)

    def best_splits(self, frontier: list[int], nodes: TreeNodes) -> list[tuple[int, float, bool]]:
        """The frontier nodes' best splits, from the chunks' node class histograms summed on a worker."""
        chunks, layout = self.chunks, self.layout
        local = np.full(len(nodes.features), -1, dtype=np.int64)
        local[frontier] = np.arange(len(frontier))
        pieces = chunks.each(tree_tasks.node_class_histograms, chunks.coded, self.sample_node, chunks.targets,
                             self.weights, self.factors, local, self.subset, self.k)
        histograms, counts, totals, node_counts = chunks.combined(tree_tasks.summed, pieces)
        return choose_splits(histograms, counts, self.positions, layout.offsets, self.subset, totals, node_counts,
                             self.missing, layout.bin_values, self.feature_of_bin)

    def route(self, nodes: TreeNodes, splits: list[tuple[int, int]]) -> None:
        """Every chunk moves the rows of the split nodes to their children by their codes."""
        layout = self.layout
        table = np.full((len(nodes.features), 6), -1, dtype=np.int64)
        for node, bin_index in splits:
            feature = nodes.features[node]
            nan_code = int(layout.missing_codes[feature]) if self.missing else -1
            table[node] = (feature, bin_index - layout.offsets[feature], nodes.left[node], nodes.right[node],
                           nan_code, int(nodes.nan_left[node]))
            self.splits_made.append((node, *table[node]))
        self.sample_node = self.chunks.each(tree_tasks.routed, self.chunks.coded, self.sample_node, table)
        self.depth += 1

    def _machine(self, features, thresholds, left, right, node_labels, subset, nan_left):
        """The tree, or for a stump trainer the stump (as :class:`MultiClassStumpTrainer` makes it); ``nan_left``
        (None without missing values) says where each node sends NaN."""
        k = self.k
        if not self.stump:
            return MultiClassTreeMachine(features, thresholds, left, right, node_labels, k, nan_left)
        if features[0] < 0:
            return MultiClassStumpMachine(0.0, int(subset[0]), [node_labels[0]] * 2, k,
                                          False if self.missing else None)
        return MultiClassStumpMachine(float(thresholds[0]), int(features[0]),
                                      [node_labels[left[0]], node_labels[right[0]]], k,
                                      None if nan_left is None else not nan_left[0])
