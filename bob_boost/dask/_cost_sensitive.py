"""AdaBoostDB and Cost-Sensitive AdaBoost on a Dask cluster: the in-memory rules on summed class histograms.

Each round needs the class-wise weighted errors of every stump of the pool. They are running sums of the
per-bin sums of each class's weights, so each chunk sends one (#bins, 2) histogram of its weights
``exp(log D_1 - C_t t F - reference)``; the driver sums them in chunk order, normalises them as the
algorithm does (each class to 1 for AdaBoostDB, all weights to 1 for Cost-Sensitive AdaBoost), and hands
the pool's errors to the in-memory trainer's own selection rule (:meth:`AdaBoostDBTrainer.choose`), so the
Conditional Search, the root finders and the tie rules are the ones of in-memory training.
"""
from __future__ import annotations


from .._validation import check_positive_int
from ..boosting.loop import run
from ..boosting.partitioned_closed_form import PartitionedCostSensitive
from ..callbacks import check_callback
from ..exceptions import InvalidTypeError
from ..machine import BoostedMachine
from ..trainers.cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from ..weak_trainers.partitioned import stump_outputs
from ..weak_trainers.stump_pool.pool import StumpPool
from ..boosting.roots import RootCounter
from . import _tasks as tasks
from ._chunks import Chunks, binned_chunks, check_cluster_bins, check_cluster_threads
from ._continuation import check_continued


class DaskCostSensitiveBoosting:
    """Train AdaBoostDB or Cost-Sensitive AdaBoost on a Dask cluster, as the given in-memory trainer does.

    The model is the one ``trainer.train`` gives in memory on the same data whenever its stump pool equals
    the binned one: features with at most ``max_bins`` distinct values (integers, say), which both bin one
    value per bin. With more values a feature's candidate thresholds are the ``max_bins - 1`` of the
    histogram engine's bins rather than every midpoint. Weights agree to about 1e-12 relative (the class
    sums are added per chunk).

    Parameters
    ----------
    trainer : AdaBoostDBTrainer or CostSensitiveAdaBoostTrainer
        The configuration: costs, AdaBoostDB's selection rule and search (read, never modified).
    max_bins : int
        Bins per feature (2 .. 256).
    client : distributed.Client or str, optional
        The cluster's client or its scheduler's address; None uses the current default client.
    n_threads : int or None
        Threads of each task's compiled kernels on its worker, as :class:`~bob_boost.dask.DaskBoosting`'s.
    """

    def __init__(self, trainer, max_bins: int = 256, client=None, *, n_threads: int | None = 1) -> None:
        if not isinstance(trainer, (AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer)):
            raise InvalidTypeError(f"trainer: expected an AdaBoostDBTrainer or CostSensitiveAdaBoostTrainer, "
                                   f"got {type(trainer).__name__}")
        self.trainer = trainer
        self.max_bins = check_cluster_bins(max_bins)
        self.n_threads = check_cluster_threads(n_threads)
        self.client = client
        self._root_counter = RootCounter()

    @property
    def root_searches(self) -> int:
        """Step equations solved in the last :meth:`train`."""
        return self._root_counter.searches

    def train(self, features, targets, number_of_rounds: int = 20, sample_weight=None,
              callback=None, boosted_machine: BoostedMachine | None = None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` stumps on the Dask array (or dataframe) ``features``.

        Parameters
        ----------
        features : dask.array.Array or dask.dataframe.DataFrame
            (#samples, #features) numeric features with known row chunks.
        targets : dask.array.Array, dask.dataframe.Series or array_like
            (#samples,) targets in {-1, +1}, both classes present; rechunked to the features' rows.
        number_of_rounds : int
            Stumps to add at most.
        sample_weight : dask.array.Array or array_like, optional
            The initial distribution ``D_1`` (non-negative, some weight in each class), normalised to sum 1 as
            in memory. Default: each class weighs 1/2, uniform within it.
        callback : callable or list, optional
            As in memory; its ``scores`` argument is None (the scores stay on the workers).
        boosted_machine : BoostedMachine, optional
            Continue this machine (extended in place and returned), as in memory: the chunks start from its
            scores, computed on the workers from the raw row blocks; nothing is added when its last stump
            classifies every training sample correctly (where one longer run would have stopped).

        Raises
        ------
        ValueError
            For targets other than +-1 or with one class only, negative weights, NaN, unknown chunk sizes,
            or no client; a machine of other outputs or features.
        """
        from . import _dask
        with _dask.connected(self.client) as client:
            return self._train(client, features, targets, number_of_rounds, sample_weight, callback,
                               boosted_machine)

    def _train(self, client, features, targets, number_of_rounds, sample_weight, callback,
               boosted_machine) -> BoostedMachine:
        from . import _dask
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        callback = check_callback(callback)
        trainer = self.trainer
        array = _dask.as_row_chunked(features, "features")
        row_chunks = array.chunks[0]
        previous = check_continued(boosted_machine, 1, array.shape[1])
        labels = _dask.as_matching_targets(targets, row_chunks, "targets", vector=True)
        weights = (None if sample_weight is None
                   else _dask.as_matching_targets(sample_weight, row_chunks, "sample_weight", vector=True))
        coded, offsets, split = binned_chunks(client, array, self.max_bins, n_threads=self.n_threads)
        chunks = Chunks.place(client, coded, labels, weights, 1, tasks.binary_labels)
        self._root_counter = RootCounter()
        pool = StumpPool.from_bins(offsets, split)
        algorithm = PartitionedCostSensitive(trainer, chunks, offsets, pool, stump_outputs, self._root_counter,
                                             {**trainer.model_metadata(), "distributed": "dask"})
        return run(algorithm, None, array, number_of_rounds, previous, callback)
