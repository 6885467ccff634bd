"""The boosting algorithms on row partitions (:mod:`bob_boost.boosting.partitions`): configurations of
:func:`bob_boost.boosting.loop.run` whose per-row state stays with its partition.

- :class:`PartitionedGradientBoosting`: generic boosting (any loss; stumps, tables or gradient trees);
- :class:`PartitionedCostSensitive`: AdaBoostDB and Cost-Sensitive AdaBoost;
- :class:`PartitionedMultiClass`: BAdaCost, SAMME and AdaBoost.M1 with cost-sensitive trees.

Each round applies the in-memory rules (the weak trainers' choice, the step rules, the descent guarantee,
the closed-form steps) to sums over the partitions, added in partition order. Every
``partitions.checkpoint_rounds`` rounds the per-partition state is rebuilt from the codes and the rounds so
far (:func:`~bob_boost.boosting.partitions.rebuilds`).
"""
from __future__ import annotations

import numpy as np

from ..exceptions import InvalidValueError
from ..losses import LossFunction
from ..machine import BoostedMachine
from . import partition_tasks as tasks
from .partitioned_steps import lbfgs_step, newton_step
from .partitions import Partitions, in_order, rebuilds, summed_pieces
from .protocol import Proposal, RoundState
from .roots import RootCounter
from .steps import capped_step, descending_weight, proves_descent


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
    """

    def __init__(self, name: str, loss: LossFunction, learning_rate: float, partitions: Partitions, outputs: int,
                 baseline: np.ndarray | None, metadata: dict, chooser, offsets: np.ndarray, trees, fixed_step: bool,
                 newton: bool, rows: int, weight_passes: list[int]) -> None:
        self.name, self.loss, self.learning_rate, self.weight_passes = name, loss, learning_rate, weight_passes
        self.fixed_step = fixed_step
        self.partitions, self.outputs, self.baseline, self.metadata = partitions, outputs, baseline, metadata
        self.chooser, self.offsets, self.trees, self.newton, self.rows = chooser, offsets, trees, newton, rows
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
        if self.trees is not None:
            weak, weak_outputs, output_task, arguments = self.trees.grow(self.loss, self.fixed_step)
        else:
            pieces = parts.each(tasks.gradient_histogram, parts.coded, parts.targets, parts.scores,
                                parts.weights, self.loss, self.offsets)
            histograms, sums, absolute_sums = parts.combined(summed_pieces, pieces)
            choice = self.chooser.choose(histograms, absolute_sums, sums)
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
        The stumps of the binned features (:meth:`~bob_boost.weak_trainers.stump_pool.pool.StumpPool.from_bins`).
    stump_outputs : callable
        ``stump_outputs(coded, feature, code threshold, polarity)``: a stump's outputs on a partition's codes.
    counter : RootCounter
        Counts the step equations solved.
    metadata : dict
        Entries the machine's metadata gets beside the trainer's.
    """

    def __init__(self, trainer, partitions: Partitions, offsets: np.ndarray, pool, stump_outputs,
                 counter: RootCounter, metadata: dict) -> None:
        self.name = trainer.algorithm
        self.trainer, self.partitions, self.offsets, self.counter = trainer, partitions, offsets, counter
        self.pool, self.stump_outputs, self.metadata = pool, stump_outputs, metadata
        self.costs = np.array([trainer.cost_positive, trainer.cost_negative])
        self.initial = _initial(partitions)
        self.history: list[tuple] = []

    def new_machine(self, features) -> BoostedMachine:
        """An empty univariate machine."""
        return BoostedMachine(number_of_outputs=1, number_of_features=features.shape[1],
                              metadata={**self.trainer._metadata(), **self.metadata})

    def check_machine(self, machine: BoostedMachine) -> None:
        """Checked before the partitions were coded (:func:`check_continued`)."""

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
        sums, totals = parts.combined(summed_pieces, pieces)
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
        """The partitions' scores plus the weighted stump (rebuilt from the codes every checkpoint)."""
        parts, alpha = self.partitions, float(weight[0])
        arguments = state.extra.pop("arguments")
        self.history.append((self.stump_outputs, arguments, alpha))
        if not rebuilds(parts, len(self.history)):
            outputs = parts.each(self.stump_outputs, parts.coded, *arguments)
            parts.scores = parts.each(tasks.moved, parts.scores, outputs, alpha)
        else:
            parts.scores = parts.each(tasks.rebuilt_scores, parts.coded, parts.start, 1, tuple(self.history))

    def describe(self, state: RoundState) -> str:
        """Nothing beyond the stump and its weight."""
        return ""


