"""The algorithms with closed-form steps on row partitions (:mod:`bob_boost.boosting.partitions`), as
:mod:`bob_boost.boosting.closed_form` has them in memory:

- :class:`PartitionedCostSensitive`: AdaBoostDB and Cost-Sensitive AdaBoost, the trainer's selection rule on
  the stump pool's errors from class histograms summed over the partitions;
- :class:`PartitionedMultiClass`: BAdaCost, SAMME and AdaBoost.M1 with cost-sensitive trees, the trainer's
  step rule on summed confusion matrices (BAdaCost's with example-dependent costs: its root search on sums over
  the partitions' rows).

The per-row state (scores, log weights) stays with its partition and is rebuilt from the codes at the
partitions' checkpoints.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..exceptions import InvalidValueError
from ..machine import BoostedMachine
from . import partition_tasks as tasks
from .partitioned import PartitionSampler, continue_scores
from .partitions import Partitions, in_order, rebuilds, reduced, summed_pieces
from .protocol import Proposal, RoundState
from .roots import RootCounter
from .sampling import Sampling
from .steps import capped_step, exponential_root, unbounded


class PartitionedCostSensitive:
    """AdaBoostDB's or Cost-Sensitive AdaBoost's configuration of :func:`bob_boost.boosting.loop.run` on row
    partitions: the in-memory selection rule (``trainer.choose``) on the stump pool's errors from summed class
    histograms; the scores stay with their partitions (the state's ``scores`` and a callback's are None).

    Parameters
    ----------
    trainer : AdaBoostDBTrainer or CostSensitiveAdaBoostTrainer
        The configuration and its selection rule.
    partitions : Partitions
        The rows: codes, +-1 targets, weights and scores.
    offsets : numpy.ndarray
        Each feature's first bin in the class histograms.
    pool : StumpPool
        The stumps of the binned features (:meth:`~bob_boost.weak_trainers.stump_pool.pool.StumpPool.from_bins`),
        which gives each stump's outputs on a partition's codes (its ``output_task``).
    counter : RootCounter
        Counts the step equations solved.
    metadata : dict
        The machine's metadata.
    """

    def __init__(self, trainer, partitions: Partitions, offsets: np.ndarray, pool, counter: RootCounter,
                 metadata: dict) -> None:
        self.name = trainer.algorithm
        self.trainer, self.partitions, self.offsets, self.counter = trainer, partitions, offsets, counter
        self.pool, self.metadata = pool, metadata
        self.costs = np.array([trainer.cost_positive, trainer.cost_negative])
        self.initial = _initial(partitions)
        self.history: list[tuple] = []

    def new_machine(self, features) -> BoostedMachine:
        """An empty univariate machine."""
        return BoostedMachine(number_of_outputs=1, number_of_features=features.shape[1],
                              metadata=dict(self.metadata))

    def check_machine(self, machine: BoostedMachine) -> None:
        """Checked by the front door before the partitions were coded (its outputs and features)."""

    def start(self, features, machine: BoostedMachine) -> RoundState:
        """The partitions' scores start from a continued machine's."""
        if len(machine) or np.any(machine.baseline != 0):
            continue_scores(self.partitions, features, machine, include_baseline=True)
        return RoundState(features=features, scores=None)

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the machine's last stump classifies every sample of positive weight correctly (on the raw rows,
        as in memory)."""
        parts = self.partitions
        outputs = parts.raw(state.features, tasks.weak_outputs, machine.weak_machines[-1])
        return all(parts.gather(parts.each(tasks.classifies_all, outputs, parts.targets, self.initial)))

    def begin_round(self, state: RoundState) -> None:
        """Nothing: the round's weights are made where they are summed."""

    def propose(self, prepared, state: RoundState) -> Proposal | None:
        """The in-memory selection rule on the pool's errors from the summed class histograms."""
        parts, trainer = self.partitions, self.trainer
        peaks = _largest(*parts.gather(parts.each(tasks.class_peaks, parts.targets, parts.scores,
                                                  self.initial, self.costs)))
        references = peaks if trainer.normalises_classes else np.full(2, peaks.max())
        pieces = parts.each(tasks.class_histogram, parts.coded, parts.targets, parts.scores, self.initial,
                            self.costs, references, self.offsets)
        sums, totals = reduced(parts, summed_pieces, pieces, 16 * (int(self.offsets[-1]) + 1))
        if trainer.normalises_classes:
            sums, log_totals = sums / totals, references + np.log(totals)
        else:
            sums, log_totals = sums / totals.sum(), None
        choice = trainer.choose(self.pool.errors_from_sums(sums), log_totals, self.counter)
        if choice is None:
            return None
        candidate, alpha, perfect = choice
        state.extra["outputs"] = self.pool.output_task(candidate)
        return Proposal(self.pool.stump(candidate), np.array([alpha]), perfect)

    def step(self, machine, state: RoundState) -> None:
        """Never needed: every proposal has its step."""
        raise NotImplementedError("the stump pool proposes every stump with its step")

    def end_round(self, state: RoundState, machine, weight: np.ndarray) -> None:
        """The partitions' scores plus the weighted stump (rebuilt from the codes every checkpoint)."""
        parts, alpha = self.partitions, float(weight[0])
        function, arguments = state.extra.pop("outputs")
        self.history.append((function, arguments, alpha))
        if not rebuilds(parts, len(self.history)):
            outputs = parts.each(function, parts.coded, *arguments)
            parts.scores = parts.each(tasks.moved, parts.scores, outputs, alpha)
        else:
            parts.scores = parts.each(tasks.rebuilt_scores, parts.coded, parts.start, 1, tuple(self.history))

    def describe(self, state: RoundState) -> str:
        """Nothing beyond the stump and its weight."""
        return ""


