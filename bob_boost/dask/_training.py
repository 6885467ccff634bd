"""Boosting stumps or look-up tables on a Dask cluster: per-chunk histograms, reduced in a fixed order.

The rows of the training matrix stay where Dask holds them. Once per run, every chunk is coded on its
worker (and kept there, with its targets, weights and scores, never gathered to the client):

- stumps: against bin thresholds found globally, exactly as
  :meth:`bob_boost.binning.BinnedFeatures.from_values` finds them in memory (integer features: per-chunk
  counts of every value, summed; float features: the rows of the engine's deterministic sample
  :func:`bob_boost.engine.edges.sample_rows`, gathered once);
- look-up tables: the integer values are their own codes (NaN, with ``missing="bin"``, one more).

Each round then moves only small things:

- every chunk sends the histogram of its loss gradient over its bins (#bins x #outputs floats) and its
  gradient totals;
- the histograms are summed chunk after chunk, always in chunk order, so the result does not depend on
  scheduling;
- the weak machine is chosen from the sum by the in-memory rule (the engine's split search, or
  :meth:`bob_boost.LUTTrainer.from_histograms`);
- its weights are found by Newton's method on sums of the loss's first and second derivatives over the
  chunks (three floats per chunk, output and iteration);
- the weak machine (a few bytes) goes to every chunk, to update its scores.
"""
from __future__ import annotations

import logging
import numbers

import numpy as np

from .._validation import check_choice, check_positive_int, check_scalar
from ..binning import check_missing
from ..boosting.steps import descending_weight, proves_descent
from ..callbacks import check_callback, stop_requested, training_ended, training_started
from ..exceptions import InvalidTypeError, InvalidValueError
from ..losses import LossFunction
from ..losses.softmax import SoftmaxLoss
from ..machine import BoostedMachine
from ..recipes import WEAK_LEARNERS
from ..trainers.lut import SELECTION_STYLES
from ..weak_trainers.tree import TreeTrainer
from . import _tasks as tasks
from ._choosers import LUTChooser, StumpChooser, lut_chunks
from ._chunks import CHECKPOINT_ROUNDS, Chunks, binned_chunks, check_cluster_bins, check_cluster_threads
from ._continuation import check_continued, continued_baseline, starts_from_scores
from ._gradient_trees import DistributedGradientTrees, check_cluster_tree, coded_tree_outputs
from ._steps import lbfgs_step, newton_step

#: The weak-machine rules, kept importable from here, where they were defined before.
__all__ = ["DASK_STEP_RULES", "DASK_WEAK_LEARNERS", "DaskBoosting", "LUTChooser", "StumpChooser"]

logger = logging.getLogger(__name__)

#: Step rules: Newton's method on separate outputs or L-BFGS on the summed loss (None: Newton where it applies).
DASK_STEP_RULES = ("newton", "lbfgs")

#: The weak learners trained on a cluster: every one of generic boosting.
DASK_WEAK_LEARNERS = WEAK_LEARNERS