def _initial(parts: Partitions) -> list:
    """Futures of every partition's ``log D_1``, normalised globally as in memory."""
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

    Parameters
    ----------
    trainer : BAdaCostTrainer, SAMMETrainer or AdaBoostM1Trainer
        The configuration and its step rule.
    partitions : Partitions
        The rows: codes, class indices and weights.
    grower_for : callable
        ``grower_for(loss matrix)`` gives the round's tree grower
        (:class:`~bob_boost.weak_trainers.partitioned_class_trees.PartitionedClassTrees`).
    cost_matrix : numpy.ndarray
        The (K, K) costs.
    initial : list
        Each partition's initial log weights.
    n_features : int
        Features of the rows (the feature subsets' range).
    metadata : dict
        Entries the machine's metadata gets beside the trainer's name and weak learner.
    """

    def __init__(self, trainer, partitions: Partitions, grower_for, cost_matrix: np.ndarray, initial: list,
                 n_features: int, metadata: dict) -> None:
        self.name = type(trainer).__name__
        self.trainer, self.partitions, self.cost_matrix = trainer, partitions, cost_matrix
        self.loss_matrix, self.exponents = trainer._round_matrices(cost_matrix)
        self.grower = grower_for(self.loss_matrix)
        self.metadata = metadata
        self.subset_size = max(1, int(round(trainer.feature_fraction * n_features)))
        self.rng = np.random.default_rng(trainer.random_state)
        self.initial = self.log_weights = initial  # the initial weights are where the checkpoints rebuild from
        self.history: list[tuple] = []

    def new_machine(self, features) -> BoostedMachine:
        """An empty machine deciding by the cost matrix."""
        return BoostedMachine(cost_matrix=self.cost_matrix, number_of_features=features.shape[1],
                              metadata={"trainer": type(self.trainer).__name__, **self.metadata,
                                        "weak_learner": repr(self.trainer.weak_learner)})

    def check_machine(self, machine: BoostedMachine) -> None:
        """Checked before the partitions were coded (its features and cost matrix)."""

    def start(self, features, machine: BoostedMachine) -> RoundState:
        """A continued machine's rounds replayed: their weight updates on the workers, their draws here."""
        n_features = features.shape[1]
        if len(machine):
            parts = self.partitions
            self.initial = self.log_weights = parts.raw(features, tasks.replayed_log_weights,
                                                        parts.targets, self.initial, self.exponents, machine)
            for _ in range(len(machine) * (self.subset_size != n_features)):
                self.rng.choice(n_features, self.subset_size, replace=False)
        return RoundState(features=features, scores=None)

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether the step of the machine's last weak machine, at the current weights, is infinite (the in-memory
        test, on the raw rows)."""
        parts, k = self.partitions, self.exponents.shape[0]
        confusion = in_order(*parts.gather(parts.raw(
            state.features, tasks.raw_confusion, parts.targets,
            _normalised(parts, self.log_weights), machine.weak_machines[-1], k)))
        return bool(np.isinf(self.trainer._step(confusion, self.exponents)))

    def begin_round(self, state: RoundState) -> None:
        """The normalised sample weights and the round's feature subset."""
        n_features = state.features.shape[1]
        state.extra["weights"] = _normalised(self.partitions, self.log_weights)
        state.feature_subset = (np.arange(n_features) if self.subset_size == n_features
                                else np.sort(self.rng.choice(n_features, self.subset_size, replace=False)))

    def propose(self, prepared, state: RoundState) -> Proposal:
        """The tree grown from the partitions' summed node histograms."""
        weak, *grown = self.grower.grow(state.extra["weights"], state.feature_subset)
        state.extra["grown"] = grown
        return Proposal(weak)

    def step(self, machine, state: RoundState) -> tuple[float, bool] | None:
        """The trainer's step rule on the summed confusion matrix; None when it is not positive."""
        leaves, node_labels, _ = state.extra["grown"]
        confusion = self.partitions.summed(tasks.confusion, self.partitions.targets, leaves, state.extra["weights"],
                                           node_labels, self.exponents.shape[0])
        step = self.trainer._step(confusion, self.exponents)
        if not step > 0:
            return None
        perfect = bool(np.isinf(step))
        return (capped_step(self.exponents) if perfect else step) * self.trainer.shrinkage, perfect

    def end_round(self, state: RoundState, machine, weight: float) -> None:
        """Every partition's log weights moved by the rows' leaves (rebuilt from the codes every checkpoint)."""
        parts = self.partitions
        leaves, node_labels, routing = state.extra.pop("grown")
        self.history.append((*routing, node_labels, weight))
        if not rebuilds(parts, len(self.history)):
            self.log_weights = parts.each(tasks.updated_log_weights, self.log_weights, parts.targets, leaves,
                                          node_labels, self.exponents, weight)
        else:
            self.log_weights = parts.each(tasks.rebuilt_log_weights, parts.coded, parts.targets,
                                          self.initial, self.exponents, tuple(self.history))

    def describe(self, state: RoundState) -> str:
        """Nothing beyond the weak machine and its weight."""
        return ""


def _normalised(parts: Partitions, log_weights: list) -> list:
    """Futures of the normalised weights ``exp(log w - logsumexp(log w))`` of every partition."""
    peak = max(parts.gather(parts.each(tasks.largest, log_weights)))
    total = parts.summed(tasks.exp_sum, log_weights, peak)
    return parts.each(tasks.normalised, log_weights, peak + float(np.log(total)))
