"""The cost-sensitive and multi-class algorithms on rows in partitions, as their in-memory trainers run them.

- :class:`PartitionedCostSensitiveBoosting`: AdaBoostDB and Cost-Sensitive AdaBoost. Each round needs the
  class-wise weighted errors of every stump of the pool: running sums of the per-bin sums of each class's
  weights, so each partition sends one (#bins, 2) histogram of its weights, summed in partition order,
  normalised as the algorithm does, and handed to the in-memory trainer's own selection rule
  (:meth:`AdaBoostDBTrainer.choose <bob_boost.AdaBoostDBTrainer.choose>`), so the Conditional Search,
  the root finders and the tie rules are the ones of in-memory training.
- :class:`PartitionedMultiClassBoosting`: BAdaCost, SAMME and AdaBoost.M1 with cost-sensitive trees. The
  features are quantised once, from their global ranges, as
  :meth:`bob_boost.binning.BinnedFeatures.quantize` does in memory. Each round the in-memory trainer's
  configuration runs on sums over the partitions: the sample weights' normaliser, the tree level by level
  from summed per-node class histograms
  (:class:`~bob_boost.weak_trainers.partitioned_class_trees.PartitionedClassTrees`), and the step from the
  summed (K, K) confusion matrix.

:class:`bob_boost.dask.DaskCostSensitiveBoosting` and :class:`bob_boost.dask.DaskMultiClassBoosting` are these
trainers on a Dask cluster's chunks.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..boosting import partition_tasks, partitioned_data as data
from ..boosting.closed_form import loss_shift
from ..boosting.loop import run
from ..boosting.partitioned_closed_form import PartitionedCostSensitive, PartitionedMultiClass
from ..boosting.partitions import RowSource
from ..boosting.roots import RootCounter
from ..callbacks import check_callback
from ..engine.edges import QUANTIZATION_BINS
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..weak_trainers.multiclass import CostSensitiveTreeTrainer, MultiClassStumpTrainer
from ..weak_trainers.partitioned_class_trees import PartitionedClassTrees
from ..weak_trainers.stump_pool.pool import StumpPool
from ..weak_trainers.tree_categories import check_categorical_features
from .badacost import BAdaCostTrainer
from .cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from ..weak_trainers.lut import LUTTrainer
from ..weak_trainers.stump import StumpTrainer
from ..weak_trainers.tree import TreeTrainer
from .boosting import Boosting
from .partitioned import (PartitionedBoosting, check_continued, check_partition_bins, check_partition_threads,
                          check_rows)


class PartitionedCostSensitiveBoosting:
    """Train AdaBoostDB or Cost-Sensitive AdaBoost on rows in partitions, as the given in-memory trainer does.

    The model is the one ``trainer.train`` gives in memory on the same data whenever its stump pool equals
    the binned one: features with at most ``max_bins`` distinct values (integers, say), which both bin one
    value per bin. With more values a feature's candidate thresholds are the ``max_bins - 1`` of the
    histogram engine's bins rather than every midpoint. Weights agree to about 1e-12 relative (the class
    sums are added per partition). The trainer's categorical features get a bin per category (at most
    ``max_bins``), and their stumps the in-memory sets of categories.

    Parameters
    ----------
    trainer : AdaBoostDBTrainer or CostSensitiveAdaBoostTrainer
        The configuration: costs, AdaBoostDB's selection rule and search (read, never modified).
    max_bins : int
        Bins per feature (2 .. 256).
    n_threads : int or None
        Threads of each partition's compiled kernels, as :class:`~bob_boost.trainers.partitioned.PartitionedBoosting`'s.
    """

    #: Added to the metadata of every machine trained (a source names itself there).
    source_metadata: dict = {}

    def __init__(self, trainer, max_bins: int = 256, *, n_threads: int | None = 1) -> None:
        if not isinstance(trainer, (AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer)):
            raise InvalidTypeError(f"trainer: expected an AdaBoostDBTrainer or CostSensitiveAdaBoostTrainer, "
                                   f"got {type(trainer).__name__}")
        self.trainer = trainer
        self.max_bins = check_partition_bins(max_bins)
        self.n_threads = check_partition_threads(n_threads)
        self._root_counter = RootCounter()

    @property
    def root_searches(self) -> int:
        """Step equations solved in the last training."""
        return self._root_counter.searches

    def train_on(self, source: RowSource, features, targets, number_of_rounds: int = 20, sample_weight=None,
                 callback=None, boosted_machine: BoostedMachine | None = None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` stumps on the rows of ``source``.

        Parameters
        ----------
        source : RowSource
            Where the rows are, in blocks (:class:`~bob_boost.boosting.partitions.LocalRows`, or the Dask source).
        features : array
            (#samples, #features) numeric features, in the source's form.
        targets : array
            (#samples,) targets in {-1, +1}, both classes present, in the source's form.
        number_of_rounds : int
            Stumps to add at most.
        sample_weight : array, optional
            The initial distribution ``D_1`` (non-negative, some weight in each class), normalised to sum 1 as
            in memory. Default: each class weighs 1/2, uniform within it.
        callback : callable or list, optional
            As in memory; its ``scores`` argument is None (the scores stay with their partitions).
        boosted_machine : BoostedMachine, optional
            Continue this machine (extended in place and returned), as in memory: the partitions start from its
            scores, computed from the raw row blocks; nothing is added when its last stump classifies every
            training sample correctly (where one longer run would have stopped).

        Raises
        ------
        ValueError
            For targets or weights of another number of rows than the features, targets other than +-1 or
            with one class only, negative weights, NaN; a machine of other
            outputs or features.
        """
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        callback = check_callback(callback)
        check_rows(features, targets=targets, sample_weight=sample_weight)
        trainer = self.trainer
        previous = check_continued(boosted_machine, 1, features.shape[1])
        categories = data.global_categories(source, features, check_categorical_features(
            trainer.categorical_features, features.shape[1]), self.max_bins, False)
        coded, offsets, split = data.binned(source, features, self.max_bins, n_threads=self.n_threads,
                                            categories=categories)
        parts = source.place(coded, targets, sample_weight, 1, data.binary_labels)
        self._root_counter = RootCounter()
        pool = StumpPool.from_bins(offsets, split, categories)
        algorithm = PartitionedCostSensitive(trainer, parts, offsets, pool, self._root_counter,
                                             {**trainer.model_metadata(), **self.source_metadata})
        return run(algorithm, None, features, number_of_rounds, previous, callback)


