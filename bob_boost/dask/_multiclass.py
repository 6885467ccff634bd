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
from ..boosting import partition_tasks
from ..boosting.loop import run
from ..boosting.partitioned_closed_form import PartitionedMultiClass
from ..callbacks import check_callback
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..trainers.badacost import BAdaCostTrainer
from ..weak_trainers.multiclass import CostSensitiveTreeTrainer, MultiClassStumpTrainer
from ..weak_trainers.partitioned_class_trees import PartitionedClassTrees
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
        cost_matrix = trainer.cost_matrix_for(np.array([largest]), previous)
        if previous is not None and (previous.cost_matrix is None
                                     or not np.array_equal(previous.cost_matrix, cost_matrix)):
            raise InvalidValueError("boosted_machine: must hold the trainer's cost matrix")
        k = cost_matrix.shape[0]
        chunks = Chunks.place(client, coded, classes, weights, None, tree_tasks.class_indices, k)
        mean = None
        if weights is not None:
            total = float(chunks.summed(partition_tasks.class_sums, chunks.targets, chunks.weights).sum())
            if not total > 0:
                raise InvalidValueError("sample_weight: must not be all zero")
            mean = total / array.shape[0]
        initial = chunks.each(partition_tasks.initial_log_weights, chunks.targets, chunks.weights, mean)
        loss_matrix, exponents = trainer.round_matrices(cost_matrix)
        name = type(trainer).__name__
        algorithm = PartitionedMultiClass(
            chunks, PartitionedClassTrees(chunks, layout, loss_matrix, trainer.weak_learner), cost_matrix,
            loss_matrix, exponents, trainer.weak_step, trainer.shrinkage, trainer.feature_fraction,
            trainer.random_state, initial, array.shape[1], name,
            {"trainer": name, "distributed": "dask", "weak_learner": repr(trainer.weak_learner)})
        return run(algorithm, None, array, rounds, previous, callback)


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