def _initial(parts: Partitions) -> list:
    """Handles of every partition's ``log D_1``, normalised globally as in memory."""
    targets, weights = parts.targets, parts.weights
    positive, negative = parts.summed(tasks.class_sums, targets, weights)
    if weights[0] is None:
        if positive == 0 or negative == 0:
            raise InvalidValueError("targets: both classes (-1 and +1) must occur")
        shifts = -np.log(2.0 * np.array([positive, negative]))
    else:
        if not (positive > 0 and negative > 0):
            raise InvalidValueError("sample_weight: each class needs some positive weight")
        peak = max(parts.gather(parts.each(tasks.log_weight_peak, weights)))
        total = parts.summed(tasks.scaled_weight_sum, weights, peak)
        shifts = np.full(2, -(peak + np.log(total)))
    return parts.each(tasks.log_initial, targets, weights, shifts)


def _largest(*peaks: np.ndarray) -> np.ndarray:
    """Each class's largest log weight over the partitions."""
    return np.max(np.stack(peaks), axis=0)


class PartitionedMultiClass:
    """BAdaCost's (SAMME's, AdaBoost.M1's) configuration of :func:`bob_boost.boosting.loop.run` on row partitions:
    the trainer's step rule on summed confusion matrices; the log weights stay with their partitions (the
    state's ``scores`` and a callback's are None).

    As :class:`~bob_boost.boosting.closed_form.MulticlassCostBoosting` in memory, it is given the trainer's
    matrices and step rule.

    Parameters
    ----------
    partitions : Partitions
        The rows: codes, class indices and weights.
    grower : object
        The round's tree grower: ``grow(weights, feature subset)``
        (:class:`~bob_boost.weak_trainers.partitioned_class_trees.PartitionedClassTrees`).
    cost_matrix, loss_matrix, exponents : numpy.ndarray
        The (K, K) costs, the losses the trees' splits weigh, and the weight update's exponents.
    step : callable
        ``step(confusion, exponents)``: the round's step from the (K, K) weighted confusion matrix.
    shrinkage, feature_fraction : float
        Every step's factor, and the share of features each round's tree may use.
    random_state : int or None
        Seeds the feature subsets.
    initial : list
        Each partition's initial log weights.
    n_features : int
        Features of the rows (the feature subsets' range).
    name : str
        The trainer's name, in messages.
    metadata : dict
        The machine's metadata.
    sampling : Sampling, optional
        The rows of every round's tree, as in memory (the strata are the classes, GOSS's magnitudes the weights).
    row_exponents : list, optional
        Handles of every partition's (#rows, K) example-dependent exponents (BAdaCost's per-sample ``C2`` rows),
        replacing ``exponents``' class rows in the weight update; the step is then BAdaCost's
        (:func:`~bob_boost.boosting.steps.exponential_root` on every row's weight and exponent, summed over the
        partitions at each point of the search), as in memory.
    """

    def __init__(self, partitions: Partitions, grower, cost_matrix: np.ndarray, loss_matrix: np.ndarray,
                 exponents: np.ndarray, step: Callable, shrinkage: float, feature_fraction: float, random_state,
                 initial: list, n_features: int, name: str, metadata: dict,
                 sampling: Sampling | None = None, row_exponents: list | None = None) -> None:
        self.name, self.metadata = name, metadata
        self.partitions, self.grower, self.cost_matrix = partitions, grower, cost_matrix
        self.loss_matrix, self.exponents, self.step_rule, self.shrinkage = loss_matrix, exponents, step, shrinkage
        self.subset_size = max(1, int(round(feature_fraction * n_features)))
        self.rng = np.random.default_rng(random_state)
        self.initial = self.log_weights = initial  # the initial weights are where the checkpoints rebuild from
        self.history: list[tuple] = []
        self.sampler = (PartitionSampler(sampling, partitions, partitions.targets)
                        if sampling is not None and sampling.samples_rows else None)
        self.row_exponents = [None] * len(partitions.rows) if row_exponents is None else row_exponents
        self.by_rows = row_exponents is not None

    def new_machine(self, features) -> BoostedMachine:
        """An empty machine deciding by the cost matrix."""
        return BoostedMachine(cost_matrix=self.cost_matrix, number_of_features=features.shape[1],
                              metadata=dict(self.metadata))

    def check_machine(self, machine: BoostedMachine) -> None:
        """Checked before the partitions were coded (its features and cost matrix)."""

    def start(self, features, machine: BoostedMachine) -> RoundState:
        """A continued machine's rounds replayed: their weight updates on the partitions, their draws here."""
        n_features = features.shape[1]
        if len(machine):
            parts = self.partitions
            self.initial = self.log_weights = parts.raw(features, tasks.replayed_log_weights, parts.targets,
                                                        self.initial, self.row_exponents, self.exponents, machine)
            for _ in range(len(machine) * (self.subset_size != n_features)):
                self.rng.choice(n_features, self.subset_size, replace=False)
        return RoundState(features=features, scores=None)

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the step of the machine's last weak machine, at the current weights, is infinite (the in-memory
        test, on the raw rows)."""
        parts, k = self.partitions, self.exponents.shape[0]
        weights, last = _normalised(parts, self.log_weights), machine.weak_machines[-1]
        if self.by_rows:
            terms = parts.raw(state.features, tasks.raw_step_terms, weights, self.row_exponents, last)
            return unbounded(*_step_sums(parts.gather(parts.each(tasks.term_sums, terms))))
        confusion = in_order(*parts.gather(parts.raw(state.features, tasks.raw_confusion, parts.targets, weights,
                                                     last, k)))
        return bool(np.isinf(self.step_rule(confusion, self.exponents)))

    def begin_round(self, state: RoundState) -> None:
        """The normalised sample weights and the round's feature subset."""
        n_features, parts = state.features.shape[1], self.partitions
        weights = state.extra["weights"] = state.extra["sampled"] = _normalised(parts, self.log_weights)
        state.feature_subset = (np.arange(n_features) if self.subset_size == n_features
                                else np.sort(self.rng.choice(n_features, self.subset_size, replace=False)))
        if self.sampler is not None:
            factors = self.sampler.factors(state.rounds_before + state.round_index,
                                           lambda: parts.each(tasks.weight_magnitudes, weights))
            state.extra["sampled"] = parts.each(tasks.times, weights, factors)

    def propose(self, prepared, state: RoundState) -> Proposal:
        """The tree grown from the partitions' summed node histograms (of the round's sampled weights)."""
        weak, *grown = self.grower.grow(state.extra["sampled"], state.feature_subset)
        state.extra["grown"] = grown
        return Proposal(weak)

    def step(self, machine, state: RoundState) -> tuple[float, bool] | None:
        """The trainer's step rule on the summed confusion matrix (with example-dependent costs, BAdaCost's on every
        row's weight and exponent); None when it is not positive."""
        leaves, node_labels, _ = state.extra["grown"]
        parts, weights = self.partitions, state.extra["weights"]
        if self.by_rows:
            step = self._row_step(weights, leaves, node_labels)
        else:
            confusion = parts.summed(tasks.confusion, parts.targets, leaves, weights, node_labels,
                                     self.exponents.shape[0])
            step = self.step_rule(confusion, self.exponents)
        if not step > 0:
            return None
        perfect = bool(np.isinf(step))
        return (self._capped() if perfect else step) * self.shrinkage, perfect

    def _capped(self) -> float:
        """:func:`~bob_boost.boosting.steps.capped_step` of the exponents (every row's, by their largest magnitude)."""
        if not self.by_rows:
            return capped_step(self.exponents)
        parts = self.partitions
        return capped_step(np.array([max(float(magnitude) for _, magnitude in
                                         parts.gather(parts.each(tasks.exponent_range, self.row_exponents)))]))

    def _row_step(self, weights: list, leaves: list, node_labels: np.ndarray) -> float:
        """BAdaCost's step on every row's weight and own exponent: the partitions send the slope and range of the
        terms, then the derivative's sum at each point the root search asks for."""
        parts = self.partitions
        terms = parts.each(tasks.step_terms, weights, leaves, self.row_exponents, node_labels)
        sums = _step_sums(parts.gather(parts.each(tasks.term_sums, terms)))

        def derivative(beta: float, shift: float) -> float:
            return float(parts.summed(tasks.term_derivative, terms, beta, shift))

        return exponential_root(*sums, derivative)

    def end_round(self, state: RoundState, machine, weight: float) -> None:
        """Every partition's log weights moved by the rows' leaves (rebuilt from the codes every checkpoint)."""
        parts = self.partitions
        leaves, node_labels, routing = state.extra.pop("grown")
        self.history.append((*routing, node_labels, weight))
        if not rebuilds(parts, len(self.history)):
            self.log_weights = parts.each(tasks.updated_log_weights, self.log_weights, parts.targets, leaves,
                                          self.row_exponents, node_labels, self.exponents, weight)
        else:
            self.log_weights = parts.each(tasks.rebuilt_log_weights, parts.coded, parts.targets,
                                          self.initial, self.row_exponents, self.exponents, tuple(self.history))

    def describe(self, state: RoundState) -> str:
        """Nothing beyond the weak machine and its weight."""
        return ""


def _step_sums(pieces: list) -> tuple[float, float, float]:
    """The slope, smallest and largest exponent of the step's terms from the partitions' :func:`term_sums
    <bob_boost.boosting.partition_tasks.term_sums>` (the slope added in partition order)."""
    return (float(in_order(*(piece[0] for piece in pieces))), float(min(piece[1] for piece in pieces)),
            float(max(piece[2] for piece in pieces)))


def _normalised(parts: Partitions, log_weights: list) -> list:
    """Handles of the normalised weights ``exp(log w - logsumexp(log w))`` of every partition."""
    peak = max(parts.gather(parts.each(tasks.largest, log_weights)))
    total = parts.summed(tasks.exp_sum, log_weights, peak)
    return parts.each(tasks.normalised, log_weights, peak + float(np.log(total)))