class PartitionedMultiClassBoosting:
    """Train BAdaCost, SAMME or AdaBoost.M1 with cost-sensitive trees on rows in partitions.

    The model is the one ``trainer.train`` gives in memory on the same data: the same quantised bins
    (found from the global ranges), so the same trees whenever two splits are not tied within rounding,
    and steps equal to about 1e-12 relative (the sums are added per partition). While growing a tree the
    rows move to the children by their codes; in memory they move by their raw values, which gives the same
    children except for a raw value exactly on the rounding boundary of two adjacent quantisation steps
    (never for integer features spanning at most 255).

    Parameters
    ----------
    trainer : BAdaCostTrainer, SAMMETrainer or AdaBoostM1Trainer
        The configuration (costs, rounds, shrinkage, feature fraction, random state). Its weak learner must
        be a :class:`~bob_boost.CostSensitiveTreeTrainer` or :class:`~bob_boost.MultiClassStumpTrainer`
        with ``quantized=True``; its ``missing="bin"`` gives NaN a bin of its own after each feature's
        quantised bins, as in memory, and each split learns the side NaN goes to.
    n_threads : int or None
        Threads of each partition's compiled kernels (coding it, its node histograms).
    """

    #: Added to the metadata of every machine trained (a source names itself there).
    source_metadata: dict = {}

    def __init__(self, trainer, *, n_threads: int | None = 1) -> None:
        if not isinstance(trainer, BAdaCostTrainer):
            raise InvalidTypeError(f"trainer: expected a BAdaCostTrainer, SAMMETrainer or AdaBoostM1Trainer, got "
                                   f"{type(trainer).__name__}")
        weak = trainer.weak_learner
        if not isinstance(weak, (CostSensitiveTreeTrainer, MultiClassStumpTrainer)) or not weak.quantized:
            raise InvalidValueError(f"trainer: its weak learner {weak!r} is not distributed; use "
                                    f"CostSensitiveTreeTrainer(max_depth, quantized=True) or MultiClassStumpTrainer()")
        self.trainer = trainer
        self.n_threads = check_partition_threads(n_threads)

    def train_on(self, source: RowSource, features, labels, number_of_rounds: int | None = None, sample_weight=None,
                 callback=None, boosted_machine: BoostedMachine | None = None,
                 sample_costs=None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` trees (default: the trainer's) on the rows of ``source``.

        Parameters
        ----------
        source : RowSource
            Where the rows are, in blocks (:class:`~bob_boost.boosting.partitions.LocalRows`, or the Dask source).
        features : array
            (#samples, #features) numeric features, in the source's form.
        labels : array
            (#samples,) classes ``0 .. K-1``, in the source's form.
        number_of_rounds : int, optional
            Rounds at most.
        sample_weight : array, optional
            Non-negative initial weights, rescaled to a mean of 1 as in memory.
        callback : callable or list, optional
            As in memory; its ``scores`` argument is None (the scores stay with their partitions).
        boosted_machine : BoostedMachine, optional
            Continue this machine (extended in place and returned; it must hold the run's cost matrix), as in
            memory: its rounds' weight updates and feature draws are replayed, the updates from the raw row
            blocks; nothing is added when its last tree has no costly training error.
        sample_costs : array, optional
            BAdaCost's example-dependent costs in the source's form, (#samples, K) rows or (#samples, K, K)
            matrices, as :meth:`BAdaCostTrainer.train <bob_boost.BAdaCostTrainer.train>` takes them: the trees'
            losses, the step and the weight update follow each row's costs (checked and turned into exponents
            where the rows are). The step's root search then sums over the partitions at each of its points.

        Raises
        ------
        TypeError
            For scipy sparse rows (a sparse matrix or chunks).
        ValueError
            For labels, weights or costs of another number of rows than the features, labels that are not
            classes of the cost matrix, infinite features (NaN ones too, unless the
            weak learner has ``missing="bin"``), negative weights, costs that
            :func:`~bob_boost.costs.check_sample_costs` refuses or a trainer that takes none, or a machine of
            another cost matrix or other features.
        """
        trainer = self.trainer
        if data.holds_sparse(features):  # the quantised codes and node histograms read whole dense codes
            raise InvalidTypeError(f"features: {type(trainer).__name__} on partitions reads dense rows; scipy sparse "
                                   f"rows are read by the generic trainer and by AdaBoostDB and Cost-Sensitive "
                                   f"AdaBoost there: pass dense chunks")
        rounds = trainer.number_of_rounds if number_of_rounds is None else \
            check_positive_int(number_of_rounds, "number_of_rounds")
        callback = check_callback(callback)
        if sample_costs is not None:
            trainer.check_sample_costs_allowed()
            if not hasattr(sample_costs, "shape"):  # array_like rows, as in memory
                sample_costs = np.asarray(sample_costs)
            if len(sample_costs.shape) not in (2, 3):
                raise InvalidValueError(f"sample_costs: expected a row or a matrix of costs per sample, got shape "
                                        f"{sample_costs.shape}")
        check_rows(features, labels=labels, sample_weight=sample_weight, sample_costs=sample_costs)
        previous = check_continued(boosted_machine, None, features.shape[1])
        weak = trainer.weak_learner
        missing = weak.missing is not None
        indices = getattr(weak, "categorical_features", None)
        if indices is not None:
            indices = check_categorical_features(indices, features.shape[1])
        categories = data.global_categories(source, features, indices, QUANTIZATION_BINS, missing)
        layout, coded = data.quantized(source, features, self.n_threads, missing, categories)
        largest = max(source.gather(source.raw(labels, data.largest_label)))
        cost_matrix = trainer.cost_matrix_for(np.array([largest]), previous)
        if previous is not None and (previous.cost_matrix is None
                                     or not np.array_equal(previous.cost_matrix, cost_matrix)):
            raise InvalidValueError("boosted_machine: must hold the trainer's cost matrix")
        k = cost_matrix.shape[0]
        parts = source.place(coded, labels, sample_weight, None, data.class_indices, k)
        mean = None
        if sample_weight is not None:
            total = float(parts.summed(partition_tasks.class_sums, parts.targets, parts.weights).sum())
            if not total > 0:
                raise InvalidValueError("sample_weight: must not be all zero")
            mean = total / features.shape[0]
        initial = parts.each(partition_tasks.initial_log_weights, parts.targets, parts.weights, mean)
        loss_matrix, exponents = trainer.round_matrices(cost_matrix)
        row_exponents = row_losses = None
        if sample_costs is not None:
            row_exponents, row_losses = _row_costs(parts, sample_costs, k)
        name = type(trainer).__name__
        algorithm = PartitionedMultiClass(
            parts, PartitionedClassTrees(parts, layout, loss_matrix, weak, categories, row_losses), cost_matrix,
            loss_matrix, exponents, trainer.weak_step, trainer.shrinkage, trainer.feature_fraction,
            trainer.random_state, initial, features.shape[1], name,
            {"trainer": name, **self.source_metadata, "weak_learner": repr(trainer.weak_learner)},
            trainer.sampling, row_exponents)
        return run(algorithm, None, features, rounds, previous, callback)


def _row_costs(parts, sample_costs, k: int) -> tuple[list, list]:
    """Handles of every partition's (#rows, K) exponents of its block of ``sample_costs`` (checked there) and of
    the losses the trees read, shifted by the exponents' global peak as in memory."""
    shape = tuple(sample_costs.shape)
    if shape[1:] not in ((k,), (k, k)):
        raise InvalidValueError(f"sample_costs: expected shape ({shape[0]}, {k}) (a row per sample) or ({shape[0]}, "
                                f"{k}, {k}) (a matrix per sample), got {shape}")
    firsts = [int(first) for first in np.cumsum((0,) + parts.rows[:-1])]
    exponents = parts.raw(sample_costs, partition_tasks.cost_exponents, parts.targets, firsts, k)
    peak = max(float(largest) for largest, _ in parts.gather(parts.each(partition_tasks.exponent_range, exponents)))
    return exponents, parts.each(partition_tasks.exponent_losses, exponents, loss_shift(peak))


def partitioned_twin(trainer, max_bins: int = 256, *, n_threads: int | None = 1,
                     kinds: tuple = (PartitionedBoosting, PartitionedCostSensitiveBoosting,
                                     PartitionedMultiClassBoosting), **options):
    """The partitioned trainer that trains, on rows in partitions, the model the in-memory ``trainer`` trains.

    Parameters
    ----------
    trainer : Boosting, AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer or BAdaCostTrainer
        The in-memory configuration (a recipe's trainer; SAMME and AdaBoost.M1 are BAdaCost trainers); a
        :class:`~bob_boost.Boosting`'s weak trainer is a stump, look-up table or gradient-tree trainer.
    max_bins : int
        Bins per feature of the partitions' codes (2 .. 256).
    n_threads : int or None
        Threads of each partition's kernels.
    kinds : tuple of three classes
        The generic, cost-sensitive and multi-class partitioned trainers to make (the Dask ones, say).
    **options
        Passed to the class made, over what ``trainer`` gives (a Dask trainer's ``client``; ``lut_entries=None``:
        the largest training value + 1).

    Raises
    ------
    TypeError
        For a trainer or weak trainer that has no partitioned twin.
    """
    generic, cost_sensitive, multiclass = kinds
    if isinstance(trainer, (AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer)):
        return cost_sensitive(trainer, max_bins, n_threads=n_threads, **options)
    if isinstance(trainer, BAdaCostTrainer):
        return multiclass(trainer, n_threads=n_threads, **options)
    if not isinstance(trainer, Boosting):
        raise InvalidTypeError(f"trainer: has no partitioned twin, got {type(trainer).__name__}")
    weak = trainer.weak_trainer
    if isinstance(weak, TreeTrainer):
        kind = {"weak_learner": "tree", "tree": weak}
    elif isinstance(weak, StumpTrainer):
        kind = {"weak_learner": "stump", "missing": weak.missing, "categorical_features": weak.categorical_features}
    elif isinstance(weak, LUTTrainer):
        kind = {"weak_learner": "lut", "lut_entries": weak.maximum_feature_value, "missing": weak.missing,
                "selection_style": weak.selection_style}
    else:
        raise InvalidTypeError(f"trainer: its weak trainer has no partitioned twin, got {type(weak).__name__}")
    step_rule = None if trainer.step_rule == "auto" else trainer.step_rule
    return generic(trainer.loss_function, max_bins, **{
        "step_rule": step_rule, "learning_rate": trainer.learning_rate, "sampling": trainer.sampling,
        "n_threads": n_threads, **kind, **options})
