"""The partitioned trainers on a Dask cluster: each takes Dask arrays (or dataframes), checks them, and runs
its in-memory counterpart's partitioned training (:mod:`bob_boost.trainers.partitioned`,
:mod:`bob_boost.trainers.partitioned_classes`) on the chunks (:class:`~bob_boost.dask._chunks.DaskRows`).

The rows of the training matrix stay where Dask holds them: once per run every chunk is coded on its
worker and kept there, with its targets, weights and scores, never gathered to the client; each round moves
only histograms, sums and the new weak machine. See the partitioned trainers for what each round sums.
"""
from __future__ import annotations

from ..machine import BoostedMachine
from ..recipes import WEAK_LEARNERS
from ..trainers.partitioned import PARTITIONED_STEP_RULES, PartitionedBoosting, check_partition_threads
from ..trainers.partitioned_classes import (PartitionedCostSensitiveBoosting, PartitionedMultiClassBoosting,
                                            partitioned_twin)
from . import _dask
from ._chunks import DaskRows

__all__ = ["DASK_STEP_RULES", "DASK_WEAK_LEARNERS", "DaskBoosting", "DaskCostSensitiveBoosting",
           "DaskMultiClassBoosting", "check_cluster_threads", "dask_trainer"]

#: Step rules of :class:`DaskBoosting` (None: Newton where it applies).
DASK_STEP_RULES = PARTITIONED_STEP_RULES

#: The weak learners trained on a cluster: every one of generic boosting.
DASK_WEAK_LEARNERS = WEAK_LEARNERS

#: ``n_threads`` of the Dask trainers and estimators: checked as in memory, each worker resolving None.
check_cluster_threads = check_partition_threads



def _train_on_chunks(trainer, features, targets, name: str, vector: bool, sample_weight, sample_costs=None,
                     **options):
    """``trainer.train_on`` the row chunks of the Dask array (or dataframe) ``features``, with ``targets`` (called
    ``name``; a vector for ``vector``), ``sample_weight`` and ``sample_costs`` (None stays None, and is not passed
    on) as float64 Dask arrays chunked like its rows, on the trainer's client."""
    with _dask.connected(trainer.client) as client:
        array = _dask.as_row_chunked(features, "features")
        rows = array.chunks[0]
        weights = None if sample_weight is None else _dask.as_matching_vector(sample_weight, rows, "sample_weight")
        values = _dask.as_matching_targets(targets, rows, name, vector=vector)
        if sample_costs is not None:
            options["sample_costs"] = _dask.as_matching_rows(sample_costs, rows, "sample_costs")
        return trainer.train_on(DaskRows(client, array), array, values, sample_weight=weights, **options)


class DaskBoosting(PartitionedBoosting):
    """:class:`~bob_boost.trainers.partitioned.PartitionedBoosting` on a Dask cluster: decision stumps, look-up
    tables or gradient trees, each round one histogram per chunk.

    Parameters
    ----------
    loss_function, max_bins, weak_learner, lut_entries, selection_style, step_rule, tree, learning_rate, missing, \
sampling, categorical_features
        As :class:`~bob_boost.trainers.partitioned.PartitionedBoosting`'s: the model is the one
        :class:`bob_boost.Boosting` trains in memory, the weights equal to about 1e-12 relative.
    client : distributed.Client or str, optional
        The cluster's client, or its scheduler's address (``"tcp://scheduler:8786"``, connected to when
        training starts); None uses the current default client.
    n_threads : int or None
        Threads of each task's compiled kernels on its worker; None: every core the worker process may use.
        The default, 1, suits workers that already run one task per thread. The model does not depend on it.
    """

    def __init__(self, loss_function, max_bins: int = 256, client=None, *, weak_learner: str = "stump",
                 lut_entries: int | None = None, selection_style: str = "independent", step_rule: str | None = None,
                 tree=None, learning_rate: float | None = None, n_threads: int | None = 1,
                 missing: str | None = None, sampling=None, categorical_features=None) -> None:
        super().__init__(loss_function, max_bins, weak_learner=weak_learner, lut_entries=lut_entries,
                         selection_style=selection_style, step_rule=step_rule, tree=tree,
                         learning_rate=learning_rate, n_threads=n_threads, missing=missing, sampling=sampling,
                         categorical_features=categorical_features)
        self.client = client

    def train(self, features, targets, number_of_rounds: int = 20, sample_weight=None,
              callback=None, baseline=None, boosted_machine: BoostedMachine | None = None) -> BoostedMachine:
        """Boost ``number_of_rounds`` weak machines on the Dask array ``features`` (rows in chunks), as
        :meth:`~bob_boost.trainers.partitioned.PartitionedBoosting.train_on` does.

        Parameters
        ----------
        features : dask.array.Array or dask.dataframe.DataFrame
            (#samples, #features) numeric features with known chunk sizes; chunked by rows (column
            chunks are joined). A dataframe's partitions are its row chunks.
        targets : dask.array.Array, dask.dataframe.Series or array_like
            (#samples,) targets, or (#samples, #outputs) for multi-output LUTs; rechunked to the features'
            row chunks (the model does not change).
        number_of_rounds, callback, baseline, boosted_machine
            As :meth:`~bob_boost.trainers.partitioned.PartitionedBoosting.train_on` (a callback's ``scores``
            is None: the training scores stay on the workers).
        sample_weight : dask.array.Array or array_like, optional
            (#samples,) non-negative weights, not all zero; rescaled to a mean of 1 as in memory.

        Raises
        ------
        ValueError
            For unknown chunk sizes, features that are not 2-D, targets of another length, no client, and what
            ``train_on`` rejects.
        """
        return _train_on_chunks(self, features, targets, "targets", False, sample_weight,
                                number_of_rounds=number_of_rounds, callback=callback, baseline=baseline,
                                boosted_machine=boosted_machine)


