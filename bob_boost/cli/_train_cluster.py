"""``bob-boost train --scheduler``: the in-memory recipe, trained by :mod:`bob_boost.dask` on a data file that
the workers read lazily.

What runs on a cluster:

- ``--trainer boosting`` with stumps or look-up tables (``-w lut``, ``--lut-entries``, ``--selection-style``)
  and a loss with one term per output, or gradient trees (``-w tree``, ``--tree-depth``, ``--tree-leaves``,
  ``--tree-outputs``, ``--tree-growth``; also the softmax loss), with ``--shrinkage``:
  :class:`bob_boost.dask.DaskBoosting` (the recipe's trainer's partitioned twin). The
  labels become targets as in memory (:func:`bob_boost.recipes.make_recipe`'s target kind,
  :class:`~bob_boost.labels.ClassEncoding`): +-1 for two classes, one +-1 output per class for more (LUTs),
  the numbers themselves for a regression (which starts from their mean, as in memory);
- ``--trainer adaboostdb`` (``--cost-positive``, ``--cost-negative``, ``--selection``) and
  ``--trainer cost-sensitive-adaboost``: :class:`bob_boost.dask.DaskCostSensitiveBoosting` around the
  in-memory trainer the recipe configures;
- ``--trainer badacost`` (``--cost-matrix``), ``samme`` and ``adaboost-m1`` with cost-sensitive trees
  (``-w tree``, ``--tree-depth``) or multi-class stumps (``-w stump``), ``--shrinkage``,
  ``--feature-fraction`` and ``--seed``: :class:`bob_boost.dask.DaskMultiClassBoosting` around the in-memory
  trainer the recipe configures, on the class indices (in sorted label order) that the workers compute from
  their chunks' labels.

Any option the distributed run would not read is a one-line error naming it, checked before connecting.
Dask is imported only once the options are checked (:func:`bob_boost.cli._common.load_dask_support`).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..exceptions import InvalidValueError
from ..io.cost_files import read_cost_matrix
from ..labels import REGRESSION_METADATA, ClassEncoding
from ..losses import SquaredLoss
from ..losses.softmax import SoftmaxLoss
from ..machine import BoostedMachine
from ..progress import PLAIN_LINES
from ..recipes import BINARY_COST_TRAINERS, MULTICLASS_TRAINERS, WEAK_LEARNERS, Recipe, make_loss, make_recipe
from ..weak.multiclass import MultiClassWeakMachine
from ._common import CommandError, as_options, load_dask_support
from ._options import (ADABOOSTDB_ONLY, BADACOST_ONLY, BINARY_COSTS, BOOSTING_CLASSIFIER_ONLY, CLUSTER_MAX_BINS,
                       DEFAULT_MAX_BINS, GRADIENT_TREE_ONLY, IN_MEMORY_ONLY, LUT_ONLY, MULTICLASS_ONLY, SPLIT_ONLY,
                       TREE_ONLY, check_constraints, file_categorical, is_regression, sampling_of)
from .train import sample_costs_and_matrix

#: The trainers of distributed training, and the weak learners each of them boosts there (the multi-class
#: LUT learner has no distributed version: :class:`bob_boost.dask.DaskMultiClassBoosting` refuses it).
CLUSTER_TRAINERS = ("boosting", *BINARY_COST_TRAINERS, *MULTICLASS_TRAINERS)
CLUSTER_WEAK_LEARNERS = {"boosting": WEAK_LEARNERS, **{name: ("stump",) for name in BINARY_COST_TRAINERS},
                         **{name: ("tree", "stump") for name in MULTICLASS_TRAINERS}}

#: Options that the generic trainer reads in memory but not on a cluster (the cost matrix of the cmel loss):
#: their error also points at training without --scheduler.
GENERIC_IN_MEMORY = ("cost_matrix",)

#: A stand-in cost matrix for checking --loss before the data is read: it only tells whether the loss takes
#: one, and the cluster refuses every loss that does (their outputs are coupled).
_PLACEHOLDER_COSTS = np.ones((2, 2)) - np.eye(2)


def check_cluster_options(args: argparse.Namespace) -> None:
    """Reject, before connecting, every option that distributed training would otherwise ignore."""
    if args.trainer not in CLUSTER_TRAINERS:
        raise CommandError(f"--trainer: {args.trainer!r} does not run on a cluster; with --scheduler use "
                           f"--trainer {', '.join(CLUSTER_TRAINERS)}")
    _check_cluster_weak_learner(args)
    multiclass = args.trainer in MULTICLASS_TRAINERS
    if multiclass:
        if args.max_bins != DEFAULT_MAX_BINS:
            # in memory these trainers ignore it: their trees (and stumps) quantise every feature's range
            raise CommandError(f"--max-bins: --trainer {args.trainer} does not read it (its weak learners quantise "
                               f"each feature's range, in memory too); drop it")
    elif args.max_bins is None or args.max_bins > CLUSTER_MAX_BINS:
        shown = "exact" if args.max_bins is None else args.max_bins
        raise CommandError(f"--max-bins: with --scheduler, must be an integer in [2, {CLUSTER_MAX_BINS}], got "
                           f"{shown}")
    for name, default in IN_MEMORY_ONLY.items():
        if getattr(args, name) != default:
            raise CommandError(f"{_option(name)}: is an option of in-memory training only; drop it, or train "
                               f"without --scheduler")
    # the loss first: --loss cmel --cost-matrix F is a problem of the loss, not of the matrix
    if args.trainer == "boosting":
        _check_cluster_loss(args)
    elif args.loss is not None:
        raise CommandError(f"--loss: --trainer {args.trainer} minimises its own cost-sensitive loss; drop it")
    gradient_trees = args.trainer == "boosting" and args.weak_learner == "tree"
    groups = ((LUT_ONLY, args.weak_learner == "lut", "-w lut"),
              (GRADIENT_TREE_ONLY, gradient_trees, "--trainer boosting -w tree"),
              (SPLIT_ONLY, (args.trainer == "boosting" and args.weak_learner != "lut")
               or (multiclass and args.weak_learner == "tree")
               or args.trainer in ("adaboostdb", "cost-sensitive-adaboost"),
               "--trainer boosting -w stump or tree, adaboostdb, cost-sensitive-adaboost and the multi-class "
               "trainers' -w tree"),
              (ADABOOSTDB_ONLY, args.trainer == "adaboostdb", "--trainer adaboostdb"),
              (TREE_ONLY, args.weak_learner == "tree", "-w tree"),
              (BADACOST_ONLY, args.trainer == "badacost", "--trainer badacost"),
              (MULTICLASS_ONLY, multiclass, "--trainer badacost, samme or adaboost-m1"),
              (BOOSTING_CLASSIFIER_ONLY, args.trainer == "boosting" and not is_regression(args, None),
               "--trainer boosting with a classification loss"),
              (BINARY_COSTS, not multiclass, "--trainer adaboostdb or cost-sensitive-adaboost and of the "
                                             "double_base loss"))
    for options, used, by in groups:
        for name, default in options.items():
            if used or getattr(args, name) == default or (name == "shrinkage" and args.trainer == "boosting"):
                continue
            if args.trainer == "boosting" and name in GENERIC_IN_MEMORY:
                raise CommandError(f"{_option(name)}: with --scheduler, is an option of {by} only (in memory also "
                                   f"of --trainer boosting); drop it, or train without --scheduler")
            raise CommandError(f"{_option(name)}: is an option of {by}; drop it")


def _check_cluster_weak_learner(args: argparse.Namespace) -> None:
    """``-w`` must be one the chosen trainer boosts on a cluster (:data:`CLUSTER_WEAK_LEARNERS`)."""
    allowed = CLUSTER_WEAK_LEARNERS[args.trainer]
    if args.weak_learner in allowed:
        return
    if args.trainer in BINARY_COST_TRAINERS:  # in memory they boost stumps whatever -w says
        raise CommandError(f"--weak-learner: --trainer {args.trainer} boosts stumps; drop -w {args.weak_learner}")
    raise CommandError(f"--weak-learner: {args.weak_learner!r} does not run on a cluster with --trainer "
                       f"{args.trainer}; with --scheduler use -w {' or '.join(allowed)}, or train without "
                       f"--scheduler")


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _check_cluster_loss(args: argparse.Namespace) -> None:
    """A ``--loss`` that is unknown or couples the outputs fails before the data is read (one without a second
    derivative trains with L-BFGS steps, as in memory)."""
    if args.loss is None:  # exponential, logit or squared
        return
    try:
        loss = make_loss(args.loss, _PLACEHOLDER_COSTS, args.cost_positive, args.cost_negative)
    except ValueError as error:
        raise as_options(error) from None
    if isinstance(loss, SoftmaxLoss) and args.weak_learner == "tree":
        return  # gradient trees read each output's derivatives; the softmax's coupling does not matter
    if isinstance(loss, SoftmaxLoss) or loss.cost_matrix is not None:
        raise CommandError(f"--loss: {args.loss!r} couples the classes' outputs; --scheduler trains losses with one "
                           f"term per output (exponential, logit, double_base or squared)")


def command_train_on_cluster(args: argparse.Namespace) -> int:
    """``bob-boost train --scheduler``: train on the cluster, then write the model with the usual metadata."""
    check_cluster_options(args)
    # read here, as in memory, so that a bad file fails before connecting
    cost_matrix = read_cost_matrix(args.cost_matrix) if args.cost_matrix else None
    support = load_dask_support()
    from ..dask import _dask  # after the check
    from ..dask._trainers import dask_trainer

    with support.connect(args.scheduler) as client:
        table = support.read_lazy_table(args.data, args.target, True, group=args.group, chunk_rows=args.chunk_rows)
        samples = table.features.shape[0]
        if table.categories:  # a Parquet or Arrow file's category and text columns, coded with their categories
            args.categorical = file_categorical(args, table.categories)
        encoding, recipe = _cluster_recipe(args, table.distinct_labels(), cost_matrix,
                                           lambda: np.asarray(table.labels.compute()))
        try:
            check_constraints(args, int(table.features.shape[1]))
        except ValueError as error:
            raise as_options(error) from None
        if recipe.target_kind == "indices":
            targets = _class_indices(table.labels, encoding, args.data)
        else:
            targets = support.class_targets(table.labels, encoding, recipe.target_kind)
        options: dict[str, Any] = {"callback": _RoundLines(args.rounds, args.quiet)}
        try:
            lut = {"lut_entries": args.lut_entries} if args.weak_learner == "lut" and args.trainer == "boosting" else {}
            trainer = dask_trainer(recipe.trainer, args.max_bins, client, 1, **lut)
        except ValueError as error:
            raise as_options(error) from None
        if isinstance(recipe.loss, SquaredLoss):
            # the in-memory recipe's intercept: the squared loss boosts the residuals from the mean
            options["baseline"] = _dask.weighted_mean(targets, None)
        elif args.boost_from_average:  # the class prior, from the class sizes counted on the cluster
            classes = targets.map_blocks(lambda block: ClassEncoding.classes_of(recipe.target_kind, block),
                                         dtype=np.int64, **({} if targets.ndim == 1 else {"drop_axis": 1}))
            options["baseline"] = recipe.prior_baseline(_dask.class_sizes(classes, None, encoding.number_of_classes))
        start = time.perf_counter()
        if recipe.sample_costs is not None:
            options["sample_costs"] = recipe.sample_costs
        try:
            machine = trainer.train(table.features, targets, args.rounds, **options)
        except InvalidValueError as error:
            if not str(error).startswith("features:"):
                raise
            hint = " (LUT weak learners; see --lut-entries)" if args.weak_learner == "lut" else ""
            raise CommandError(f"{args.data}: {error}{hint}") from None
        seconds = time.perf_counter() - start
    metadata: dict[str, Any] = {"trainer": args.trainer, "weak_learner": args.weak_learner,
                                "command": "bob-boost train", "distributed": "dask"}
    if table.feature_names:
        metadata["feature_names"] = table.feature_names
    if table.categories:
        metadata["categories"] = {str(j): values for j, values in table.categories.items()}
    if args.weak_learner == "lut" and (args.lut_entries or len(machine)):
        # as in memory: the entries asked for, else the largest training value + 1 (the cluster found it)
        metadata["lut_entries"] = args.lut_entries or machine.weak_machines[0].number_of_values
    machine.metadata.update(metadata)
    machine.metadata.update(REGRESSION_METADATA if encoding is None else encoding.to_metadata())
    machine.save(args.output)
    if not args.quiet:
        print(f"trained {len(machine)} weak machines on {samples} samples in {seconds:.2f} s on the Dask cluster "
              f"at {args.scheduler}; wrote {args.output}")
    return 0


def _cluster_recipe(args: argparse.Namespace, classes: np.ndarray, cost_matrix: np.ndarray | None,
                    labels: Callable[[], np.ndarray]) -> tuple[ClassEncoding | None, Recipe]:
    """The class encoding (None: regression) and the in-memory recipe of the options, from the distinct labels
    and the ``--cost-matrix`` (None without it); with ``--sample-costs``, whose rows the client reads, ``labels()``
    brings the training labels to the client too, to check the rows against them as in memory.

    The cluster trains the recipe's trainer as its partitioned twin
    (:func:`~bob_boost.dask._trainers.dask_trainer`).
    """
    try:
        regression = is_regression(args, None)
        if regression and classes.dtype.kind not in "iuf":
            raise CommandError(f"loss {args.loss!r} is a regression loss but the labels are not numbers")
        encoding = None if regression else ClassEncoding.fit(classes, args.positive_label)
        sample_costs, cost_matrix = sample_costs_and_matrix(args, encoding, labels() if args.sample_costs else None,
                                                            cost_matrix)
        # the in-memory call (the options the cluster refuses, --threads, at their defaults); lut_entries only
        # sizes the recipe's own LUT trainer: its twin takes --lut-entries (None: from the data)
        recipe = make_recipe(args.trainer, number_of_classes=None if encoding is None else encoding.number_of_classes,
                             loss=args.loss, weak_learner=args.weak_learner, lut_entries=256,
                             selection_style=args.selection_style, cost_positive=args.cost_positive,
                             cost_negative=args.cost_negative, cost_matrix=cost_matrix, selection=args.selection,
                             tree_depth=args.tree_depth, shrinkage=args.shrinkage,
                             feature_fraction=args.feature_fraction, random_state=args.seed,
                             number_of_rounds=args.rounds, max_bins=args.max_bins, tree_leaves=args.tree_leaves,
                             tree_outputs=args.tree_outputs, tree_growth=args.tree_growth, sampling=sampling_of(args),
                             tree_min_weight_fraction_leaf=args.min_weight_fraction_leaf,
                             tree_monotonic_cst=args.monotonic_cst, tree_interaction_cst=args.interaction_cst,
                             categorical_features=args.categorical, sample_costs=sample_costs)
    except ValueError as error:
        raise as_options(error) from None
    softmax_trees = isinstance(recipe.loss, SoftmaxLoss) and args.weak_learner == "tree"
    if (recipe.target_kind not in ("signed", "one_vs_rest", "values") and args.trainer not in MULTICLASS_TRAINERS
            and not softmax_trees):
        # the generic trainer's softmax and cost-matrix losses: refused before, by check_cluster_options
        raise CommandError(f"--loss: {args.loss!r} trains on class indices, which --scheduler does not")
    return encoding, recipe


def _class_indices(labels, encoding: ClassEncoding, source: str):
    """The class index of every label of the Dask vector ``labels``, chunk by chunk on the workers.

    Parameters
    ----------
    labels : dask.array.Array
        (#samples,) labels.
    encoding : ClassEncoding
        The classes, in the order that gives their indices (sorted, as in memory).
    source : str
        The data file, named by the error of a label that is not one of the classes.

    Returns
    -------
    dask.array.Array
        (#samples,) int64 indices ``0 .. K-1``, chunked as ``labels``: the multi-class trainers' targets.
    """
    return labels.map_blocks(_chunk_indices, encoding, source, dtype=np.int64)


def _chunk_indices(labels: np.ndarray, encoding: ClassEncoding, source: str) -> np.ndarray:
    """One chunk's class indices, on its worker, by the in-memory rule (:meth:`ClassEncoding.targets`)."""
    return encoding.targets("indices", encoding.encode(np.asarray(labels), source))


class _RoundLines:
    """Progress of distributed training, about twenty lines on stderr: the training scores stay on the
    workers, so unlike :class:`bob_boost.progress.Progress` it shows each round's weak machine, not the loss."""

    def __init__(self, number_of_rounds: int, quiet: bool) -> None:
        self.number_of_rounds, self.quiet = number_of_rounds, quiet
        self.every = max(1, number_of_rounds // PLAIN_LINES)

    def __call__(self, round_index: int, machine: BoostedMachine, scores: None) -> None:
        done = round_index + 1
        if self.quiet or (done % self.every and done != self.number_of_rounds and round_index):
            return
        weak, weights = machine.weak_machines[-1], machine.weights[-1]
        # a stump's feature, a look-up table's, one per output, or the features a tree splits on
        if hasattr(weak, "index"):
            indices = [weak.index]
        elif hasattr(weak, "indices"):
            indices = weak.indices.tolist()
        else:
            indices = weak.feature_indices().tolist()
        shown = ",".join(map(str, indices)) or "none"  # a tree that is only a leaf splits on no feature
        if isinstance(weak, MultiClassWeakMachine):
            weights = weights[:1]  # one step for the whole margin vector, stored once per class
        plural = "s" if len(indices) > 1 else ""
        weight_plural = "s" if weights.size > 1 else ""
        print(f"round {done}/{self.number_of_rounds}: feature{plural} {shown}, "
              f"weight{weight_plural} {', '.join(f'{w:.6g}' for w in weights.tolist())}", file=sys.stderr,
              flush=True)
