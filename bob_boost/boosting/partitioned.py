"""The boosting algorithms on row partitions (:mod:`bob_boost.boosting.partitions`): configurations of
:func:`bob_boost.boosting.loop.run` whose per-row state stays with its partition.

- :class:`PartitionedGradientBoosting`: generic boosting (any loss; stumps, tables or gradient trees);
- in :mod:`.partitioned_closed_form`, the algorithms with closed-form steps: AdaBoostDB and Cost-Sensitive
  AdaBoost, and BAdaCost, SAMME and AdaBoost.M1 with cost-sensitive trees.

Each round applies the in-memory rules (the weak trainers' choice, the step rules, the descent guarantee,
the closed-form steps) to sums over the partitions, added in partition order. Every
``partitions.checkpoint_rounds`` rounds the per-partition state is rebuilt from the codes and the rounds so
far (:func:`~bob_boost.boosting.partitions.rebuilds`).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine import hashing
from ..exceptions import InvalidValueError
from ..losses import LossFunction
from ..machine import BoostedMachine
from . import partition_tasks as tasks
from .partitioned_steps import lbfgs_step, newton_step
from . import sampling as sample
from .partitions import LocalPartitions, Partitions, rebuilds, reduced, summed_pieces
from .protocol import Proposal, RoundState
from .steps import descending_weight, proves_descent


def continue_scores(parts: Partitions, features, machine: BoostedMachine, include_baseline: bool) -> None:
    """Start every partition from ``machine``'s scores, computed from its raw rows of ``features`` (read again,
    never kept): the rounds of a machine being continued, as in memory."""
    parts.start = parts.raw(features, tasks.machine_scores, machine, include_baseline)
    parts.scores = parts.start


class PartitionedGradientBoosting:
    """Generic boosting's configuration of :func:`bob_boost.boosting.loop.run` on row partitions: any loss, with
    stumps or tables chosen from summed gradient histograms, or gradient trees; the scores stay with their
    partitions (the state's ``scores`` and a callback's are None).

    Parameters
    ----------
    name : str
        The trainer's name, in messages and the machine's metadata.
    loss : LossFunction
        The loss (one whose outputs are separate, for ``newton``).
    learning_rate : float
        Shrinks every weight.
    partitions : Partitions
        The rows: codes, targets, weights and scores.
    outputs : int
        Outputs of the machine.
    baseline : numpy.ndarray or None
        The machine's constant start (its rounds boost the residuals from it).
    metadata : dict
        The machine's metadata.
    chooser : object
        ``choose(histograms, absolute sums, sums)`` gives ``(weak machine, output function, its arguments)``
        (:mod:`bob_boost.weak_trainers.partitioned`); unused with ``trees``.
    offsets : numpy.ndarray
        Each feature's first bin in the histograms.
    trees : object or None
        A grower of gradient trees (:class:`~bob_boost.weak_trainers.partitioned_trees.PartitionedGradientTrees`).
    fixed_step : bool
        Newton-leaf trees: their own step is 1, so the weight is the learning rate.
    newton : bool
        Weights by Newton's method, else by L-BFGS.
    rows : int
        Rows in all partitions (the L-BFGS tolerance's scale).
    weight_passes : list of int
        Each round's passes over the partitions for its weights are appended to it.
    sampling : Sampling, optional
        Every round's rows and tree columns (:class:`PartitionSampler`), as in memory.
    """

    def __init__(self, name: str, loss: LossFunction, learning_rate: float, partitions: Partitions, outputs: int,
                 baseline: np.ndarray | None, metadata: dict, chooser, offsets: np.ndarray, trees, fixed_step: bool,
                 newton: bool, rows: int, weight_passes: list[int], sampling: sample.Sampling | None = None) -> None:
        self.name, self.loss, self.learning_rate, self.weight_passes = name, loss, learning_rate, weight_passes
        self.fixed_step = fixed_step
        self.partitions, self.outputs, self.baseline, self.metadata = partitions, outputs, baseline, metadata
        self.chooser, self.offsets, self.trees, self.newton, self.rows = chooser, offsets, trees, newton, rows
        self.sampler = None if sampling is None else PartitionSampler(sampling, partitions)
        self.history: list[tuple] = []
        self.current_loss: float | None = None

    def new_machine(self, features) -> BoostedMachine:
        """An empty machine from the run's baseline, deciding as the loss does (CMEL by its costs)."""
        loss = self.loss
        return BoostedMachine(number_of_outputs=self.outputs, number_of_features=features.shape[1],
                              baseline=self.baseline, cost_matrix=loss.cost_matrix, metadata=dict(self.metadata),
                              decision_rule=loss.decision_rule(self.outputs))

    def check_machine(self, machine: BoostedMachine) -> None:
        """Checked before the partitions were coded (its outputs, features and baseline)."""

    def start(self, features, machine: BoostedMachine) -> RoundState:
        """The partitions' scores were set before (zero, or a continued machine's)."""
        return RoundState(features=features, scores=None)

    def begin_round(self, state: RoundState) -> None:
        """Nothing: each partition computes its gradient where it sums it."""

    def propose(self, prepared, state: RoundState) -> Proposal | None:
        """A gradient tree, or the stump or table the in-memory rule picks from the summed histograms."""
        parts = self.partitions
        weights, columns, factors = parts.weights, None, None
        if self.sampler is not None:
            place = state.rounds_before + state.round_index
            columns = self.sampler.sampling.columns(place, len(self.offsets) - 1)
            factors = self.sampler.factors(place, lambda: parts.each(tasks.gradient_magnitudes, parts.targets,
                                                                     parts.scores, parts.weights, self.loss))
            if factors is not None:
                weights = parts.each(tasks.times, parts.weights, factors)
        if self.trees is not None:
            node_columns = None if self.sampler is None else self.sampler.sampling.node_columns(
                state.rounds_before + state.round_index)
            weak, weak_outputs, output_task, arguments = self.trees.grow(self.loss, self.fixed_step, weights, columns,
                                                                         factors, node_columns)
        else:
            pieces = parts.each(tasks.gradient_histogram, parts.coded, parts.targets, parts.scores,
                                weights, self.loss, self.offsets)
            histograms, sums, absolute_sums = reduced(parts, summed_pieces, pieces,
                                                      8 * (int(self.offsets[-1]) + 2) * self.outputs)
            choice = self.chooser.choose(histograms, absolute_sums, sums, columns)
            if choice is None:
                return None
            weak, output_task, arguments = choice
            weak_outputs = parts.each(output_task, parts.coded, *arguments)
        state.extra.update(outputs=weak_outputs, task=output_task, arguments=arguments)
        return Proposal(weak)

    def step(self, machine, state: RoundState) -> tuple[np.ndarray, bool] | None:
        """The learning rate for Newton-leaf trees; otherwise it times the step rule's weight (None when zero)."""
        if self.fixed_step:
            state.extra["certified"] = False
            return np.full(self.outputs, float(self.learning_rate)), False
        parts, loss, weak_outputs = self.partitions, self.loss, state.extra["outputs"]
        line = (newton_step(parts, weak_outputs, self.outputs, loss, self.weight_passes) if self.newton
                else lbfgs_step(parts, weak_outputs, self.outputs, self.rows, loss, self.weight_passes))
        alpha = self.learning_rate * line.weights
        if np.all(alpha == 0.0):
            return None
        state.extra["certified"] = proves_descent(line, float(self.learning_rate), loss.convex)
        return alpha, False

    def descend(self, machine, weight: np.ndarray, state: RoundState) -> np.ndarray | None:
        """The in-memory descent guarantee on the partitions' summed losses (added in partition order): a weight
        its step rule does not certify (a tree's Newton leaves, a shrunk step on a loss that is not convex, a
        search that did not converge) is halved until the training loss does not rise; None, with a
        :class:`~bob_boost.exceptions.ConvergenceWarning`, when no halving keeps it."""
        if state.extra.pop("certified"):
            self.current_loss = None
            return weight
        parts, loss, weak_outputs = self.partitions, self.loss, state.extra["outputs"]
        before = self.current_loss
        if before is None:
            before = parts.summed(tasks.training_loss, parts.targets, parts.scores, parts.weights, loss)

        def loss_at(candidate: np.ndarray, halvings: int) -> float:
            return parts.summed(tasks.moved_loss, parts.targets, parts.scores, weak_outputs, parts.weights,
                                loss, candidate)
        accepted = descending_weight(weight, before, loss_at, self.name, state.round_index, type(loss).__name__)
        if accepted is None:
            return None
        weight, self.current_loss = accepted
        return weight

    def end_round(self, state: RoundState, machine, weight: np.ndarray) -> None:
        """Add the round to the partitions' scores; at the partitions' checkpoints, rebuild them from the
        codes instead, so that a lost partition's scores are recomputed from a short task graph."""
        parts, extra = self.partitions, state.extra
        self.history.append((extra.pop("task"), extra.pop("arguments"), weight))
        weak_outputs = extra.pop("outputs")
        if not rebuilds(parts, len(self.history)):
            parts.scores = parts.each(tasks.moved, parts.scores, weak_outputs, weight)
        else:
            parts.scores = parts.each(tasks.rebuilt_scores, parts.coded, parts.start, self.outputs,
                                      tuple(self.history))

    def describe(self, state: RoundState) -> str:
        """Nothing beyond the weak machine and its weights."""
        return ""


class PartitionSampler:
    """A :class:`~bob_boost.boosting.sampling.Sampling` of rows on partitions: every row's factor from its global
    index (the partitions' row offsets), the exact order statistics from the partitions' keys in two passes
    (:func:`~bob_boost.engine.hashing.kth_keys`), so that every round keeps the rows it keeps in memory.

    Parameters
    ----------
    sampling : Sampling
        What to sample.
    partitions : Partitions
        The rows.
    strata : list, optional
        For ``"stratified"``: each partition's (#rows,) class indices (default: the distinct rows of the
        partitions' targets).

    Raises
    ------
    ValueError
        For ``"stratified"`` sampling of targets with more distinct rows than classes can have.
    """

    def __init__(self, sampling: sample.Sampling, partitions: Partitions, strata: list | None = None) -> None:
        self.sampling, self.partitions = sampling, partitions
        self.first_rows = [int(r) for r in LocalPartitions.bounds(partitions.rows)[:-1]]
        self.counts = list(partitions.rows)
        self.drawn: tuple[int, list] | None = None
        self.strata = self.ranks = None
        if sampling.samples_rows and sampling.method in sample.CLASS_METHODS:
            parts = partitions
            if strata is None:
                classes = sample.check_strata(sample.distinct_rows(np.concatenate(
                    parts.gather(parts.each(sample.distinct_rows, parts.targets)))))
                strata = parts.each(sample.strata_of, parts.targets, classes)
            self.strata = strata
            largest = max(int(m) for m in parts.gather(parts.each(np.max, strata)))
            self.ranks = sampling.stratum_ranks(parts.summed(sample.stratum_counts, strata, largest + 1))

    def factors(self, place: int, goss_keys: Callable[[], list]) -> list | None:
        """The factors (handles) of the rows of the round at ``place`` in the machine, None without row sampling;
        ``goss_keys()`` gives the partitions' GOSS keys (:func:`~bob_boost.boosting.sampling.goss_magnitudes`)."""
        sampling, parts = self.sampling, self.partitions
        if not sampling.samples_rows:
            return None
        draw, seed = sampling.draw(place), sampling.random_state
        if self.drawn is not None and self.drawn[0] == draw and sampling.method != "goss":
            return self.drawn[1]
        if sampling.method == "uniform":
            factors = parts.each(sample.uniform_factors, self.first_rows, self.counts, seed, draw, sampling.subsample)
        elif sampling.method in sample.CLASS_METHODS:
            keys = parts.each(sample.stratum_keys, self.first_rows, self.counts, seed, draw)
            thresholds = self._kth_keys(keys, self.strata, self.ranks)
            factors = parts.each(sample.stratified_factors, self.strata, self.first_rows, seed, draw, thresholds)
        else:
            magnitudes = goss_keys()
            rows = int(sum(parts.rows))
            threshold = self._kth_keys(magnitudes, [None] * len(parts.rows),
                                       np.array([rows - sampling.goss_rank(rows) + 1]))[0]
            factors = parts.each(sample.goss_factors, magnitudes, self.first_rows, seed, draw, threshold,
                                 sampling.top_rate, sampling.other_rate)
        self.drawn = (draw, factors)
        return factors

    def _kth_keys(self, keys: list, groups: list, ranks: np.ndarray) -> np.ndarray:
        """Every group's ``ranks[g]``-th smallest of the partitions' ``keys`` (handles), exactly, in two passes
        (:func:`~bob_boost.engine.hashing.kth_keys`)."""
        parts = self.partitions
        counts = parts.summed(hashing.bucket_counts, keys, groups, len(ranks))
        candidates = parts.gather(parts.each(hashing.bucket_keys, keys, groups, hashing.last_buckets(counts, ranks)))
        return hashing.kth_keys(counts, candidates, ranks)


def mean_one_weights(parts: Partitions, samples: int) -> list:
    """The partitions' sample weights rescaled to a mean of 1 over all ``samples`` rows, as the in-memory trainer's
    ``mean_one`` has them: ``min_hessian_leaf`` and ``l2_regularization`` then weigh the same on the cluster.

    The total is the partitions' sums added in partition order, so the factor (and the weights) may differ from
    in memory's pairwise sum in the last bits.

    Raises
    ------
    ValueError
        When every weight is zero.
    """
    total = float(parts.summed(np.sum, parts.weights))
    if total <= 0.0:
        raise InvalidValueError("sample_weight: every weight is zero")
    return parts.each(np.multiply, parts.weights, samples / total)