class DaskCostSensitiveBoosting(PartitionedCostSensitiveBoosting):
    """:class:`~bob_boost.trainers.partitioned_classes.PartitionedCostSensitiveBoosting` on a Dask cluster:
    AdaBoostDB or Cost-Sensitive AdaBoost, each round one class histogram per chunk.

    Parameters
    ----------
    trainer, max_bins
        As :class:`~bob_boost.trainers.partitioned_classes.PartitionedCostSensitiveBoosting`'s.
    client : distributed.Client or str, optional
        The cluster's client or its scheduler's address; None uses the current default client.
    n_threads : int or None
        Threads of each task's compiled kernels on its worker, as :class:`DaskBoosting`'s.
    """

    source_metadata = {"distributed": "dask"}

    def __init__(self, trainer, max_bins: int = 256, client=None, *, n_threads: int | None = 1) -> None:
        super().__init__(trainer, max_bins, n_threads=n_threads)
        self.client = client

    def train(self, features, targets, number_of_rounds: int = 20, sample_weight=None,
              callback=None, boosted_machine: BoostedMachine | None = None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` stumps on the Dask array (or dataframe) ``features``, as
        :meth:`~bob_boost.trainers.partitioned_classes.PartitionedCostSensitiveBoosting.train_on` does, with
        ``targets`` and ``sample_weight`` (Dask arrays or array_like) rechunked to the features' rows.

        Raises
        ------
        ValueError
            For unknown chunk sizes, no client, and what ``train_on`` rejects.
        """
        return _train_on_chunks(self, features, targets, "targets", True, sample_weight,
                                number_of_rounds=number_of_rounds, callback=callback, boosted_machine=boosted_machine)


class DaskMultiClassBoosting(PartitionedMultiClassBoosting):
    """:class:`~bob_boost.trainers.partitioned_classes.PartitionedMultiClassBoosting` on a Dask cluster:
    BAdaCost, SAMME or AdaBoost.M1 with cost-sensitive trees, grown level by level from per-node class
    histograms summed over the chunks.

    Parameters
    ----------
    trainer
        As :class:`~bob_boost.trainers.partitioned_classes.PartitionedMultiClassBoosting`'s.
    client : distributed.Client or str, optional
        The cluster's client or its scheduler's address; None uses the current default client.
    n_threads : int or None
        Threads of each task's compiled kernels on its worker, as :class:`DaskBoosting`'s.
    """

    source_metadata = {"distributed": "dask"}

    def __init__(self, trainer, client=None, *, n_threads: int | None = 1) -> None:
        super().__init__(trainer, n_threads=n_threads)
        self.client = client

    def train(self, features, labels, number_of_rounds: int | None = None, sample_weight=None,
              callback=None, boosted_machine: BoostedMachine | None = None, sample_costs=None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` trees (default: the trainer's) on the Dask array ``features``, as
        :meth:`~bob_boost.trainers.partitioned_classes.PartitionedMultiClassBoosting.train_on` does, with
        ``labels``, ``sample_weight`` and BAdaCost's example-dependent ``sample_costs`` ((#samples, K) or
        (#samples, K, K); Dask arrays or array_like) rechunked to the features' rows.

        Raises
        ------
        ValueError
            For unknown chunk sizes, no client, and what ``train_on`` rejects.
        """
        return _train_on_chunks(self, features, labels, "labels", True, sample_weight, sample_costs,
                                number_of_rounds=number_of_rounds, callback=callback, boosted_machine=boosted_machine)


def dask_trainer(trainer, max_bins: int, client, n_threads: int | None, **options):
    """The Dask trainer (:class:`DaskBoosting`, :class:`DaskCostSensitiveBoosting` or
    :class:`DaskMultiClassBoosting`) of the in-memory ``trainer``'s model
    (:func:`~bob_boost.trainers.partitioned_classes.partitioned_twin`, ``options`` its)."""
    return partitioned_twin(trainer, max_bins, n_threads=n_threads, client=client,
                            kinds=(DaskBoosting, DaskCostSensitiveBoosting, DaskMultiClassBoosting), **options)
