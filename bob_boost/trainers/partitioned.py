"""Generic boosting on rows in partitions: stumps, look-up tables or gradient trees from sums over the
partitions of any :class:`~bob_boost.boosting.partitions.RowSource`.

The rows never meet. Once per run, every block is coded where it is read, against bins found over all
blocks exactly as in memory (:mod:`bob_boost.boosting.partitioned_data`), and kept with its targets,
weights and scores. Each round then moves only small things:

- every partition sends the histogram of its loss gradient over its bins (#bins x #outputs floats) and
  its gradient totals, summed in partition order, so the result does not depend on scheduling;
- the weak machine is chosen from the sum by the in-memory rule (the engine's split search, or
  :meth:`bob_boost.LUTTrainer.from_histograms`), or a gradient tree is grown from summed node histograms
  (:class:`~bob_boost.weak_trainers.partitioned_trees.PartitionedGradientTrees`);
- its weights are found by Newton's method or L-BFGS on sums of the loss's derivatives over the partitions;
- the weak machine (a few bytes) goes to every partition, to update its scores.

:class:`bob_boost.dask.DaskBoosting` is this trainer on a Dask cluster's chunks; :class:`LocalRows
<bob_boost.boosting.partitions.LocalRows>` runs it on numpy arrays cut into blocks.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_choice, check_positive_int, check_scalar
from ..binning import check_missing
from ..boosting import partition_tasks, partitioned_data as data
from ..boosting.loop import run
from ..boosting.partitioned import PartitionedGradientBoosting, continue_scores, mean_one_weights
from ..boosting.partitions import RowSource
from ..boosting.sampling import Sampling, check_sampling
from ..callbacks import check_callback
from ..engine.edges import check_max_bins
from ..engine.threads import check_threads
from ..exceptions import InvalidTypeError, InvalidValueError
from ..losses import LossFunction
from ..losses.softmax import SoftmaxLoss
from ..machine import BoostedMachine
from ..recipes import WEAK_LEARNERS
from ..weak_trainers.lut import SELECTION_STYLES, LUTTrainer
from ..weak_trainers.partitioned import LUTChooser, StumpChooser
from ..weak_trainers.partitioned_trees import PartitionedGradientTrees
from ..weak_trainers.tree import TreeTrainer
from ..weak_trainers.tree_categories import check_categorical_features

#: Step rules: Newton's method on separate outputs or L-BFGS on the summed loss (None: Newton where it applies).
PARTITIONED_STEP_RULES = ("newton", "lbfgs")


class PartitionedBoosting:
    """Boost decision stumps, look-up tables or gradient trees on rows in partitions, with a loss that has a
    second derivative.

    The model is the one :class:`bob_boost.Boosting` trains in memory with ``step_rule="newton"`` and
    ``StumpTrainer(max_bins=max_bins)`` or ``LUTTrainer(lut_entries, #outputs, selection_style)``:

    - the same bins, so the same weak machines, whenever the choice is not tied within rounding;
    - weights equal to about 1e-12 relative, since the sums are added per partition rather than over the
      whole matrix at once.

    Parameters
    ----------
    loss_function : LossFunction
        A loss with ``loss_hessian`` (exponential, logit, squared, ...). With several outputs (LUTs only) it
        must treat them separately (its per-sample loss has one column per output).
    max_bins : int
        Bins per feature of the stumps, as :class:`~bob_boost.StumpTrainer`'s ``max_bins`` (2 .. 256 here:
        a partition's codes are one byte).
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
        ``newton_leaves``, ``growth``, ``missing``); its ``max_bins`` is replaced by ``max_bins``. The trees
        are those ``Boosting(TreeTrainer(...), loss, learning_rate=...)`` grows in memory, up to the rounding
        of sums added per partition (see :mod:`bob_boost.weak_trainers.partitioned_trees`), sample weights
        included (rescaled to mean 1 as in memory, :func:`~bob_boost.boosting.partitioned.mean_one_weights`).
    learning_rate : float or None
        Gradient trees: every tree's weight is ``learning_rate`` (the Newton leaves make the tree's own
        step 1; None, the default: the tree trainer's ``default_learning_rate``, 0.1); with gradient-only
        leaves (a loss without ``loss_hessian``, or ``newton_leaves=False``) it is ``learning_rate`` times the
        step rule's weight, as in memory. Stumps and tables: their weight times ``learning_rate`` (None: 1),
        as :class:`bob_boost.Boosting`'s.
    n_threads : int or None
        Threads of each partition's compiled kernels (coding it, its stump and table histograms); None:
        every core where the partition is, as in memory. The model does not depend on it.
    missing : {None, "bin"}
        Stumps and tables: ``"bin"`` makes NaN a missing value with a bin of its own, as
        ``StumpTrainer(missing="bin")`` (each stump learns which side NaN goes to) or
        ``LUTTrainer(missing="bin")`` (each table's last entry is NaN's output) in memory; None rejects NaN
        (infinity is an error either way).
    sampling : Sampling, optional
        Stochastic boosting, as :class:`bob_boost.Boosting`'s ``sampling``: every round samples the rows and
        columns it samples in memory (the rows by their global index), whatever the partitions.
    categorical_features : sequence of int, boolean mask or None
        Stumps: the features split by sets of categories, as ``StumpTrainer(categorical_features=...)`` in
        memory (gradient trees take their ``tree``'s). The categories are counted over every partition.
    """

    def __init__(self, loss_function: LossFunction, max_bins: int = 256, *, weak_learner: str = "stump",
                 lut_entries: int | None = None, selection_style: str = "independent", step_rule: str | None = None,
                 tree=None, learning_rate: float | None = None, n_threads: int | None = 1,
                 missing: str | None = None, sampling: Sampling | None = None, categorical_features=None) -> None:
        if not isinstance(loss_function, LossFunction):
            raise InvalidTypeError(f"loss_function: expected a LossFunction, got {type(loss_function).__name__}")
        self.step_rule = None if step_rule is None else check_choice(step_rule, "step_rule", PARTITIONED_STEP_RULES)
        if step_rule == "newton" and not loss_function.has_hessian:
            raise InvalidValueError(f"step_rule: 'newton' needs a second derivative, which "
                                    f"{type(loss_function).__name__} does not define; use 'lbfgs' or None")
        if not loss_function.has_loss:
            raise InvalidValueError(f"loss_function: {loss_function!r} knows its derivatives only; partitioned "
                                    f"training checks the loss's values every round; give it a loss function")
        self.loss_function = loss_function
        self.max_bins = check_partition_bins(max_bins)
        self.n_threads = check_partition_threads(n_threads)
        self.weak_learner = check_choice(weak_learner, "weak_learner", WEAK_LEARNERS)
        self.missing = check_missing(missing)
        check_categorical_features(categorical_features)
        if categorical_features is not None and self.weak_learner != "stump":
            raise InvalidValueError(f"categorical_features: an option of weak_learner='stump' (trees take their "
                                    f"TreeTrainer's), got weak_learner={self.weak_learner!r}")
        self.categorical_features = categorical_features
        if self.missing is not None and self.weak_learner == "tree":
            raise InvalidValueError(f"missing: trees take TreeTrainer(missing='bin'), not {type(self).__name__}'s "
                                    f"missing")
        self.sampling = check_sampling(sampling, self.weak_learner)
        self.lut_entries = None if lut_entries is None else check_positive_int(lut_entries, "lut_entries", 2)
        self.selection_style = check_choice(selection_style, "selection_style", SELECTION_STYLES)
        if self.weak_learner != "tree" and tree is not None:
            raise InvalidValueError(f"tree: an option of weak_learner='tree' only, got weak_learner="
                                    f"{self.weak_learner!r}")
        self.tree = check_partition_tree(TreeTrainer() if tree is None else tree)
        if learning_rate is None:  # as Boosting: the weak trainer's default
            learning_rate = self.tree.default_learning_rate if self.weak_learner == "tree" else 1.0
        self.learning_rate = check_scalar(learning_rate, "learning_rate", numbers.Real, min_val=0, max_val=1,
                                          include_boundaries="right")
        if self.weak_learner == "tree" and loss_function.renews_leaves:
            raise InvalidValueError(f"loss_function: {type(loss_function).__name__} re-estimates each tree leaf from "
                                    f"its rows' residuals, which partitioned training does not; train it in memory")
        if self.weak_learner == "tree" and self.tree.constrained and not loss_function.has_hessian:
            raise InvalidValueError("tree: monotonic_cst needs Newton leaves, from a loss with a hessian")
        if self.weak_learner == "tree" and self.tree.newton_leaves and not loss_function.has_hessian:
            raise InvalidValueError(f"newton_leaves: {type(loss_function).__name__} defines no loss_hessian; use "
                                    f"newton_leaves=None for gradient-only leaves with a line search")
        #: Passes over the partitions that found each round's weights in the last training (one for the
        #: exponential loss's closed form, one per Newton iteration or L-BFGS evaluation otherwise).
        self.weight_passes: list[int] = []

    def train_on(self, source: RowSource, features, targets, number_of_rounds: int = 20, sample_weight=None,
                 callback=None, baseline=None, boosted_machine: BoostedMachine | None = None) -> BoostedMachine:
        """Boost ``number_of_rounds`` weak machines on the rows of ``source``.

        Parameters
        ----------
        source : RowSource
            Where the rows are, in blocks: :class:`~bob_boost.boosting.partitions.LocalRows`, or the Dask
            source of :class:`bob_boost.dask.DaskBoosting` (whose ``train`` takes Dask arrays).
        features : array
            (#samples, #features) numeric features, in the source's form (cut into its blocks).
        targets : array
            (#samples,) targets, or (#samples, #outputs) for multi-output LUTs, in the source's form.
        number_of_rounds : int
            Weak machines to add at most; training stops earlier when none or no step helps.
        sample_weight : array, optional
            (#samples,) non-negative weights in the source's form, not all zero; rescaled to a mean of 1 as in
            memory.
        callback : callable or list, optional
            As in memory (:mod:`bob_boost.callbacks`): ``callback(round, machine, scores)`` after each round,
            True stops training; ``scores`` is None, since the training scores stay with their partitions.
        baseline : float or array_like, optional
            The machine starts from this constant score (one per output), as
            :meth:`bob_boost.Boosting.train`'s ``baseline`` (the regressor's mean): the rounds boost
            ``targets - baseline`` from 0 for a ``shift_invariant`` loss, else start from the scores ``baseline``.
        boosted_machine : BoostedMachine, optional
            Continue this machine (extended in place and returned), as in memory: the partitions start from its
            scores, computed from the raw row blocks of ``features``, and a machine with a baseline keeps
            boosting the residuals from it. Continuing ``k`` rounds after ``n`` gives the model ``n + k``
            rounds at once give, bit for bit.

        Raises
        ------
        ValueError
            For targets or weights of another number of rows than the features, targets with NaN, a feature
            matrix with infinity (or NaN, without ``missing``), LUT features
            that are not integers in range, a loss that couples several outputs with ``step_rule="newton"``,
            a baseline given with ``boosted_machine``, or a machine of other outputs or features.
        """
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        callback = check_callback(callback)
        check_rows(features, targets=targets, sample_weight=sample_weight)
        loss = self.loss_function
        # the loss may read the targets as more columns (class labels as one-hot rows): ask it, on one block
        outputs, loss_columns = source.gather(source.raw(targets, data.loss_columns, loss))[0]
        newton = self.step_rule == "newton" or (self.step_rule is None and loss.has_hessian
                                                and loss_columns == outputs)
        if newton and loss_columns != outputs:
            raise InvalidValueError(f"step_rule: 'newton' treats outputs separately, but {type(loss).__name__} "
                                    f"couples them; use 'lbfgs' or None")
        if self.weak_learner == "tree":
            self.tree.check_outputs(outputs)
        if outputs > 1 and self.weak_learner == "stump":
            raise InvalidValueError(f"targets: stumps have one output, got {outputs} target columns "
                                    f"(multi-output training needs weak_learner='lut' or 'tree')")
        previous = check_continued(boosted_machine, outputs, features.shape[1])
        baseline = continued_baseline(baseline, previous, outputs)
        shifted = baseline is not None and loss.shift_invariant  # residual rounds from 0, as in memory
        if shifted:
            targets = targets - (baseline[0] if targets.ndim == 1 else baseline)
        if self.weak_learner in ("stump", "tree"):
            missing = (self.tree.missing if self.weak_learner == "tree" else self.missing) is not None
            declared = self.tree.categorical_features if self.weak_learner == "tree" else self.categorical_features
            categories = data.global_categories(source, features, check_categorical_features(
                declared, features.shape[1]), self.max_bins, missing)
            coded, offsets, split = data.binned(source, features, self.max_bins, missing, self.n_threads, categories)
            chooser = StumpChooser(offsets, split, missing, categories)
        else:
            coded, offsets, entries, all_missing = data.lut_coded(source, features, self.lut_entries,
                                                                  self.missing is not None, self.n_threads)
            chooser = LUTChooser(LUTTrainer(entries, number_of_outputs=outputs, selection_style=self.selection_style,
                                            missing=self.missing), all_missing)
        parts = source.place(coded, targets, sample_weight, outputs, data.checked_targets, loss, outputs)
        if sample_weight is not None:
            parts.weights = mean_one_weights(parts, features.shape[0])
        if isinstance(loss, SoftmaxLoss):  # each block was checked on its own: every class must occur somewhere
            counts = parts.summed(partition_tasks.column_sums, parts.targets)
            absent = np.flatnonzero(counts == 0)
            if absent.size:
                raise InvalidValueError(f"targets: class {absent[0]} has no sample (classes 0 .. {outputs - 1})")
        if starts_from_scores(previous):
            continue_scores(parts, features, previous, include_baseline=not shifted)
        elif baseline is not None and not shifted:  # the rounds start from the scores of the baseline
            parts.start = parts.each(partition_tasks.constant_scores, parts.scores, baseline)
            parts.scores = parts.start
        self.weight_passes = []
        name = type(self).__name__
        metadata = {"loss": loss.name or type(loss).__name__, "trainer": name, "weak_learner": self.weak_learner}
        trees = None
        if self.weak_learner == "tree":
            trees = PartitionedGradientTrees(self.tree, parts, offsets, split, outputs, categories)
        # Newton leaves make a tree's own step 1: its weight is the learning rate
        fixed_step = trees is not None and self.tree.newton_leaves is not False and loss.has_hessian
        algorithm = PartitionedGradientBoosting(name, loss, self.learning_rate, parts, outputs, baseline, metadata,
                                                chooser, offsets, trees, fixed_step, newton, features.shape[0],
                                                self.weight_passes, self.sampling)
        return run(algorithm, None, features, number_of_rounds, previous, callback)


def check_rows(features, **vectors) -> None:
    """Each of ``vectors`` (None: absent) has as many rows as ``features``.

    Raises
    ------
    ValueError
        Naming the first that has not.
    """
    for name, values in vectors.items():
        if values is not None and len(values) != features.shape[0]:
            raise InvalidValueError(f"{name}: expected {features.shape[0]} rows (the features'), got {len(values)}")


def check_partition_bins(max_bins) -> int:
    """``max_bins`` as the partitioned trainers take it: an integer in [2, 256] (their codes are one byte)."""
    checked = check_max_bins(max_bins)
    if checked is None or checked > 256:
        raise InvalidValueError(f"max_bins: must be in [2, 256] for distributed training, got {max_bins!r}")
    return checked


def check_partition_threads(n_threads) -> int | None:
    """``n_threads`` checked as in memory (None or an integer >= 1) and kept as given: each partition's host
    resolves None to its own cores.

    Raises
    ------
    TypeError, ValueError
        For a non-integer or a count below 1 (naming ``n_threads``).
    """
    check_threads(n_threads)
    return n_threads


def check_partition_tree(trainer) -> TreeTrainer:
    """The tree trainer of partitioned gradient trees (float histograms: no ``quantized_gradients``)."""
    if not isinstance(trainer, TreeTrainer):
        raise InvalidTypeError(f"tree: expected a TreeTrainer, got {type(trainer).__name__}")
    if trainer.quantized_gradients is not None:
        raise InvalidValueError("tree: quantized_gradients is for training in memory; distributed gradient trees "
                                "sum float histograms (use quantized_gradients=None)")
    return trainer


def check_continued(machine, outputs: int | None, n_features: int) -> BoostedMachine | None:
    """``machine`` (None stays None) if the run can continue it: a BoostedMachine with ``outputs`` outputs
    (None: any) and ``n_features`` features, as the in-memory loop checks.

    Raises
    ------
    TypeError
        If ``machine`` is not a :class:`~bob_boost.BoostedMachine`.
    ValueError
        If its outputs or features differ from the run's.
    """
    if machine is None:
        return None
    if not isinstance(machine, BoostedMachine):
        raise InvalidTypeError(f"boosted_machine: expected a BoostedMachine, got {type(machine).__name__}")
    if outputs is not None and machine.number_of_outputs not in (None, outputs):
        raise InvalidValueError(f"boosted_machine: has {machine.number_of_outputs} outputs but the targets have "
                                f"{outputs}")
    if machine.number_of_features not in (None, n_features):
        raise InvalidValueError(f"boosted_machine: reads {machine.number_of_features} features but the data has "
                                f"{n_features}")
    return machine


def continued_baseline(baseline, machine: BoostedMachine | None, outputs: int) -> np.ndarray | None:
    """The run's baseline, validated: the given one for a new machine, the machine's own (when not zero) for
    one being continued, as :meth:`bob_boost.Boosting.train` has it.

    Raises
    ------
    ValueError
        For a baseline given with a machine being continued, or one of another length than the outputs.
    """
    if baseline is not None:
        if machine is not None:
            raise InvalidValueError("baseline: a machine being continued keeps its own baseline")
        return BoostedMachine(number_of_outputs=outputs, baseline=baseline).baseline
    if machine is not None and np.any(machine.baseline != 0):
        if machine.baseline.shape != (outputs,):
            raise InvalidValueError(f"boosted_machine: has {machine.baseline.size} outputs but the targets have "
                                    f"{outputs}")
        return machine.baseline
    return None


def starts_from_scores(machine: BoostedMachine | None) -> bool:
    """Whether a continued machine's scores differ from a new machine's zeros."""
    return machine is not None and (len(machine) > 0 or bool(np.any(machine.baseline != 0)))
