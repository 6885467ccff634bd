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

import numbers

import numpy as np

from .._validation import check_choice, check_positive_int, check_scalar
from ..binning import check_missing
from ..boosting import partition_tasks
from ..boosting.loop import run
from ..boosting.partitioned import PartitionedGradientBoosting, continue_scores, mean_one_weights
from ..callbacks import check_callback
from ..exceptions import InvalidTypeError, InvalidValueError
from ..losses import LossFunction
from ..losses.softmax import SoftmaxLoss
from ..machine import BoostedMachine
from ..recipes import WEAK_LEARNERS
from ..weak_trainers.lut import SELECTION_STYLES
from ..weak_trainers.partitioned import LUTChooser, StumpChooser
from ..weak_trainers.partitioned_trees import PartitionedGradientTrees
from ..weak_trainers.tree import TreeTrainer
from . import _tasks as tasks
from ._chunks import Chunks, binned_chunks, check_cluster_bins, check_cluster_threads, lut_chunks
from ._continuation import check_continued, continued_baseline, starts_from_scores

#: The weak-machine rules, kept importable from here, where they were defined before.
__all__ = ["DASK_STEP_RULES", "DASK_WEAK_LEARNERS", "DaskBoosting", "LUTChooser", "StumpChooser"]

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
        sums added per chunk (see :mod:`bob_boost.weak_trainers.partitioned_trees`), sample weights included
        (rescaled to mean 1 as in memory, :func:`~bob_boost.boosting.partitioned.mean_one_weights`).
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
            counts = chunks.summed(partition_tasks.column_sums, chunks.targets)
            missing = np.flatnonzero(counts == 0)
            if missing.size:
                raise InvalidValueError(f"targets: class {missing[0]} has no sample (classes 0 .. {outputs - 1})")
        if starts_from_scores(previous):  # residual rounds from 0 when boosting from a baseline, as in memory
            continue_scores(chunks, array, previous, include_baseline=baseline is None)
        self.weight_passes = []
        metadata = {"loss": loss.name or type(loss).__name__, "trainer": "DaskBoosting",
                    "weak_learner": self.weak_learner}
        trees = None
        if self.weak_learner == "tree":
            trees = PartitionedGradientTrees(self.tree, chunks, offsets, split, int(np.diff(offsets).max()), outputs)
        # Newton leaves make a tree's own step 1: its weight is the learning rate
        fixed_step = trees is not None and self.tree.newton_leaves is not False and loss.has_hessian
        algorithm = PartitionedGradientBoosting("DaskBoosting", loss, self.learning_rate, chunks, outputs, baseline,
                                                metadata, chooser, offsets, trees, fixed_step, newton,
                                                array.shape[0], self.weight_passes)
        return run(algorithm, None, array, number_of_rounds, previous, callback)


def check_cluster_tree(trainer) -> TreeTrainer:
    """The tree trainer of distributed gradient trees."""
    if not isinstance(trainer, TreeTrainer):
        raise InvalidTypeError(f"tree: expected a TreeTrainer, got {type(trainer).__name__}")
    if trainer.quantized_gradients is not None:
        raise InvalidValueError("tree: quantized_gradients is for training in memory; distributed gradient trees "
                                "sum float histograms (use quantized_gradients=None)")
    return trainer