class DaskBoosting:
    """Boost decision stumps, look-up tables or gradient trees on a Dask cluster with a loss that has a second
    derivative.

    The model is the one :class:`bob_boost.Boosting` trains in memory with ``step_rule="newton"`` and
    ``StumpTrainer(max_bins=max_bins)`` or ``LUTTrainer(lut_entries, #outputs, selection_style)``:

    - the same bins, so the same weak machines, whenever the choice is not tied within rounding;
    - weights equal to about 1e-12 relative, since the sums are added per chunk rather than over the
      whole matrix at once.

    Parameters
    ----------
    loss_function : LossFunction
        A loss with ``loss_hessian`` (exponential, logit, squared, ...). With several outputs (LUTs only) it
        must treat them separately (its per-sample loss has one column per output).
    max_bins : int
        Bins per feature of the stumps, as :class:`~bob_boost.StumpTrainer`'s ``max_bins`` (2 .. 256 here).
    client : distributed.Client or str, optional
        The cluster's client, or its scheduler's address (``"tcp://scheduler:8786"``, connected to when
        training starts); None uses the current default client.
    weak_learner : {"stump", "lut", "tree"}
        Decision stumps (one output), look-up tables on integer features ``0 .. lut_entries - 1`` (one
        output per target column), or gradient trees (``tree``).
    lut_entries : int, optional
        Entries of each table; default: the largest training value + 1 (as the command line does).
    selection_style : {"independent", "shared"}
        Multi-output tables: one feature per output, or one for all (as :class:`~bob_boost.LUTTrainer`).
    step_rule : {None, "newton", "lbfgs"}
        Stumps and tables: Newton's method on separate outputs, or L-BFGS on the summed loss (None: Newton
        where it applies).
    tree : TreeTrainer, optional
        ``weak_learner="tree"``: the gradient trees' shape (``max_depth``, ``max_leaves``,
        ``min_samples_leaf``, ``min_hessian_leaf``, ``l2_regularization``, ``multi_output``,
        ``newton_leaves``, ``growth``, ``missing``); its ``max_bins`` is replaced by
        ``max_bins``. The trees are those
        ``Boosting(TreeTrainer(...), loss, learning_rate=...)`` grows in memory, up to the rounding of
        sums added per chunk (see :mod:`bob_boost.dask._gradient_trees`), sample weights included
        (rescaled to mean 1 as in memory, :func:`mean_one_weights`).
    learning_rate : float or None
        Gradient trees: every tree's weight is ``learning_rate`` (the Newton leaves make the tree's own
        step 1; None, the default: the tree trainer's ``default_learning_rate``, 0.1); with gradient-only
        leaves (a loss without ``loss_hessian``, or ``newton_leaves=False``) it is ``learning_rate`` times the
        step rule's weight, as in memory.
    n_threads : int or None
        Threads of each task's compiled kernels on its worker (coding a chunk, its stump and table
        histograms); None: every core the worker process may use, as in memory. The default, 1, suits
        workers that already run one task per thread. The model does not depend on it.
    missing : {None, "bin"}
        Stumps and tables: ``"bin"`` makes NaN a missing value with a bin of its own, as
        ``StumpTrainer(missing="bin")`` (each stump learns which side NaN goes to) or
        ``LUTTrainer(missing="bin")`` (each table's last entry is NaN's output) in memory; None rejects NaN
        (infinity is an error either way).
    """

    def __init__(self, loss_function: LossFunction, max_bins: int = 256, client=None, *,
                 weak_learner: str = "stump", lut_entries: int | None = None,
                 selection_style: str = "independent", step_rule: str | None = None, tree=None,
                 learning_rate: float | None = None, n_threads: int | None = 1, missing: str | None = None) -> None:
        if not isinstance(loss_function, LossFunction):
            raise InvalidTypeError(f"loss_function: expected a LossFunction, got {type(loss_function).__name__}")
        self.step_rule = None if step_rule is None else check_choice(step_rule, "step_rule", DASK_STEP_RULES)
        if step_rule == "newton" and not loss_function.has_hessian:
            raise InvalidValueError(f"step_rule: 'newton' needs a second derivative, which "
                                    f"{type(loss_function).__name__} does not define; use 'lbfgs' or None")
        self.loss_function = loss_function
        self.max_bins = check_cluster_bins(max_bins)
        self.n_threads = check_cluster_threads(n_threads)
        self.client = client
        self.weak_learner = check_choice(weak_learner, "weak_learner", DASK_WEAK_LEARNERS)
        self.missing = check_missing(missing)
        if self.missing is not None and self.weak_learner == "tree":
            raise InvalidValueError("missing: trees take TreeTrainer(missing='bin'), not DaskBoosting's missing")
        self.lut_entries = None if lut_entries is None else check_positive_int(lut_entries, "lut_entries", 2)
        self.selection_style = check_choice(selection_style, "selection_style", SELECTION_STYLES)
        if self.weak_learner != "tree" and (tree is not None or learning_rate not in (None, 1.0)):
            name = "tree" if tree is not None else "learning_rate"
            raise InvalidValueError(f"{name}: an option of weak_learner='tree' only, got weak_learner="
                                    f"{self.weak_learner!r}")
        self.tree = check_cluster_tree(TreeTrainer() if tree is None else tree)
        if learning_rate is None:  # as Boosting: the weak trainer's default
            learning_rate = self.tree.default_learning_rate if self.weak_learner == "tree" else 1.0
        self.learning_rate = check_scalar(learning_rate, "learning_rate", numbers.Real, min_val=0, max_val=1,
                                          include_boundaries="right")
        if self.weak_learner == "tree" and self.tree.newton_leaves and not loss_function.has_hessian:
            raise InvalidValueError(f"newton_leaves: {type(loss_function).__name__} defines no loss_hessian; use "
                                    f"newton_leaves=None for gradient-only leaves with a line search")
        #: Passes over the chunks that found each round's weights in the last :meth:`train` (one for the
        #: exponential loss's closed form, one per Newton iteration or L-BFGS evaluation otherwise).
        self.weight_passes: list[int] = []

    def train(self, features, targets, number_of_rounds: int = 20, sample_weight=None,
              callback=None, baseline=None, boosted_machine: BoostedMachine | None = None) -> BoostedMachine:
        """Boost ``number_of_rounds`` weak machines on the Dask array ``features`` (rows in chunks).

        Parameters
        ----------
        features : dask.array.Array or dask.dataframe.DataFrame
            (#samples, #features) numeric features with known chunk sizes; chunked by rows (column
            chunks are joined). A dataframe's partitions are its row chunks.
        targets : dask.array.Array, dask.dataframe.Series or array_like
            (#samples,) targets, or (#samples, #outputs) for multi-output LUTs; rechunked to the features'
            row chunks (the model does not change).
        number_of_rounds : int
            Weak machines to add at most; training stops earlier when none or no step helps.
        sample_weight : dask.array.Array or array_like, optional
            (#samples,) non-negative weights, not all zero; rescaled to a mean of 1 as in memory.
        callback : callable or list, optional
            As in memory (:mod:`bob_boost.callbacks`): ``callback(round, machine, scores)`` after each round,
            True stops training; ``scores`` is None, since the training scores stay on the workers
            (evaluate on a validation set instead, e.g. ``RecordEvaluation(validation_features, ...)``).
        baseline : float or array_like, optional
            The machine starts from this constant (one per output) and the rounds boost
            ``targets - baseline``, as :meth:`bob_boost.Boosting.train`'s ``baseline`` (the regressor's mean).
        boosted_machine : BoostedMachine, optional
            Continue this machine (extended in place and returned), as in memory: the chunks start from its
            scores, computed on the workers from the raw row blocks of ``features``, and a machine with a
            baseline keeps boosting the residuals from it. Continuing ``k`` rounds after ``n`` gives the
            model ``n + k`` rounds at once give, bit for bit.

        Raises
        ------
        ValueError
            For unknown chunk sizes, features that are not 2-D, targets of another length or with NaN,
            a feature matrix with infinity (or NaN, without ``missing``), LUT features that are not integers
            in range, a loss that couples several outputs, no client, a baseline given with
            ``boosted_machine``, or a machine of other outputs or features.
        """
        from . import _dask
        with _dask.connected(self.client) as client:
            return self._train(client, features, targets, number_of_rounds, sample_weight, callback, baseline,
                               boosted_machine)

    def _train(self, client, features, targets, number_of_rounds, sample_weight, callback,
               baseline, boosted_machine) -> BoostedMachine:
        from . import _dask
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        callback = check_callback(callback)
        array = _dask.as_row_chunked(features, "features")
        row_chunks = array.chunks[0]
        labels = _dask.as_matching_targets(targets, row_chunks, "targets")
        loss = self.loss_function
        # the loss may read the targets as more columns (class labels as one-hot rows): ask it, on one chunk
        outputs, loss_columns = client.compute(_dask.delayed(tasks.loss_columns)(
            _dask.row_blocks(labels, "targets")[0], loss)).result()
        newton = self.step_rule == "newton" or (self.step_rule is None and loss.has_hessian
                                                and loss_columns == outputs)
        if newton and loss_columns != outputs:
            raise InvalidValueError(f"step_rule: 'newton' treats outputs separately, but {type(loss).__name__} "
                                    f"couples them; use 'lbfgs' or None")
        if outputs > 1 and self.weak_learner == "stump":
            raise InvalidValueError(f"targets: stumps have one output, got {outputs} target columns "
                                    f"(multi-output training needs weak_learner='lut' or 'tree')")
        previous = check_continued(boosted_machine, outputs, array.shape[1])
        baseline = continued_baseline(baseline, previous, outputs)
        if baseline is not None:
            labels = labels - (baseline[0] if labels.ndim == 1 else baseline)
        weights = (None if sample_weight is None
                   else _dask.as_matching_targets(sample_weight, row_chunks, "sample_weight", vector=True))
        if self.weak_learner in ("stump", "tree"):
            missing = (self.tree.missing if self.weak_learner == "tree" else self.missing) is not None
            coded, offsets, split = binned_chunks(client, array, self.max_bins, missing, self.n_threads)
            chooser = StumpChooser(offsets, split, missing)
        else:
            coded, offsets, chooser = lut_chunks(client, array, self.lut_entries, {
                "number_of_outputs": outputs, "selection_style": self.selection_style, "missing": self.missing},
                self.n_threads)
        chunks = Chunks.place(client, coded, labels, weights, outputs, tasks.checked_targets, loss, outputs)
        if weights is not None:
            chunks.weights = mean_one_weights(chunks, array.shape[0])
        if isinstance(loss, SoftmaxLoss):  # each chunk was checked on its own: every class must occur somewhere
            counts = chunks.summed(tasks.column_sums, chunks.targets)
            missing = np.flatnonzero(counts == 0)
            if missing.size:
                raise InvalidValueError(f"targets: class {missing[0]} has no sample (classes 0 .. {outputs - 1})")
        if starts_from_scores(previous):  # residual rounds from 0 when boosting from a baseline, as in memory
            chunks.continue_from(array, previous, include_baseline=baseline is None)
        self.weight_passes = []
        machine = previous if previous is not None else BoostedMachine(
            number_of_outputs=outputs, number_of_features=array.shape[1], baseline=baseline,
            cost_matrix=loss.cost_matrix,  # CMEL's machines decide by its costs, as in memory
            metadata={"loss": loss.name or type(loss).__name__, "trainer": "DaskBoosting",
                      "weak_learner": self.weak_learner}, decision_rule=loss.decision_rule(outputs))
        history: list[tuple] = []
        trees = None
        if self.weak_learner == "tree":
            trees = DistributedGradientTrees(self.tree, chunks, offsets, split, int(np.diff(offsets).max()), outputs)
        training_started(callback, machine)
        current_loss = None
        for round_index in range(number_of_rounds):
            if trees is not None:
                # Newton leaves make a tree's own step 1: its weight is the learning rate
                fixed_step = self.tree.newton_leaves is not False and loss.has_hessian
                weak, weak_outputs, arguments = trees.grow(loss, fixed_step)
                output_task = coded_tree_outputs
            else:
                histograms, absolute, gradient_sum = self._histograms(chunks, offsets)
                choice = chooser.choose(histograms, absolute, gradient_sum)
                if choice is None:
                    logger.info("DaskBoosting round %d: no weak machine follows the gradient; stopping",
                                round_index + 1)
                    break
                weak, output_task, arguments = choice
                weak_outputs = chunks.each(output_task, chunks.coded, *arguments)
                fixed_step = False
            if fixed_step:
                alpha, certified = np.full(outputs, float(self.learning_rate)), False
            else:  # the step rule's weight (shrunk, for gradient-only trees)
                line = (newton_step(chunks, weak_outputs, outputs, loss, self.weight_passes) if newton
                        else lbfgs_step(chunks, weak_outputs, outputs, array.shape[0], loss, self.weight_passes))
                alpha = self.learning_rate * line.weights
                if np.all(alpha == 0.0):
                    logger.info("DaskBoosting round %d: the optimal weight is zero; stopping", round_index + 1)
                    break
                certified = proves_descent(line, float(self.learning_rate), loss.convex)
            # the in-memory descent guarantee: a weight its step rule does not certify (a tree's Newton leaves, a
            # shrunk step on a loss that is not convex, a search that did not converge) is halved until the
            # training loss does not rise
            if not certified:
                alpha, current_loss = self._descend(chunks, weak_outputs, alpha, current_loss, round_index)
                if alpha is None:
                    break
            else:
                current_loss = None
            machine.add_weak_machine(weak, alpha)
            history.append((output_task, arguments, alpha))
            self._move_scores(chunks, history, weak_outputs, alpha, outputs)
            logger.info("DaskBoosting round %d/%d: %r, weights %s", round_index + 1, number_of_rounds, weak, alpha)
            if stop_requested(callback, round_index, machine, None):
                break
        training_ended(callback, machine)
        return machine

    def _descend(self, chunks: Chunks, weak_outputs: list, alpha: np.ndarray, before: float | None,
                 round_index: int) -> tuple[np.ndarray | None, float | None]:
        """:meth:`bob_boost.boosting.algorithms.GradientBoosting.descend` on the chunks' summed losses (added in
        chunk order): the weight, or its largest halving that does not raise the training loss, and the loss
        it reaches; None with a :class:`~bob_boost.exceptions.ConvergenceWarning` when none does."""
        loss = self.loss_function
        if before is None:
            before = chunks.summed(tasks.training_loss, chunks.targets, chunks.scores, chunks.weights, loss)

        def loss_at(weight: np.ndarray, halvings: int) -> float:
            return chunks.summed(tasks.moved_loss, chunks.targets, chunks.scores, weak_outputs, chunks.weights,
                                 loss, weight)
        accepted = descending_weight(alpha, before, loss_at, "DaskBoosting", round_index, type(loss).__name__)
        return (None, None) if accepted is None else accepted

    @staticmethod
    def _move_scores(chunks: Chunks, history: list, weak_outputs: list, alpha: np.ndarray, outputs: int) -> None:
        """Add the round to the chunks' scores; every :data:`CHECKPOINT_ROUNDS` rounds, rebuild them from the
        codes instead, so that a lost chunk's scores are recomputed from a short task graph."""
        if len(history) % CHECKPOINT_ROUNDS:
            chunks.scores = chunks.each(tasks.moved, chunks.scores, weak_outputs, alpha)
        else:
            chunks.scores = chunks.each(tasks.rebuilt_scores, chunks.coded, chunks.start, outputs, tuple(history))

    def _histograms(self, chunks: Chunks, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The summed gradient histograms, the gradient's absolute sums and its sums (per output)."""
        pieces = chunks.each(tasks.gradient_histogram, chunks.coded, chunks.targets, chunks.scores, chunks.weights,
                             self.loss_function, offsets)
        histograms, sums, absolute_sums = chunks.summed_on_worker(tasks.summed_pieces, pieces)
        return histograms, absolute_sums, sums


def mean_one_weights(chunks: Chunks, samples: int) -> list:
    """The chunks' sample weights rescaled to a mean of 1 over all ``samples`` rows, as the in-memory trainer's
    ``mean_one`` has them: ``min_hessian_leaf`` and ``l2_regularization`` then weigh the same on the cluster.

    The total is the chunks' sums added in chunk order, so the factor (and the weights) may differ from
    in memory's pairwise sum in the last bits.

    Raises
    ------
    ValueError
        When every weight is zero.
    """
    total = float(chunks.summed(np.sum, chunks.weights))
    if total <= 0.0:
        raise InvalidValueError("sample_weight: every weight is zero")
    return chunks.each(np.multiply, chunks.weights, samples / total)
