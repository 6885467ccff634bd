"""AdaBoostDB and Cost-Sensitive AdaBoost on a Dask cluster: the in-memory rules on summed class histograms.

Each round needs the class-wise weighted errors of every stump of the pool. They are running sums of the
per-bin sums of each class's weights, so each chunk sends one (#bins, 2) histogram of its weights
``exp(log D_1 - C_t t F - reference)``; the driver sums them in chunk order, normalises them as the
algorithm does (each class to 1 for AdaBoostDB, all weights to 1 for Cost-Sensitive AdaBoost), and hands
the pool's errors to the in-memory trainer's own selection rule (:meth:`AdaBoostDBTrainer.choose`), so the
Conditional Search, the root finders and the tie rules are the ones of in-memory training.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..boosting.loop import run
from ..boosting.partitions import rebuilds, summed_pieces
from ..boosting.protocol import Proposal, RoundState
from ..callbacks import check_callback
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..trainers.cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from ..weak_trainers.partitioned import stump_outputs
from ..weak_trainers.stump_pool.pool import StumpPool
from ..boosting.roots import RootCounter
from . import _tasks as tasks
from ._chunks import Chunks, binned_chunks, check_cluster_bins, check_cluster_threads
from ._continuation import check_continued, starts_from_scores


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
        algorithm = _ClusterCostSensitive(trainer, chunks, coded, offsets, split, array, self._root_counter)
        return run(algorithm, None, array, number_of_rounds, previous, callback)


class _ClusterCostSensitive:
    """AdaBoostDB's or Cost-Sensitive AdaBoost's configuration of :func:`bob_boost.boosting.loop.run` on a
    cluster's chunks: the scores stay on the workers (the state's ``scores`` and a callback's are None)."""

    def __init__(self, trainer, chunks: Chunks, coded: list, offsets: np.ndarray, split: np.ndarray, array,
                 counter: RootCounter) -> None:
        self.name = trainer.algorithm
        self.trainer, self.chunks, self.coded, self.offsets, self.counter = trainer, chunks, coded, offsets, counter
        self.pool = StumpPool.from_bins(offsets, split)
        self.costs = np.array([trainer.cost_positive, trainer.cost_negative])
        self.array = array
        self.initial = _initial(chunks)
        self.history: list[tuple] = []

    def new_machine(self, features) -> BoostedMachine:
        """An empty univariate machine."""
        return BoostedMachine(number_of_outputs=1, number_of_features=features.shape[1],
                              metadata={**self.trainer._metadata(), "distributed": "dask"})

    def check_machine(self, machine: BoostedMachine) -> None:
        """Checked before the chunks were coded (:func:`check_continued`)."""

    def start(self, features, machine: BoostedMachine) -> RoundState:
        """The chunks' scores start from a continued machine's."""
        if starts_from_scores(machine):
            self.chunks.continue_from(features, machine, include_baseline=True)
        return RoundState(features=features, scores=None)

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the machine's last stump classifies every sample of positive weight correctly (on the raw rows,
        as in memory)."""
        chunks = self.chunks
        outputs = chunks.raw(self.array, tasks.weak_outputs, machine.weak_machines[-1])
        return all(chunks.gather(chunks.each(tasks.classifies_all, outputs, chunks.targets, self.initial)))

    def begin_round(self, state: RoundState) -> None:
        """Nothing: the round's weights are made where they are summed."""

    def propose(self, prepared, state: RoundState) -> Proposal | None:
        """The in-memory selection rule on the pool's errors from the summed class histograms."""
        chunks, trainer = self.chunks, self.trainer
        peaks = _largest(*chunks.gather(chunks.each(tasks.class_peaks, chunks.targets, chunks.scores,
                                                           self.initial, self.costs)))
        references = peaks if trainer.normalises_classes else np.full(2, peaks.max())
        pieces = chunks.each(tasks.class_histogram, self.coded, chunks.targets, chunks.scores, self.initial,
                             self.costs, references, self.offsets)
        sums, totals = chunks.combined(summed_pieces, pieces)
        if trainer.normalises_classes:
            sums, log_totals = sums / totals, references + np.log(totals)
        else:
            sums, log_totals = sums / totals.sum(), None
        choice = trainer.choose(self.pool.errors_from_sums(sums), log_totals, self.counter)
        if choice is None:
            return None
        candidate, alpha, perfect = choice
        feature, bin_index, polarity = self.pool.candidate_bin(candidate)
        state.extra["arguments"] = (feature, bin_index + 1, polarity)
        return Proposal(self.pool.stump(candidate), np.array([alpha]), perfect)

    def step(self, machine, state: RoundState) -> None:
        """Never needed: every proposal has its step."""
        raise NotImplementedError("the stump pool proposes every stump with its step")

    def end_round(self, state: RoundState, machine, weight: np.ndarray) -> None:
        """The chunks' scores plus the weighted stump (rebuilt from the codes every checkpoint)."""
        chunks, alpha = self.chunks, float(weight[0])
        arguments = state.extra.pop("arguments")
        self.history.append((stump_outputs, arguments, alpha))
        if not rebuilds(chunks, len(self.history)):
            outputs = chunks.each(stump_outputs, self.coded, *arguments)
            chunks.scores = chunks.each(tasks.moved, chunks.scores, outputs, alpha)
        else:
            chunks.scores = chunks.each(tasks.rebuilt_scores, self.coded, chunks.start, 1, tuple(self.history))

    def describe(self, state: RoundState) -> str:
        """Nothing beyond the stump and its weight."""
        return ""


def _initial(chunks: Chunks) -> list:
    """Futures of every chunk's ``log D_1``, normalised globally as in memory."""
    targets, weights = chunks.targets, chunks.weights
    positive, negative = chunks.summed(tasks.class_sums, targets, weights)
    if weights[0] is None:
        if positive == 0 or negative == 0:
            raise InvalidValueError("targets: both classes (-1 and +1) must occur")
        shifts = -np.log(2.0 * np.array([positive, negative]))
    else:
        if not (positive > 0 and negative > 0):
            raise InvalidValueError("sample_weight: each class needs some positive weight")
        peak = max(chunks.gather(chunks.each(tasks.log_weight_peak, weights)))
        total = chunks.summed(tasks.scaled_weight_sum, weights, peak)
        shifts = np.full(2, -(peak + np.log(total)))
    return chunks.each(tasks.log_initial, targets, weights, shifts)


def _largest(*peaks: np.ndarray) -> np.ndarray:
    """Each class's largest log weight over the chunks."""
    return np.max(np.stack(peaks), axis=0)
